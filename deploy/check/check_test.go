package check

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// types maps apiVersion/kind to a fresh value of its Go type.
var types = map[string]func() any{
	"v1/Secret":           func() any { return new(corev1.Secret) },
	"v1/ConfigMap":        func() any { return new(corev1.ConfigMap) },
	"v1/Service":          func() any { return new(corev1.Service) },
	"apps/v1/Deployment":  func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet": func() any { return new(appsv1.StatefulSet) },
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
				t.Errorf("%s doc %d: %v", f, i, err)
				continue
			}
			key := head.APIVersion + "/" + head.Kind
			mk, ok := types[key]
			if !ok {
				t.Errorf("%s doc %d: unexpected %s", f, i, key)
				continue
			}
			if err := yaml.UnmarshalStrict(doc, mk()); err != nil {
				t.Errorf("%s doc %d (%s %s): %v", f, i, key, head.Metadata.Name, err)
			}
			if head.Metadata.Name == "" {
				t.Errorf("%s doc %d: no metadata.name", f, i)
			}
			kinds[key]++
		}
	}
	for _, want := range []string{"apps/v1/Deployment", "v1/Service", "v1/Secret", "v1/ConfigMap", "apps/v1/StatefulSet"} {
		if kinds[want] == 0 {
			t.Errorf("no %s among the manifests", want)
		}
	}
	t.Log(fmt.Sprint(kinds))
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
