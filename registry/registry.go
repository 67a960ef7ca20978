package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/strata-streaming/strata/internal/httpsec"
	"github.com/strata-streaming/strata/registry/schema"
)

// Registry is one node's schema registry: a reader that applies the
// log's records to its view, a writer that sequences this node's writes,
// and the REST API. Make it with New, run it with Start, stop it with
// Close.
type Registry struct {
	cfg     Config
	log     *slog.Logger
	formats map[schema.Type]schema.Format
	node    string // this instance's id in the keys of its sequenced writes

	store    Log
	ownStore bool // the registry made the store and closes it
	writes   chan *writeRequest
	listener net.Listener
	guard    *httpsec.Guard
	http     *http.Server

	mu struct {
		sync.Mutex
		view    *view
		applied int64         // every offset below it is applied
		wake    chan struct{} // closed and replaced when applied moves
		readErr error         // the reader's last failure, until it reads again
	}
	// schemaCache holds schemas parsed for CheckRecord (validate.go).
	schemaCache schemaCache

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New checks cfg and returns a registry that has not started.
func New(cfg Config) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("registry: instance id: %w", err)
	}
	r := &Registry{
		cfg:     cfg,
		log:     cfg.Logger.With("component", "schema-registry"),
		formats: map[schema.Type]schema.Format{},
		node:    hex.EncodeToString(id[:]),
		writes:  make(chan *writeRequest),
	}
	for _, f := range cfg.Formats {
		r.formats[f.Type()] = f
	}
	r.mu.view = newView()
	r.mu.wake = make(chan struct{})
	return r, nil
}

// Start opens the REST listener, creates the topic if it is missing, reads
// the topic up to the end offset it finds, and then serves. It returns
// once the registry serves; ctx bounds the start only.
func (r *Registry) Start(ctx context.Context) error {
	guard, err := httpsec.New(r.cfg.HTTPSecurity)
	if err != nil {
		return fmt.Errorf("registry: REST listener: %w", err)
	}
	ln, err := net.Listen("tcp", r.cfg.Listen)
	if err != nil {
		guard.Close()
		return fmt.Errorf("registry: REST listener: %w", err)
	}
	// Refusals in Confluent's error body, like every other answer.
	guard.WriteError = func(w http.ResponseWriter, status int, message string) {
		writeError(w, &apiError{Status: status, Code: status, Message: message})
	}
	r.guard, r.listener = guard, ln
	fail := func(err error) error {
		if r.cancel != nil {
			r.cancel()
			r.wg.Wait()
			r.cancel = nil // Close has nothing left to stop
		}
		if r.ownStore {
			r.store.Close()
		}
		ln.Close()
		guard.Close()
		return err
	}
	r.store = r.cfg.Log
	if r.store == nil {
		kl, err := openKafkaLog(ctx, r.cfg, r.log)
		if err != nil {
			return fail(err)
		}
		r.store, r.ownStore = kl, true
	}
	end, err := r.store.EndOffset(ctx)
	if err != nil {
		return fail(fmt.Errorf("registry: reading the end of %s: %w", r.cfg.Topic, err))
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.goFunc(func() { r.readLoop(runCtx) })
	if err := r.waitApplied(ctx, end); err != nil {
		return fail(fmt.Errorf("registry: catching up with %s: %w", r.cfg.Topic, err))
	}
	r.goFunc(func() { r.writeLoop(runCtx) })
	r.http = &http.Server{Handler: guard.Handler(r.Handler()), ReadHeaderTimeout: 10 * time.Second}
	served := guard.Listener(ln)
	r.goFunc(func() {
		if err := r.http.Serve(served); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Error("REST server", "err", err)
		}
	})
	r.mu.Lock()
	subjects := len(r.mu.view.subjectNames(true, ""))
	r.mu.Unlock()
	r.log.Debug("schema registry caught up", "topic", r.cfg.Topic, "end_offset", end, "subjects", subjects, "instance", r.node)
	return nil
}

func (r *Registry) goFunc(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

// Addr is the REST listener's address (after Start).
func (r *Registry) Addr() string { return r.listener.Addr().String() }

// TLS reports whether the REST listener serves HTTPS (after Start).
func (r *Registry) TLS() bool { return r.guard.TLS() }

// Close stops serving, stops the reader and the writer and waits for
// every goroutine the registry started.
func (r *Registry) Close() error {
	r.closeOnce.Do(func() {
		if r.cancel == nil {
			return // never started, or Start failed and cleaned up
		}
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if r.http != nil {
			_ = r.http.Shutdown(shutdownCtx)
		}
		r.cancel()
		r.wg.Wait()
		if r.ownStore {
			r.store.Close()
		}
		r.guard.Close()
	})
	return nil
}

// readLoop applies the log's records to the view, in offset order, for as
// long as the registry runs.
func (r *Registry) readLoop(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		r.mu.Lock()
		from := r.mu.applied
		r.mu.Unlock()
		records, next, err := r.store.Read(ctx, from)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			r.mu.Lock()
			first := r.mu.readErr == nil
			r.mu.readErr = err
			r.mu.Unlock()
			if first {
				r.log.Warn("reading the schemas topic; retrying", "topic", r.cfg.Topic, "offset", from, "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		var skipped []error
		r.mu.Lock()
		for _, rec := range records {
			if err := r.mu.view.apply(rec.Offset, rec.Key, rec.Value); err != nil {
				skipped = append(skipped, err)
			}
		}
		if r.mu.readErr != nil {
			r.log.Info("reading the schemas topic again", "topic", r.cfg.Topic)
			r.mu.readErr = nil
		}
		if next > r.mu.applied {
			r.mu.applied = next
			close(r.mu.wake)
			r.mu.wake = make(chan struct{})
		}
		r.mu.Unlock()
		for _, err := range skipped {
			r.log.Warn("skipping a record", "topic", r.cfg.Topic, "err", err)
		}
	}
}

// waitApplied returns once every record below offset is applied.
func (r *Registry) waitApplied(ctx context.Context, offset int64) error {
	for {
		r.mu.Lock()
		applied, wake, readErr := r.mu.applied, r.mu.wake, r.mu.readErr
		r.mu.Unlock()
		if applied >= offset {
			return nil
		}
		select {
		case <-ctx.Done():
			if readErr != nil {
				return fmt.Errorf("%w (reading: %v)", ctx.Err(), readErr)
			}
			return ctx.Err()
		case <-wake:
		}
	}
}

// read runs f with the view locked; f must not keep what it finds in the
// view's maps beyond the call, nor do I/O.
func (r *Registry) read(f func(v *view)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r.mu.view)
}
