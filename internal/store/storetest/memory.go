package storetest

import (
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// memoryKeys returns the keys of ms in order.
func memoryKeys(ms []store.Memory) []string {
	return keys(ms, func(m store.Memory) string { return m.Key })
}

var memoryTests = map[string]func(t *testing.T, s suite){
	"PutRecall": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		before := time.Now()
		ok(t, st.PutMemory(ctx, store.Memory{Agent: "a", Key: "k", Value: "v"}), "PutMemory")
		after := time.Now()
		got, err := st.RecallMemory(ctx, "a", "", 0)
		ok(t, err, "RecallMemory")
		if len(got) != 1 || got[0].Agent != "a" || got[0].Key != "k" || got[0].Value != "v" {
			t.Fatalf("RecallMemory = %+v, want the one memory a/k=v", got)
		}
		checkRecent(t, "CreatedAt", got[0].CreatedAt, before, after)
		checkRecent(t, "UpdatedAt", got[0].UpdatedAt, before, after)
	},
	"PutReplaces": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutMemory(ctx, store.Memory{Agent: "a", Key: "k", Value: "old", CreatedAt: at(0), UpdatedAt: at(0)}), "first PutMemory")
		ok(t, st.PutMemory(ctx, store.Memory{Agent: "a", Key: "k", Value: "new", CreatedAt: at(5), UpdatedAt: at(5)}), "second PutMemory")
		got, err := st.RecallMemory(ctx, "a", "", 0)
		ok(t, err, "RecallMemory")
		if len(got) != 1 || got[0].Value != "new" {
			t.Fatalf("RecallMemory = %+v, want the single replaced memory", got)
		}
		checkTime(t, "CreatedAt", got[0].CreatedAt, at(0))
		checkTime(t, "UpdatedAt", got[0].UpdatedAt, at(5))
	},
	"Recall": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for i, m := range []store.Memory{
			{Agent: "a", Key: "favorite-color", Value: "Blue"},
			{Agent: "a", Key: "city", Value: "Lives in Berlin"},
			{Agent: "a", Key: "Pet", Value: "a cat named Über"},
			{Agent: "a", Key: "discount", Value: "50% off"},
			{Agent: "a", Key: "percent", Value: "500 units"},
			{Agent: "a", Key: "code_name", Value: "x"},
			{Agent: "a", Key: "modeXnote", Value: "y"},
			{Agent: "b", Key: "color", Value: "red"},
		} {
			m.UpdatedAt = at(i)
			m.CreatedAt = at(100 - i)
			ok(t, st.PutMemory(ctx, m), "PutMemory(%s/%s)", m.Agent, m.Key)
		}
		all := []string{"modeXnote", "code_name", "percent", "discount", "Pet", "city", "favorite-color"}
		for _, c := range []struct {
			name, agent, query string
			limit              int
			want               []string
		}{
			{"Empty", "a", "", 0, all},
			{"EmptyLimit", "a", "", 2, all[:2]},
			{"KeyCaseInsensitive", "a", "COLOR", 0, []string{"favorite-color"}},
			{"ValueCaseInsensitive", "a", "berlin", 0, []string{"city"}},
			{"KeyOrValue", "a", "e", 0, []string{"modeXnote", "code_name", "percent", "Pet", "city", "favorite-color"}},
			{"MatchLimit", "a", "O", 3, []string{"modeXnote", "code_name", "discount"}},
			{"NonASCIICase", "a", "ÜBER", 0, []string{"Pet"}},
			{"PercentIsLiteral", "a", "50%", 0, []string{"discount"}},
			{"UnderscoreIsLiteral", "a", "e_n", 0, []string{"code_name"}},
			{"NoMatch", "a", "nothing like it", 0, nil},
			{"OtherAgent", "b", "", 0, []string{"color"}},
			{"UnknownAgent", "c", "", 0, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, err := st.RecallMemory(ctx, c.agent, c.query, c.limit)
				ok(t, err, "RecallMemory(%q, %q, %d)", c.agent, c.query, c.limit)
				equalStrings(t, "memory keys", memoryKeys(got), c.want)
				for _, m := range got {
					if m.Agent != c.agent {
						t.Errorf("RecallMemory(%q) returned a memory of %q", c.agent, m.Agent)
					}
				}
			})
		}
	},
	// Keys and values are whatever a model or tool handed over: a NUL
	// byte or bytes that are not UTF-8 come back unchanged and findable.
	"ArbitraryBytes": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		want := map[string]string{"nul\x00key": "a\x00b", "bad-utf8-\xff": "\xfe\xff caf\xc3", "é": "Über"[:1]}
		for k, v := range want {
			ok(t, st.PutMemory(ctx, store.Memory{Agent: "a", Key: k, Value: v}), "PutMemory(%q)", k)
		}
		got, err := st.RecallMemory(ctx, "a", "", 0)
		ok(t, err, "RecallMemory")
		if len(got) != len(want) {
			t.Fatalf("RecallMemory returned %d memories, want %d", len(got), len(want))
		}
		for _, m := range got {
			if v, found := want[m.Key]; !found || m.Value != v {
				t.Errorf("memory %q = %q, want %q", m.Key, m.Value, v)
			}
		}
		for query, key := range map[string]string{"\x00k": "nul\x00key", "\xff": "bad-utf8-\xff", "CAF\xc3": "bad-utf8-\xff"} {
			got, err := st.RecallMemory(ctx, "a", query, 0)
			ok(t, err, "RecallMemory(%q)", query)
			equalStrings(t, "memory keys for "+query, memoryKeys(got), []string{key})
		}
		ok(t, st.DeleteMemory(ctx, "a", "nul\x00key"), "DeleteMemory(nul)")
		isErr(t, st.DeleteMemory(ctx, "a", "nul"), store.ErrNotFound, "DeleteMemory of a prefix up to the NUL")
	},
	"Delete": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.PutMemory(ctx, store.Memory{Agent: "a", Key: "k1", Value: "v"}), "PutMemory(k1)")
		ok(t, st.PutMemory(ctx, store.Memory{Agent: "a", Key: "k2", Value: "v"}), "PutMemory(k2)")
		ok(t, st.PutMemory(ctx, store.Memory{Agent: "b", Key: "k1", Value: "v"}), "PutMemory(b/k1)")
		ok(t, st.DeleteMemory(ctx, "a", "k1"), "DeleteMemory(a, k1)")
		isErr(t, st.DeleteMemory(ctx, "a", "k1"), store.ErrNotFound, "second DeleteMemory(a, k1)")
		isErr(t, st.DeleteMemory(ctx, "c", "k1"), store.ErrNotFound, "DeleteMemory(c, k1)")
		got, err := st.RecallMemory(ctx, "a", "", 0)
		ok(t, err, "RecallMemory(a)")
		equalStrings(t, "a's memories", memoryKeys(got), []string{"k2"})
		got, err = st.RecallMemory(ctx, "b", "", 0)
		ok(t, err, "RecallMemory(b)")
		equalStrings(t, "b's memories", memoryKeys(got), []string{"k1"})
	},
}
