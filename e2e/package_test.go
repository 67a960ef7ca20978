package e2e

// The release artifacts that can be checked without a Docker engine or a
// Debian install: the .deb of `make package` (built by bin/nfpm from
// deploy/nfpm/nfpm.yaml, read back with archive/tar and a small ar reader)
// and the cross-compilation `make release` relies on. The container image
// has its own test beside its builder (deploy/docker/ocibuild).

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const nfpmInstall = "scripts/install-nfpm.sh (go install github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.48.0 into bin/)"

// TestDebPackage builds the .deb as `make package` does and checks its
// control fields, conffiles, maintainer scripts and files.
func TestDebPackage(t *testing.T) {
	nfpm := filepath.Join(moduleRoot, "bin", "nfpm")
	if _, err := os.Stat(nfpm); err != nil {
		missingTool(t, "bin/nfpm", nfpmInstall)
	}
	dir := t.TempDir()
	// The systemd unit and example configuration come from deploy/systemd;
	// stand-ins keep this test about the packaging while they are absent.
	unit := filepath.Join(moduleRoot, "deploy", "systemd", "strata.service")
	config := filepath.Join(moduleRoot, "deploy", "systemd", "server.properties")
	for path, stub := range map[*string]string{
		&unit:   "[Service]\nExecStart=/usr/bin/strata server --config /etc/strata/server.properties\n",
		&config: "node.id=1\nlog.dirs=/var/lib/strata\n",
	} {
		if _, err := os.Stat(*path); err != nil {
			t.Logf("%s not there yet: packaging a stand-in", *path)
			*path = filepath.Join(dir, filepath.Base(*path))
			if err := os.WriteFile(*path, []byte(stub), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	build := func(target string) string {
		if err := os.MkdirAll(target, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(nfpm, "package", "--config", "deploy/nfpm/nfpm.yaml", "--packager", "deb", "--target", target+"/")
		cmd.Dir = moduleRoot
		cmd.Env = append(os.Environ(), "PKG_VERSION=1.2.3~test", "PKG_ARCH=amd64", "STRATA_BINARY="+strataBin,
			"STRATA_UNIT="+unit, "STRATA_CONFIG="+config, "SOURCE_DATE_EPOCH=1700000000")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nfpm package: %v\n%s", err, out)
		}
		return filepath.Join(target, "strata_1.2.3~test_amd64.deb")
	}
	deb := build(filepath.Join(dir, "a"))
	data, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := os.ReadFile(build(filepath.Join(dir, "b"))); err != nil || !bytes.Equal(data, again) {
		t.Errorf("two builds with the same SOURCE_DATE_EPOCH differ (%v)", err)
	}

	members, err := readAr(data)
	if err != nil {
		t.Fatal(err)
	}
	if string(members["debian-binary"]) != "2.0\n" {
		t.Errorf("debian-binary %q", members["debian-binary"])
	}
	control := readTarGz(t, members["control.tar.gz"])
	fields := map[string]string{}
	for _, line := range strings.Split(string(control["control"].data), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, " ") {
			fields[k] = v
		}
	}
	for k, want := range map[string]string{"Package": "strata", "Version": "1.2.3~test", "Architecture": "amd64", "Section": "net"} {
		if fields[k] != want {
			t.Errorf("control %s: %q, want %q", k, fields[k], want)
		}
	}
	for _, k := range []string{"Maintainer", "Description", "Homepage"} {
		if fields[k] == "" {
			t.Errorf("control has no %s:\n%s", k, control["control"].data)
		}
	}
	if got := strings.TrimSpace(string(control["conffiles"].data)); got != "/etc/strata/server.properties" {
		t.Errorf("conffiles %q", got)
	}
	for _, script := range []string{"postinst", "prerm"} {
		if e, ok := control[script]; !ok || e.mode&0o111 == 0 {
			t.Errorf("%s missing or not executable", script)
		}
	}

	files := readTarGz(t, members["data.tar.gz"])
	wantBin, err := os.ReadFile(strataBin)
	if err != nil {
		t.Fatal(err)
	}
	for path, check := range map[string]func(tarEntry) error{
		"usr/bin/strata": func(e tarEntry) error {
			if e.mode != 0o755 || sha256.Sum256(e.data) != sha256.Sum256(wantBin) {
				return fmt.Errorf("mode %o, not the binary given", e.mode)
			}
			return nil
		},
		"lib/systemd/system/strata.service": func(e tarEntry) error { return expectFile(e, unit) },
		"etc/strata/server.properties":      func(e tarEntry) error { return expectFile(e, config) },
		"var/lib/strata":                    func(e tarEntry) error { return nil },
	} {
		e, ok := files[path]
		if !ok {
			t.Errorf("/%s not in the package", path)
			continue
		}
		if err := check(e); err != nil {
			t.Errorf("/%s: %v", path, err)
		}
	}
	// dpkg-deb agrees where it is installed.
	if dpkg, err := exec.LookPath("dpkg-deb"); err == nil {
		if out, err := exec.Command(dpkg, "--info", deb).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("Package: strata")) {
			t.Errorf("dpkg-deb --info: %v\n%s", err, out)
		}
	}
}

// TestCrossCompileLinuxArm64 is `make release`'s riskiest step: the static
// build for another architecture (no cgo anywhere in the binary).
func TestCrossCompileLinuxArm64(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles strata (-short)")
	}
	out := filepath.Join(t.TempDir(), "strata-linux-arm64")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/strata")
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64", "GOTOOLCHAIN=local")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 go build: %v\n%s", err, msg)
	}
	head := make([]byte, 20)
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.ReadFull(f, head); err != nil {
		t.Fatal(err)
	}
	// ELF, and e_machine 183 (EM_AARCH64), little-endian.
	if !bytes.HasPrefix(head, []byte("\x7fELF")) || head[18] != 183 || head[19] != 0 {
		t.Fatalf("not an arm64 ELF: % x", head)
	}
}

