package broker

// The read-only Iceberg REST catalog (the Iceberg REST OpenAPI spec's read
// paths) over the tables of topics with iceberg.enabled=true: every node
// serves it on iceberg.catalog.listen (default 127.0.0.1:8181) and on its
// admin listener under /iceberg, so Spark, Trino, DuckDB or PyIceberg find
// the tables with a catalog URI. Tables are named like their topics, in
// their iceberg.namespace. loadTable reads the table's current metadata
// from the object store, so any node answers for any table. Writes answer
// 403 with the spec's error body: Strata owns these tables.
//
//	GET  /v1/config
//	GET  /v1/namespaces
//	GET  /v1/namespaces/{ns}                     (HEAD too)
//	GET  /v1/namespaces/{ns}/tables
//	GET  /v1/namespaces/{ns}/tables/{table}      loadTable (HEAD too)

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/strata-streaming/strata/tiering/iceberg"
)

// icebergCatalogPrefix is where the admin listener serves the catalog.
const icebergCatalogPrefix = "/iceberg"

// icebergLoadTimeout bounds a loadTable's reads of the object store.
const icebergLoadTimeout = 30 * time.Second

type icebergCatalog struct{ s *Server }

// icebergRESTError is the spec's ErrorModel, wrapped in "error".
type icebergRESTError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func writeCatalogError(w http.ResponseWriter, code int, typ, msg string) {
	var e icebergRESTError
	e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, code
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(e)
}

func writeCatalogJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// icebergTables lists the Iceberg topics by namespace.
func (c icebergCatalog) icebergTables() map[string][]string {
	out := map[string][]string{}
	for _, t := range c.s.topics.all() {
		cfg := c.s.topics.topicConfig(t)
		if icebergTopicEnabled(cfg) {
			ns := cfg.values[icebergNamespaceConfig]
			out[ns] = append(out[ns], t.name)
			if icebergTyped(cfg) {
				out[ns] = append(out[ns], t.name+icebergDLQSuffix)
			}
		}
	}
	for ns := range out {
		sort.Strings(out[ns])
	}
	return out
}

// handler serves the catalog with paths starting at /v1.
func (c icebergCatalog) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/config", func(w http.ResponseWriter, r *http.Request) {
		if !c.readOnly(w, r) {
			return
		}
		writeCatalogJSON(w, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}, "endpoints": []string{
			"GET /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
			"GET /v1/{prefix}/namespaces/{namespace}/tables", "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
			"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
		}})
	})
	mux.HandleFunc("/v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		if !c.readOnly(w, r) {
			return
		}
		if parent := r.URL.Query().Get("parent"); parent != "" {
			writeCatalogJSON(w, map[string]any{"namespaces": [][]string{}}) // namespaces are one level
			return
		}
		var names [][]string
		for ns := range c.icebergTables() {
			names = append(names, []string{ns})
		}
		sort.Slice(names, func(i, j int) bool { return names[i][0] < names[j][0] })
		if names == nil {
			names = [][]string{}
		}
		writeCatalogJSON(w, map[string]any{"namespaces": names})
	})
	mux.HandleFunc("/v1/namespaces/{ns}", func(w http.ResponseWriter, r *http.Request) {
		if !c.readOnly(w, r) {
			return
		}
		ns := r.PathValue("ns")
		if _, ok := c.icebergTables()[ns]; !ok {
			writeCatalogError(w, http.StatusNotFound, "NoSuchNamespaceException", fmt.Sprintf("namespace %q does not exist", ns))
			return
		}
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeCatalogJSON(w, map[string]any{"namespace": []string{ns}, "properties": map[string]string{}})
	})
	mux.HandleFunc("/v1/namespaces/{ns}/tables", func(w http.ResponseWriter, r *http.Request) {
		if !c.readOnly(w, r) {
			return
		}
		ns := r.PathValue("ns")
		tables, ok := c.icebergTables()[ns]
		if !ok {
			writeCatalogError(w, http.StatusNotFound, "NoSuchNamespaceException", fmt.Sprintf("namespace %q does not exist", ns))
			return
		}
		ids := make([]map[string]any, 0, len(tables))
		for _, name := range tables {
			ids = append(ids, map[string]any{"namespace": []string{ns}, "name": name})
		}
		writeCatalogJSON(w, map[string]any{"identifiers": ids})
	})
	mux.HandleFunc("/v1/namespaces/{ns}/tables/{table}", func(w http.ResponseWriter, r *http.Request) {
		if !c.readOnly(w, r) {
			return
		}
		c.loadTable(w, r, r.PathValue("ns"), r.PathValue("table"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeCatalogError(w, http.StatusForbidden, "ForbiddenException", "this catalog is read-only: Strata owns its tables")
			return
		}
		writeCatalogError(w, http.StatusNotFound, "NotFoundException", "no such catalog path "+r.URL.Path)
	})
	return mux
}

