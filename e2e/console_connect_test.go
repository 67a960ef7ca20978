package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func init() {
	for _, p := range []string{"connectors", "jobs", "security-acls", "security-users", "security-quotas"} {
		consoleDocsPages[p] = true
	}
}

// shot checks the page stayed clean and saves a screenshot as name.
func (b *consoleBrowser) shot(name string) {
	b.t.Helper()
	b.clean(name)
	screenshot(b.t, b.tab, b.artifacts, name)
}

// TestConsoleConnectAndSecurityBrowser: the connectors, stream jobs and
// security pages of a real `strata server` (embedded Connect worker,
// --jobs-dir, the authorizer) load in headless Chromium without console
// errors and show what the REST API and kgo made; a pause, an ACL, a
// SCRAM user and a quota made in the UI are seen outside it.
func TestConsoleConnectAndSecurityBrowser(t *testing.T) {
	requireTool(t, "chromium", "apt-get install chromium")
	restAddr := freeAddr(t)
	jobs := t.TempDir()
	job := "name: e2e-upper\ninput: {topics: [e2e-words]}\npipeline:\n  - map: 'upper(string(value))'\noutput: {topic: e2e-upper-words}\ncommit_interval: 200ms\n"
	if err := os.WriteFile(filepath.Join(jobs, "upper.yaml"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--set", "connect.enable=true", "--set", "connect.rest.listen="+restAddr,
		"--set", "connect.offset.storage.partitions=3", "--set", "group.initial.rebalance.delay.ms=0",
		"--set", "authorizer.class.name=strata", "--set", "super.users=User:ANONYMOUS", "--jobs-dir", jobs)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The job may auto-create its topics first (it starts with the server).
	ensureTopic(t, s.addr, "e2e-words", 1)
	ensureTopic(t, s.addr, "e2e-upper-words", 1)
	produceSync(t, newClient(t, s.addr), &kgo.Record{Topic: "e2e-words", Value: []byte(`"hello"`)})
	input := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(input, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	def, _ := json.Marshal(map[string]any{"name": "e2e-files", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": input, "topic": "e2e-lines"}})
	var resp *http.Response
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		resp, err = http.Post("http://"+restAddr+"/connectors", "application/json", bytes.NewReader(def))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 201 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("creating a connector through the REST API: %v %v", resp, err)
		}
		time.Sleep(200 * time.Millisecond)
	}

	b := openConsoleBrowser(t, ctx)
	base := "http://" + s.httpAddr
	b.page(base, "connectors", "#/connect", `//div[@id="connector-e2e-files"]//h2//span[.="RUNNING"]`, `//div[@id="connector-e2e-files"]//td[.="RUNNING"]`)
	if err := chromedp.Do(b.tab, chromedp.Click(`//div[@id="connector-e2e-files"]//button[.="Pause"]`)); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, b.tab, `//div[@id="connector-e2e-files"]//h2//span[.="PAUSED"]`)
	var st struct{ Connector struct{ State string } }
	if r, err := http.Get("http://" + restAddr + "/connectors/e2e-files/status"); err != nil {
		t.Fatal(err)
	} else {
		_ = json.NewDecoder(r.Body).Decode(&st)
		r.Body.Close()
	}
	if st.Connector.State != "PAUSED" {
		t.Fatalf("REST status after pausing in the UI: %+v", st)
	}

	b.page(base, "jobs", "#/jobs", `//table[@id="jobs"]//td[.="e2e-upper"]`, `//table[@id="jobs"]//td[.="Stable"]`)

	adm := kadm.NewClient(newClient(t, s.addr))
	b.page(base, "security-acls", "#/security/acls", `//label[contains(.,"Principal")]`)
	setField(t, b.tab, "acl-principal", "User:alice")
	setField(t, b.tab, "acl-resource-name", "e2e-words")
	click(t, b.tab, "acl-submit")
	waitVisible(t, b.tab, `//table[@id="acls"]//td[.="User:alice"]`)
	acls, err := adm.DescribeACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("e2e-words").Operations(kadm.OpRead))
	if err != nil || len(acls[0].Described) != 1 {
		t.Fatalf("kadm describing the ACL added in the UI: %v %+v", err, acls)
	}
	b.shot("security-acls")

	b.page(base, "security-users", "#/security/users", `//button[@id="user-submit"]`)
	setField(t, b.tab, "user-name", "erin")
	setField(t, b.tab, "user-password", "erin-pw-typed")
	click(t, b.tab, "user-submit")
	waitVisible(t, b.tab, `//table[@id="users"]//td[.="erin"]`)
	if users, err := adm.DescribeUserSCRAMs(ctx, "erin"); err != nil || len(users["erin"].CredInfos) != 1 {
		t.Fatalf("kadm describing the user added in the UI: %v %+v", err, users)
	}
	b.shot("security-users")

	b.page(base, "security-quotas", "#/security/quotas", `//button[@id="quota-submit"]`)
	setField(t, b.tab, "quota-name", "alice")
	click(t, b.tab, "quota-submit")
	waitVisible(t, b.tab, `//table[@id="quotas"]//td[.="user=alice"]`)
	if q, err := adm.DescribeClientQuotas(ctx, false, nil); err != nil || len(q) != 1 {
		t.Fatalf("kadm describing the quota set in the UI: %v %+v", err, q)
	}
	b.shot("security-quotas")
}
