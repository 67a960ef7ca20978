package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	var out bytes.Buffer
	cmd := newVersionCmd()
	cmd.SetOut(&out)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"strata " + version, "commit: ", "go: " + runtime.Version()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out.String(), want)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	var out bytes.Buffer
	cmd := newVersionCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--output", "json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var info buildInfo
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info.Version == "" || info.Commit == "" || info.GoVersion != runtime.Version() || info.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("unexpected %+v", info)
	}
}

func TestVersionBadOutput(t *testing.T) {
	cmd := newVersionCmd()
	cmd.SetOut(new(bytes.Buffer))
	cmd.SetArgs([]string{"-o", "yaml"})
	if err := cmd.Execute(); err == nil {
		t.Fatal("want an error for -o yaml")
	}
}

func TestHealthcheck(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	}))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	for _, tc := range []struct {
		name, url string
		healthy   bool
	}{
		{"200", ok.URL + "/healthz", true},
		{"404", ok.URL + "/nope", false},
		{"503", down.URL + "/healthz", false},
		{"refused", closedURL + "/healthz", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newHealthcheckCmd()
			cmd.SetArgs([]string{"--url", tc.url, "--timeout", "2s"})
			err := cmd.ExecuteContext(context.Background())
			if (err == nil) != tc.healthy {
				t.Fatalf("healthy=%v, err=%v", tc.healthy, err)
			}
		})
	}
}
