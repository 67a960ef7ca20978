package e2e

// The Helm chart (deploy/helm/strata), checked without a Kubernetes cluster:
//
//   - bin/helm lint --strict with the default values and ci/secure-values.yaml;
//   - bin/helm template with both: every rendered object decodes strictly
//     (unknown fields fail) into its k8s.io/api type, the ServiceMonitor
//     as unstructured with its required fields;
//   - the StatefulSet's --controllers names every replica, the probes'
//     paths are ones a real `strata server` answers 200 on, the PDB allows
//     one disruption, the pod runs as non-root; the secure values mount
//     the TLS Secret, take S3 and SCRAM credentials from Secrets and set
//     SASL_SSL listeners.

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

const helmInstall = "go install helm.sh/helm/v4/cmd/helm@v4.3.2 into bin/ (GOBIN=$PWD/bin)"

// helm returns bin/helm, or skips (fails under CI) without it.
func helm(t testing.TB) string {
	t.Helper()
	path := filepath.Join(moduleRoot, "bin", "helm")
	if _, err := os.Stat(path); err != nil {
		missingTool(t, "bin/helm", helmInstall)
	}
	return path
}

// rendered is the chart's output, by kind.
type rendered struct {
	statefulSets []appsv1.StatefulSet
	services     []corev1.Service
	configMaps   []corev1.ConfigMap
	pdbs         []policyv1.PodDisruptionBudget
	deployments  []appsv1.Deployment
	monitors     []map[string]any
}

// renderChart runs helm lint --strict and helm template with the values
// files and decodes every document strictly.
func renderChart(t *testing.T, replicas int, valuesFiles ...string) rendered {
	t.Helper()
	chart := deployPath("helm", "strata")
	args := []string{"--set", fmt.Sprintf("replicaCount=%d", replicas)}
	for _, f := range valuesFiles {
		args = append(args, "-f", filepath.Join(chart, f))
	}
	lint := exec.Command(helm(t), append([]string{"lint", "--strict", chart}, args...)...)
	if out, err := lint.CombinedOutput(); err != nil {
		t.Fatalf("helm lint --strict %v: %v\n%s", valuesFiles, err, out)
	}
	tmpl := exec.Command(helm(t), append([]string{"template", "rel", chart, "--namespace", "kafka"}, args...)...)
	var stderr bytes.Buffer
	tmpl.Stderr = &stderr
	out, err := tmpl.Output()
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", valuesFiles, err, stderr.Bytes())
	}
	var r rendered
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(out), -1) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("document: %v\n%s", err, doc)
		}
		strict := func(into any) {
			t.Helper()
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				t.Fatalf("%s %s does not decode strictly: %v\n%s", head.APIVersion, head.Kind, err, doc)
			}
		}
		switch head.APIVersion + " " + head.Kind {
		case " ":
			if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(doc, "")) != "" {
				t.Fatalf("a document without kind:\n%s", doc)
			}
		case "apps/v1 StatefulSet":
			var o appsv1.StatefulSet
			strict(&o)
			r.statefulSets = append(r.statefulSets, o)
		case "apps/v1 Deployment":
			var o appsv1.Deployment
			strict(&o)
			r.deployments = append(r.deployments, o)
		case "v1 Service":
			var o corev1.Service
			strict(&o)
			r.services = append(r.services, o)
		case "v1 ConfigMap":
			var o corev1.ConfigMap
			strict(&o)
			r.configMaps = append(r.configMaps, o)
		case "policy/v1 PodDisruptionBudget":
			var o policyv1.PodDisruptionBudget
			strict(&o)
			r.pdbs = append(r.pdbs, o)
		case "monitoring.coreos.com/v1 ServiceMonitor":
			var o map[string]any
			strict(&o)
			r.monitors = append(r.monitors, o)
		default:
			t.Fatalf("unexpected object %s %s", head.APIVersion, head.Kind)
		}
	}
	if len(r.statefulSets) != 1 || len(r.pdbs) != 1 || len(r.configMaps) < 1 {
		t.Fatalf("want one StatefulSet, one PDB and the ConfigMap; got %d, %d, %d", len(r.statefulSets), len(r.pdbs), len(r.configMaps))
	}
	return r
}

// argAfter is the value following flag in args.
func argAfter(t *testing.T, args []string, flag string) string {
	t.Helper()
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("container args %q lack %s", args, flag)
	}
	return args[i+1]
}