// readOnly answers anything but GET and HEAD with the spec's 403 body.
func (c icebergCatalog) readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	writeCatalogError(w, http.StatusForbidden, "ForbiddenException", "this catalog is read-only: Strata owns its tables (they change through their topics)")
	return false
}

func (c icebergCatalog) loadTable(w http.ResponseWriter, r *http.Request, ns, name string) {
	// <topic>~dlq is the dead-letter table of a topic in a typed mode.
	topic, dlq := strings.CutSuffix(name, icebergDLQSuffix)
	t := c.s.topics.get(topic)
	var cfg effectiveTopicConfig
	if t != nil {
		cfg = c.s.topics.topicConfig(t)
	}
	if t == nil || !icebergTopicEnabled(cfg) || cfg.values[icebergNamespaceConfig] != ns || (dlq && !icebergTyped(cfg)) {
		writeCatalogError(w, http.StatusNotFound, "NoSuchTableException", fmt.Sprintf("table %s.%s does not exist", ns, name))
		return
	}
	prefix, location, err := c.s.iceberg.tableLocation(topic, cfg)
	if err != nil {
		writeCatalogError(w, http.StatusInternalServerError, "ServerError", err.Error())
		return
	}
	if dlq {
		prefix, location = prefix+icebergDLQSuffix, location+icebergDLQSuffix
	}
	tbl, err := iceberg.Open(iceberg.Config{Store: c.s.objects, Prefix: prefix, Location: location})
	if err != nil {
		writeCatalogError(w, http.StatusInternalServerError, "ServerError", err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), icebergLoadTimeout)
	defer cancel()
	st, err := tbl.Load(ctx)
	switch {
	case err != nil && errors.Is(err, iceberg.ErrCorruptTable):
		writeCatalogError(w, http.StatusInternalServerError, "ServerError", err.Error())
		return
	case err != nil:
		writeCatalogError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", "object store: "+err.Error())
		return
	case st.Version == 0:
		writeCatalogError(w, http.StatusNotFound, "NoSuchTableException", fmt.Sprintf("table %s.%s has no metadata yet: its first commit has not happened", ns, name))
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeCatalogJSON(w, map[string]any{
		"metadata-location": st.MetadataLocation,
		"metadata":          json.RawMessage(st.MetadataJSON),
		"config":            map[string]string{},
	})
}

// serveIcebergCatalog starts the catalog's own listener, if configured. A
// port already taken is logged, not fatal: the admin listener serves the
// catalog under /iceberg too.
func (s *Server) serveIcebergCatalog() {
	addr := s.cfg.IcebergCatalogListen
	if addr == "" {
		return
	}
	// The admin listener's protection (admin.http.* TLS and
	// authentication, DESCRIBE on the cluster with an authorizer) applies
	// here too: table names and locations are not for every local process.
	guard, err := s.adminHTTPGuard()
	if err != nil {
		s.logger.Warn("iceberg catalog not served on iceberg.catalog.listen", "addr", addr, "err", err)
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		guard.Close()
		s.logger.Warn("iceberg catalog not served on iceberg.catalog.listen (the admin listener serves it under /iceberg)", "addr", addr, "err", err)
		return
	}
	srv := &http.Server{Handler: guard.Handler(icebergCatalog{s: s}.handler()), ReadHeaderTimeout: 10 * time.Second}
	s.icebergCatalogAddr = ln.Addr().String()
	ln = guard.Listener(ln)
	s.goTask(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error("iceberg catalog stopped", "err", err)
		}
	})
	s.goTask(func() {
		<-s.ctx.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		guard.Close()
	})
}

// mountIcebergCatalog serves the catalog on the admin listener at /iceberg/v1/….
func (s *Server) mountIcebergCatalog(mux *http.ServeMux) {
	mux.Handle(icebergCatalogPrefix+"/", http.StripPrefix(icebergCatalogPrefix, icebergCatalog{s: s}.handler()))
}
