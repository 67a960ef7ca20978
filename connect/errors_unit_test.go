package connect

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestErrorPolicyRetry(t *testing.T) {
	flaky := &RetriableError{Err: errors.New("db busy")}
	tests := []struct {
		name      string
		cfg       Config
		failFirst int   // attempts that fail with flaky before success
		other     error // non-retriable error returned on the first attempt
		wantCalls int
		wantErr   bool
	}{
		{"no retry by default", Config{}, 1, nil, 1, true},
		{"retries within the timeout", Config{"errors.retry.timeout": "5000", "errors.retry.delay.max.ms": "10"}, 3, nil, 4, false},
		{"gives up after the timeout", Config{"errors.retry.timeout": "250", "errors.retry.delay.max.ms": "100"}, 1000, nil, 0, true},
		{"forever", Config{"errors.retry.timeout": "-1", "errors.retry.delay.max.ms": "10"}, 5, nil, 6, false},
		{"non-retriable is not retried", Config{"errors.retry.timeout": "5000"}, 0, errors.New("bad row"), 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := parseErrorPolicy(tt.cfg)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			calls := 0
			start := time.Now()
			err := p.retry(context.Background(), func() error {
				calls++
				if tt.other != nil {
					return tt.other
				}
				if calls <= tt.failFirst {
					return flaky
				}
				return nil
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			if tt.wantCalls > 0 && calls != tt.wantCalls {
				t.Fatalf("%d calls, want %d", calls, tt.wantCalls)
			}
			if tt.name == "gives up after the timeout" && (calls < 2 || time.Since(start) > 2*time.Second) {
				t.Fatalf("%d calls in %s", calls, time.Since(start))
			}
		})
	}
	for _, bad := range []Config{{"errors.tolerance": "some"}, {"errors.retry.timeout": "-5"}, {"errors.retry.delay.max.ms": "0"}} {
		if _, errs := parseErrorPolicy(bad); len(errs) != 1 {
			t.Errorf("%v: %v", bad, errs)
		}
	}
}
