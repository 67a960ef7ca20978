package lag

import "fmt"

// Status is the verdict on a partition or a group. Values are ordered by
// how bad they are, so the worst of several is the largest.
type Status int8

const (
	// StatusOK: the consumer keeps up (or has nothing to do).
	StatusOK Status = iota
	// StatusWarn: offsets move but the lag never shrinks over the window.
	StatusWarn
	// StatusStop: no commit for longer than the window spans, with lag.
	StatusStop
	// StatusStall: commits keep coming with the same offset, with lag.
	StatusStall
	// StatusRewind: committed offsets went backwards and have not recovered.
	StatusRewind
)

var statusNames = [...]string{
	StatusOK:     "OK",
	StatusWarn:   "WARN",
	StatusStop:   "STOP",
	StatusStall:  "STALL",
	StatusRewind: "REWIND",
}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int8(s))
}

// MarshalText writes the status by name ("STALL"), for JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Severity is Burrow's group-level condensation of a status: OK, WARN, or
// ERR for the three statuses that mean the consumer is not working.
func (s Status) Severity() Severity {
	switch {
	case s >= StatusStop:
		return SeverityErr
	case s == StatusWarn:
		return SeverityWarn
	default:
		return SeverityOK
	}
}

// Severity is how urgent a status is.
type Severity int8

const (
	SeverityOK Severity = iota
	SeverityWarn
	SeverityErr
)

func (s Severity) String() string {
	switch s {
	case SeverityOK:
		return "OK"
	case SeverityWarn:
		return "WARN"
	case SeverityErr:
		return "ERR"
	}
	return fmt.Sprintf("Severity(%d)", int8(s))
}

// MarshalText writes the severity by name ("ERR"), for JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
