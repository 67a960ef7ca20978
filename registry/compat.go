package registry

import (
	"fmt"
	"strings"

	"github.com/strata-streaming/strata/registry/schema"
)

// Compatibility levels.
const (
	LevelNone               = "NONE"
	LevelBackward           = "BACKWARD"
	LevelBackwardTransitive = "BACKWARD_TRANSITIVE"
	LevelForward            = "FORWARD"
	LevelForwardTransitive  = "FORWARD_TRANSITIVE"
	LevelFull               = "FULL"
	LevelFullTransitive     = "FULL_TRANSITIVE"
)

// Modes.
const (
	modeReadWrite        = "READWRITE"
	modeReadOnly         = "READONLY"
	modeReadOnlyOverride = "READONLY_OVERRIDE"
	modeImport           = "IMPORT"
)

func validLevel(level string) bool {
	switch level {
	case LevelNone, LevelBackward, LevelBackwardTransitive, LevelForward, LevelForwardTransitive, LevelFull, LevelFullTransitive:
		return true
	}
	return false
}

func validMode(mode string) bool {
	switch mode {
	case modeReadWrite, modeReadOnly, modeReadOnlyOverride, modeImport:
		return true
	}
	return false
}

func readOnly(mode string) bool { return mode == modeReadOnly || mode == modeReadOnlyOverride }

// direction says what a level asks of a new schema: to read data written
// with earlier ones (backward), to be read by them (forward), and of
// every earlier version rather than the latest (transitive).
type direction struct{ backward, forward, transitive bool }

func directionOf(level string) direction {
	return direction{
		backward:   strings.HasPrefix(level, LevelBackward) || strings.HasPrefix(level, LevelFull),
		forward:    strings.HasPrefix(level, LevelForward) || strings.HasPrefix(level, LevelFull),
		transitive: strings.HasSuffix(level, "_TRANSITIVE"),
	}
}

// parsedVersion is an earlier version, parsed for a compatibility check.
type parsedVersion struct {
	version int
	typ     schema.Type
	parsed  schema.Parsed
	err     error // it no longer parses (say, a format was removed)
}

// incompatibilities lists why candidate (of type typ) breaks dir against
// each of earlier; none means compatible.
func incompatibilities(formats map[schema.Type]schema.Format, dir direction, typ schema.Type, candidate schema.Parsed, earlier []parsedVersion) []string {
	var msgs []string
	for _, old := range earlier {
		switch {
		case old.err != nil:
			msgs = append(msgs, fmt.Sprintf("version %d cannot be read to compare with: %v", old.version, old.err))
			continue
		case old.typ != typ:
			msgs = append(msgs, fmt.Sprintf("version %d is a %s schema, the new one %s", old.version, old.typ, typ))
			continue
		}
		format := formats[typ]
		if dir.backward {
			for _, m := range format.Compatible(candidate, old.parsed) {
				msgs = append(msgs, fmt.Sprintf("the new schema cannot read data written with version %d: %s", old.version, m))
			}
		}
		if dir.forward {
			for _, m := range format.Compatible(old.parsed, candidate) {
				msgs = append(msgs, fmt.Sprintf("version %d cannot read data written with the new schema: %s", old.version, m))
			}
		}
	}
	return msgs
}
