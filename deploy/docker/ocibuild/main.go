// Command ocibuild assembles Strata's container image without a Docker
// engine: `make image` runs it to write bin/strata-image.tar, the same image
// deploy/docker/Dockerfile describes, for machines (CI, these ones) that have
// no daemon.
//
// The image has no base: two layers on scratch.
//
//	layer 1 (base)  /etc/passwd, /etc/group   root and nonroot (65532), as distroless
//	                /etc/ssl/certs/ca-certificates.crt   copied from the build machine
//	                /data (65532, 0750)  /tmp (1777)  /home/nonroot (65532, 0700)
//	layer 2 (app)   /strata (0755)       the static binary
//
// The output is a docker-archive tarball (manifest.json + config + layer
// blobs; what `docker load`, `podman load`, `crane push` and
// go-containerregistry's tarball.ImageFromPath read); the config follows
// the OCI image spec and carries the org.opencontainers.image.* labels.
// Builds are reproducible: every tar entry is sorted and stamped with
// --created (default $SOURCE_DATE_EPOCH, else the Unix epoch), owners are
// numeric, and the config carries no host-dependent field, so the same
// inputs give the same digest.
//
// This is a build tool: nothing in the strata binary imports it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	var opts imageOptions
	flag.StringVar(&opts.Binary, "binary", "", "static linux strata binary to put at /strata (required)")
	flag.StringVar(&opts.CACerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put at /etc/ssl/certs/ca-certificates.crt")
	flag.StringVar(&opts.Arch, "arch", "amd64", "image architecture (the binary's GOARCH)")
	flag.StringVar(&opts.Version, "version", "dev", "org.opencontainers.image.version and the tag")
	flag.StringVar(&opts.Revision, "revision", "", "org.opencontainers.image.revision (the git commit)")
	flag.StringVar(&opts.Repository, "repository", "strata", "image name the tarball is tagged with")
	out := flag.String("out", "bin/strata-image.tar", "tarball to write")
	created := flag.String("created", "", "image and file timestamps, RFC 3339 (default $SOURCE_DATE_EPOCH, else 1970-01-01)")
	flag.Parse()

	var err error
	if opts.Created, err = parseCreated(*created, os.Getenv("SOURCE_DATE_EPOCH")); err != nil {
		fail(err)
	}
	if opts.Binary == "" {
		fail(fmt.Errorf("--binary is required"))
	}
	id, err := writeImage(*out, opts)
	if err != nil {
		fail(err)
	}
	fmt.Printf("%s %s:%s image ID %s\n", *out, opts.Repository, opts.tag(), id)
}

// parseCreated picks the build timestamp: the flag, else SOURCE_DATE_EPOCH
// (seconds; the reproducible-builds convention), else the Unix epoch.
func parseCreated(flagValue, sourceDateEpoch string) (time.Time, error) {
	switch {
	case flagValue != "":
		t, err := time.Parse(time.RFC3339, flagValue)
		if err != nil {
			return time.Time{}, fmt.Errorf("--created: %w", err)
		}
		return t.UTC(), nil
	case sourceDateEpoch != "":
		sec, err := strconv.ParseInt(sourceDateEpoch, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
		}
		return time.Unix(sec, 0).UTC(), nil
	default:
		return time.Unix(0, 0).UTC(), nil
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "ocibuild: %v\n", err)
	os.Exit(1)
}
