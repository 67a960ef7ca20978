package serde

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-streaming/strata/internal/registrytest"
)

func startRegistry(t testing.TB) string { return registrytest.Start(t) }

// countingTransport counts the requests that reach the network.
type countingTransport struct {
	requests atomic.Int64
	next     http.RoundTripper
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.requests.Add(1)
	return c.next.RoundTrip(req)
}

// newTestClient is a client of url whose requests are counted.
func newTestClient(t testing.TB, url string, opts ...Opt) (*Client, *countingTransport) {
	t.Helper()
	counter := &countingTransport{next: http.DefaultTransport}
	c, err := NewClient(url, append([]Opt{HTTPClient(&http.Client{Transport: counter, Timeout: 10 * time.Second})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, counter
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustRegister registers text under subject or fails the test.
func mustRegister(t testing.TB, c *Client, subject string, text Text) Schema {
	t.Helper()
	s, err := c.Register(testContext(t), subject, text, false)
	if err != nil {
		t.Fatalf("register %s: %v", subject, err)
	}
	return s
}
