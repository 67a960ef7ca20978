// Package tiering will own Strata's object storage: the ObjectStore interface
// (put, ranged get, list, delete, head) with filesystem, in-memory and S3
// implementations, the upload of sealed segments with their indexes and a
// per-partition manifest, remote retention, and remote reads through a bounded
// on-disk chunk cache. Nothing is built here yet; the broker accepts an
// --object-store URL so the flag is stable when this lands.
package tiering