// checkNodes checks what every rendering must hold and returns the node
// container.
func checkNodes(t *testing.T, r rendered, replicas int) corev1.Container {
	t.Helper()
	sts := r.statefulSets[0]
	if sts.Spec.Replicas == nil || int(*sts.Spec.Replicas) != replicas {
		t.Fatalf("replicas %v, want %d", sts.Spec.Replicas, replicas)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--node-id-from-hostname") {
		t.Errorf("args %q: no --node-id-from-hostname", c.Args)
	}
	// --controllers: id i+1 at pod i's name on the headless Service.
	var want []string
	for i := range replicas {
		want = append(want, fmt.Sprintf("%d@%s-%d.%s.kafka.svc.cluster.local:9093", i+1, sts.Name, i, sts.Spec.ServiceName))
	}
	if got := argAfter(t, c.Args, "--controllers"); got != strings.Join(want, ",") {
		t.Errorf("--controllers %s\nwant %s", got, strings.Join(want, ","))
	}
	var headless *corev1.Service
	for i := range r.services {
		if r.services[i].Name == sts.Spec.ServiceName {
			headless = &r.services[i]
		}
	}
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("headless Service %s: %+v", sts.Spec.ServiceName, headless)
	}
	// One properties file per pod, named as --config expands $(POD_NAME).
	if got := argAfter(t, c.Args, "--config"); got != "/etc/strata/config/$(POD_NAME).properties" {
		t.Errorf("--config %s", got)
	}
	for i := range replicas {
		if _, ok := r.configMaps[0].Data[fmt.Sprintf("%s-%d.properties", sts.Name, i)]; !ok {
			t.Errorf("ConfigMap lacks pod %d's properties: %v", i, keys(r.configMaps[0].Data))
		}
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes: readiness %+v, liveness %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if c.ReadinessProbe.HTTPGet.Port.String() != "http" || argAfter(t, c.Args, "--http-listen") != "0.0.0.0:9644" ||
		!slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "http" && p.ContainerPort == 9644 }) {
		t.Errorf("probe port %s does not reach --http-listen %s (ports %+v)", c.ReadinessProbe.HTTPGet.Port.String(), argAfter(t, c.Args, "--http-listen"), c.Ports)
	}
	pdb := r.pdbs[0]
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
		t.Errorf("PDB: maxUnavailable %v, minAvailable %v; want 1 disruption", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
	}
	if !labelsMatch(pdb.Spec.Selector.MatchLabels, sts.Spec.Template.Labels) {
		t.Errorf("PDB selector %v does not select the pods %v", pdb.Spec.Selector.MatchLabels, sts.Spec.Template.Labels)
	}
	psc := sts.Spec.Template.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod security context %+v: not non-root", psc)
	}
	if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v", c.SecurityContext)
	}
	if sts.Spec.Template.Spec.TerminationGracePeriodSeconds == nil || *sts.Spec.Template.Spec.TerminationGracePeriodSeconds < 60 {
		t.Errorf("terminationGracePeriodSeconds %v: too short for a controlled shutdown", sts.Spec.Template.Spec.TerminationGracePeriodSeconds)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" ||
		!slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == "data" && m.MountPath == argAfter(t, c.Args, "--data-dir")
		}) {
		t.Errorf("per-pod PVC: %+v, mounts %+v", sts.Spec.VolumeClaimTemplates, c.VolumeMounts)
	}
	spec := sts.Spec.Template.Spec
	if spec.Affinity == nil || spec.Affinity.PodAntiAffinity == nil || len(spec.TopologySpreadConstraints) == 0 {
		t.Errorf("no anti-affinity or topology spread: %+v %+v", spec.Affinity, spec.TopologySpreadConstraints)
	}
	return c
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// TestHelmChartDefaults: the default values, and replica counts 1 and 5.
func TestHelmChartDefaults(t *testing.T) {
	for _, replicas := range []int{3, 1, 5} {
		r := renderChart(t, replicas)
		c := checkNodes(t, r, replicas)
		if len(r.monitors) != 0 || len(r.deployments) != 0 {
			t.Errorf("optional objects rendered by default: %d ServiceMonitors, %d Deployments", len(r.monitors), len(r.deployments))
		}
		if len(c.Env) != 1 || slices.Contains(c.Args, "--object-store") {
			t.Errorf("default env %+v / args %q: want POD_NAME only and the default object store", c.Env, c.Args)
		}
	}
}

