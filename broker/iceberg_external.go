package broker

// Registering Iceberg topics in an external REST catalog
// (iceberg.catalog.uri): after a commit round changed a table (an append,
// a compaction, the dead-letter table), the node makes the catalog point at
// the table's current state in the bucket, with iceberg-go's REST client:
//
//  1. the namespace (iceberg.namespace) is created if missing;
//  2. a table the catalog does not know is registered with the current
//     metadata location (registerTable): no window without the table;
//  3. a known one is brought up to date by one commitTable whose
//     requirements assert the table's uuid and the catalog's main snapshot
//     and whose updates add the schemas, specs and snapshots the catalog
//     lacks, move main, set changed properties and remove the snapshots the
//     bucket expired, so readers through the catalog see exactly the
//     bucket's snapshots and data files.
//
// The bucket stays the source of truth: the sync runs on its own goroutine
// (icebergExternalCatalog.run), so a slow or failing catalog never delays
// or fails a bucket commit. A failure (catalog down, denied, a conflict
// because the catalog moved on) is kept in the table's status
// (last_catalog_error), counted on /metrics and retried from a fresh load
// every icebergRetryAfterFailure and after every commit round. The REST
// catalog writes its own metadata files (NNNNN-<uuid>.metadata.json) into
// the table's metadata/ directory; the orphan cleanup deletes only .avro
// files there, never metadata files.

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-streaming/strata/tiering/iceberg"
)

// icebergCatalogSyncTimeout bounds one table's sync with the external catalog.
const icebergCatalogSyncTimeout = 30 * time.Second

// validateExternalCatalog checks iceberg.catalog.uri and its credentials.
// Errors never quote the token or the credential.
func (c *Config) validateExternalCatalog() error {
	if c.IcebergCatalogURI == "" {
		if c.IcebergCatalogToken != "" || c.IcebergCatalogCredential != "" || c.IcebergCatalogWarehouse != "" {
			return errors.New("broker: iceberg.catalog.token, iceberg.catalog.credential and iceberg.catalog.warehouse need iceberg.catalog.uri")
		}
		return nil
	}
	u, err := url.Parse(c.IcebergCatalogURI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("broker: iceberg.catalog.uri must be an http:// or https:// URL of an Iceberg REST catalog")
	}
	if u.User != nil {
		return errors.New("broker: iceberg.catalog.uri must not hold credentials: set iceberg.catalog.token or iceberg.catalog.credential")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("broker: iceberg.catalog.uri must not have a query or fragment")
	}
	if cred := c.IcebergCatalogCredential; cred != "" {
		if id, secret, ok := strings.Cut(cred, ":"); !ok || id == "" || secret == "" {
			return errors.New("broker: iceberg.catalog.credential must be <client_id>:<secret>")
		}
	}
	return nil
}

// icebergExternalCatalog keeps the external catalog in step with the
// tables this node commits. afterCommit (the committer's loop) marks
// tables to sync; run (its own goroutine) syncs them.
type icebergExternalCatalog struct {
	s                 *Server
	uri, warehouse    string
	token, credential string // secrets: never logged, shown or put in an error
	wake              chan struct{}
	failures          *prometheus.CounterVec

	// Run goroutine only.
	client     *rest.Catalog
	namespaces map[string]bool // known to exist in the catalog

	mu struct {
		sync.Mutex
		tables map[icebergCatalogIdent]*icebergExternalTable
	}
}

// icebergCatalogIdent names a table in the catalog.
type icebergCatalogIdent struct{ namespace, name string }

func (id icebergCatalogIdent) String() string { return id.namespace + "." + id.name }

// icebergExternalTable is one table's sync state (guarded by mu).
type icebergExternalTable struct {
	topic string
	dlq   bool           // the dead-letter table of topic
	tbl   *iceberg.Table // Load only: safe beside the committer's appends
	dirty bool           // changed (or failed) since the last sync
	// syncedVersion is the bucket metadata version the catalog was last
	// made to match (0: not yet, by this node).
	syncedVersion int
	lastError     string
}

