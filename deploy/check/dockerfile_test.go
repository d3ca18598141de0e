package check

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
}

// readDockerfile reads the instructions of a Dockerfile: comments and
// blank lines dropped, lines ending in a backslash joined.
func readDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		s := strings.TrimSpace(l)
		if cur.Len() == 0 && (s == "" || strings.HasPrefix(s, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(s, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(s)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// TestDockerfile checks what the image must be, statically (make test
// also builds and runs it: scripts/image.sh check): it starts
// from scratch (no registry at build time), copies only what make image
// puts in its context, runs as the non-root user the Kubernetes manifest
// runs as, checks its health with agentd itself, and is the image that
// manifest names.
func TestDockerfile(t *testing.T) {
	ins := readDockerfile(t, "../../Dockerfile")
	context := map[string]bool{"agentd": true, "ca-certificates.crt": true, "home": true, "config.toml": true} // scripts/image.sh
	var from, user, entrypoint, health []string
	for _, in := range ins {
		switch in.cmd {
		case "FROM":
			from = append(from, in.args)
		case "USER":
			user = append(user, in.args)
		case "ENTRYPOINT":
			entrypoint = append(entrypoint, in.args)
		case "HEALTHCHECK":
			health = append(health, in.args)
		case "COPY":
			f := strings.Fields(in.args)
			for _, src := range f[:len(f)-1] {
				if !strings.HasPrefix(src, "--") && !context[src] {
					t.Errorf("COPY %s: not in the context make image prepares", src)
				}
			}
		case "RUN", "ADD":
			t.Errorf("%s %s: a FROM scratch image has no shell, and ADD may fetch", in.cmd, in.args)
		}
	}
	if len(from) != 1 || from[0] != "scratch" {
		t.Errorf("FROM %q, want one FROM scratch", from)
	}
	if len(entrypoint) != 1 || entrypoint[0] != `["/usr/local/bin/agentd"]` {
		t.Errorf("ENTRYPOINT %q", entrypoint)
	}
	m := regexp.MustCompile(`CMD (\[.*\])$`).FindStringSubmatch(strings.Join(health, ""))
	var probe []string
	if len(health) != 1 || m == nil || json.Unmarshal([]byte(m[1]), &probe) != nil || len(probe) < 2 || probe[0] != "/usr/local/bin/agentd" || probe[1] != "health" {
		t.Errorf("HEALTHCHECK %q, want one that runs agentd health", health)
	}

	data, err := os.ReadFile("../kubernetes/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	sc := d.Spec.Template.Spec.SecurityContext
	if len(user) != 1 || sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil {
		t.Fatalf("USER %q; the manifest's security context %+v", user, sc)
	}
	if want := jsonInt(*sc.RunAsUser) + ":" + jsonInt(*sc.RunAsGroup); user[0] != want || strings.HasPrefix(user[0], "0") {
		t.Errorf("USER %s, want the manifest's non-root %s", user[0], want)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	im := regexp.MustCompile(`(?m)^IMAGE\s+\?=\s+(\S+)$`).FindSubmatch(makefile)
	if im == nil {
		t.Fatal("the Makefile sets no IMAGE")
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		name, tag, _ := strings.Cut(c.Image, ":")
		if c.Name != "agentd" {
			continue
		}
		if name != string(im[1]) {
			t.Errorf("the manifest runs %s, make image builds %s", c.Image, im[1])
		}
		if !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(tag) {
			t.Errorf("the manifest runs tag %q, want a release tag vMAJOR.MINOR.PATCH (make image tags $(VERSION))", tag)
		}
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