// TestHelmChartSecure: ci/secure-values.yaml (TLS + SASL + S3, external
// LoadBalancer listeners, ServiceMonitor, Connect, a stream job).
func TestHelmChartSecure(t *testing.T) {
	r := renderChart(t, 3, "ci/secure-values.yaml")
	c := checkNodes(t, r, 3)
	sts := r.statefulSets[0]
	// TLS material: the Secret mounted as files the properties name.
	var tlsSecret string
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			tlsSecret = v.Secret.SecretName
		}
	}
	if tlsSecret != "strata-tls" || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/strata/tls" && m.ReadOnly }) {
		t.Errorf("TLS Secret volume %q, mounts %+v", tlsSecret, c.VolumeMounts)
	}
	// S3 and SCRAM credentials from Secrets, as the env vars the AWS chain
	// and the args' $(…) expansion read.
	secretEnv := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			secretEnv[e.Name] = e.ValueFrom.SecretKeyRef.Name
		}
	}
	for name, secret := range map[string]string{"AWS_ACCESS_KEY_ID": "strata-s3", "AWS_SECRET_ACCESS_KEY": "strata-s3", "SCRAM_ADMIN_PASSWORD": "strata-admin"} {
		if secretEnv[name] != secret {
			t.Errorf("env %s from Secret %q, want %q", name, secretEnv[name], secret)
		}
	}
	if got := argAfter(t, c.Args, "--object-store"); !strings.HasPrefix(got, "s3://") {
		t.Errorf("--object-store %s", got)
	}
	if got := argAfter(t, c.Args, "--add-scram"); got != "SCRAM-SHA-512=[name=admin,password=$(SCRAM_ADMIN_PASSWORD)]" {
		t.Errorf("--add-scram %s", got)
	}
	for i := range 3 {
		props := r.configMaps[0].Data[fmt.Sprintf("%s-%d.properties", sts.Name, i)]
		for _, want := range []string{
			"listener.security.protocol.map=INTERNAL:SSL,CLIENT:SASL_SSL,EXTERNAL:SASL_SSL\n",
			"inter.broker.listener.name=INTERNAL\n",
			fmt.Sprintf("advertised.listeners=INTERNAL://%[1]s-%[2]d.%[3]s.kafka.svc.cluster.local:9092,CLIENT://%[1]s-%[2]d.%[3]s.kafka.svc.cluster.local:9095,EXTERNAL://kafka-%[2]d.example.com:9094\n", sts.Name, i, sts.Spec.ServiceName),
			"ssl.keystore.location=/etc/strata/tls/keystore.pem\n",
			"sasl.enabled.mechanisms=SCRAM-SHA-512\n",
		} {
			if !strings.Contains(props, want) {
				t.Errorf("pod %d properties lack %q:\n%s", i, want, props)
			}
		}
	}
	// One LoadBalancer Service per pod, selecting that pod only.
	external := 0
	for _, s := range r.services {
		if s.Spec.Type == corev1.ServiceTypeLoadBalancer {
			pod := s.Spec.Selector["statefulset.kubernetes.io/pod-name"]
			if s.Name != pod+"-external" || s.Spec.Ports[0].Port != 9094 || s.Spec.Ports[0].TargetPort.IntValue() != 9094 {
				t.Errorf("external Service %s: %+v", s.Name, s.Spec)
			}
			external++
		}
	}
	if external != 3 {
		t.Errorf("%d external Services, want 3", external)
	}
	if len(r.monitors) != 1 {
		t.Fatalf("%d ServiceMonitors", len(r.monitors))
	}
	spec, _ := r.monitors[0]["spec"].(map[string]any)
	endpoints, _ := spec["endpoints"].([]any)
	selector, _ := spec["selector"].(map[string]any)
	if len(endpoints) != 1 || selector["matchLabels"] == nil || endpoints[0].(map[string]any)["port"] != "http" || endpoints[0].(map[string]any)["path"] != "/metrics" {
		t.Errorf("ServiceMonitor spec %v", spec)
	}
	if len(r.deployments) != 2 {
		t.Errorf("%d Deployments, want Connect and the stream job", len(r.deployments))
	}
}

// TestHelmProbePathsServed: the probes' paths answer 200 on a real node's
// admin HTTP listener.
func TestHelmProbePathsServed(t *testing.T) {
	s := startServer(t)
	client := &http.Client{Timeout: 5 * time.Second}
	for _, path := range []string{"/healthz", "/readyz"} {
		var code int
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			resp, err := client.Get("http://" + s.httpAddr + path)
			if err == nil {
				code = resp.StatusCode
				resp.Body.Close()
				if code == http.StatusOK {
					break
				}
			}
		}
		if code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", path, code)
		}
	}
}