func newIcebergExternalCatalog(s *Server) *icebergExternalCatalog {
	x := &icebergExternalCatalog{
		s: s, uri: strings.TrimRight(s.cfg.IcebergCatalogURI, "/"), warehouse: s.cfg.IcebergCatalogWarehouse,
		token: s.cfg.IcebergCatalogToken, credential: s.cfg.IcebergCatalogCredential,
		wake:       make(chan struct{}, 1),
		namespaces: map[string]bool{},
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_iceberg_catalog_sync_errors_total",
			Help: "Failed syncs of Iceberg tables with the external REST catalog (iceberg.catalog.uri), per topic (retried).",
		}, []string{"topic"}),
	}
	x.mu.tables = map[icebergCatalogIdent]*icebergExternalTable{}
	s.metrics.registry.MustRegister(x.failures)
	return x
}

// afterCommit marks the topic's tables for a sync if the round changed
// them or their last sync did not succeed, and wakes run. It does no I/O.
func (x *icebergExternalCatalog) afterCommit(topic string, cfg effectiveTopicConfig, tables *icebergTables, changed bool) {
	if x == nil || tables == nil {
		return
	}
	ns := cfg.values[icebergNamespaceConfig]
	wake := false
	x.mu.Lock()
	for id, e := range x.mu.tables {
		if e.topic == topic && id.namespace != ns {
			delete(x.mu.tables, id) // iceberg.namespace changed: the old entry stays in the catalog, unsynced
		}
	}
	for i, tbl := range []*iceberg.Table{tables.main, tables.dlq} {
		if tbl == nil {
			continue
		}
		dlq := i == 1
		id := icebergCatalogIdent{ns, topic}
		if dlq {
			id.name += icebergDLQSuffix
		}
		e := x.mu.tables[id]
		if e == nil || e.tbl != tbl {
			e = &icebergExternalTable{topic: topic, dlq: dlq, tbl: tbl, dirty: true}
			if old := x.mu.tables[id]; old != nil {
				e.syncedVersion, e.lastError = old.syncedVersion, old.lastError
			}
			x.mu.tables[id] = e
		}
		if changed || e.syncedVersion == 0 || e.lastError != "" {
			e.dirty = true
		}
		wake = wake || e.dirty
	}
	x.mu.Unlock()
	if wake {
		x.signal()
	}
}

// tablesChanged marks the topic's tables for a sync: a maintenance round
// committed to them (a compaction's replace snapshot).
func (x *icebergExternalCatalog) tablesChanged(topic string) {
	if x == nil {
		return
	}
	wake := false
	x.mu.Lock()
	for _, e := range x.mu.tables {
		if e.topic == topic {
			e.dirty, wake = true, true
		}
	}
	x.mu.Unlock()
	if wake {
		x.signal()
	}
}

// signal wakes the sync goroutine (once: a pending wake covers later marks).
func (x *icebergExternalCatalog) signal() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// forget drops the sync state of a topic this node no longer commits.
func (x *icebergExternalCatalog) forget(topic string) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for id, e := range x.mu.tables {
		if e.topic == topic {
			delete(x.mu.tables, id)
		}
	}
	x.failures.DeleteLabelValues(topic)
}

// status fills in the catalog fields of a topic's status: the main
// table's synced version, and the last error of either table.
func (x *icebergExternalCatalog) status(st *icebergTopicStatus) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var dlqErr string
	for _, e := range x.mu.tables {
		switch {
		case e.topic != st.Topic:
		case e.dlq:
			dlqErr = e.lastError
		default:
			st.CatalogMetadataVersion, st.LastCatalogError = e.syncedVersion, e.lastError
		}
	}
	if st.LastCatalogError == "" && dlqErr != "" {
		st.LastCatalogError = "dead-letter table: " + dlqErr
	}
}

