package streams

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	// ErrTopology reports a topology that cannot run (no topic, bad
	// pattern, empty output topic).
	ErrTopology = errors.New("streams: invalid topology")
	// ErrConfig reports invalid App options.
	ErrConfig = errors.New("streams: invalid configuration")
	// ErrProcessing wraps the record error that stopped an App whose error
	// mode is ErrorFail.
	ErrProcessing = errors.New("streams: record processing failed")
	// ErrProduce wraps a produce failure that stopped an App: any under
	// at-least-once; under exactly-once a permanent one (a non-retriable
	// broker error such as MESSAGE_TOO_LARGE, an authorization failure or
	// an invalid topic) or MaxProduceAborts transactions in a row aborted
	// by produce failures.
	ErrProduce = errors.New("streams: produce failed")
	// ErrRetriable marks a record error that is not the record's fault: a
	// service its serde needs (a schema registry) could not be reached.
	// Whatever the error mode, the App stops as under ErrorFail (the error
	// wraps ErrProcessing and the record is not committed), so that
	// RunWithRestarts retries the record instead of skipping or
	// dead-lettering every record of an outage.
	ErrRetriable = errors.New("streams: retriable failure")
)

// Kind says where in the pipeline a record failed.
type Kind string

// The kinds of record errors.
const (
	KindDeserialize Kind = "deserialize" // a source serde rejected the bytes
	KindOperator    Kind = "operator"    // a user function returned an error or panicked
	KindSerialize   Kind = "serialize"   // a sink serde rejected the value
)

// StageError is a record's failure in one stage (an operator or serde).
type StageError struct {
	Stage string
	Kind  Kind
	Err   error
}

func (e *StageError) Error() string {
	return fmt.Sprintf("streams: %s error in stage %q: %v", e.Kind, e.Stage, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// ErrorMode is what happens to a record whose processing fails.
type ErrorMode int

// Error modes.
const (
	// ErrorFail stops the App: Run returns an error wrapping ErrProcessing
	// and the failed record's offset is not committed (the default, as
	// Kafka Streams' LogAndFail).
	ErrorFail ErrorMode = iota
	// ErrorSkip drops the record, counting it in the error metrics.
	ErrorSkip
	// ErrorDeadLetter writes the input record unchanged (key, value,
	// headers, timestamp) to the dead-letter topic with headers naming the
	// failure; under exactly-once it is part of the same transaction.
	ErrorDeadLetter
)

// ParseErrorMode parses "fail", "skip" or "dead_letter".
func ParseErrorMode(s string) (ErrorMode, error) {
	switch s {
	case "fail", "":
		return ErrorFail, nil
	case "skip":
		return ErrorSkip, nil
	case "dead_letter", "dead-letter", "dlq":
		return ErrorDeadLetter, nil
	}
	return 0, fmt.Errorf("%w: error mode %q: want fail, skip or dead_letter", ErrConfig, s)
}

func (m ErrorMode) String() string {
	switch m {
	case ErrorSkip:
		return "skip"
	case ErrorDeadLetter:
		return "dead_letter"
	}
	return "fail"
}

// Dead-letter headers added to the original record's headers.
const (
	HeaderErrorStage     = "strata.error.stage"
	HeaderErrorKind      = "strata.error.kind"
	HeaderErrorMessage   = "strata.error.message"
	HeaderErrorTopic     = "strata.error.topic"
	HeaderErrorPartition = "strata.error.partition"
	HeaderErrorOffset    = "strata.error.offset"
)

// procCtx is the per-record scratch state: the outputs a record produced.
// Outputs are released only when the whole record succeeded, so a record
// either yields all its outputs or goes to error handling.
type procCtx struct {
	out     []*kgo.Record
	task    *task    // the input partition's stores, if it feeds any
	touched []*store // stores the record wrote (staged until it succeeds)
	stats   *counters
}

// processor runs records through a topology and applies the error mode.
// It is used by one goroutine at a time.
type processor struct {
	top   *Topology
	mode  ErrorMode
	dlq   string
	stats *counters
	state *stateManager // nil when the topology has no stores
	ctx   procCtx
}

// process runs one input record and returns the records to produce (valid
// until the next call), or an error wrapping ErrProcessing when the mode is
// ErrorFail.
func (p *processor) process(kr *kgo.Record) ([]*kgo.Record, error) {
	p.stats.in.Add(1)
	p.ctx.out = p.ctx.out[:0]
	p.ctx.stats = p.stats
	if p.state != nil {
		p.ctx.task = p.state.task(kr.Topic, kr.Partition)
	}
	err := p.run(kr)
	for _, st := range p.ctx.touched {
		if err != nil {
			st.staged = st.staged[:0]
		} else {
			st.applyStaged()
		}
	}
	p.ctx.touched = p.ctx.touched[:0]
	if err == nil {
		return p.ctx.out, nil
	}
	p.stats.errors.Add(1)
	var se *StageError
	if !errors.As(err, &se) {
		se = &StageError{Stage: "unknown", Kind: KindOperator, Err: err}
	}
	mode := p.mode
	if errors.Is(err, ErrRetriable) {
		mode = ErrorFail
	}
	switch mode {
	case ErrorSkip:
		p.stats.skipped.Add(1)
		return nil, nil
	case ErrorDeadLetter:
		p.stats.deadLettered.Add(1)
		p.ctx.out = append(p.ctx.out[:0], deadLetter(p.dlq, kr, se))
		return p.ctx.out, nil
	}
	p.stats.failed.Add(1)
	return nil, fmt.Errorf("%w: %s[%d]@%d: %w", ErrProcessing, kr.Topic, kr.Partition, kr.Offset, se)
}

func (p *processor) run(kr *kgo.Record) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &StageError{Stage: "unknown", Kind: KindOperator,
				Err: fmt.Errorf("panic: %v\n%s", v, debug.Stack())}
		}
	}()
	for _, h := range p.top.handlers(kr.Topic) {
		if err := h(&p.ctx, kr); err != nil {
			return err
		}
	}
	return nil
}

func deadLetter(topic string, kr *kgo.Record, se *StageError) *kgo.Record {
	hs := make([]Header, 0, len(kr.Headers)+6)
	hs = append(hs, kr.Headers...)
	hs = append(hs,
		Header{Key: HeaderErrorStage, Value: []byte(se.Stage)},
		Header{Key: HeaderErrorKind, Value: []byte(se.Kind)},
		Header{Key: HeaderErrorMessage, Value: []byte(se.Err.Error())},
		Header{Key: HeaderErrorTopic, Value: []byte(kr.Topic)},
		Header{Key: HeaderErrorPartition, Value: []byte(strconv.Itoa(int(kr.Partition)))},
		Header{Key: HeaderErrorOffset, Value: []byte(strconv.FormatInt(kr.Offset, 10))},
	)
	return &kgo.Record{Topic: topic, Key: kr.Key, Value: kr.Value, Headers: hs, Timestamp: kr.Timestamp}
}
