package check

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
)

// The chart in deploy/helm/agentd is linted and rendered with Helm's own
// packages, the code behind `helm lint` and `helm template` (no helm
// binary to install, nothing to download but Go modules), and every
// rendered document is decoded strictly into its Kubernetes type as
// TestManifests does for deploy/kubernetes.

const chartDir = "../helm/agentd"

// secretsSet fills the keys config.toml names, as an install would.
const secretsSet = `
secrets:
  values:
    AGENTD_API_KEY: k-0123456789abcdef
    AGENTD_POSTGRES_URL: postgres://agentd:pw@db:5432/agentd
    AGENTD_SESSION_KEY: s-0123456789abcdef0123456789abcdef
`

func TestHelmLint(t *testing.T) {
	for _, tc := range []struct{ name, values string }{
		{"defaults", ""},
		{"everything on", secretsSet + "postgres: {enabled: true, password: pw}\nserviceMonitor: {enabled: true}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(tc.values))
			if err != nil {
				t.Fatal(err)
			}
			l := lint.All(chartDir, vals, "agents", false)
			for _, m := range l.Messages {
				// INFO (an icon is recommended) is advice; a warning or an
				// error fails, as `helm lint --strict` does.
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				} else {
					t.Logf("helm lint: %s", m)
				}
			}
			if len(l.Messages) == 0 && l.HighestSeverity != support.UnknownSev {
				t.Errorf("lint reported severity %d without messages", l.HighestSeverity)
			}
		})
	}
}

// render is `helm template agentd deploy/helm/agentd -n agents -f values`:
// the chart's values merged with values, checked against
// values.schema.json, every template rendered. It returns the rendered
// files by name (NOTES.txt and partials left out).
func render(t *testing.T, values string) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load the chart: %v", err)
	}
	over, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	// For the oldest Kubernetes the chart allows (its kubeVersion), whose
	// API has every field it uses (preStop sleep: 1.30). Helm's default
	// as a library, without a cluster, would be 1.20.
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = chartutil.KubeVersion{Version: "v1.30.0", Major: "1", Minor: "30"}
	if err := checkKubeVersion(ch, caps); err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, over, chartutil.ReleaseOptions{Name: "agentd", Namespace: "agents", Revision: 1, IsInstall: true}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, body := range files {
		base := name[strings.LastIndex(name, "/")+1:]
		if base == "NOTES.txt" || strings.HasPrefix(base, "_") || strings.TrimSpace(body) == "" {
			continue
		}
		out[name] = body
	}
	return out, nil
}

func checkKubeVersion(ch *chart.Chart, caps *chartutil.Capabilities) error {
	if ch.Metadata.KubeVersion == "" {
		return nil
	}
	if !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return fmt.Errorf("the chart's kubeVersion %s excludes the Kubernetes %s it is rendered for", ch.Metadata.KubeVersion, caps.KubeVersion.String())
	}
	return nil
}

// objects renders values and decodes every document strictly.
func objects(t *testing.T, values string) map[string]object {
	t.Helper()
	files, err := render(t, values)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]object{}
	for _, n := range names {
		for _, o := range decodeAll(t, n, []byte(files[n])) {
			k := o.key + " " + o.name
			if _, dup := out[k]; dup {
				t.Errorf("%s rendered twice", k)
			}
			out[k] = o
		}
	}
	return out
}

func get[T any](t *testing.T, objs map[string]object, key string) *T {
	t.Helper()
	o, ok := objs[key]
	if !ok {
		keys := make([]string, 0, len(objs))
		for k := range objs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Fatalf("no %s among %v", key, keys)
	}
	return o.v.(*T)
}

