package broker

// testRESTCatalog is an Iceberg REST catalog on httptest for the external
// catalog tests: the endpoints the sync and a reader use, as the REST
// OpenAPI spec has them (config, oauth/tokens, namespaces, register,
// loadTable, commitTable), with the spec's error bodies (written as the
// built-in catalog writes them). Commits are
// applied with iceberg-go's own metadata builder (requirements validated,
// updates applied, Build) and stored as NNNNN-<uuid>.metadata.json in the
// table's metadata/ directory, as REST servers do; locations are file://
// paths of the same object store the broker writes.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

type testRESTCatalog struct {
	t   *testing.T
	srv *httptest.Server
	// token is the bearer token requests must carry; clientID:secret
	// are the client credentials /v1/oauth/tokens exchanges for it.
	token, clientID, secret string
	// prefix is the path prefix the config answer hands out (the
	// warehouse's), "" for none.
	prefix string

	mu struct {
		sync.Mutex
		down       bool // answer 503 to everything
		conflicts  int  // answer this many commitTable requests 409, as if another writer got there first
		namespaces map[string]bool
		tables     map[string]*testCatalogTable // by "ns.name"
		requests   []string                     // "METHOD path" of every request
		commits    int                          // commitTable requests applied
	}
}

type testCatalogTable struct {
	metadataLocation string
	metadata         table.Metadata
	version          int // of the files this catalog wrote
}

