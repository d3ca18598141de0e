package check

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// types maps apiVersion/kind to a fresh value of its Go type.
var types = map[string]func() any{
	"v1/Secret":                               func() any { return new(corev1.Secret) },
	"v1/ConfigMap":                            func() any { return new(corev1.ConfigMap) },
	"v1/Service":                              func() any { return new(corev1.Service) },
	"apps/v1/Deployment":                      func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                     func() any { return new(appsv1.StatefulSet) },
	"policy/v1/PodDisruptionBudget":           func() any { return new(policyv1.PodDisruptionBudget) },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return new(monitoringv1.ServiceMonitor) },
}

func TestManifests(t *testing.T) {
	files, err := filepath.Glob("../kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests found: %v", err)
	}
	kinds := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range decodeAll(t, f, data) {
			kinds[o.key]++
		}
	}
	for _, want := range []string{"apps/v1/Deployment", "v1/Service", "v1/Secret", "v1/ConfigMap", "apps/v1/StatefulSet", "policy/v1/PodDisruptionBudget"} {
		if kinds[want] == 0 {
			t.Errorf("no %s among the manifests", want)
		}
	}
	t.Log(fmt.Sprint(kinds))
}

// object is one decoded document: its apiVersion/kind, name and value
// (a pointer to the type types gives for key).
type object struct {
	key, name string
	v         any
}

// decodeAll decodes every document of data strictly (an unknown or
// misspelt field, or a value of the wrong type, is an error) into the
// Kubernetes type its apiVersion and kind name; src names data in errors.
func decodeAll(t *testing.T, src string, data []byte) []object {
	t.Helper()
	var out []object
	for i, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Errorf("%s doc %d: %v", src, i, err)
			continue
		}
		key := head.APIVersion + "/" + head.Kind
		mk, ok := types[key]
		if !ok {
			t.Errorf("%s doc %d: unexpected %s", src, i, key)
			continue
		}
		v := mk()
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			t.Errorf("%s doc %d (%s %s): %v", src, i, key, head.Metadata.Name, err)
			continue
		}
		if head.Metadata.Name == "" {
			t.Errorf("%s doc %d: no metadata.name", src, i)
		}
		out = append(out, object{key: key, name: head.Metadata.Name, v: v})
	}
	return out
}

func stripComments(doc []byte) []byte {
	var out []string
	for _, l := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}