// makefileImage is IMAGE in the Makefile, the repository `make image`
// tags.
func makefileImage(t *testing.T) string {
	t.Helper()
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^IMAGE\s*\?=\s*(\S+)`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no IMAGE ?= in the Makefile")
	}
	return string(m[1])
}

func TestHelmTemplateDefaults(t *testing.T) {
	objs := objects(t, secretsSet)
	dep := get[appsv1.Deployment](t, objs, "apps/v1/Deployment agentd")
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	podLabels := dep.Spec.Template.Labels

	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != 3 {
		t.Errorf("replicas = %v, want 3", dep.Spec.Replicas)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if want := makefileImage(t) + ":" + ch.Metadata.AppVersion; c.Image != want {
		t.Errorf("image %q, want %q (the Makefile's IMAGE at the chart's appVersion)", c.Image, want)
	}

	// Probes on the daemon's routes, through the named port.
	port := -1
	for _, p := range c.Ports {
		if p.Name == "http" {
			port = int(p.ContainerPort)
		}
	}
	if port < 0 {
		t.Fatal("no container port named http")
	}
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readiness", c.ReadinessProbe, "/readyz"}, {"liveness", c.LivenessProbe, "/livez"}, {"startup", c.StartupProbe, "/livez"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no %s probe over HTTP", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "http" {
			t.Errorf("%s probe GET %s on %s, want %s on http", p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port.String(), p.path)
		}
	}

	// preStop sleeps (the image has no sleep binary), inside the grace period.
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds <= 0 {
		t.Fatalf("no preStop sleep: %+v", c.Lifecycle)
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g <= c.Lifecycle.PreStop.Sleep.Seconds {
		t.Errorf("terminationGracePeriodSeconds %v does not exceed the preStop sleep %d", g, c.Lifecycle.PreStop.Sleep.Seconds)
	}

	// Spread across nodes, over this release's pods.
	var onNodes bool
	for _, tsc := range pod.TopologySpreadConstraints {
		if tsc.TopologyKey == "kubernetes.io/hostname" && tsc.MaxSkew == 1 && selects(tsc.LabelSelector.MatchLabels, podLabels) {
			onNodes = true
		}
	}
	if !onNodes {
		t.Errorf("no topology spread over kubernetes.io/hostname selecting the pods: %+v", pod.TopologySpreadConstraints)
	}

	// Read-only root; /tmp and AGENTD_HOME are emptyDirs.
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the root file system is not read-only")
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Error("the pod may run as root")
	}
	emptyDirs := map[string]bool{}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil {
			emptyDirs[v.Name] = true
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.Name
	}
	for _, p := range []string{"/tmp", "/var/lib/agentd"} {
		if !emptyDirs[mounts[p]] {
			t.Errorf("%s is not a writable emptyDir (mounts %v)", p, mounts)
		}
	}

	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if env["TMPDIR"].Value != "/tmp" {
		t.Errorf("TMPDIR = %q, want /tmp", env["TMPDIR"].Value)
	}
	if gm := env["GOMEMLIMIT"]; gm.ValueFrom == nil || gm.ValueFrom.ResourceFieldRef == nil || gm.ValueFrom.ResourceFieldRef.Resource != "limits.memory" {
		t.Errorf("GOMEMLIMIT does not come from limits.memory: %+v", gm)
	} else if d := gm.ValueFrom.ResourceFieldRef.Divisor; d.String() != "1" {
		t.Errorf("GOMEMLIMIT divisor %s: the Go runtime reads a bare number as bytes", d.String())
	}
	if ra := env["OTEL_RESOURCE_ATTRIBUTES"].Value; !strings.Contains(ra, "k8s.pod.name=$(K8S_POD_NAME)") {
		t.Errorf("OTEL_RESOURCE_ATTRIBUTES %q does not name the pod", ra)
	}
	if _, ok := env["K8S_POD_NAME"]; !ok {
		t.Error("K8S_POD_NAME, which OTEL_RESOURCE_ATTRIBUTES refers to, is not set")
	}

	// The keys come from the chart's Secret, which holds what was set.
	sec := get[corev1.Secret](t, objs, "v1/Secret agentd")
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].SecretRef == nil || c.EnvFrom[0].SecretRef.Name != sec.Name {
		t.Errorf("envFrom %+v, want the Secret %s", c.EnvFrom, sec.Name)
	}
	for _, k := range []string{"AGENTD_API_KEY", "AGENTD_POSTGRES_URL", "AGENTD_SESSION_KEY"} {
		if sec.StringData[k] == "" {
			t.Errorf("the Secret has no %s", k)
		}
	}
	if _, ok := sec.StringData["OPENAI_API_KEY"]; ok {
		t.Error("an empty value went into the Secret (it should be left out)")
	}

	// config.toml from the ConfigMap, listening on the container's port.
	cm := get[corev1.ConfigMap](t, objs, "v1/ConfigMap agentd")
	toml := cm.Data["config.toml"]
	if !strings.Contains(toml, `backend = "postgres"`) {
		t.Errorf("config.toml is not on PostgreSQL:\n%s", toml)
	}
	// In-cluster clients reach the Service by name: the Host check must
	// admit it (IP addresses, which probes use, always pass).
	if !strings.Contains(toml, `"agentd.agents.svc.cluster.local"`) || !strings.Contains(toml, `"agentd",`) {
		t.Errorf("config.toml's allowed_hosts lack the Service's names:\n%s", toml)
	}
	lm := regexp.MustCompile(`(?m)^listen = "[^"]*:(\d+)"`).FindStringSubmatch(toml)
	if lm == nil || lm[1] != strconv.Itoa(port) {
		t.Errorf("config.toml listens on %v, the container port is %d", lm, port)
	}
	var mountsConfig bool
	for _, v := range pod.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name && mounts["/etc/agentd"] == v.Name {
			mountsConfig = true
		}
	}
	if !mountsConfig || !slices.Contains(c.Args, "/etc/agentd/config.toml") {
		t.Errorf("the ConfigMap is not the config file (volumes %+v, args %v)", pod.Volumes, c.Args)
	}
	for _, a := range []string{"checksum/config", "checksum/secret"} {
		if len(dep.Spec.Template.Annotations[a]) != 64 {
			t.Errorf("pod template annotation %s = %q, want a sha256", a, dep.Spec.Template.Annotations[a])
		}
	}

	// The Service and the PDB select exactly these pods.
	svc := get[corev1.Service](t, objs, "v1/Service agentd")
	if !selects(svc.Spec.Selector, podLabels) || svc.Spec.Ports[0].TargetPort.String() != "http" {
		t.Errorf("the Service does not reach the pods: %+v", svc.Spec)
	}
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		t.Errorf("session affinity %q: any replica serves any request", svc.Spec.SessionAffinity)
	}
	pdb := get[policyv1.PodDisruptionBudget](t, objs, "policy/v1/PodDisruptionBudget agentd")
	if !selects(pdb.Spec.Selector.MatchLabels, podLabels) || !selects(dep.Spec.Selector.MatchLabels, pdb.Spec.Selector.MatchLabels) {
		t.Errorf("the PDB selects %v, the pods are %v", pdb.Spec.Selector.MatchLabels, podLabels)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PDB maxUnavailable %v, want 1", pdb.Spec.MaxUnavailable)
	}

	// Off by default: the reference database and the ServiceMonitor.
	for k := range objs {
		if strings.HasPrefix(k, "apps/v1/StatefulSet") || strings.HasPrefix(k, "monitoring.coreos.com") {
			t.Errorf("%s rendered by default", k)
		}
	}
}