// run syncs marked tables until the server stops: at once when woken, and
// every icebergRetryAfterFailure while a sync is failing.
func (x *icebergExternalCatalog) run() {
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	defer func() {
		if x.client != nil {
			_ = x.client.Close()
		}
	}()
	for {
		select {
		case <-x.s.ctx.Done():
			return
		case <-x.wake:
		case <-retry.C:
		}
		if x.syncMarked() {
			retry.Reset(icebergRetryAfterFailure)
		}
	}
}

// syncMarked syncs every marked table, one at a time with no lock held,
// and reports whether any failed.
func (x *icebergExternalCatalog) syncMarked() (failed bool) {
	type job struct {
		id  icebergCatalogIdent
		e   *icebergExternalTable
		tbl *iceberg.Table
	}
	var jobs []job
	x.mu.Lock()
	for id, e := range x.mu.tables {
		if e.dirty {
			e.dirty = false
			jobs = append(jobs, job{id, e, e.tbl})
		}
	}
	x.mu.Unlock()
	slices.SortFunc(jobs, func(a, b job) int { return strings.Compare(a.id.String(), b.id.String()) })
	for _, j := range jobs {
		if x.s.ctx.Err() != nil {
			return false
		}
		ctx, cancel := context.WithTimeout(x.s.ctx, icebergCatalogSyncTimeout)
		version, err := x.syncTable(ctx, j.id, j.tbl)
		cancel()
		x.mu.Lock()
		previous := j.e.lastError
		if err != nil {
			j.e.lastError = x.redact(err.Error())
			j.e.dirty = true
			failed = true
		} else {
			j.e.lastError = ""
			if version > 0 {
				j.e.syncedVersion = version
			}
		}
		msg := j.e.lastError
		x.mu.Unlock()
		// Logged when the error changes, not at every retry (the status
		// and the counter have each one).
		switch {
		case err != nil:
			x.failures.WithLabelValues(j.e.topic).Inc()
			if msg != previous {
				x.s.logger.Warn("iceberg: external catalog sync failed; retrying", "table", j.id.String(), "catalog", x.uri, "err", msg)
			}
		case previous != "":
			x.s.logger.Info("iceberg: external catalog in step again", "table", j.id.String(), "catalog", x.uri, "version", version)
		}
	}
	return failed
}

// redact removes the secrets from a message, should a server or a
// library have echoed one.
func (x *icebergExternalCatalog) redact(msg string) string {
	for _, secret := range []string{x.token, x.credential} {
		if secret != "" {
			msg = strings.ReplaceAll(msg, secret, "[redacted]")
		}
	}
	if _, secret, ok := strings.Cut(x.credential, ":"); ok && secret != "" {
		msg = strings.ReplaceAll(msg, secret, "[redacted]")
	}
	return msg
}

// catalogClient returns the REST client, made on first use (its config
// request is the first contact: a catalog that is down is retried).
func (x *icebergExternalCatalog) catalogClient(ctx context.Context) (*rest.Catalog, error) {
	if x.client != nil {
		return x.client, nil
	}
	var opts []rest.Option
	if x.warehouse != "" {
		opts = append(opts, rest.WithWarehouseLocation(x.warehouse))
	}
	if x.token != "" {
		opts = append(opts, rest.WithOAuthToken(x.token))
	} else if x.credential != "" {
		opts = append(opts, rest.WithCredential(x.credential))
	}
	cl, err := rest.NewCatalog(ctx, "strata", x.uri, opts...)
	if err != nil {
		return nil, x.explain("config", err)
	}
	x.client = cl
	return cl, nil
}

// explain wraps a catalog error with what was asked and, for a denial,
// which settings to check.
func (x *icebergExternalCatalog) explain(what string, err error) error {
	switch {
	case errors.Is(err, rest.ErrUnauthorized), errors.Is(err, rest.ErrOAuthError):
		return fmt.Errorf("catalog %s: %s: denied (401: check iceberg.catalog.token or iceberg.catalog.credential): %w", x.uri, what, err)
	case errors.Is(err, rest.ErrForbidden):
		return fmt.Errorf("catalog %s: %s: forbidden (403: the catalog's principal lacks the privilege): %w", x.uri, what, err)
	case errors.Is(err, rest.ErrServiceUnavailable):
		return fmt.Errorf("catalog %s: %s: unavailable (503): %w", x.uri, what, err)
	case errors.Is(err, rest.ErrCommitStateUnknown):
		return fmt.Errorf("catalog %s: %s: outcome unknown (5xx; the next sync starts from a fresh load): %w", x.uri, what, err)
	}
	return fmt.Errorf("catalog %s: %s: %w", x.uri, what, err)
}

