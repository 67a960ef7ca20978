package e2e

// Checks of deploy/'s monitoring files (deploy/README.md):
//
//   - TestDeployPrometheusRules: promtool checks alerts.yml and
//     prometheus.yml and runs the alert rules' unit tests (alerts_test.yml).
//   - TestDeployDashboards: every dashboard is provisioning-ready JSON, and
//     every panel and variable query parses as PromQL (promtool check rules
//     over a rule file made of them, Grafana's variables replaced).
//   - TestDeployMetricsExist: a real node with an SSL listener, a tiered
//     topic, a consumer group and a stream job exports every metric name
//     that a dashboard query or an alert expression refers to.
//
// Metric names are taken from the queries by promqlMetricNames, a small
// tokenizer (the PromQL parser is in prometheus' own module, too heavy a
// dependency for this): it is tested on its own in TestPromQLMetricNames,
// and promtool's parse of the same queries catches any syntax it would
// misread.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/strata-streaming/strata/internal/testcerts"
)

const promtoolInstall = "go install github.com/prometheus/prometheus/cmd/promtool@v0.316.0 into bin/ (GOBIN=$PWD/bin)"

// promtool returns bin/promtool, or skips (fails under CI) without it.
func promtool(t testing.TB) string {
	t.Helper()
	path := filepath.Join(moduleRoot, "bin", "promtool")
	if _, err := os.Stat(path); err != nil {
		missingTool(t, "bin/promtool", promtoolInstall)
	}
	return path
}

func deployPath(parts ...string) string {
	return filepath.Join(append([]string{moduleRoot, "deploy"}, parts...)...)
}