func expectFile(e tarEntry, source string) error {
	want, err := os.ReadFile(source)
	if err != nil {
		return err
	}
	if !bytes.Equal(e.data, want) {
		return errors.New("content differs from " + source)
	}
	return nil
}

// readAr splits a Unix ar archive (a .deb's outer format) into its members.
func readAr(data []byte) (map[string][]byte, error) {
	const magic = "!<arch>\n"
	if !bytes.HasPrefix(data, []byte(magic)) {
		return nil, errors.New("ar: bad magic")
	}
	members := map[string][]byte{}
	for rest := data[len(magic):]; len(rest) > 0; {
		if len(rest) < 60 {
			return nil, errors.New("ar: short header")
		}
		hdr := rest[:60]
		name := strings.TrimSuffix(strings.TrimSpace(string(hdr[0:16])), "/")
		size, err := strconv.Atoi(strings.TrimSpace(string(hdr[48:58])))
		if err != nil || size < 0 || 60+size > len(rest) {
			return nil, fmt.Errorf("ar: member %q: bad size", name)
		}
		members[name] = rest[60 : 60+size]
		rest = rest[60+size:]
		if size%2 == 1 && len(rest) > 0 { // members are padded to even offsets
			rest = rest[1:]
		}
	}
	return members, nil
}

type tarEntry struct {
	mode int64
	data []byte
}

// readTarGz reads a gzip'd tar into path (no leading ./) -> entry.
func readTarGz(t *testing.T, data []byte) map[string]tarEntry {
	t.Helper()
	if data == nil {
		t.Fatal("member missing (nfpm writes control.tar.gz and data.tar.gz)")
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]tarEntry{}
	tr := tar.NewReader(bufio.NewReader(gz))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(hdr.Name, "./"), "/")
		entries[name] = tarEntry{mode: hdr.Mode & 0o7777, data: body}
	}
}
