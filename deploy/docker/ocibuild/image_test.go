package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImage builds the image from a freshly built static strata, twice, and
// reads it back as a container runtime would: same digest both times, the
// runtime config the Dockerfile promises, and a /strata that runs.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata (-short)")
	}
	dir := t.TempDir()
	binary := filepath.Join(dir, "strata")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=v9.9.9-test", "-o", binary, "./cmd/strata")
	build.Dir = filepath.Join("..", "..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	caCerts := "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(caCerts); err != nil {
		caCerts = filepath.Join(dir, "ca.crt")
		if err := os.WriteFile(caCerts, []byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := imageOptions{Binary: binary, CACerts: caCerts, Arch: runtime.GOARCH, Version: "v9.9.9-test", Revision: "0123abcd", Repository: "strata", Created: created}

	start := time.Now()
	first, second := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	d1, err := writeImage(first, opts)
	if err != nil {
		t.Fatal(err)
	}
	d2, err := writeImage(second, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("two image builds: %v", time.Since(start))
	if d1 != d2 {
		t.Fatalf("not reproducible: image IDs %s and %s", d1, d2)
	}
	if sumFile(t, first) != sumFile(t, second) {
		t.Fatal("not reproducible: the two tarballs differ")
	}

	img, err := tarball.ImageFromPath(first, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := img.ConfigName(); err != nil || id != d1 {
		t.Fatalf("image ID read back %s (%v), wrote %s", id, err, d1)
	}
	if layers, err := img.Layers(); err != nil || len(layers) != 2 {
		t.Fatalf("%d layers (%v), want base and app", len(layers), err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH || !cf.Created.Time.Equal(created) {
		t.Errorf("platform %s/%s created %v", cf.OS, cf.Architecture, cf.Created.Time)
	}
	if !slices.Equal(c.Entrypoint, []string{"/strata"}) {
		t.Errorf("entrypoint %q", c.Entrypoint)
	}
	if len(c.Cmd) == 0 || c.Cmd[0] != "server" || !slices.Contains(c.Cmd, "0.0.0.0:9092") || !slices.Contains(c.Cmd, "/data") {
		t.Errorf("cmd %q", c.Cmd)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q, want the nonroot 65532:65532", c.User)
	}
	for _, port := range []string{"9092/tcp", "9093/tcp", "9644/tcp", "8083/tcp"} {
		if _, ok := c.ExposedPorts[port]; !ok {
			t.Errorf("port %s not exposed (%v)", port, c.ExposedPorts)
		}
	}
	if _, ok := c.Volumes["/data"]; !ok || len(c.Volumes) != 1 {
		t.Errorf("volumes %v", c.Volumes)
	}
	if hc := c.Healthcheck; hc == nil || !slices.Equal(hc.Test, []string{"CMD", "/strata", "healthcheck", "--url", "http://127.0.0.1:9644/healthz"}) || hc.Interval <= 0 {
		t.Errorf("healthcheck %+v", hc)
	}
	for key, want := range map[string]string{
		"org.opencontainers.image.title":    "strata",
		"org.opencontainers.image.version":  "v9.9.9-test",
		"org.opencontainers.image.revision": "0123abcd",
		"org.opencontainers.image.created":  "2026-01-02T03:04:05Z",
		"org.opencontainers.image.source":   "https://github.com/strata-streaming/strata",
	} {
		if c.Labels[key] != want {
			t.Errorf("label %s = %q, want %q", key, c.Labels[key], want)
		}
	}

	// The flattened filesystem, as a runtime unpacks it.
	entries := map[string]*tar.Header{}
	var strata []byte
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[strings.TrimSuffix(hdr.Name, "/")] = hdr
		if !hdr.ModTime.Equal(created) {
			t.Errorf("%s stamped %v, want %v", hdr.Name, hdr.ModTime, created)
		}
		switch hdr.Name {
		case "strata":
			if strata, err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		case "etc/passwd":
			passwd, _ := io.ReadAll(tr)
			if !bytes.Contains(passwd, []byte("nonroot:x:65532:65532:")) {
				t.Errorf("/etc/passwd has no nonroot user:\n%s", passwd)
			}
		}
	}
	for name, check := range map[string]func(*tar.Header) bool{
		"strata":                            func(h *tar.Header) bool { return h.Mode&0o111 != 0 },
		"data":                              func(h *tar.Header) bool { return h.Typeflag == tar.TypeDir && h.Uid == 65532 },
		"etc/ssl/certs/ca-certificates.crt": func(h *tar.Header) bool { return h.Size > 0 },
		"tmp":                               func(h *tar.Header) bool { return h.Mode&0o1777 == 0o1777 },
	} {
		if h, ok := entries[name]; !ok || !check(h) {
			t.Errorf("/%s missing or wrong: %+v", name, h)
		}
	}

	// The extracted binary runs.
	extracted := filepath.Join(dir, "extracted-strata")
	if err := os.WriteFile(extracted, strata, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(extracted, "version", "--output", "json").Output()
	if err != nil {
		t.Fatalf("strata version from the image: %v", err)
	}
	var info struct{ Version, GoVersion string }
	if err := json.Unmarshal(out, &info); err != nil || info.Version != "v9.9.9-test" || info.GoVersion == "" {
		t.Fatalf("strata version from the image: %s (%v)", out, err)
	}
}

func TestParseCreated(t *testing.T) {
	for _, tc := range []struct {
		flag, epoch string
		want        time.Time
		fails       bool
	}{
		{"", "", time.Unix(0, 0).UTC(), false},
		{"", "1700000000", time.Unix(1700000000, 0).UTC(), false},
		{"2026-01-02T03:04:05+01:00", "1700000000", time.Date(2026, 1, 2, 2, 4, 5, 0, time.UTC), false},
		{"yesterday", "", time.Time{}, true},
		{"", "soon", time.Time{}, true},
	} {
		got, err := parseCreated(tc.flag, tc.epoch)
		if (err != nil) != tc.fails || !got.Equal(tc.want) {
			t.Errorf("parseCreated(%q, %q) = %v, %v", tc.flag, tc.epoch, got, err)
		}
	}
}

func TestTagSanitized(t *testing.T) {
	if got := (imageOptions{Version: "v1.2.3+dirty/x"}).tag(); got != "v1.2.3-dirty-x" {
		t.Errorf("tag %q", got)
	}
}

func sumFile(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(data)
}
