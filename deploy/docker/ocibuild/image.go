package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image's runtime contract; deploy/docker/Dockerfile states the same.
const (
	nonrootUID = 65532 // distroless's "nonroot" user and group
	dataDir    = "/data"
)

// exposedPorts names what each port is for.
var exposedPorts = map[string]string{
	"9092/tcp": "Kafka listener",
	"9093/tcp": "controller (raft) listener",
	"9644/tcp": "admin HTTP: /metrics, /healthz, console",
	"8083/tcp": "Kafka Connect REST",
}

// defaultCmd runs one node that listens on every interface with its data in
// the /data volume; `docker run strata-image server --config …` replaces it.
var defaultCmd = []string{"server", "--listen", "0.0.0.0:9092", "--http-listen", "0.0.0.0:9644", "--data-dir", dataDir}

// imageOptions are ocibuild's inputs.
type imageOptions struct {
	Binary     string // path of the static strata binary
	CACerts    string // path of a PEM CA bundle
	Arch       string // GOARCH of the binary
	Version    string
	Revision   string
	Repository string
	Created    time.Time
}

func (o imageOptions) tag() string {
	// Tags allow [A-Za-z0-9_.-]; git describe's "+" or "/" do not fit.
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '.' || r == '-' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, o.Version)
}

// buildImage assembles the image in memory.
func buildImage(o imageOptions) (v1.Image, error) {
	binary, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("ocibuild: binary: %w", err)
	}
	caCerts, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("ocibuild: CA certificates: %w", err)
	}
	base, err := layer(o.Created, baseFiles(caCerts))
	if err != nil {
		return nil, err
	}
	app, err := layer(o.Created, []file{{path: "strata", mode: 0o755, data: binary}})
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(empty.Image,
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "ocibuild: users, CA certificates, /data", Comment: "base"}},
		mutate.Addendum{Layer: app, History: v1.History{Created: v1.Time{Time: o.Created}, CreatedBy: "ocibuild: COPY strata /strata", Comment: "app"}},
	)
	if err != nil {
		return nil, fmt.Errorf("ocibuild: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("ocibuild: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS = "linux"
	cf.Architecture = o.Arch
	cf.Created = v1.Time{Time: o.Created}
	cf.Config = imageConfig(o)
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("ocibuild: %w", err)
	}
	return img, nil
}

// imageConfig is the runtime configuration: entrypoint, user, ports, volume,
// health check and OCI labels.
func imageConfig(o imageOptions) v1.Config {
	ports := map[string]struct{}{}
	for p := range exposedPorts {
		ports[p] = struct{}{}
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       "strata",
		"org.opencontainers.image.description": "Strata: a Kafka-compatible streaming platform with tiered storage",
		"org.opencontainers.image.source":      "https://github.com/strata-streaming/strata",
		"org.opencontainers.image.version":     o.Version,
		"org.opencontainers.image.created":     o.Created.Format(time.RFC3339),
	}
	if o.Revision != "" {
		labels["org.opencontainers.image.revision"] = o.Revision
	}
	return v1.Config{
		Entrypoint:   []string{"/strata"},
		Cmd:          append([]string(nil), defaultCmd...),
		User:         fmt.Sprintf("%d:%d", nonrootUID, nonrootUID),
		WorkingDir:   dataDir,
		Env:          []string{"PATH=/", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		ExposedPorts: ports,
		Volumes:      map[string]struct{}{dataDir: {}},
		Labels:       labels,
		StopSignal:   "SIGTERM",
		Healthcheck: &v1.HealthConfig{
			Test:        []string{"CMD", "/strata", "healthcheck", "--url", "http://127.0.0.1:9644/healthz"},
			Interval:    10 * time.Second,
			Timeout:     5 * time.Second,
			StartPeriod: 30 * time.Second,
			Retries:     3,
		},
	}
}

// writeImage builds the image and writes it as a docker-archive tarball
// tagged repository:version; it returns the image ID (the config's digest,
// what `docker load` and `docker images --no-trunc` show). A docker-archive
// keeps no manifest, so the ID, not a manifest digest, names the image.
func writeImage(out string, o imageOptions) (v1.Hash, error) {
	img, err := buildImage(o)
	if err != nil {
		return v1.Hash{}, err
	}
	tag, err := name.NewTag(o.Repository+":"+o.tag(), name.WeakValidation)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("ocibuild: tag: %w", err)
	}
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return v1.Hash{}, fmt.Errorf("ocibuild: %w", err)
	}
	return img.ConfigName()
}

// file is one entry of a layer; a nil data with a directory mode is a
// directory.
type file struct {
	path     string // relative, no leading slash
	mode     int64
	uid, gid int
	dir      bool
	data     []byte
}

// baseFiles is the filesystem distroless/static:nonroot provides that the
// binary relies on: users, CA certificates and writable directories.
func baseFiles(caCerts []byte) []file {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonrootUID, nonrootUID)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonrootUID)
	return []file{
		{path: "etc", mode: 0o755, dir: true},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		{path: "etc/ssl", mode: 0o755, dir: true},
		{path: "etc/ssl/certs", mode: 0o755, dir: true},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caCerts},
		{path: "data", mode: 0o750, dir: true, uid: nonrootUID, gid: nonrootUID},
		{path: "home", mode: 0o755, dir: true},
		{path: "home/nonroot", mode: 0o700, dir: true, uid: nonrootUID, gid: nonrootUID},
		{path: "tmp", mode: 0o1777, dir: true},
	}
}

// layer writes files into an uncompressed tar, sorted by path, every entry
// stamped with created, and wraps it as an OCI layer (gzip is deterministic
// for the same input and level).
func layer(created time.Time, files []file) (v1.Layer, error) {
	sorted := append([]file(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].path < sorted[j].path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range sorted {
		hdr := &tar.Header{
			Name:    f.path,
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.gid,
			ModTime: created,
			Format:  tar.FormatPAX,
		}
		if f.dir {
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		} else {
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("ocibuild: tar %s: %w", f.path, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("ocibuild: tar %s: %w", f.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("ocibuild: tar: %w", err)
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
}
