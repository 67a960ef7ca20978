package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// errorPolicy is a connector's errors.* settings (Kafka Connect's names):
//
//	errors.tolerance                              none (default) | all
//	errors.retry.timeout                          ms to keep retrying a retriable failure; 0 = no retry, -1 = forever
//	errors.retry.delay.max.ms                     longest backoff between retries (default 60000)
//	errors.log.enable                             log each tolerated failure
//	errors.deadletterqueue.topic.name             sinks: where failed records go
//	errors.deadletterqueue.context.headers.enable add the __connect.errors.* headers
type errorPolicy struct {
	tolerateAll    bool
	retryTimeout   time.Duration // <0: forever
	retryDelayMax  time.Duration
	logErrors      bool
	dlqTopic       string
	contextHeaders bool
}

func parseErrorPolicy(cfg Config) (errorPolicy, []ConfigError) {
	p := errorPolicy{retryDelayMax: 60 * time.Second}
	var errs []ConfigError
	switch v := strings.ToLower(strings.TrimSpace(cfg["errors.tolerance"])); v {
	case "", "none":
	case "all":
		p.tolerateAll = true
	default:
		errs = append(errs, ConfigError{"errors.tolerance", fmt.Sprintf("Invalid value %s: must be none or all", v)})
	}
	if v := strings.TrimSpace(cfg["errors.retry.timeout"]); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			errs = append(errs, ConfigError{"errors.retry.timeout", fmt.Sprintf("Invalid value %s: must be -1 or a non-negative number of milliseconds", v)})
		} else if n == -1 {
			p.retryTimeout = -1
		} else {
			p.retryTimeout = time.Duration(n) * time.Millisecond
		}
	}
	if v := strings.TrimSpace(cfg["errors.retry.delay.max.ms"]); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			errs = append(errs, ConfigError{"errors.retry.delay.max.ms", fmt.Sprintf("Invalid value %s: must be a positive number of milliseconds", v)})
		} else {
			p.retryDelayMax = time.Duration(n) * time.Millisecond
		}
	}
	p.logErrors = strings.EqualFold(strings.TrimSpace(cfg["errors.log.enable"]), "true")
	p.dlqTopic = strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"])
	p.contextHeaders = strings.EqualFold(strings.TrimSpace(cfg["errors.deadletterqueue.context.headers.enable"]), "true")
	return p, errs
}

// retry runs op until it succeeds, fails with a non-retriable error, or
// errors.retry.timeout has passed; backoff doubles from 100 ms up to
// errors.retry.delay.max.ms. It is errors.retry.timeout's semantics, for
// the conversion and transformation stages; a task's Poll, Put and Flush
// use retryRetriable instead.
func (p errorPolicy) retry(ctx context.Context, op func() error) error {
	start := time.Now()
	delay := 100 * time.Millisecond
	for {
		err := op()
		if err == nil {
			return nil
		}
		var re *RetriableError
		if !errors.As(err, &re) {
			return err
		}
		if p.retryTimeout >= 0 && time.Since(start)+delay > p.retryTimeout {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, p.retryDelayMax)
	}
}

// maxRetriableBackoff caps the wait between retries of a RetriableError
// from Poll, Put or Flush.
const maxRetriableBackoff = 10 * time.Second

// retryRetriable runs a task's Poll, Put or Flush until it succeeds or
// fails with an error that is not a RetriableError, retrying a
// RetriableError for as long as ctx lives (Kafka Connect retries a
// RetriableException from poll, put and flush indefinitely;
// errors.retry.timeout only bounds conversion and transformations). The
// backoff doubles from 100 ms up to min(errors.retry.delay.max.ms, 10 s).
// A retriable error never reaches errors.tolerance: nothing is
// dead-lettered or skipped because the external system was briefly away.
func (p errorPolicy) retryRetriable(ctx context.Context, op func() error) error {
	delay := 100 * time.Millisecond
	maxDelay := min(p.retryDelayMax, maxRetriableBackoff)
	if maxDelay <= 0 {
		maxDelay = maxRetriableBackoff
	}
	for {
		err := op()
		if err == nil {
			return nil
		}
		var re *RetriableError
		if !errors.As(err, &re) {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, maxDelay)
	}
}

// Header names Kafka Connect puts on dead-letter records.
const (
	headerErrTopic      = "__connect.errors.topic"
	headerErrPartition  = "__connect.errors.partition"
	headerErrOffset     = "__connect.errors.offset"
	headerErrConnector  = "__connect.errors.connector.name"
	headerErrTask       = "__connect.errors.task.id"
	headerErrStage      = "__connect.errors.stage"
	headerErrClass      = "__connect.errors.class.name"
	headerErrExcClass   = "__connect.errors.exception.class.name"
	headerErrExcMessage = "__connect.errors.exception.message"
)

// deadLetter handles a record that failed at stage (KEY_CONVERTER,
// VALUE_CONVERTER, TASK_PUT): with errors.tolerance=none it returns the
// error (the task fails); with all it logs, sends the original record to
// the dead-letter topic when one is set, and returns nil (skip).
func (p errorPolicy) deadLetter(ctx context.Context, log *slog.Logger, producer *kgo.Client, id TaskID, stage string, rec *kgo.Record, cause error) error {
	if !p.tolerateAll {
		return fmt.Errorf("%s failed for %s-%d@%d: %w (errors.tolerance=none)", stage, rec.Topic, rec.Partition, rec.Offset, cause)
	}
	if p.logErrors {
		log.Warn("connect: tolerated record failure", "connector", id.Connector, "task", id.Task, "stage", stage,
			"topic", rec.Topic, "partition", rec.Partition, "offset", rec.Offset, "err", cause)
	}
	if p.dlqTopic == "" || producer == nil {
		return nil
	}
	out := &kgo.Record{Topic: p.dlqTopic, Key: rec.Key, Value: rec.Value, Timestamp: rec.Timestamp}
	out.Headers = append(out.Headers, rec.Headers...)
	if p.contextHeaders {
		out.Headers = append(out.Headers,
			kgo.RecordHeader{Key: headerErrTopic, Value: []byte(rec.Topic)},
			kgo.RecordHeader{Key: headerErrPartition, Value: []byte(strconv.Itoa(int(rec.Partition)))},
			kgo.RecordHeader{Key: headerErrOffset, Value: []byte(strconv.FormatInt(rec.Offset, 10))},
			kgo.RecordHeader{Key: headerErrConnector, Value: []byte(id.Connector)},
			kgo.RecordHeader{Key: headerErrTask, Value: []byte(strconv.Itoa(id.Task))},
			kgo.RecordHeader{Key: headerErrStage, Value: []byte(stage)},
			kgo.RecordHeader{Key: headerErrClass, Value: []byte("strata.connect")},
			kgo.RecordHeader{Key: headerErrExcClass, Value: []byte(errorClass(cause))},
			kgo.RecordHeader{Key: headerErrExcMessage, Value: []byte(cause.Error())},
		)
	}
	if err := producer.ProduceSync(ctx, out).FirstErr(); err != nil {
		return fmt.Errorf("writing to dead letter topic %s: %w", p.dlqTopic, err)
	}
	return nil
}

// errorClass names an error's kind for the exception-class header: the
// sentinel's package-prefixed name when it wraps one we know, else its Go
// type.
func errorClass(err error) string {
	switch {
	case errors.Is(err, ErrConversion):
		return "org.apache.kafka.connect.errors.DataException"
	}
	var re *RetriableError
	if errors.As(err, &re) {
		return "org.apache.kafka.connect.errors.RetriableException"
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	return reflect.TypeOf(err).String()
}
