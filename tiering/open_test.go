package tiering_test

import (
	"errors"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-streaming/strata/tiering"
)

func TestOpenFileAndMem(t *testing.T) {
	dir := t.TempDir()
	store, err := tiering.Open(t.Context(), "file://"+dir+"/objects")
	if err != nil {
		t.Fatal(err)
	}
	if fs, ok := store.(*tiering.FileStore); !ok || fs.Root() != filepath.Join(dir, "objects") {
		t.Errorf("Open(file://%s/objects) = %T %+v, want a FileStore rooted there", dir, store, store)
	}
	store, err = tiering.Open(t.Context(), "mem://")
	if _, ok := store.(*tiering.MemStore); err != nil || !ok {
		t.Errorf("Open(mem://) = %T, %v; want a MemStore", store, err)
	}
}

// TestOpenRelativeFileURL: file://./rel is relative to the working directory.
func TestOpenRelativeFileURL(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for rawURL, want := range map[string]string{
		"file://./objects":  filepath.Join(dir, "objects"),
		"file://./a/b":      filepath.Join(dir, "a", "b"),
		"file://.":          dir,
		"file://../sibling": filepath.Join(filepath.Dir(dir), "sibling"),
	} {
		store, err := tiering.Open(t.Context(), rawURL)
		if err != nil {
			t.Errorf("Open(%q): %v", rawURL, err)
			continue
		}
		if got := store.(*tiering.FileStore).Root(); got != want {
			t.Errorf("Open(%q) root %s, want %s", rawURL, got, want)
		}
	}
}

func TestParseS3URL(t *testing.T) {
	for _, c := range []struct {
		url  string
		want tiering.S3Config
	}{
		{"s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1",
			tiering.S3Config{Bucket: "bucket", Prefix: "prefix", Endpoint: "http://127.0.0.1:9000", Region: "us-east-1", PathStyle: true}},
		{"s3://my.bucket-1", tiering.S3Config{Bucket: "my.bucket-1"}},
		{"s3://bucket/a/b/", tiering.S3Config{Bucket: "bucket", Prefix: "a/b"}},
		{"s3://bucket/p?endpoint=https://s3.example.com/&path_style=false&part_size=32MiB&concurrency=8&region=eu-west-1",
			tiering.S3Config{Bucket: "bucket", Prefix: "p", Endpoint: "https://s3.example.com", Region: "eu-west-1", PartSize: 32 << 20, UploadConcurrency: 8}},
		{"s3://bucket?part_size=5242880", tiering.S3Config{Bucket: "bucket", PartSize: 5 << 20}},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tiering.ParseS3URL(u)
		if err != nil {
			t.Errorf("ParseS3URL(%q): %v", c.url, err)
			continue
		}
		want := c.want
		if err := want.Validate(); err != nil { // fills the defaults
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("ParseS3URL(%q) = %+v, want %+v", c.url, got, want)
		}
	}
}

// TestOpenBadURLs: each mistake is one error wrapping ErrInvalidURL that
// says what is wrong, and never echoes a password.
func TestOpenBadURLs(t *testing.T) {
	for rawURL, mention := range map[string]string{
		"":                                  "no scheme",
		"objects":                           "no scheme",
		"/abs/path":                         "no scheme",
		"ftp://host/x":                      "unknown scheme",
		"%zz":                               "invalid URL",
		"file:relative":                     "no //",
		"file://host/x":                     "not local",
		"file://":                           "no directory",
		"file:///x?sync=1":                  "no query",
		"file://user:secret@localhost/x":    "no user",
		"mem://name":                        "just mem://",
		"s3://":                             "no bucket",
		"s3:///prefix":                      "no bucket",
		"s3://Bucket/x":                     "only a-z",
		"s3://ab":                           "3 to 63",
		"s3://-bucket":                      "not at either end",
		"s3://user:secret@bucket/x":         "AWS chain",
		"s3://bucket/a/../b":                "invalid object key",
		"s3://bucket/a//b":                  "empty segment",
		"s3://bucket?regoin=x":              `unknown parameter "regoin"`,
		"s3://bucket?region=a&region=b":     "2 times",
		"s3://bucket?region=":               "empty region",
		"s3://bucket?endpoint=ftp://h":      "not http(s)",
		"s3://bucket?endpoint=http://h/p":   "not http(s)",
		"s3://bucket?endpoint=127.0.0.1:90": "not http(s)",
		"s3://bucket?part_size=1MiB":        "below the minimum",
		"s3://bucket?part_size=big":         "not a positive size",
		"s3://bucket?part_size=-5":          "not a positive size",
		"s3://bucket?concurrency=0":         "not a positive integer",
		"s3://bucket?concurrency=1000":      "not in 1..64",
		"s3://bucket?path_style=maybe":      "not true or false",
		"s3://bucket#frag":                  "no fragment",
	} {
		_, err := tiering.Open(t.Context(), rawURL)
		if !errors.Is(err, tiering.ErrInvalidURL) {
			t.Errorf("Open(%q) = %v, want ErrInvalidURL", rawURL, err)
			continue
		}
		if !strings.Contains(err.Error(), mention) {
			t.Errorf("Open(%q) error %q does not mention %q", rawURL, err, mention)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) error %q echoes the password", rawURL, err)
		}
	}
}
