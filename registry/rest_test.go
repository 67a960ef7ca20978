package registry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	v1 = `{"type":"record","name":"User","fields":[{"name":"id","type":"long"}]}`
	// v2 adds a field with a default: BACKWARD compatible with v1.
	v2 = `{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"email","type":"string","default":""}]}`
	// bad adds one without a default: not BACKWARD compatible.
	bad = `{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"age","type":"int"}]}`
)

func TestRegistryRESTBasics(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	a.want("GET", "/", nil, 200, `{}`)
	a.want("GET", "/schemas/types", nil, 200, `["AVRO","JSON","PROTOBUF"]`)
	a.want("GET", "/contexts", nil, 200, `["."]`)
	a.want("GET", "/subjects", nil, 200, `[]`)
	a.want("GET", "/schemas", nil, 200, `[]`)
	a.want("GET", "/config", nil, 200, `{"compatibilityLevel":"BACKWARD"}`)
	a.want("GET", "/mode", nil, 200, `{"mode":"READWRITE"}`)
	a.want("GET", "/nope", nil, 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
	a.want("GET", "/subjects/s/versions/1/nope", nil, 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
	a.want("DELETE", "/schemas/types", nil, 405, `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`)
	a.want("GET", "/subjects/s", nil, 405, `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`)
	a.want("POST", "/", nil, 405, `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`)
	a.want("DELETE", "/mode", nil, 405, `{"error_code":405,"message":"HTTP 405 Method Not Allowed"}`)
}

func TestRegistryRegisterAndRead(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	id := a.register("users-value", v1)
	a.want("GET", "/subjects", nil, 200, `["users-value"]`)
	a.want("GET", "/subjects/users-value/versions", nil, 200, `[1]`)
	one := fmt.Sprintf(`{"subject":"users-value","version":1,"id":%d,"schema":%q}`, id, v1)
	for _, v := range []string{"1", "latest", "-1"} {
		a.want("GET", "/subjects/users-value/versions/"+v, nil, 200, one)
	}
	if status, body := a.do("GET", "/subjects/users-value/versions/1/schema", nil); status != 200 || body != v1 {
		t.Fatalf("raw schema: %d %s", status, body)
	}
	a.want("GET", fmt.Sprintf("/schemas/ids/%d", id), nil, 200, fmt.Sprintf(`{"schema":%q}`, v1))
	a.want("GET", fmt.Sprintf("/schemas/ids/%d?subject=users-value", id), nil, 200, fmt.Sprintf(`{"schema":%q}`, v1))
	if status, body := a.do("GET", fmt.Sprintf("/schemas/ids/%d/schema", id), nil); status != 200 || body != v1 {
		t.Fatalf("raw schema by id: %d %s", status, body)
	}

	// The same schema again, spaced differently: the same id, no version.
	spaced := strings.ReplaceAll(v1, ",", " ,\n ")
	if again := a.register("users-value", spaced); again != id {
		t.Fatalf("re-registering gave id %d, want %d", again, id)
	}
	a.want("GET", "/subjects/users-value/versions", nil, 200, `[1]`)
	// The same schema under another subject: the same id.
	if other := a.register("other-value", v1); other != id {
		t.Fatalf("the same schema in another subject got id %d, want %d", other, id)
	}
	a.want("GET", fmt.Sprintf("/schemas/ids/%d/versions", id), nil, 200, `[{"subject":"other-value","version":1},{"subject":"users-value","version":1}]`)
	a.want("GET", fmt.Sprintf("/schemas/ids/%d/subjects", id), nil, 200, `["other-value","users-value"]`)

	// A compatible change: version 2 with a new id.
	id2 := a.register("users-value", v2)
	if id2 == id {
		t.Fatal("a new schema reused an id")
	}
	a.want("GET", "/subjects/users-value/versions", nil, 200, `[1,2]`)
	a.want("GET", "/subjects/users-value/versions/latest", nil, 200, fmt.Sprintf(`{"subject":"users-value","version":2,"id":%d,"schema":%q}`, id2, v2))
	// An incompatible one: 409, naming the field.
	a.fails("POST", "/subjects/users-value/versions", map[string]string{"schema": bad}, 409, 409, "incompatible", "age", "version 2")

	a.want("GET", "/subjects?subjectPrefix=users", nil, 200, `["users-value"]`)
	var all []subjectSchema
	a.ok("GET", "/schemas", nil, &all)
	if len(all) != 3 || all[0].Subject != "other-value" || all[2].Version != 2 {
		t.Fatalf("GET /schemas: %+v", all)
	}
	a.ok("GET", "/schemas?subjectPrefix=users&latestOnly=true", nil, &all)
	if len(all) != 1 || all[0].Version != 2 || all[0].ID != id2 {
		t.Fatalf("GET /schemas latestOnly: %+v", all)
	}

	// Lookup.
	a.want("POST", "/subjects/users-value", map[string]string{"schema": spaced}, 200, one)
	a.fails("POST", "/subjects/users-value", map[string]string{"schema": bad}, 404, 40403, "Schema not found")
	a.fails("POST", "/subjects/nobody", map[string]string{"schema": v1}, 404, 40401, "Subject 'nobody' not found.")
	a.fails("POST", "/subjects/users-value", map[string]string{"schema": "{"}, 422, 42201, "Invalid schema")
}

func TestRegistryRequestErrors(t *testing.T) {
	r := startRegistry(t, NewMemoryLog(), func(c *Config) { c.MaxRequestBytes = 1 << 10 })
	a := newAPI(t, r)
	id := a.register("s", v1)
	for _, tc := range []struct {
		method, path string
		body         any
		status, code int
		msg          string
	}{
		{"POST", "/subjects/s/versions", `{"schema":`, 400, 400, "Unreadable JSON"},
		{"POST", "/subjects/s/versions", `{"schema":"\"int\""} {}`, 400, 400, "Unreadable JSON"},
		{"POST", "/subjects/s/versions", `{"schema":5}`, 422, 422, "schema"},
		{"POST", "/subjects/s/versions", `{"schema":"` + strings.Repeat("x", 2<<10) + `"}`, 413, 42201, "larger than 1024 bytes"},
		{"POST", "/subjects/s/versions", ``, 422, 42201, "Empty schema"},
		{"POST", "/subjects/s/versions", map[string]string{"schema": `{"type":"record","name":"R"}`}, 422, 42201, "fields"},
		{"POST", "/subjects/s/versions", map[string]string{"schema": `"int"`, "schemaType": "XML"}, 422, 42201, "unknown schema type XML"},
		{"POST", "/subjects/s/versions", map[string]string{"schema": `"int"`, "schemaType": "PROTOBUF"}, 422, 42201, "syntax error"},
		{"POST", "/subjects/s/versions", map[string]string{"schema": `{"type":"nope"}`, "schemaType": "JSON"}, 422, 42201, "Invalid schema"},
		{"POST", "/subjects/s/versions", map[string]any{"schema": v2, "id": 100}, 422, 42205, "not in import mode"},
		{"GET", "/subjects/s/versions/abc", nil, 422, 42202, "'abc' is not a valid version"},
		{"GET", "/subjects/s/versions/0", nil, 422, 42202, "'0'"},
		{"GET", "/subjects/s/versions/-2", nil, 422, 42202, "'-2'"},
		{"GET", "/subjects/s/versions/2147483648", nil, 422, 42202, "2147483648"},
		{"DELETE", "/subjects/s/versions/abc", nil, 422, 42202, "'abc'"},
		{"POST", "/compatibility/subjects/s/versions/x", map[string]string{"schema": v1}, 422, 42202, "'x'"},
		{"GET", "/subjects/s/versions/7", nil, 404, 40402, "Version 7 not found."},
		{"GET", "/subjects/nope/versions/1", nil, 404, 40401, "Subject 'nope' not found."},
		{"GET", "/subjects/nope/versions", nil, 404, 40401, "Subject 'nope' not found."},
		{"GET", "/schemas/ids/999", nil, 404, 40403, "Schema 999 not found"},
		{"GET", "/schemas/ids/999/schema", nil, 404, 40403, "999"},
		{"GET", "/schemas/ids/999/versions", nil, 404, 40403, "999"},
		{"GET", "/schemas/ids/999/subjects", nil, 404, 40403, "999"},
		{"GET", "/schemas/ids/abc", nil, 404, 404, "HTTP 404"},
		{"PUT", "/config", map[string]string{"compatibility": "SIDEWAYS"}, 422, 42203, "Invalid compatibility level"},
		{"PUT", "/config", ``, 422, 42203, "Invalid compatibility level"},
		{"PUT", "/mode", map[string]string{"mode": "WRITEONLY"}, 422, 42204, "Invalid mode"},
		{"GET", "/config/s", nil, 404, 40408, "Subject 's' does not have subject-level compatibility configured"},
		{"DELETE", "/config/s", nil, 404, 40408, "subject-level compatibility"},
		{"GET", "/mode/s", nil, 404, 40409, "Subject 's' does not have subject-level mode configured"},
		{"DELETE", "/mode/s", nil, 404, 40409, "subject-level mode"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			api{t, a.base}.fails(tc.method, tc.path, tc.body, tc.status, tc.code, tc.msg)
		})
	}
	// A body of an unsupported media type.
	req, _ := http.NewRequest("POST", a.base+"/subjects/s/versions", strings.NewReader(`{"schema":"\"int\""}`))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain body: %d", resp.StatusCode)
	}
	// The media types Confluent's clients send are all read.
	for _, ct := range []string{"application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json", "application/json", "application/octet-stream", "application/json; charset=utf-8"} {
		req, _ := http.NewRequest("POST", a.base+"/subjects/s", strings.NewReader(`{"schema":`+jsonString(v1)+`}`))
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got subjectSchema
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil || got.ID != id {
			t.Fatalf("Content-Type %s: %d %+v %v", ct, resp.StatusCode, got, err)
		}
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestRegistryDeleteRules(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	id1 := a.register("s", v1)
	id2 := a.register("s", v2)

	// A version: permanent only after soft.
	a.fails("DELETE", "/subjects/s/versions/1?permanent=true", nil, 404, 40407, "Subject 's' Version 1 was not deleted first before being permanently deleted")
	a.want("DELETE", "/subjects/s/versions/1", nil, 200, `1`)
	a.fails("DELETE", "/subjects/s/versions/1", nil, 404, 40406, "Subject 's' Version 1 was soft deleted")
	a.fails("GET", "/subjects/s/versions/1", nil, 404, 40402, "Version 1 not found.")
	a.want("GET", "/subjects/s/versions/1?deleted=true", nil, 200, fmt.Sprintf(`{"subject":"s","version":1,"id":%d,"schema":%q}`, id1, v1))
	a.want("GET", "/subjects/s/versions", nil, 200, `[2]`)
	a.want("GET", "/subjects/s/versions?deleted=true", nil, 200, `[1,2]`)
	// A soft-deleted schema still answers by id (deserializers need it).
	a.want("GET", fmt.Sprintf("/schemas/ids/%d", id1), nil, 200, fmt.Sprintf(`{"schema":%q}`, v1))
	a.want("GET", fmt.Sprintf("/schemas/ids/%d/versions", id1), nil, 200, `[]`)
	a.want("GET", fmt.Sprintf("/schemas/ids/%d/versions?deleted=true", id1), nil, 200, `[{"subject":"s","version":1}]`)
	a.want("DELETE", "/subjects/s/versions/1?permanent=true", nil, 200, `1`)
	a.fails("GET", fmt.Sprintf("/schemas/ids/%d", id1), nil, 404, 40403)
	a.fails("DELETE", "/subjects/s/versions/1?permanent=true", nil, 404, 40402, "Version 1 not found.")
	a.want("GET", "/subjects/s/versions?deleted=true", nil, 200, `[2]`)

	// A subject: permanent only after soft.
	a.fails("DELETE", "/subjects/s?permanent=true", nil, 404, 40405, "Subject 's' was not deleted first before being permanently deleted")
	a.want("DELETE", "/subjects/s", nil, 200, `[2]`)
	a.fails("DELETE", "/subjects/s", nil, 404, 40404, "Subject 's' was soft deleted. Set permanent=true to delete permanently")
	a.want("GET", "/subjects", nil, 200, `[]`)
	a.want("GET", "/subjects?deleted=true", nil, 200, `["s"]`)
	a.fails("GET", "/subjects/s/versions", nil, 404, 40401)
	a.want("POST", "/subjects/s?deleted=true", map[string]string{"schema": v2}, 200, fmt.Sprintf(`{"subject":"s","version":2,"id":%d,"schema":%q}`, id2, v2))
	a.fails("POST", "/subjects/s", map[string]string{"schema": v2}, 404, 40401)
	a.want("DELETE", "/subjects/s?permanent=true", nil, 200, `[2]`)
	a.want("GET", "/subjects?deleted=true", nil, 200, `[]`)
	a.fails("DELETE", "/subjects/s", nil, 404, 40401, "Subject 's' not found.")

	// Registering again after a permanent delete starts at version 1,
	// with a new id (ids are not reused while the registry knows them).
	id3 := a.register("s", v1)
	a.want("GET", "/subjects/s/versions", nil, 200, `[1]`)
	if id3 <= id2 {
		t.Fatalf("id %d after deleting ids %d and %d", id3, id1, id2)
	}
	// Deleting latest.
	a.register("s", v2)
	a.want("DELETE", "/subjects/s/versions/latest", nil, 200, `2`)
	a.want("GET", "/subjects/s/versions", nil, 200, `[1]`)
	a.want("DELETE", "/subjects/s/versions/latest?permanent=true", nil, 200, `2`)
	a.want("GET", "/subjects/s/versions?deleted=true", nil, 200, `[1]`)
}

func TestRegistryReferences(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	address := `{"type":"record","name":"Address","namespace":"com.example","fields":[{"name":"city","type":"string"}]}`
	user := `{"type":"record","name":"User","namespace":"com.example","fields":[{"name":"home","type":"Address"}]}`
	addrID := a.register("address", address)
	ref := []map[string]any{{"name": "com.example.Address", "subject": "address", "version": 1}}

	a.fails("POST", "/subjects/user/versions", map[string]any{"schema": user}, 422, 42201, "unknown type")
	a.fails("POST", "/subjects/user/versions", map[string]any{"schema": user,
		"references": []map[string]any{{"name": "com.example.Address", "subject": "address", "version": 9}}}, 422, 42201, "subject 'address' version 9 not found")
	a.fails("POST", "/subjects/user/versions", map[string]any{"schema": user,
		"references": []map[string]any{{"name": "com.example.Address", "subject": "nowhere", "version": 1}}}, 422, 42201, "subject 'nowhere' version 1 not found")
	userID := a.register("user", map[string]any{"schema": user, "references": ref})
	a.want("GET", "/subjects/user/versions/1", nil, 200, fmt.Sprintf(
		`{"subject":"user","version":1,"id":%d,"references":[{"name":"com.example.Address","subject":"address","version":1}],"schema":%q}`, userID, user))
	a.want("GET", fmt.Sprintf("/schemas/ids/%d", userID), nil, 200, fmt.Sprintf(
		`{"references":[{"name":"com.example.Address","subject":"address","version":1}],"schema":%q}`, user))
	a.want("GET", "/subjects/address/versions/1/referencedby", nil, 200, fmt.Sprintf(`[%d]`, userID))
	a.want("GET", "/subjects/user/versions/1/referencedby", nil, 200, `[]`)
	// The same text without the reference is another schema.
	a.want("POST", "/subjects/user", map[string]any{"schema": user, "references": ref}, 200, fmt.Sprintf(
		`{"subject":"user","version":1,"id":%d,"references":[{"name":"com.example.Address","subject":"address","version":1}],"schema":%q}`, userID, user))
	// -1 names the latest version; it is stored as its number.
	if id := a.register("user", map[string]any{"schema": user, "references": []map[string]any{{"name": "com.example.Address", "subject": "address", "version": -1}}}); id != userID {
		t.Fatalf("reference to version -1 gave id %d, want %d", id, userID)
	}

	// A referenced schema cannot be deleted.
	a.fails("DELETE", "/subjects/address/versions/1", nil, 422, 42206, "user version 1")
	a.fails("DELETE", "/subjects/address", nil, 422, 42206, "user version 1")
	a.want("DELETE", "/subjects/user", nil, 200, `[1]`)
	a.want("GET", "/subjects/address/versions/1/referencedby", nil, 200, `[]`)
	a.want("DELETE", "/subjects/address", nil, 200, `[1]`)
	// A soft-deleted referrer still holds a permanent delete back.
	a.fails("DELETE", "/subjects/address?permanent=true", nil, 422, 42206, "user version 1")
	a.want("DELETE", "/subjects/user?permanent=true", nil, 200, `[1]`)
	a.want("DELETE", "/subjects/address?permanent=true", nil, 200, `[1]`)
	a.fails("GET", fmt.Sprintf("/schemas/ids/%d", addrID), nil, 404, 40403)
}

func TestRegistryNormalize(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	text := `{"type":"record","name":"R","namespace":"n","fields":[{"name":"a","type":{"type":"int"}}]}`
	reordered := `{"fields":[{"type":"int","name":"a"}],"name":"n.R","type":"record"}`
	var resp registerResponse
	a.ok("POST", "/subjects/s/versions?normalize=true", map[string]string{"schema": text}, &resp)
	id := resp.ID
	var got subjectSchema
	a.ok("GET", "/subjects/s/versions/1", nil, &got)
	if want := `{"name":"n.R","type":"record","fields":[{"name":"a","type":"int"}]}`; got.Schema != want {
		t.Fatalf("stored %s, want the normalized %s", got.Schema, want)
	}
	a.ok("POST", "/subjects/s/versions?normalize=true", map[string]string{"schema": reordered}, &resp)
	if resp.ID != id {
		t.Fatalf("an equivalent schema normalized to id %d, want %d", resp.ID, id)
	}
	a.want("GET", "/subjects/s/versions", nil, 200, `[1]`)
	a.want("POST", "/subjects/s?normalize=true", map[string]string{"schema": reordered}, 200, fmt.Sprintf(`{"subject":"s","version":1,"id":%d,"schema":%q}`, id, got.Schema))
	a.fails("POST", "/subjects/s", map[string]string{"schema": reordered}, 404, 40403)

	// A version registered as given matches a normalized lookup too.
	plainID := a.register("p", text)
	a.want("POST", "/subjects/p?normalize=true", map[string]string{"schema": reordered}, 200, fmt.Sprintf(`{"subject":"p","version":1,"id":%d,"schema":%q}`, plainID, text))
}

func TestRegistryConfigPrecedence(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	a.register("loose", v1)
	a.register("strict", v1)
	a.want("PUT", "/config", map[string]string{"compatibility": "full"}, 200, `{"compatibility":"FULL"}`)
	a.want("GET", "/config", nil, 200, `{"compatibilityLevel":"FULL"}`)
	a.want("PUT", "/config/loose", map[string]string{"compatibility": "NONE"}, 200, `{"compatibility":"NONE"}`)
	a.want("GET", "/config/loose", nil, 200, `{"compatibilityLevel":"NONE"}`)
	a.fails("GET", "/config/strict", nil, 404, 40408)
	a.want("GET", "/config/strict?defaultToGlobal=true", nil, 200, `{"compatibilityLevel":"FULL"}`)
	// The subject's level wins over the global one.
	a.register("loose", bad)
	a.fails("POST", "/subjects/strict/versions", map[string]string{"schema": bad}, 409, 409, "FULL")
	// Under FULL a field with a default added is fine both ways.
	a.register("strict", v2)
	a.want("DELETE", "/config/loose", nil, 200, `{"compatibilityLevel":"NONE","compatibility":"NONE"}`)
	a.fails("GET", "/config/loose", nil, 404, 40408)
	a.want("DELETE", "/config", nil, 200, `{"compatibilityLevel":"FULL","compatibility":"FULL"}`)
	a.want("GET", "/config", nil, 200, `{"compatibilityLevel":"BACKWARD"}`)
	// A subject may be configured before it has versions.
	a.want("PUT", "/config/future", map[string]string{"compatibility": "FORWARD_TRANSITIVE"}, 200, `{"compatibility":"FORWARD_TRANSITIVE"}`)
	a.want("GET", "/config/future", nil, 200, `{"compatibilityLevel":"FORWARD_TRANSITIVE"}`)
	a.want("GET", "/subjects", nil, 200, `["loose","strict"]`)
}

func TestRegistryModes(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	id := a.register("s", v1)
	a.want("PUT", "/mode", map[string]string{"mode": "READONLY"}, 200, `{"mode":"READONLY"}`)
	a.fails("POST", "/subjects/s/versions", map[string]string{"schema": v2}, 422, 42205, "read-only")
	a.fails("DELETE", "/subjects/s/versions/1", nil, 422, 42205, "read-only")
	a.fails("DELETE", "/subjects/s", nil, 422, 42205, "read-only")
	// Reads and lookups still work.
	a.want("GET", "/subjects/s/versions", nil, 200, `[1]`)
	a.ok("POST", "/subjects/s", map[string]string{"schema": v1}, nil)
	// A subject's mode wins over the global one.
	a.want("PUT", "/mode/s", map[string]string{"mode": "READWRITE"}, 200, `{"mode":"READWRITE"}`)
	a.register("s", v2)
	a.fails("POST", "/subjects/t/versions", map[string]string{"schema": v1}, 422, 42205, "Subject t is in read-only mode")
	a.want("GET", "/mode/s", nil, 200, `{"mode":"READWRITE"}`)
	a.want("GET", "/mode/t?defaultToGlobal=true", nil, 200, `{"mode":"READONLY"}`)
	a.want("DELETE", "/mode/s", nil, 200, `{"mode":"READWRITE"}`)
	a.fails("POST", "/subjects/s/versions", map[string]string{"schema": bad}, 422, 42205)
	a.want("PUT", "/mode", map[string]string{"mode": "READONLY_OVERRIDE"}, 200, `{"mode":"READONLY_OVERRIDE"}`)
	a.fails("POST", "/subjects/s/versions", map[string]string{"schema": bad}, 422, 42205)

	// IMPORT: only on an empty registry, unless forced; then explicit ids
	// and versions, no compatibility check.
	a.fails("PUT", "/mode", map[string]string{"mode": "IMPORT"}, 422, 42205, "Cannot import since found existing subjects")
	a.want("PUT", "/mode?force=true", map[string]string{"mode": "IMPORT"}, 200, `{"mode":"IMPORT"}`)
	a.want("POST", "/subjects/imported/versions", map[string]any{"schema": v1, "id": 100, "version": 5}, 200, `{"id":100}`)
	a.want("GET", "/subjects/imported/versions", nil, 200, `[5]`)
	a.want("POST", "/subjects/imported/versions", map[string]any{"schema": bad, "id": 101}, 200, `{"id":101}`)
	a.want("GET", "/subjects/imported/versions", nil, 200, `[5,6]`)
	a.fails("POST", "/subjects/imported/versions", map[string]any{"schema": v2, "id": 100}, 422, 42205, "Overwrite new schema with id 100")
	a.fails("POST", "/subjects/imported/versions", map[string]any{"schema": v2, "id": 102, "version": 5}, 422, 42205, "version 5")
	a.fails("POST", "/subjects/imported/versions", map[string]any{"schema": v1, "id": 103}, 422, 42207, "Schema already registered with id 100 instead of input id 103")
	a.want("PUT", "/mode", map[string]string{"mode": "READWRITE"}, 200, `{"mode":"READWRITE"}`)
	// New ids continue above the imported ones.
	if next := a.register("after-import", `"string"`); next != 102 {
		t.Fatalf("first id after importing 100 and 101: %d", next)
	}
	if id != 1 {
		t.Fatalf("first id %d, want 1", id)
	}
	a.want("PUT", "/mode/fresh", map[string]string{"mode": "IMPORT"}, 200, `{"mode":"IMPORT"}`)
	a.fails("PUT", "/mode/s", map[string]string{"mode": "IMPORT"}, 422, 42205)
}

func TestRegistryCompatibilityEndpoint(t *testing.T) {
	a := newAPI(t, startRegistry(t, NewMemoryLog()))
	a.register("s", v1)
	a.register("s", v2)
	a.want("POST", "/compatibility/subjects/s/versions/latest", map[string]string{"schema": v2}, 200, `{"is_compatible":true}`)
	a.want("POST", "/compatibility/subjects/s/versions/latest?verbose=true", map[string]string{"schema": v2}, 200, `{"is_compatible":true,"messages":[]}`)
	a.want("POST", "/compatibility/subjects/s/versions/1", map[string]string{"schema": bad}, 200, `{"is_compatible":false}`)
	var verbose struct {
		IsCompatible bool `json:"is_compatible"`
		Messages     []string
	}
	a.ok("POST", "/compatibility/subjects/s/versions/1?verbose=true", map[string]string{"schema": bad}, &verbose)
	if verbose.IsCompatible || len(verbose.Messages) != 1 || !strings.Contains(verbose.Messages[0], "age") {
		t.Fatalf("verbose: %+v", verbose)
	}
	a.want("POST", "/compatibility/subjects/s/versions", map[string]string{"schema": bad}, 200, `{"is_compatible":false}`)
	a.want("POST", "/compatibility/subjects/new/versions", map[string]string{"schema": bad}, 200, `{"is_compatible":true}`)
	a.fails("POST", "/compatibility/subjects/new/versions/latest", map[string]string{"schema": bad}, 404, 40401)
	a.fails("POST", "/compatibility/subjects/s/versions/9", map[string]string{"schema": bad}, 404, 40402)
	a.fails("POST", "/compatibility/subjects/s/versions/latest", map[string]string{"schema": "{"}, 422, 42201)
	a.want("PUT", "/config/s", map[string]string{"compatibility": "NONE"}, 200, `{"compatibility":"NONE"}`)
	a.want("POST", "/compatibility/subjects/s/versions/1", map[string]string{"schema": `"int"`}, 200, `{"is_compatible":true}`)
}

// TestRegistryCompatibilityLevels registers a third version against two earlier
// ones (registered under NONE) under each level; the transitive levels
// skip soft-deleted versions.
func TestRegistryCompatibilityLevels(t *testing.T) {
	// BACKWARD: new reads old. base has a; withB adds b with a default;
	// needsB drops the default, so it reads withB but not base.
	base := record(`{"name":"a","type":"int"}`)
	withB := record(`{"name":"a","type":"int"},{"name":"b","type":"int","default":0}`)
	needsB := record(`{"name":"a","type":"int"},{"name":"b","type":"int"}`)
	// FORWARD: old reads new. Dropping b, which withB defaults, keeps
	// withB reading it; base2 has b without a default, so it does not.
	base2 := record(`{"name":"a","type":"int"},{"name":"b","type":"int"}`)
	withDefault := record(`{"name":"a","type":"int"},{"name":"b","type":"int","default":0}`)
	dropsB := record(`{"name":"a","type":"int"}`)
	for _, tc := range []struct {
		level               string
		first, second, next string
		accepted            bool // next, with all versions live
	}{
		{LevelBackward, base, withB, needsB, true},
		{LevelBackwardTransitive, base, withB, needsB, false},
		{LevelForward, base2, withDefault, dropsB, true},
		{LevelForwardTransitive, base2, withDefault, dropsB, false},
		// FULL: both ways with the latest. dropsB reads base2, but base2
		// cannot read dropsB (b has no default in base2).
		{LevelFull, withDefault, base2, dropsB, false},
		{LevelFull, base, withB, needsB, true},
		{LevelFullTransitive, base, withB, needsB, false},
		{LevelNone, base, withB, `"string"`, true},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.level, tc.accepted), func(t *testing.T) {
			a := newAPI(t, startRegistry(t, NewMemoryLog(), func(c *Config) { c.DefaultCompatibility = LevelNone }))
			a.register("s", tc.first)
			a.register("s", tc.second)
			a.want("PUT", "/config/s", map[string]string{"compatibility": tc.level}, 200, fmt.Sprintf(`{"compatibility":%q}`, tc.level))
			status, body := a.do("POST", "/subjects/s/versions", map[string]string{"schema": tc.next})
			if got := status == 200; got != tc.accepted {
				t.Fatalf("register under %s: %d %s, want accepted=%v", tc.level, status, body, tc.accepted)
			}
			if tc.accepted || !strings.HasSuffix(tc.level, "_TRANSITIVE") {
				return
			}
			// Soft-deleting the first version leaves only the second to
			// compare with.
			a.want("DELETE", "/subjects/s/versions/1", nil, 200, `1`)
			a.register("s", tc.next)
			a.want("GET", "/subjects/s/versions", nil, 200, `[2,3]`)
		})
	}
}

