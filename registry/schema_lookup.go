package registry

// Schema lookups for the broker's typed Iceberg modes
// (iceberg.mode=value_schema_id_prefix and value_schema_latest): like
// CheckRecord they answer from the in-memory view with no network I/O, so
// the broker's Iceberg committer asks the node's registry directly. The
// broker names the interface they satisfy (broker.IcebergSchemaRegistry).

import (
	"context"
	"fmt"

	"github.com/strata-streaming/strata/registry/schema"
)

// ParsedSchema returns the schema id names, parsed by its format package
// with its references resolved (cached like CheckRecord's). An id that no
// schema has is a *RecordError of kind ErrUnknownSchemaID.
func (r *Registry) ParsedSchema(id int) (schema.Type, schema.Parsed, error) {
	cs, err := r.checkedSchema(id, "")
	if err != nil {
		return "", nil, err
	}
	return cs.typ, cs.parsed, nil
}

// LatestSchemaID is the schema id of subject's latest live version; a
// subject without one is a *RecordError of kind ErrWrongSubject.
func (r *Registry) LatestSchemaID(subject string) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	version := r.mu.view.latest(subject, false)
	if version == 0 {
		return 0, recordErrorf(ErrWrongSubject, "subject '%s' has no live version in the schema registry", subject)
	}
	return r.mu.view.subjects[subject].versions[version].id, nil
}

// CatchUp returns once the view holds every record the schemas topic had
// when it was called (one ListOffsets, then waiting for the reader): a
// schema registered through another node is then known here.
func (r *Registry) CatchUp(ctx context.Context) error {
	end, err := r.store.EndOffset(ctx)
	if err != nil {
		return fmt.Errorf("registry: reading the end of %s: %w", r.cfg.Topic, err)
	}
	if err := r.waitApplied(ctx, end); err != nil {
		return fmt.Errorf("registry: catching up with %s: %w", r.cfg.Topic, err)
	}
	return nil
}