func TestDeployPrometheusRules(t *testing.T) {
	t.Parallel()
	pt := promtool(t)
	mustRun(t, time.Minute, "", pt, "check", "rules", deployPath("prometheus", "alerts.yml"))
	// check config also checks the rule files it names.
	mustRun(t, time.Minute, "", pt, "check", "config", deployPath("prometheus", "prometheus.yml"))
	res := mustRun(t, 2*time.Minute, "", pt, "test", "rules", deployPath("prometheus", "alerts_test.yml"))
	t.Logf("promtool test rules:\n%s", res.stdout)

	// Every alert of alerts.yml is fired by at least one unit test.
	rules, err := os.ReadFile(deployPath("prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(deployPath("prometheus", "alerts_test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*- alert: (\S+)`).FindAllStringSubmatch(string(rules), -1) {
		fired := regexp.MustCompile(`(?m)^\s*alertname: ` + regexp.QuoteMeta(m[1]) + `\s*\n\s*exp_alerts:\s*\n`)
		if !fired.Match(tests) {
			t.Errorf("alert %s has no unit test in alerts_test.yml that expects it to fire", m[1])
		}
	}
}

// dashboard is the part of a Grafana dashboard JSON the checks read.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// dashboardQuery is one PromQL query of a dashboard, where it comes from.
type dashboardQuery struct {
	where string // file, panel or variable
	expr  string // Grafana's variables replaced
}

// grafanaVariable matches $name, ${name} and ${name:format}.
var grafanaVariable = regexp.MustCompile(`\$\{?(\w+)(?::\w+)?\}?`)

// substituteGrafana replaces Grafana's variables with values that keep
// the query valid PromQL: durations for the interval variables, a match-all
// regular expression for the dashboards' own (always inside =~"…").
func substituteGrafana(expr string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(v string) string {
		name := grafanaVariable.FindStringSubmatch(v)[1]
		switch name {
		case "__rate_interval", "__interval", "__range":
			return "5m"
		case "__range_s", "__interval_ms":
			return "300"
		default:
			return ".*"
		}
	})
}

// labelValuesQuery matches a variable's label_values(SELECTOR, LABEL).
var labelValuesQuery = regexp.MustCompile(`^label_values\((.*),\s*\w+\)$`)

// loadDashboards reads every dashboard and returns its queries; it fails
// the test on a file that is not a provisioning-ready dashboard.
func loadDashboards(t *testing.T) []dashboardQuery {
	t.Helper()
	files, err := filepath.Glob(deployPath("grafana", "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in deploy/grafana/dashboards: %v", err)
	}
	var queries []dashboardQuery
	uids := map[string]string{}
	for _, f := range files {
		name := filepath.Base(f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
			t.Errorf("%s: needs a uid, a title and panels (uid %q, title %q, %d panels)", name, d.UID, d.Title, len(d.Panels))
		}
		if other, dup := uids[d.UID]; dup {
			t.Errorf("%s: uid %s already used by %s", name, d.UID, other)
		}
		uids[d.UID] = name
		ids := map[int]bool{}
		for _, p := range d.Panels {
			if ids[p.ID] {
				t.Errorf("%s: panel id %d repeated", name, p.ID)
			}
			ids[p.ID] = true
			if len(p.Targets) == 0 {
				t.Errorf("%s: panel %q has no query", name, p.Title)
			}
			for _, tg := range p.Targets {
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("%s: panel %q has an empty query", name, p.Title)
					continue
				}
				queries = append(queries, dashboardQuery{fmt.Sprintf("%s panel %q", name, p.Title), substituteGrafana(tg.Expr)})
			}
		}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			m := labelValuesQuery.FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("%s: variable %s: %q is not label_values(SELECTOR, LABEL)", name, v.Name, v.Definition)
				continue
			}
			queries = append(queries, dashboardQuery{fmt.Sprintf("%s variable %s", name, v.Name), substituteGrafana(m[1])})
		}
	}
	return queries
}

func TestDeployDashboards(t *testing.T) {
	t.Parallel()
	queries := loadDashboards(t)
	pt := promtool(t)
	// Each query becomes a recording rule, so promtool's parser (the
	// real PromQL one) checks them all in one run.
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboards\n    rules:\n")
	for i, q := range queries {
		expr, _ := json.Marshal(q.expr) // a JSON string is a YAML string
		fmt.Fprintf(&rules, "      # %s\n      - record: strata_dashboard_query_%d\n        expr: %s\n", strings.ReplaceAll(q.where, "\n", " "), i, expr)
	}
	file := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := runCmd(t, time.Minute, "", pt, "check", "rules", file); res.err != nil || res.exitCode != 0 {
		t.Fatalf("dashboard queries do not parse as PromQL: %s\n%s", res, rules.String())
	}
	t.Logf("%d dashboard queries parse", len(queries))
}

// alertExprs returns each alert's expression from alerts.yml (the
// expressions are single-line `expr:` values).
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(deployPath("prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	alert := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if name, ok := strings.CutPrefix(line, "- alert: "); ok {
			alert = name
		} else if expr, ok := strings.CutPrefix(line, "expr: "); ok && alert != "" {
			out[alert] = expr
		}
	}
	if len(out) == 0 {
		t.Fatal("no alert expressions found in alerts.yml")
	}
	return out
}

// prometheusSynthesized are series Prometheus makes itself, not a target.
var prometheusSynthesized = map[string]bool{"up": true}

func TestDeployMetricsExist(t *testing.T) {
	t.Parallel()
	referenced := map[string][]string{} // metric name → where it is used
	for _, q := range loadDashboards(t) {
		for _, name := range promqlMetricNames(q.expr) {
			referenced[name] = append(referenced[name], q.where)
		}
	}
	for alert, expr := range alertExprs(t) {
		for _, name := range promqlMetricNames(expr) {
			referenced[name] = append(referenced[name], "alert "+alert)
		}
	}

	// One node with everything that makes series appear: an SSL listener
	// (certificate expiry), a tiered topic, a consumer group that
	// committed, and a stream job.
	dir := t.TempDir()
	ca := testcerts.NewCA(t, dir, "deploy")
	cert := ca.Issue("broker", "127.0.0.1")
	jobs := filepath.Join(dir, "jobs")
	if err := os.MkdirAll(jobs, 0o755); err != nil {
		t.Fatal(err)
	}
	job := "name: deploy-copy\ninput: {topics: [deploy-in], format: json}\npipeline:\n  - filter: value.n >= 0\noutput: {topic: deploy-out, format: json}\n"
	if err := os.WriteFile(filepath.Join(jobs, "copy.yaml"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, nil, nil)
	sslAddr := freeAddr(t)
	s.extra = []string{
		"--set", fmt.Sprintf("listeners=PLAINTEXT://%s,SSL://%s", s.addr, sslAddr),
		"--set", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL",
		"--set", "ssl.keystore.location=" + cert.Keystore,
		"--jobs-dir", jobs,
	}
	s.start()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adm := kadm.NewClient(newClient(t, s.addr))
	// The job's input and output topics are created by the job itself.
	remote := "true"
	if resp, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"remote.storage.enable": &remote}, "deploy-tiered"); err != nil || resp.Err != nil {
		t.Fatalf("create deploy-tiered: %v %v", err, resp.Err)
	}
	producer := newClient(t, s.addr)
	var records []*kgo.Record
	for i := range 20 {
		records = append(records,
			&kgo.Record{Topic: "deploy-tiered", Value: []byte(fmt.Sprintf("record %d", i))},
			&kgo.Record{Topic: "deploy-in", Value: []byte(fmt.Sprintf(`{"n": %d}`, i))})
	}
	produceSync(t, producer, records...)
	consumeGroup(ctx, t, s.addr, "deploy-group", "deploy-tiered", 20)

	// Series appear as their subsystems start (the stream job, the lag
	// monitor's first sample): poll until every referenced name is there.
	var missing []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		exported := exportedMetricNames(s.metrics(t))
		missing = missing[:0]
		for name := range referenced {
			if !exported[name] && !prometheusSynthesized[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	sort.Strings(missing)
	for _, name := range missing {
		t.Errorf("%s is not exported by the node; used by %s", name, strings.Join(slices.Compact(referenced[name]), "; "))
	}
	if len(missing) == 0 {
		t.Logf("%d metric names referenced by dashboards and alerts, all exported", len(referenced))
	}
}

// consumeGroup reads n records of topic as a member of group, committing
// them, so the group has lag series.
func consumeGroup(ctx context.Context, t *testing.T, addr, group, topic string, n int) {
	t.Helper()
	cl := newClient(t, addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("group %s read %d of %d records of %s", group, got, n, topic)
		}
		got += len(fs.Records())
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

// exportedMetricNames are the sample names of a text exposition.
func exportedMetricNames(body string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}

// promqlKeywords are PromQL words that are not metric names: operators,
// modifiers and aggregations (which may be followed by by/without before
// their parenthesis).
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "stddev": true, "stdvar": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true, "group": true,
	"limitk": true, "limit_ratio": true, "start": true, "end": true, "atan2": true,
}

// promqlLabelLists are the keywords followed by a parenthesised list of
// label names.
var promqlLabelLists = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// promqlMetricNames returns the metric names expr selects, in order of
// first use: identifiers outside label matchers, strings, range brackets
// and label lists that are neither keywords nor followed by "(" (a
// function or aggregation call).
func promqlMetricNames(expr string) []string {
	var names []string
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isIdent := func(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
	skipSpace := func(i int) int {
		for i < len(expr) && strings.ContainsRune(" \t\r\n", rune(expr[i])) {
			i++
		}
		return i
	}
	// skipTo returns the index after the close that balances the opening
	// at i, skipping strings.
	skipTo := func(i int, open, close byte) int {
		depth := 0
		for ; i < len(expr); i++ {
			switch c := expr[i]; c {
			case '"', '\'', '`':
				i = skipString(expr, i) - 1
			case open:
				depth++
			case close:
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			i = skipString(expr, i)
		case c == '{':
			i = skipTo(i, '{', '}')
		case c == '[':
			i = skipTo(i, '[', ']')
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++ // numbers, hex, durations after offset
			}
		case isIdentStart(c):
			start := i
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
			word := expr[start:i]
			next := skipSpace(i)
			switch {
			case promqlLabelLists[strings.ToLower(word)]:
				if next < len(expr) && expr[next] == '(' {
					i = skipTo(next, '(', ')')
				}
			case promqlKeywords[strings.ToLower(word)]:
			case next < len(expr) && expr[next] == '(':
				// a function call
			default:
				if !slices.Contains(names, word) {
					names = append(names, word)
				}
			}
		default:
			i++
		}
	}
	return names
}