// syncTable makes the catalog's table id match the bucket's current
// state of tbl and returns the bucket version it now matches (0 if the
// bucket has no table yet).
func (x *icebergExternalCatalog) syncTable(ctx context.Context, id icebergCatalogIdent, tbl *iceberg.Table) (int, error) {
	st, err := tbl.Load(ctx)
	if err != nil || st.Version == 0 {
		return 0, err
	}
	cl, err := x.catalogClient(ctx)
	if err != nil {
		return 0, err
	}
	if !x.namespaces[id.namespace] {
		ns := table.Identifier{id.namespace}
		exists, err := cl.CheckNamespaceExists(ctx, ns)
		if err != nil {
			return 0, x.explain("namespace "+id.namespace, err)
		}
		if !exists {
			err := cl.CreateNamespace(ctx, ns, nil)
			if err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
				return 0, x.explain("create namespace "+id.namespace, err)
			}
		}
		x.namespaces[id.namespace] = true
	}
	ident := table.Identifier{id.namespace, id.name}
	current, err := cl.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchNamespace):
		delete(x.namespaces, id.namespace) // dropped meanwhile: made again next time
		return 0, x.explain("load table "+id.String(), err)
	case errors.Is(err, catalog.ErrNoSuchTable):
		if _, err := cl.RegisterTable(ctx, ident, st.MetadataLocation); err != nil {
			if errors.Is(err, catalog.ErrNoSuchNamespace) {
				delete(x.namespaces, id.namespace)
			}
			return 0, x.explain("register table "+id.String(), err)
		}
		return st.Version, nil
	case err != nil:
		return 0, x.explain("load table "+id.String(), err)
	}
	reqs, updates, err := icebergCatalogUpdates(current.Metadata(), st.Metadata)
	if errors.Is(err, errIcebergCatalogAhead) {
		// Another node's later commit reached the catalog first.
		return st.Version, nil
	}
	if err != nil {
		return 0, fmt.Errorf("catalog %s: table %s: %w", x.uri, id, err)
	}
	if len(updates) == 0 {
		return st.Version, nil
	}
	if _, _, err := cl.CommitTable(ctx, ident, reqs, updates); err != nil {
		if errors.Is(err, rest.ErrCommitFailed) {
			return 0, x.explain("commit table "+id.String()+" (the catalog's table moved on; retried from a fresh load)", err)
		}
		return 0, x.explain("commit table "+id.String(), err)
	}
	return st.Version, nil
}

// errIcebergCatalogAhead: the catalog holds a later state of the table
// than the bucket state the sync started from.
var errIcebergCatalogAhead = errors.New("the catalog's table is ahead of this state")