// FuzzRegistryRequests sends any method, path and body to the API: every answer
// is a JSON body (or a redirect to the clean path) with a status below 500 — never a panic, never a store
// error on a healthy log.
func FuzzRegistryRequests(f *testing.F) {
	r := startRegistry(f, NewMemoryLog())
	h := r.Handler()
	seed := httptest.NewRecorder()
	h.ServeHTTP(seed, httptest.NewRequest("POST", "/subjects/s/versions", strings.NewReader(`{"schema":`+jsonString(v1)+`}`)))
	if seed.Code != 200 {
		f.Fatalf("seeding: %d %s", seed.Code, seed.Body)
	}
	methods := []string{"GET", "POST", "PUT", "DELETE"}
	f.Add(uint8(1), "/subjects/s/versions", `{"schema":"\"int\"","references":[{"name":"x","subject":"s","version":1}]}`)
	f.Add(uint8(1), "/subjects/s", `{"schema":`+jsonString(v2)+`}`)
	f.Add(uint8(2), "/config/s", `{"compatibility":"FULL"}`)
	f.Add(uint8(2), "/mode/s", `{"mode":"IMPORT"}`)
	f.Add(uint8(3), "/subjects/s/versions/latest?permanent=true", ``)
	f.Add(uint8(1), "/compatibility/subjects/s/versions?verbose=true", `{"schema":"[\"null\",{\"type\":\"map\",\"values\":\"int\"}]"}`)
	f.Add(uint8(0), "/schemas/ids/1/versions?deleted=true", ``)
	f.Fuzz(func(t *testing.T, method uint8, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \t\r\n#") {
			return
		}
		req, err := http.NewRequest(methods[int(method)%len(methods)], "http://registry"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", req.Method, path, body, rec.Code, rec.Body)
		}
		// 3xx: the mux's redirect of an unclean path (/a/../b).
		if rec.Code != 200 && (rec.Code < 300 || rec.Code >= 400) && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s: %d with a body that is not JSON: %s", req.Method, path, rec.Code, rec.Body)
		}
	})
}
