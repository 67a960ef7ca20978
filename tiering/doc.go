// Package tiering owns Strata's object storage: the ObjectStore interface
// and its three implementations, the per-partition manifest of remote
// segments with its key layout, and the bounded on-disk chunk cache remote
// reads go through. It imports no other Strata package.
//
// # The ObjectStore contract
//
// An ObjectStore is a flat namespace of objects addressed by key. Every
// implementation keeps these rules, and tiering/storetest checks each of
// them against each implementation (memory, files, S3 on a real MinIO):
//
//  1. Keys. '/'-separated segments, at most MaxKeyLength (1024) bytes of
//     UTF-8; no empty, ".", ".." or ".strata-tmp-…" segment, none over 255
//     bytes, no NUL or backslash (ValidateKey). So a key never starts or
//     ends with '/', and can never name a path outside a FileStore's root.
//     A bad key fails every method with ErrInvalidKey.
//  2. Put(ctx, key, r, size) reads exactly size bytes and stores them,
//     replacing any previous object. Readers see the old object or the
//     whole new one, never a mixture; concurrent Puts of one key leave one
//     writer's bytes. If r ends early or has more than size bytes, Put
//     fails with ErrSizeMismatch; a failed or cancelled Put leaves the
//     previous object (or none) and no debris.
//  3. Get opens the whole object; GetRange(ctx, key, offset, length) a part
//     (drawn below). A range running past the end is a short read, as HTTP
//     ranges are; an empty object has no valid range. The caller closes
//     the reader.
//  4. Head returns ObjectInfo: size, modification time (S3 keeps whole
//     seconds) and an ETag, an opaque token that changes whenever the
//     object is overwritten with different bytes.
//  5. List(ctx, prefix) returns every object whose key starts with prefix —
//     a string prefix, so "a" matches "a/x" and "ab" — sorted by key and
//     complete (S3's 1000-key pages are followed internally). No match is
//     an empty slice, not an error.
//  6. Delete is idempotent: deleting a missing key succeeds.
//  7. Errors wrap package sentinels with the operation and key, so test
//     them with errors.Is: ErrNotFound (Get, GetRange, Head of a missing
//     key), ErrInvalidKey, ErrInvalidRange, ErrSizeMismatch, ErrInvalidURL.
//  8. Context. A cancelled or expired ctx fails every method with an error
//     wrapping ctx.Err(); cancelling while a Get reader is open fails its
//     following reads; a Put whose ctx ends mid-stream stores nothing.
//  9. All methods are safe for concurrent use. Use no store after Close.
//
// GetRange, for an object of size bytes:
//
//	object    |0 .................................. size-1|
//	range          |offset ...... offset+length-1|            those bytes
//	range                                 |offset ............|..→ cut at size-1
//	invalid   offset < 0, length <= 0, or offset >= size       ErrInvalidRange
//
// # Choosing a store: URLs
//
// Open(ctx, url) turns the broker's --object-store URL into a store. Any
// mistake in the URL is one error wrapping ErrInvalidURL that names it.
//
//	file:///abs/path          FileStore rooted at /abs/path (created if missing);
//	                          the broker's default is file://<data-dir>/objects
//	file://./rel/path         FileStore relative to the working directory
//	                          (file://../rel also works)
//	mem://                    a fresh MemStore (tests)
//	s3://bucket[/prefix][?endpoint=http(s)://host:port][&region=R]
//	     [&path_style=true|false][&part_size=16MiB][&concurrency=4]
//	                          S3Store; every key is stored as prefix/key
//
// For s3 URLs: credentials never go in the URL; they come from the
// standard AWS chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE
// and ~/.aws files, web identity, instance roles), and AWS_CA_BUNDLE is
// honoured. An endpoint selects an S3-compatible service (MinIO, Ceph, R2…)
// and turns on path-style addressing (endpoint/bucket/key) unless
// path_style=false. The region comes from the URL, else the AWS chain, else
// (with an endpoint only) us-east-1. Unknown parameters are errors.
// Open sends no request: a wrong bucket or bad credentials show on first use.
//
// # FileStore
//
// Key "a/b/c" is the file <root>/a/b/c. Put writes <dir>/.strata-tmp-*,
// fsyncs it, renames it over the target and fsyncs the directory
// (directories it creates are fsynced into their parents too), so an object
// survives a crash whole or not at all. Delete removes the file, fsyncs the
// directory and removes directories it left empty (never the root). List
// walks only the directory named by the prefix's complete segments and skips
// temporary files and files no key can name. One limit the others lack: a
// key cannot also be a directory of keys ("a" and "a/b"); the second Put
// fails. A crash during Put can leave a .strata-tmp-* file behind; nothing
// removes those yet.
//
// # S3Store
//
// aws-sdk-go-v2. An object under part_size (default 16 MiB) is read into
// memory and sent with one PutObject (plain-HTTP endpoints need a seekable,
// signed body). A larger one is a multipart upload: parts of part_size are
// read from the caller's reader in order and up to concurrency of them are
// in flight at once (memory: concurrency × part_size); any failure or
// cancellation aborts the upload so no parts linger. Every upload (the
// PutObject, each part) carries a CRC-32C checksum that the service
// verifies. S3's limit of 10000 parts caps an object at 10000 × part_size
// (156 GiB at the default). Head of a missing bucket reports ErrNotFound
// (HEAD responses have no body to say which); other operations name
// NoSuchBucket. Close does nothing: idle connections time out (90 s).
//
// # Testing
//
// tiering/storetest.Run is the contract suite; a new implementation passes
// it before anything uses it. The S3 run needs bin/minio (built by make
// deps, scripts/install-test-deps.sh): the tests start it once on free
// loopback ports with a temporary data directory, create a bucket, give each
// test its own prefix, verify what landed with minio-go (an independent
// client) and stop the server by PID in TestMain. Without bin/minio the S3
// tests skip, or fail when CI is set.
//
// # Manifests and keys (manifest.go)
//
// A partition's remote segments are listed in its manifest, the source of
// truth for what is remote: an object no manifest names is garbage, and a
// bucket alone is enough to recover a topic (FindTopicManifests). Layout:
//
//	v1/<topic>-<topic-id hex>/<partition>/manifest
//	v1/<topic>-<topic-id hex>/<partition>/<base offset, 20 digits>-<upload-id>.log
//	v1/<topic>-<topic-id hex>/<partition>/<base offset, 20 digits>-<upload-id>.index
//	v1/<topic>-<topic-id hex>/<partition>/<base offset, 20 digits>-<upload-id>.timeindex
//
// A fresh upload ID per attempt means a retry never overwrites an object a
// reader may be using; the manifest says which attempt counts. It is
// validated on every encode and decode (sorted, non-overlapping segments,
// sane sizes and IDs), and FuzzDecodeManifest checks that decoding never
// panics and that whatever decodes re-encodes.
//
// # Chunk cache (chunkcache.go)
//
// ChunkCache serves ranged reads of immutable objects from fixed-size
// chunks kept as files in one directory, bounded in bytes with LRU
// eviction; concurrent misses of one chunk share one GetRange; read-ahead
// prefetches the chunks after a read; TryReadAt answers only from what is
// cached, so callers can keep network waits off latency-sensitive paths.
//
// The broker's use of all this (upload, retention, remote fetches) is in
// broker/tiered.go and ARCHITECTURE.md, "Tiered storage".
package tiering
