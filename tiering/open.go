package tiering

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// Open returns the store an object store URL names (doc.go lists the
// forms). Any problem with the URL itself is one error wrapping
// ErrInvalidURL that says what is wrong; the URL is echoed with any
// password redacted.
func Open(ctx context.Context, rawURL string) (ObjectStore, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	switch u.Scheme {
	case "file":
		dir, err := fileURLPath(u)
		if err != nil {
			return nil, err
		}
		return NewFileStore(dir)
	case "mem":
		if u.Host != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("%w: %q: a memory store URL is just mem://", ErrInvalidURL, u.Redacted())
		}
		return NewMemStore(), nil
	case "s3":
		cfg, err := ParseS3URL(u)
		if err != nil {
			return nil, err
		}
		return NewS3Store(ctx, cfg)
	case "":
		return nil, fmt.Errorf("%w: %q has no scheme; use file:///abs/path, file://./rel/path, s3://bucket/prefix or mem://", ErrInvalidURL, u.Redacted())
	default:
		return nil, fmt.Errorf("%w: %q: unknown scheme %q; use file, s3 or mem", ErrInvalidURL, u.Redacted(), u.Scheme)
	}
}

// fileURLPath turns file:///abs/path into /abs/path and file://./rel (or
// file://../rel) into a path relative to the working directory.
func fileURLPath(u *url.URL) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: %q: %s; use file:///abs/path or file://./rel/path", ErrInvalidURL, u.Redacted(), why)
	}
	switch {
	case u.Opaque != "":
		return "", bad("no // after file:")
	case u.User != nil:
		return "", bad("a file URL takes no user")
	case u.RawQuery != "" || u.Fragment != "":
		return "", bad("a file URL takes no query or fragment")
	}
	switch u.Host {
	case "", "localhost":
		if u.Path == "" || u.Path == "/" {
			return "", bad("no directory")
		}
		return filepath.FromSlash(u.Path), nil
	case ".", "..":
		return filepath.Join(u.Host, filepath.FromSlash(u.Path)), nil
	default:
		return "", bad(fmt.Sprintf("host %q is not local", u.Host))
	}
}

// ParseS3URL reads s3://bucket[/prefix][?param=value&…] into an S3Config.
// Parameters: endpoint (http(s)://host[:port] of an S3-compatible service;
// turns on path-style addressing), region, path_style (true/false, to
// override), part_size (bytes, or with a KiB/MiB/GiB suffix) and
// concurrency (parts in flight per Put). Unknown parameters are errors, so
// a typo does not pass silently.
func ParseS3URL(u *url.URL) (S3Config, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %q: %s", ErrInvalidURL, u.Redacted(), fmt.Sprintf(format, args...))
	}
	if u.Scheme != "s3" {
		return S3Config{}, bad("scheme is not s3")
	}
	if u.Opaque != "" || u.Host == "" {
		return S3Config{}, bad("no bucket; use s3://bucket/prefix")
	}
	if u.User != nil {
		return S3Config{}, bad("credentials do not belong in the URL; they come from the AWS chain (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ~/.aws, instance role)")
	}
	if u.Fragment != "" {
		return S3Config{}, bad("an s3 URL takes no fragment")
	}
	cfg := S3Config{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return S3Config{}, bad("query: %v", err)
	}
	pathStyleSet := false
	for name, values := range query {
		if len(values) != 1 {
			return S3Config{}, bad("parameter %q given %d times", name, len(values))
		}
		value := values[0]
		switch name {
		case "endpoint":
			endpoint, err := url.Parse(value)
			if err != nil || (endpoint.Scheme != "http" && endpoint.Scheme != "https") || endpoint.Host == "" ||
				(endpoint.Path != "" && endpoint.Path != "/") || endpoint.RawQuery != "" || endpoint.User != nil {
				return S3Config{}, bad("endpoint %q is not http(s)://host[:port]", value)
			}
			cfg.Endpoint = strings.TrimSuffix(value, "/")
		case "region":
			if value == "" {
				return S3Config{}, bad("empty region")
			}
			cfg.Region = value
		case "path_style":
			b, err := strconv.ParseBool(value)
			if err != nil {
				return S3Config{}, bad("path_style %q is not true or false", value)
			}
			cfg.PathStyle, pathStyleSet = b, true
		case "part_size":
			n, err := parseByteSize(value)
			if err != nil {
				return S3Config{}, bad("part_size: %v", err)
			}
			cfg.PartSize = n
		case "concurrency":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return S3Config{}, bad("concurrency %q is not a positive integer", value)
			}
			cfg.UploadConcurrency = n
		default:
			return S3Config{}, bad("unknown parameter %q (known: endpoint, region, path_style, part_size, concurrency)", name)
		}
	}
	if cfg.Endpoint != "" && !pathStyleSet {
		cfg.PathStyle = true
	}
	if err := cfg.Validate(); err != nil {
		return S3Config{}, fmt.Errorf("%w (in %q)", err, u.Redacted())
	}
	return cfg, nil
}

// parseByteSize reads "16777216", "16MiB", "512KiB" or "1GiB".
func parseByteSize(s string) (int64, error) {
	multiplier := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if rest, ok := strings.CutSuffix(s, suffix); ok {
			s, multiplier = rest, m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/multiplier {
		return 0, fmt.Errorf("%q is not a positive size in bytes (or KiB, MiB, GiB)", s)
	}
	return n * multiplier, nil
}