// icebergCatalogUpdates returns the requirements and updates of the
// commitTable that turns the catalog's metadata of a table into the
// bucket's: the schemas, partition specs and snapshots the catalog lacks
// (snapshots in sequence order), the current schema, default spec, main
// branch and properties where they differ, and the removal of the
// snapshots the bucket no longer has. The requirements assert the table's
// uuid and the catalog's main snapshot, so a catalog that moved on
// meanwhile refuses the commit. No updates: the catalog is up to date.
// errIcebergCatalogAhead if the catalog's main snapshot is one the bucket
// state does not know and later than it; an error if it is another table
// or a history the bucket never had.
func icebergCatalogUpdates(cat, bucket table.Metadata) ([]table.Requirement, []table.Update, error) {
	if cat.TableUUID() != bucket.TableUUID() {
		return nil, nil, fmt.Errorf("the catalog's table is another table (uuid %s, the bucket's is %s): drop it from the catalog to have it registered again", cat.TableUUID(), bucket.TableUUID())
	}
	var catMain *int64
	if snap := cat.CurrentSnapshot(); snap != nil {
		id := snap.SnapshotID
		catMain = &id
	}
	if catMain != nil && bucket.SnapshotByID(*catMain) == nil {
		if cat.LastSequenceNumber() > bucket.LastSequenceNumber() {
			return nil, nil, errIcebergCatalogAhead
		}
		if snap := cat.CurrentSnapshot(); snap.SequenceNumber > minSequenceNumber(bucket) {
			return nil, nil, fmt.Errorf("the catalog's main snapshot %d is not in the bucket's table (written through the catalog?): Strata owns this table; its bucket metadata is the source of truth", *catMain)
		}
		// Older than everything the bucket retains: expired there.
	}
	var updates []table.Update
	catSchemas := map[int]bool{}
	for _, s := range cat.Schemas() {
		catSchemas[s.ID] = true
	}
	added := -1
	for _, s := range bucket.Schemas() {
		if !catSchemas[s.ID] {
			updates = append(updates, table.NewAddSchemaUpdate(s))
			added = s.ID
		}
	}
	if cur := bucket.CurrentSchema().ID; cur != cat.CurrentSchema().ID {
		if cur == added {
			cur = -1 // the last added: its id is the catalog's to assign
		}
		updates = append(updates, table.NewSetCurrentSchemaUpdate(cur))
	}
	catSpecs := map[int]bool{}
	for _, s := range cat.PartitionSpecs() {
		catSpecs[s.ID()] = true
	}
	for _, s := range bucket.PartitionSpecs() {
		if !catSpecs[s.ID()] {
			spec := s
			updates = append(updates, table.NewAddPartitionSpecUpdate(&spec, false))
		}
	}
	if bucket.DefaultPartitionSpec() != cat.DefaultPartitionSpec() {
		updates = append(updates, table.NewSetDefaultSpecUpdate(bucket.DefaultPartitionSpec()))
	}
	changed := map[string]string{}
	for k, v := range bucket.Properties() {
		if cv, ok := cat.Properties()[k]; !ok || cv != v {
			changed[k] = v
		}
	}
	if len(changed) > 0 {
		updates = append(updates, table.NewSetPropertiesUpdate(changed))
	}
	var missing []table.Snapshot
	for _, snap := range bucket.Snapshots() {
		if cat.SnapshotByID(snap.SnapshotID) == nil {
			missing = append(missing, snap)
		}
	}
	slices.SortFunc(missing, func(a, b table.Snapshot) int { return int(a.SequenceNumber - b.SequenceNumber) })
	for i := range missing {
		updates = append(updates, table.NewAddSnapshotUpdate(&missing[i]))
	}
	if snap := bucket.CurrentSnapshot(); snap != nil && (catMain == nil || *catMain != snap.SnapshotID) {
		updates = append(updates, table.NewSetSnapshotRefUpdate(table.MainBranch, snap.SnapshotID, table.BranchRef, 0, 0, 0))
	}
	var gone []int64
	for _, snap := range cat.Snapshots() {
		if bucket.SnapshotByID(snap.SnapshotID) == nil {
			gone = append(gone, snap.SnapshotID)
		}
	}
	if len(gone) > 0 {
		updates = append(updates, table.NewRemoveSnapshotsUpdate(gone, false))
	}
	reqs := []table.Requirement{table.AssertTableUUID(bucket.TableUUID()), table.AssertRefSnapshotID(table.MainBranch, catMain)}
	return reqs, updates, nil
}

// minSequenceNumber is the lowest sequence number of md's snapshots.
func minSequenceNumber(md table.Metadata) int64 {
	lowest := md.LastSequenceNumber()
	for _, snap := range md.Snapshots() {
		lowest = min(lowest, snap.SequenceNumber)
	}
	return lowest
}