// selects reports whether every label of sel is among labels.
func selects(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestHelmConfigChecksum: a change of config.toml changes the pod
// template (so the pods roll); the same values render the same template.
func TestHelmConfigChecksum(t *testing.T) {
	sum := func(values string) (string, string) {
		dep := get[appsv1.Deployment](t, objects(t, values), "apps/v1/Deployment agentd")
		return dep.Spec.Template.Annotations["checksum/config"], dep.Spec.Template.Annotations["checksum/secret"]
	}
	c1, s1 := sum(secretsSet)
	c2, s2 := sum(secretsSet)
	if c1 == "" || c1 != c2 || s1 != s2 {
		t.Fatalf("the same values gave checksums %s/%s and %s/%s", c1, s1, c2, s2)
	}
	c3, s3 := sum(secretsSet + "config: |\n  listen = \"0.0.0.0:4200\"\n  log_format = \"json\"\n")
	if c3 == c1 {
		t.Error("a new config.toml left checksum/config unchanged: the pods would not roll")
	}
	if s3 != s1 {
		t.Error("a new config.toml changed checksum/secret")
	}
	_, s4 := sum(secretsSet + "    OPENAI_API_KEY: sk-new\n")
	if s4 == s1 {
		t.Error("a new key left checksum/secret unchanged: the pods would not roll")
	}
}

func TestHelmTemplateVariants(t *testing.T) {
	t.Run("reference PostgreSQL and ServiceMonitor", func(t *testing.T) {
		objs := objects(t, `
secrets: {values: {AGENTD_API_KEY: k, AGENTD_SESSION_KEY: s}}
postgres: {enabled: true, password: "p@ss/word"}
serviceMonitor: {enabled: true, labels: {release: prom}}
`)
		sts := get[appsv1.StatefulSet](t, objs, "apps/v1/StatefulSet agentd-postgres")
		pgSvc := get[corev1.Service](t, objs, "v1/Service agentd-postgres")
		if !selects(pgSvc.Spec.Selector, sts.Spec.Template.Labels) {
			t.Errorf("the database Service selects %v, its pod is %v", pgSvc.Spec.Selector, sts.Spec.Template.Labels)
		}
		dep := get[appsv1.Deployment](t, objs, "apps/v1/Deployment agentd")
		if selects(pgSvc.Spec.Selector, dep.Spec.Template.Labels) || selects(dep.Spec.Selector.MatchLabels, sts.Spec.Template.Labels) {
			t.Error("the database's and agentd's selectors overlap")
		}
		sec := get[corev1.Secret](t, objs, "v1/Secret agentd")
		if want := "postgres://agentd:p%40ss%2Fword@agentd-postgres:5432/agentd?sslmode=disable"; sec.StringData["AGENTD_POSTGRES_URL"] != want {
			t.Errorf("AGENTD_POSTGRES_URL = %q, want %q", sec.StringData["AGENTD_POSTGRES_URL"], want)
		}
		sm := get[monitoringv1.ServiceMonitor](t, objs, "monitoring.coreos.com/v1/ServiceMonitor agentd")
		svc := get[corev1.Service](t, objs, "v1/Service agentd")
		if !selects(sm.Spec.Selector.MatchLabels, svc.Labels) || sm.Labels["release"] != "prom" {
			t.Errorf("the ServiceMonitor selects %v, the Service is labelled %v", sm.Spec.Selector.MatchLabels, svc.Labels)
		}
		ep := sm.Spec.Endpoints[0]
		if ep.Port != "http" || ep.Path != "/metrics" || ep.Authorization == nil || ep.Authorization.Credentials.Name != sec.Name || ep.Authorization.Credentials.Key != "AGENTD_API_KEY" {
			t.Errorf("the ServiceMonitor's endpoint %+v does not scrape /metrics with the API key", ep)
		}
	})
	t.Run("existing Secret", func(t *testing.T) {
		objs := objects(t, "secrets: {existingSecret: agentd-keys}\n")
		for k := range objs {
			if strings.HasPrefix(k, "v1/Secret") {
				t.Errorf("%s rendered with an existing Secret", k)
			}
		}
		dep := get[appsv1.Deployment](t, objs, "apps/v1/Deployment agentd")
		if n := dep.Spec.Template.Spec.Containers[0].EnvFrom[0].SecretRef.Name; n != "agentd-keys" {
			t.Errorf("envFrom names %q, want agentd-keys", n)
		}
		if _, ok := dep.Spec.Template.Annotations["checksum/secret"]; ok {
			t.Error("checksum/secret of a Secret the chart does not render")
		}
	})
	t.Run("PDB off, one replica", func(t *testing.T) {
		objs := objects(t, secretsSet+"replicaCount: 1\npodDisruptionBudget: {enabled: false}\n")
		for k := range objs {
			if strings.HasPrefix(k, "policy/v1/PodDisruptionBudget") {
				t.Errorf("%s rendered though disabled", k)
			}
		}
	})

	// Refusals name what is wrong.
	for _, tc := range []struct{ name, values, want string }{
		{"misspelt key", "replicas: 3\n", "replicas"},
		{"wrong type", "replicaCount: three\n", "replicaCount"},
		{"PostgreSQL without a password", "postgres: {enabled: true}\n", "postgres.password is required"},
		{"bad spread rule", "topologySpread: {nodeWhenUnsatisfiable: Sometimes}\n", "nodeWhenUnsatisfiable"},
		{"no Secret at all", "secrets: {create: false}\n", "set secrets.existingSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("render: %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
