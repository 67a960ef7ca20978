package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/minio/minio-go/v7"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/miniotest"
)

// deploy/compose/docker-compose.yml without Docker: the file is decoded
// strictly (unknown keys fail), its structure checked, and the three
// strata command lines and the demo-topic job are run as processes.
//
// Mapping from the compose network to this machine (composeMapping):
//   - <service>:<port> (strata-2:9093) and, in a service's own command,
//     0.0.0.0:<port>  ->  127.0.0.1:<a free port for that service and port>;
//   - localhost:<host port>  ->  the same, for the service publishing it
//     ("19092:19092" under strata-1 makes localhost:19092 strata-1's 19092);
//   - minio:9000  ->  the internal/miniotest server's address;
//   - a volume's target (/data)  ->  a fresh directory per service;
//   - the AWS credentials  ->  the test MinIO's (the compose file's must be
//     MinIO's root user there too).
// Nothing else in the command lines is changed; an address the mapping does
// not know fails the test.

const composeFile = "deploy/compose/docker-compose.yml"

type composeProject struct {
	Name     string                    `yaml:"name"`
	XStrata  map[string]any            `yaml:"x-strata"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image           string            `yaml:"image"`
	Build           *composeBuild     `yaml:"build"`
	Hostname        string            `yaml:"hostname"`
	Restart         string            `yaml:"restart"`
	Entrypoint      []string          `yaml:"entrypoint"`
	Command         []string          `yaml:"command"`
	Environment     map[string]string `yaml:"environment"`
	Ports           []string          `yaml:"ports"`
	Volumes         []string          `yaml:"volumes"`
	DependsOn       any               `yaml:"depends_on"` // a list or a map of conditions
	Healthcheck     *composeHealth    `yaml:"healthcheck"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
}

type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

type composeHealth struct {
	Test     []string `yaml:"test"`
	Interval string   `yaml:"interval"`
	Timeout  string   `yaml:"timeout"`
	Retries  int      `yaml:"retries"`
}

// dependsOn returns the services s depends on with their conditions
// ("" for the short list form).
func (s composeService) dependsOn(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	switch d := s.DependsOn.(type) {
	case nil:
	case []any:
		for _, name := range d {
			out[fmt.Sprint(name)] = ""
		}
	case map[string]any:
		for name, v := range d {
			cond, _ := v.(map[string]any)
			out[name] = fmt.Sprint(cond["condition"])
		}
	default:
		t.Fatalf("depends_on: unexpected %T", d)
	}
	return out
}