func newTestRESTCatalog(t *testing.T, token, clientID, secret, prefix string) *testRESTCatalog {
	c := &testRESTCatalog{t: t, token: token, clientID: clientID, secret: secret, prefix: prefix}
	c.mu.namespaces = map[string]bool{}
	c.mu.tables = map[string]*testCatalogTable{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/config", c.config)
	mux.HandleFunc("POST /v1/oauth/tokens", c.oauthTokens)
	base := "/v1/"
	if prefix != "" {
		base += prefix + "/"
	}
	mux.HandleFunc("POST "+base+"namespaces", c.createNamespace)
	mux.HandleFunc("GET "+base+"namespaces/{ns}", c.loadNamespace)
	mux.HandleFunc("HEAD "+base+"namespaces/{ns}", c.loadNamespace)
	mux.HandleFunc("POST "+base+"namespaces/{ns}/register", c.registerTable)
	mux.HandleFunc("GET "+base+"namespaces/{ns}/tables/{table}", c.loadTable)
	mux.HandleFunc("POST "+base+"namespaces/{ns}/tables/{table}", c.commitTable)
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.mu.requests = append(c.mu.requests, r.Method+" "+r.URL.Path)
		down := c.mu.down
		c.mu.Unlock()
		if down {
			writeCatalogError(w, http.StatusServiceUnavailable, "ServiceUnavailableException", "the catalog is down for the test")
			return
		}
		if r.URL.Path != "/v1/oauth/tokens" && r.Header.Get("Authorization") != "Bearer "+c.token {
			writeCatalogError(w, http.StatusUnauthorized, "NotAuthorizedException", "not authorized: no valid bearer token")
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *testRESTCatalog) setDown(down bool) {
	c.mu.Lock()
	c.mu.down = down
	c.mu.Unlock()
}

func (c *testRESTCatalog) commits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.commits
}

// table returns the catalog's current metadata of ns.name (nil if none).
func (c *testRESTCatalog) table(ns, name string) *testCatalogTable {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tbl := c.mu.tables[ns+"."+name]; tbl != nil {
		cp := *tbl
		return &cp
	}
	return nil
}

func (c *testRESTCatalog) config(w http.ResponseWriter, r *http.Request) {
	overrides := map[string]string{}
	if c.prefix != "" {
		if r.URL.Query().Get("warehouse") != c.prefix {
			writeCatalogError(w, http.StatusBadRequest, "BadRequestException", "unknown warehouse "+r.URL.Query().Get("warehouse"))
			return
		}
		overrides["prefix"] = c.prefix
	}
	writeCatalogJSON(w, map[string]any{"defaults": map[string]string{}, "overrides": overrides, "endpoints": []string{
		"GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}", "POST /v1/{prefix}/namespaces",
		"POST /v1/{prefix}/namespaces/{namespace}/register", "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
		"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	}})
}

// oauthTokens is the spec's client-credentials token exchange.
func (c *testRESTCatalog) oauthTokens(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_request"}`))
		return
	}
	if c.clientID == "" || r.PostForm.Get("client_id") != c.clientID || r.PostForm.Get("client_secret") != c.secret {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"unknown client or wrong secret"}`))
		return
	}
	writeCatalogJSON(w, map[string]any{"access_token": c.token, "token_type": "bearer", "expires_in": 3600,
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
}

func (c *testRESTCatalog) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace []string `json:"namespace"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Namespace) != 1 {
		writeCatalogError(w, http.StatusBadRequest, "BadRequestException", "want a one-level namespace")
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.namespaces[req.Namespace[0]] {
		writeCatalogError(w, http.StatusConflict, "AlreadyExistsException", "namespace exists")
		return
	}
	c.mu.namespaces[req.Namespace[0]] = true
	writeCatalogJSON(w, map[string]any{"namespace": req.Namespace, "properties": map[string]string{}})
}

func (c *testRESTCatalog) loadNamespace(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	ok := c.mu.namespaces[r.PathValue("ns")]
	c.mu.Unlock()
	if !ok {
		writeCatalogError(w, http.StatusNotFound, "NoSuchNamespaceException", "no namespace "+r.PathValue("ns"))
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeCatalogJSON(w, map[string]any{"namespace": []string{r.PathValue("ns")}, "properties": map[string]string{}})
}

// localPath is the file a file:// location names.
func localPath(location string) (string, error) {
	p, ok := strings.CutPrefix(location, "file://")
	if !ok {
		return "", fmt.Errorf("not a file:// location: %s", location)
	}
	return p, nil
}

func (c *testRESTCatalog) registerTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Name == "" {
		writeCatalogError(w, http.StatusBadRequest, "BadRequestException", "want name and metadata-location")
		return
	}
	path, err := localPath(req.MetadataLocation)
	if err != nil {
		writeCatalogError(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		writeCatalogError(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	md, err := table.ParseMetadataBytes(raw)
	if err != nil {
		writeCatalogError(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	ns := r.PathValue("ns")
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.namespaces[ns] {
		writeCatalogError(w, http.StatusNotFound, "NoSuchNamespaceException", "no namespace "+ns)
		return
	}
	if c.mu.tables[ns+"."+req.Name] != nil {
		writeCatalogError(w, http.StatusConflict, "AlreadyExistsException", "table exists")
		return
	}
	c.mu.tables[ns+"."+req.Name] = &testCatalogTable{metadataLocation: req.MetadataLocation, metadata: md}
	writeCatalogJSON(w, map[string]any{"metadata-location": req.MetadataLocation, "metadata": md, "config": map[string]string{}})
}

func (c *testRESTCatalog) loadTable(w http.ResponseWriter, r *http.Request) {
	tbl := c.table(r.PathValue("ns"), r.PathValue("table"))
	if tbl == nil {
		writeCatalogError(w, http.StatusNotFound, "NoSuchTableException", "no table "+r.PathValue("table"))
		return
	}
	writeCatalogJSON(w, map[string]any{"metadata-location": tbl.metadataLocation, "metadata": tbl.metadata, "config": map[string]string{}})
}

// commitTable validates the requirements against the current metadata and
// applies the updates with iceberg-go's MetadataBuilder, then writes the
// new metadata file next to the table's others.
func (c *testRESTCatalog) commitTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Requirements table.Requirements `json:"requirements"`
		Updates      table.Updates      `json:"updates"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeCatalogError(w, http.StatusBadRequest, "BadRequestException", "commit body: "+err.Error())
		return
	}
	key := r.PathValue("ns") + "." + r.PathValue("table")
	// One commit at a time, from validation to the swap (a test server:
	// the lock is held across the small metadata write).
	c.mu.Lock()
	defer c.mu.Unlock()
	tbl := c.mu.tables[key]
	if tbl == nil {
		writeCatalogError(w, http.StatusNotFound, "NoSuchTableException", "no table "+key)
		return
	}
	if c.mu.conflicts > 0 {
		c.mu.conflicts--
		writeCatalogError(w, http.StatusConflict, "CommitFailedException", "requirement failed: the table changed meanwhile (injected)")
		return
	}
	for _, req := range req.Requirements {
		if err := req.Validate(tbl.metadata); err != nil {
			writeCatalogError(w, http.StatusConflict, "CommitFailedException", "requirement failed: "+err.Error())
			return
		}
	}
	builder, err := table.MetadataBuilderFromBase(tbl.metadata, tbl.metadataLocation)
	if err != nil {
		writeCatalogError(w, http.StatusInternalServerError, "ServerError", err.Error())
		return
	}
	for _, u := range req.Updates {
		if err := u.Apply(builder); err != nil {
			writeCatalogError(w, http.StatusBadRequest, "BadRequestException", u.Action()+": "+err.Error())
			return
		}
	}
	md, err := builder.Build()
	if err != nil {
		writeCatalogError(w, http.StatusBadRequest, "BadRequestException", "build: "+err.Error())
		return
	}
	raw, err := json.Marshal(md)
	if err != nil {
		writeCatalogError(w, http.StatusInternalServerError, "ServerError", err.Error())
		return
	}
	tbl.version++
	location := fmt.Sprintf("%s/metadata/%05d-%s.metadata.json", md.Location(), tbl.version, uuid.NewString())
	path, err := localPath(location)
	if err == nil {
		err = os.WriteFile(path, raw, 0o644)
	}
	if err != nil {
		writeCatalogError(w, http.StatusInternalServerError, "ServerError", err.Error())
		return
	}
	tbl.metadata, tbl.metadataLocation = md, location
	c.mu.commits++
	writeCatalogJSON(w, map[string]any{"metadata-location": location, "metadata": json.RawMessage(raw)})
}

// catalogMetadataFiles lists the metadata files the catalog wrote into a
// table's metadata/ directory.
func catalogMetadataFiles(t *testing.T, tableDir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tableDir, "metadata", "0*-*.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}
