package storage

import (
	"errors"
	"fmt"
	"testing"
)

// TestCorruptionMarker: every corruption sentinel matches ErrCorruption and
// itself, no other sentinel, and reads as it always did.
func TestCorruptionMarker(t *testing.T) {
	sentinels := map[error]string{
		ErrCorruptBatch:      "storage: corrupt record batch",
		ErrCorruptLog:        "storage: corrupt log directory",
		ErrCorruptRemoteData: "storage: corrupt remote segment data",
		errBadIndex:          "storage: invalid index file",
	}
	for sentinel, msg := range sentinels {
		if sentinel.Error() != msg {
			t.Errorf("sentinel reads %q, want %q", sentinel.Error(), msg)
		}
		wrapped := fmt.Errorf("%w: at offset 7", sentinel)
		if !errors.Is(wrapped, ErrCorruption) || !errors.Is(wrapped, sentinel) {
			t.Errorf("%v: does not match ErrCorruption and its sentinel", wrapped)
		}
		for other := range sentinels {
			if other != sentinel && errors.Is(wrapped, other) {
				t.Errorf("%v matches %v", wrapped, other)
			}
		}
	}
	for _, err := range []error{ErrUnsupportedMagic, ErrBatchTooLarge, ErrOffsetOutOfRange, ErrClosed} {
		if errors.Is(err, ErrCorruption) {
			t.Errorf("%v is marked as corruption", err)
		}
	}
}

func TestCorruptionErrorf(t *testing.T) {
	cause := errors.New("short read")
	err := CorruptionErrorf("segment %d: %w", 5, cause)
	if err.Error() != "segment 5: short read" {
		t.Errorf("message %q", err.Error())
	}
	if !errors.Is(err, ErrCorruption) || !errors.Is(err, cause) {
		t.Errorf("%v does not match ErrCorruption and its cause", err)
	}
	if _, err := ValidateBatches(nil); !errors.Is(err, ErrCorruption) {
		t.Errorf("ValidateBatches(nil): %v, want a corruption error", err)
	}
}
