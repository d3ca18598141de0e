package agent_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/store/sqlite"
)

// TestAgentsSetFixed: a reload's agents replace the config's, watchers
// are told, a name now in the file is read-only, and an API agent the
// file no longer shadows is listed again.
func TestAgentsSetFixed(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, t.TempDir()+"/agentd.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m := func(name string) manifest.Manifest {
		return manifest.Manifest{Name: name, Provider: "fake", Model: "m"}
	}
	a := agent.NewAgents([]manifest.Manifest{m("alpha")}, db)
	if err := a.Put(ctx, m("api")); err != nil {
		t.Fatal(err)
	}
	told := make(chan struct{}, 1)
	defer a.OnChange(func() { told <- struct{}{} })()

	a.SetFixed([]manifest.Manifest{m("beta"), m("api")})
	select {
	case <-told:
	default:
		t.Fatal("SetFixed did not tell the watchers")
	}
	list, err := a.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Manifest.Name+":"+e.Source)
	}
	if want := []string{"beta:config", "api:config"}; !slices.Equal(got, want) {
		t.Errorf("after SetFixed: %v, want %v", got, want)
	}
	if _, err := a.Get(ctx, "alpha"); !errors.Is(err, agent.ErrAgentNotFound) {
		t.Errorf("the removed config agent: %v, want not found", err)
	}
	if err := a.Put(ctx, m("beta")); !errors.Is(err, agent.ErrReadOnly) {
		t.Errorf("Put over a reloaded config agent: %v, want read-only", err)
	}

	// The file drops "api": the stored API agent is listed again.
	a.SetFixed([]manifest.Manifest{m("beta")})
	if e, err := a.Get(ctx, "api"); err != nil || e.Source != "api" {
		t.Errorf("the API agent after the file dropped it: %+v %v", e, err)
	}
}