// flagValue returns the value of --name=value in a command line.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// flagValues returns every --name=value.
func flagValues(args []string, name string) []string {
	var out []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

func loadCompose(t testing.TB) composeProject {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(moduleRoot, composeFile))
	if err != nil {
		t.Fatal(err)
	}
	var p composeProject
	if err := yaml.UnmarshalWithOptions(data, &p, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return p
}

var strataServices = []string{"strata-1", "strata-2", "strata-3"}

// TestComposeFile checks the compose file's structure: what `docker
// compose up` needs and what the README promises.
func TestComposeFile(t *testing.T) {
	p := loadCompose(t)
	var names []string
	for name := range p.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	want := []string{"demo-topic", "grafana", "minio", "minio-bucket", "prometheus", "strata-1", "strata-2", "strata-3"}
	if !slices.Equal(names, want) {
		t.Fatalf("services = %v, want %v", names, want)
	}
	controllers := ""
	for i, name := range strataServices {
		s := p.Services[name]
		id := strconv.Itoa(i + 1)
		if s.Image != "strata:dev" || s.Build == nil || s.Build.Context != "../.." || s.Build.Dockerfile != "deploy/docker/Dockerfile" {
			t.Errorf("%s: image %q build %+v, want strata:dev built from ../.. with deploy/docker/Dockerfile", name, s.Image, s.Build)
		}
		if s.Hostname != name {
			t.Errorf("%s: hostname %q", name, s.Hostname)
		}
		if len(s.Command) == 0 || s.Command[0] != "server" {
			t.Fatalf("%s: command %v does not start with server", name, s.Command)
		}
		for _, a := range s.Command[1:] {
			if !strings.HasPrefix(a, "--") || !strings.Contains(a, "=") {
				t.Errorf("%s: argument %q is not --flag=value (the test reads flags in that form)", name, a)
			}
		}
		if v, _ := flagValue(s.Command, "node-id"); v != id {
			t.Errorf("%s: --node-id=%q, want %s", name, v, id)
		}
		c, _ := flagValue(s.Command, "controllers")
		if i == 0 {
			controllers = c
		} else if c != controllers {
			t.Errorf("%s: --controllers=%q differs from strata-1's %q", name, c, controllers)
		}
		if !strings.Contains(c, id+"@"+name+":9093") {
			t.Errorf("%s: --controllers=%q does not name %s@%s:9093", name, c, id, name)
		}
		sets := flagValues(s.Command, "set")
		ext := strconv.Itoa((i+1)*10000 + 9092)
		for _, want := range []string{
			"listeners=INTERNAL://0.0.0.0:9092,EXTERNAL://0.0.0.0:" + ext,
			"advertised.listeners=INTERNAL://" + name + ":9092,EXTERNAL://localhost:" + ext,
			"inter.broker.listener.name=INTERNAL",
		} {
			if !slices.Contains(sets, want) {
				t.Errorf("%s: no --set=%s", name, want)
			}
		}
		if !slices.Contains(s.Ports, ext+":"+ext) {
			t.Errorf("%s: ports %v do not publish the EXTERNAL listener %s:%s", name, s.Ports, ext, ext)
		}
		if d, _ := flagValue(s.Command, "data-dir"); !slices.Contains(s.Volumes, name+"-data:"+d) {
			t.Errorf("%s: --data-dir=%s is not the volume %s-data (volumes %v)", name, d, name, s.Volumes)
		}
		if _, ok := p.Volumes[name+"-data"]; !ok {
			t.Errorf("%s: volume %s-data is not declared", name, name)
		}
		if s.dependsOn(t)["minio-bucket"] != "service_completed_successfully" {
			t.Errorf("%s: does not wait for the bucket job: %v", name, s.dependsOn(t))
		}
		if s.Environment["AWS_ACCESS_KEY_ID"] != p.Services["minio"].Environment["MINIO_ROOT_USER"] ||
			s.Environment["AWS_SECRET_ACCESS_KEY"] != p.Services["minio"].Environment["MINIO_ROOT_PASSWORD"] {
			t.Errorf("%s: AWS credentials are not MinIO's root user", name)
		}
	}
	store, _ := flagValue(p.Services["strata-1"].Command, "object-store")
	u, err := url.Parse(store)
	if err != nil || u.Scheme != "s3" {
		t.Fatalf("--object-store=%q is not an s3 URL", store)
	}
	if cmd := strings.Join(p.Services["minio-bucket"].Command, " "); !strings.Contains(cmd, "mb --ignore-existing local/"+u.Host) {
		t.Errorf("minio-bucket job %q does not create bucket %s", cmd, u.Host)
	}
	demo := p.Services["demo-topic"]
	if demo.Image != "strata:dev" || len(demo.Command) < 3 || demo.Command[0] != "topic" || demo.Command[1] != "create" ||
		!slices.Contains(demo.Command, "--if-not-exists") || demo.Restart != "on-failure" {
		t.Errorf("demo-topic: image %q command %v restart %q", demo.Image, demo.Command, demo.Restart)
	}
	for _, name := range strataServices {
		if demo.dependsOn(t)[name] != "service_healthy" {
			t.Errorf("demo-topic: does not wait for %s to be healthy", name)
		}
	}
	// Every file a service mounts exists, relative to the compose file.
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if !strings.HasPrefix(src, ".") {
				if _, ok := p.Volumes[src]; !ok {
					t.Errorf("%s: volume %s is not declared", name, src)
				}
				continue
			}
			if _, err := os.Stat(filepath.Join(moduleRoot, "deploy/compose", src)); err != nil {
				t.Errorf("%s: mounts %s: %v", name, src, err)
			}
		}
	}
	graf := strings.Join(p.Services["grafana"].Volumes, " ")
	for _, want := range []string{":/etc/grafana/provisioning/datasources/", ":/etc/grafana/provisioning/dashboards/", "../grafana/dashboards:/var/lib/grafana/dashboards/strata"} {
		if !strings.Contains(graf, want) {
			t.Errorf("grafana volumes %v: nothing mounted %s", p.Services["grafana"].Volumes, want)
		}
	}
	// The Prometheus configuration scrapes every node's admin listener.
	prom, err := os.ReadFile(filepath.Join(moduleRoot, "deploy/compose/prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range strataServices {
		http, _ := flagValue(p.Services[name].Command, "http-listen")
		_, port, _ := strings.Cut(http, ":")
		if !strings.Contains(string(prom), `"`+name+":"+port+`"`) {
			t.Errorf("deploy/compose/prometheus.yml does not scrape %s:%s", name, port)
		}
	}
	if promtool, err := exec.LookPath(filepath.Join(moduleRoot, "bin", "promtool")); err == nil {
		// alerts.yml is mounted beside it; check the config where it is.
		dir := t.TempDir()
		for src, dst := range map[string]string{"deploy/compose/prometheus.yml": "prometheus.yml", "deploy/prometheus/alerts.yml": "alerts.yml"} {
			data, err := os.ReadFile(filepath.Join(moduleRoot, src))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		mustRun(t, time.Minute, "", promtool, "check", "config", filepath.Join(dir, "prometheus.yml"))
	} else if inCI() {
		t.Errorf("bin/promtool is missing: %s", "scripts/install-test-deps.sh")
	}
}

// composeMapping turns compose-network addresses into loopback ones (see
// the comment at the top of this file).
type composeMapping struct {
	t       testing.TB
	ports   map[string]string // "service:port" -> 127.0.0.1:free
	publish map[string]string // host port -> "service:container port"
	extra   map[string]string // host:port -> replacement (minio)
	dirs    map[string]string // "service:/target" -> directory
}

func newComposeMapping(t testing.TB, p composeProject) *composeMapping {
	m := &composeMapping{t: t, ports: map[string]string{}, publish: map[string]string{}, extra: map[string]string{}, dirs: map[string]string{}}
	for name, s := range p.Services {
		for _, spec := range s.Ports {
			host, container, ok := strings.Cut(spec, ":")
			if !ok {
				t.Fatalf("%s: port %q is not host:container", name, spec)
			}
			m.publish[host] = name + ":" + container
		}
	}
	return m
}

func (m *composeMapping) port(service, port string) string {
	key := service + ":" + port
	if _, ok := m.ports[key]; !ok {
		m.ports[key] = freeAddr(m.t)
	}
	return m.ports[key]
}

var hostPort = regexp.MustCompile(`([A-Za-z0-9.-]+):([0-9]+)`)

// args maps one service's command line.
func (m *composeMapping) args(p composeProject, service string, args []string) []string {
	m.t.Helper()
	s := p.Services[service]
	out := make([]string, len(args))
	for i, a := range args {
		a = hostPort.ReplaceAllStringFunc(a, func(hp string) string {
			sub := hostPort.FindStringSubmatch(hp)
			host, port := sub[1], sub[2]
			switch {
			case m.extra[hp] != "":
				return m.extra[hp]
			case host == "0.0.0.0":
				return m.port(service, port)
			case host == "localhost":
				target, ok := m.publish[port]
				if !ok {
					m.t.Fatalf("%s: %s: no service publishes host port %s", service, a, port)
				}
				svc, cport, _ := strings.Cut(target, ":")
				return m.port(svc, cport)
			}
			if _, ok := p.Services[host]; ok {
				return m.port(host, port)
			}
			m.t.Fatalf("%s: %s: the mapping does not know %s", service, a, hp)
			return ""
		})
		for _, v := range s.Volumes {
			_, target, _ := strings.Cut(v, ":")
			if flag, val, ok := strings.Cut(a, "="); ok && val == target {
				key := service + ":" + target
				if m.dirs[key] == "" {
					m.dirs[key] = filepath.Join(m.t.TempDir(), strings.TrimPrefix(target, "/"))
				}
				a = flag + "=" + m.dirs[key]
			}
		}
		out[i] = a
	}
	return out
}

// waitHealthy polls /healthz on httpAddr and a TCP connection to kafkaAddr
// until both answer, failing early if p exits.
func waitHealthy(t testing.TB, p *bgProcess, httpAddr, kafkaAddr string, timeout time.Duration) {
	t.Helper()
	s := &server{addr: kafkaAddr, httpAddr: httpAddr}
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if !p.running() {
			t.Fatalf("%s exited during startup: %v\n%s", p.name, p.cmd.ProcessState, clip(p.stderr.String(), 6000))
		}
		if err = s.probe(client); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s not healthy after %s: %v", p.name, timeout, err)
}

// TestComposeCluster runs the compose file's three strata command lines
// and its demo-topic job as processes against a real MinIO, and sends
// records through the nodes' EXTERNAL listeners as a laptop client would.
func TestComposeCluster(t *testing.T) {
	p := loadCompose(t)
	store := miniotest.New(t)
	m := newComposeMapping(t, p)
	m.extra["minio:9000"] = strings.TrimPrefix(store.Endpoint(), "http://")

	// The minio-bucket job: make the bucket --object-store names.
	storeURL, _ := flagValue(p.Services["strata-1"].Command, "object-store")
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatal(err)
	}
	bucket, prefix := u.Host, strings.Trim(u.Path, "/")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := store.Client().MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: miniotest.Region}); err != nil {
		t.Fatalf("make bucket %s: %v", bucket, err)
	}

	var nodes []*bgProcess
	var external []string
	for _, name := range strataServices {
		s := p.Services[name]
		for k := range s.Environment {
			if !strings.HasPrefix(k, "AWS_") {
				t.Fatalf("%s: environment %s is not mapped by this test", name, k)
			}
		}
		args := m.args(p, name, s.Command)
		t.Logf("%s: strata %s", name, strings.Join(args, " "))
		nodes = append(nodes, startBackgroundEnv(t, name, store.AWSEnv(), strataBin, args...))
		// Its first published port is the EXTERNAL listener (TestComposeFile).
		hostPort, _, _ := strings.Cut(s.Ports[0], ":")
		external = append(external, m.args(p, name, []string{"localhost:" + hostPort})[0])
	}
	for i, name := range strataServices {
		httpListen, _ := flagValue(p.Services[name].Command, "http-listen")
		_, httpPort, _ := strings.Cut(httpListen, ":")
		waitHealthy(t, nodes[i], m.port(name, httpPort), external[i], 60*time.Second)
	}

	// The demo-topic job, retried as restart: on-failure does until the
	// quorum serves, then once more: --if-not-exists makes it a no-op.
	demo := p.Services["demo-topic"]
	jobArgs := m.args(p, "demo-topic", demo.Command)
	topic := jobArgs[2]
	deadline := time.Now().Add(90 * time.Second)
	for {
		res := runCmd(t, time.Minute, "", strataBin, jobArgs...)
		if res.err == nil && res.exitCode == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo-topic job: strata %s: %s", strings.Join(jobArgs, " "), res)
		}
		time.Sleep(time.Second)
	}
	if res := mustRun(t, time.Minute, "", strataBin, jobArgs...); !strings.Contains(res.stdout, "already exists") {
		t.Errorf("second demo-topic run: %s", res)
	}

	// A laptop client bootstraps from localhost:19092 and must be told the
	// EXTERNAL addresses of all three brokers.
	cl := newClient(t, external[0], kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(256<<10))
	advertised := advertisedBrokers(ctx, t, external[0])
	if want := slices.Sorted(slices.Values(external)); !slices.Equal(advertised, want) {
		t.Errorf("brokers advertised on the EXTERNAL listener = %v, want %v", advertised, want)
	}
	// A container bootstrapping from strata-1:9092 gets INTERNAL ones.
	var internal []string
	for _, name := range strataServices {
		internal = append(internal, m.port(name, "9092"))
	}
	if got := advertisedBrokers(ctx, t, internal[0]); !slices.Equal(got, slices.Sorted(slices.Values(internal))) {
		t.Errorf("brokers advertised on the INTERNAL listener = %v, want %v", got, internal)
	}

	// 2 MiB into partition 0: with the topic's 1 MiB segments, at least one
	// segment is sealed and uploaded to the bucket.
	const n = 200
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: 0, Key: tieredKey(i), Value: tieredValue(i)}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	consumer := newClient(t, external[1], kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	got := 0
	for got < n {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", got, n, err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			if string(r.Key) != string(tieredKey(int(r.Offset))) || string(r.Value) != string(tieredValue(int(r.Offset))) {
				t.Fatalf("offset %d: key %q is not record %d", r.Offset, r.Key, r.Offset)
			}
			got++
		})
	}

	// The tiered segments land in MinIO under the --object-store prefix.
	for {
		var logs []string
		for obj := range store.Client().ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix + "/", Recursive: true}) {
			if obj.Err != nil {
				t.Fatalf("listing %s/%s: %v", bucket, prefix, obj.Err)
			}
			if strings.Contains(obj.Key, "/"+topic+"-") && strings.HasSuffix(obj.Key, ".log") {
				logs = append(logs, obj.Key)
			}
		}
		if len(logs) > 0 {
			t.Logf("segments in the bucket: %v", logs)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no segment of %s in s3://%s/%s", topic, bucket, prefix)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// advertisedBrokers returns the sorted host:port of every broker a Metadata
// request to seed names.
func advertisedBrokers(ctx context.Context, t testing.TB, seed string) []string {
	t.Helper()
	meta, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, newClient(t, seed))
	if err != nil {
		t.Fatalf("Metadata from %s: %v", seed, err)
	}
	var out []string
	for _, b := range meta.Brokers {
		out = append(out, fmt.Sprintf("%s:%d", b.Host, b.Port))
	}
	sort.Strings(out)
	return out
}