// skipString returns the index after the string literal starting at i.
func skipString(s string, i int) int {
	quote := s[i]
	for i++; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quote != '`':
			i++
		case s[i] == quote:
			return i + 1
		}
	}
	return i
}

func TestPromQLMetricNames(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`up{job="strata"} == 0`, []string{"up"}},
		{`sum by (api) (rate(strata_request_duration_seconds_count{instance=~".*"}[5m]))`, []string{"strata_request_duration_seconds_count"}},
		{`histogram_quantile(0.99, sum by (le, api) (rate(a_bucket{api=~"Produce|Fetch"}[1m])))`, []string{"a_bucket"}},
		{`strata_log_dir_free_bytes / strata_log_dir_total_bytes < 0.10`, []string{"strata_log_dir_free_bytes", "strata_log_dir_total_bytes"}},
		{`strata_tls_certificate_expiry_timestamp_seconds - time() < 14 * 86400`, []string{"strata_tls_certificate_expiry_timestamp_seconds"}},
		{`count(max by (group) (g{group=~"x,y}"}) > 0) or vector(0)`, []string{"g"}},
		{`a * on (instance) group_left (dir) b offset 5m`, []string{"a", "b"}},
		{`sum without (partition) (x) unless ignoring(topic) y`, []string{"x", "y"}},
		{`max(x:recorded:rate5m @ end()) and bool 1e3 > 0x1f`, []string{"x:recorded:rate5m"}},
		{`rate(c[5m:30s]) # comment mentions not_a_metric`, []string{"c"}},
		{`sum(rate(s{a="}", b='{'}[5m])) by (topic)`, []string{"s"}},
	}
	for _, c := range cases {
		if got := promqlMetricNames(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("promqlMetricNames(%q) = %q, want %q", c.expr, got, c.want)
		}
	}
}
