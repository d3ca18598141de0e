package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// msg builds a message whose content identifies it.
func msg(t *testing.T, role, text string) store.Message {
	return store.Message{Role: role, Content: raw(t, map[string]string{"text": text})}
}

// sessionIDs returns the IDs of ss in order.
func sessionIDs(ss []store.Session) []string {
	return keys(ss, func(s store.Session) string { return s.ID })
}

var sessionTests = map[string]func(t *testing.T, s suite){
	"CreateGet": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		want := store.Session{ID: "s1", Agent: "writer", Title: "Plan a trip", Origin: "mcp", CreatedAt: at(0), UpdatedAt: at(1), Principal: "ci-bot"}
		ok(t, st.CreateSession(ctx, want), "CreateSession")
		got, err := st.GetSession(ctx, "s1")
		ok(t, err, "GetSession")
		if got.ID != want.ID || got.Agent != want.Agent || got.Title != want.Title || got.Origin != want.Origin || got.Principal != want.Principal {
			t.Errorf("GetSession = %+v, want %+v", got, want)
		}
		checkTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
		checkTime(t, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	},
	"CreateDefaultsTimes": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		before := time.Now()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a"}), "CreateSession")
		after := time.Now()
		got, err := st.GetSession(ctx, "s1")
		ok(t, err, "GetSession")
		checkRecent(t, "CreatedAt", got.CreatedAt, before, after)
		checkRecent(t, "UpdatedAt", got.UpdatedAt, before, after)
	},
	"CreateDuplicate": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a", Title: "first"}), "CreateSession")
		isErr(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "b", Title: "second"}), store.ErrExists, "CreateSession with a taken ID")
		got, err := st.GetSession(ctx, "s1")
		ok(t, err, "GetSession")
		if got.Title != "first" || got.Agent != "a" {
			t.Errorf("a rejected CreateSession changed the session: %+v", got)
		}
	},
	"GetMissing": func(t *testing.T, s suite) {
		_, err := s.store(t).GetSession(t.Context(), "nope")
		isErr(t, err, store.ErrNotFound, "GetSession(nope)")
	},
	"List": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		// Creation order differs from UpdatedAt order so that a backend
		// sorting by CreatedAt or by insertion fails.
		for _, x := range []struct {
			id, agent, principal string
			created, upd         int
		}{
			{"s1", "a", "alice", 4, 10},
			{"s2", "b", "bob", 3, 30},
			{"s3", "a", "", 2, 20},
			{"s4", "a", "alice", 1, 40},
		} {
			ok(t, st.CreateSession(ctx, store.Session{ID: x.id, Agent: x.agent, Principal: x.principal, CreatedAt: at(x.created), UpdatedAt: at(x.upd)}), "CreateSession(%s)", x.id)
		}
		for _, c := range []struct {
			name string
			f    store.SessionFilter
			want []string
		}{
			{"All", store.SessionFilter{}, []string{"s4", "s2", "s3", "s1"}},
			{"Agent", store.SessionFilter{Agent: "a"}, []string{"s4", "s3", "s1"}},
			{"AgentNone", store.SessionFilter{Agent: "zzz"}, nil},
			{"Limit", store.SessionFilter{Limit: 2}, []string{"s4", "s2"}},
			{"LimitOffset", store.SessionFilter{Limit: 2, Offset: 1}, []string{"s2", "s3"}},
			{"OffsetOnly", store.SessionFilter{Offset: 3}, []string{"s1"}},
			{"OffsetPastEnd", store.SessionFilter{Offset: 9}, nil},
			{"AgentLimitOffset", store.SessionFilter{Agent: "a", Limit: 1, Offset: 1}, []string{"s3"}},
			{"Principal", store.SessionFilter{Principal: "alice"}, []string{"s4", "s1"}},
			{"PrincipalAgent", store.SessionFilter{Principal: "bob", Agent: "a"}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				got, err := st.ListSessions(ctx, c.f)
				ok(t, err, "ListSessions(%+v)", c.f)
				equalStrings(t, "sessions", sessionIDs(got), c.want)
				// The count is of every match, whatever the page.
				all := c.f
				all.Limit, all.Offset = 0, 0
				ss, err := st.ListSessions(ctx, all)
				ok(t, err, "ListSessions(%+v)", all)
				n, err := st.CountSessions(ctx, c.f)
				ok(t, err, "CountSessions(%+v)", c.f)
				if n != len(ss) {
					t.Errorf("CountSessions(%+v) = %d, want %d", c.f, n, len(ss))
				}
			})
		}
	},
	"Search": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for i, x := range []struct{ id, agent, title, text string }{
			{"s1", "writer", "Draft the Release notes", "see the changelog"},
			{"s2", "coder", "fix the build", "the linker fails at 100% of runs"},
			{"s3", "coder", "refactor", "rename the_store package"},
		} {
			ok(t, st.CreateSession(ctx, store.Session{ID: x.id, Agent: x.agent, Title: x.title, CreatedAt: at(i), UpdatedAt: at(10 - i)}, msg(t, "user", x.text)), "CreateSession(%s)", x.id)
		}
		for _, c := range []struct {
			q    string
			want []string
		}{
			{"release NOTES", []string{"s1"}}, // title, any case
			{"CHANGELOG", []string{"s1"}},     // message text
			{"coder", []string{"s2", "s3"}},   // agent
			{"s2", []string{"s2"}},            // id
			{"100%", []string{"s2"}},          // % is literal
			{"the_store", []string{"s3"}},     // _ is literal
			{"_", []string{"s3"}},             // ...even alone
			{"nothing like it", nil},
		} {
			got, err := st.ListSessions(ctx, store.SessionFilter{Query: c.q})
			ok(t, err, "ListSessions(Query %q)", c.q)
			ids := sessionIDs(got)
			slices.Sort(ids) // the order is List's business
			equalStrings(t, "sessions matching "+c.q, ids, c.want)
			n, err := st.CountSessions(ctx, store.SessionFilter{Query: c.q})
			ok(t, err, "CountSessions(Query %q)", c.q)
			if n != len(c.want) {
				t.Errorf("CountSessions(Query %q) = %d, want %d", c.q, n, len(c.want))
			}
		}
		got, err := st.ListSessions(ctx, store.SessionFilter{Query: "the", Agent: "writer", Limit: 1})
		ok(t, err, "ListSessions(Query, Agent, Limit)")
		equalStrings(t, "writer sessions matching the", sessionIDs(got), []string{"s1"})
	},
	"Delete": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a"}), "CreateSession(s1)")
		ok(t, st.CreateSession(ctx, store.Session{ID: "s2", Agent: "a"}), "CreateSession(s2)")
		_, err := st.AppendMessages(ctx, "s1", []store.Message{msg(t, "user", "one"), msg(t, "assistant", "two")})
		ok(t, err, "AppendMessages(s1)")
		_, err = st.AppendMessages(ctx, "s2", []store.Message{msg(t, "user", "keep")})
		ok(t, err, "AppendMessages(s2)")

		ok(t, st.DeleteSession(ctx, "s1"), "DeleteSession(s1)")
		_, err = st.GetSession(ctx, "s1")
		isErr(t, err, store.ErrNotFound, "GetSession after delete")
		_, err = st.Messages(ctx, "s1")
		isErr(t, err, store.ErrNotFound, "Messages after delete")
		isErr(t, st.DeleteSession(ctx, "s1"), store.ErrNotFound, "second DeleteSession")

		// A new session under the old ID must start empty: this is how the
		// suite sees that the messages themselves were removed.
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a"}), "recreate s1")
		msgs, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages of recreated session")
		if len(msgs) != 0 {
			t.Errorf("recreated session has %d messages left over from the deleted one", len(msgs))
		}
		stored, err := st.AppendMessages(ctx, "s1", []store.Message{msg(t, "user", "fresh")})
		ok(t, err, "AppendMessages to recreated session")
		if stored[0].Seq != 1 {
			t.Errorf("first Seq of recreated session = %d, want 1", stored[0].Seq)
		}
		other, err := st.Messages(ctx, "s2")
		ok(t, err, "Messages(s2)")
		if len(other) != 1 {
			t.Errorf("deleting s1 changed s2: %d messages, want 1", len(other))
		}
	},
	"CreateWithMessages": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		in := []store.Message{msg(t, "user", "m1"), msg(t, "assistant", "m2")}
		in[1].SessionID, in[1].Seq, in[1].CreatedAt = "other", 99, at(0)
		before := time.Now()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a", CreatedAt: at(0), UpdatedAt: at(0)}, in...), "CreateSession with messages")
		after := time.Now()
		got, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages")
		if len(got) != len(in) {
			t.Fatalf("Messages returned %d messages, want %d", len(got), len(in))
		}
		for i, m := range got {
			if m.SessionID != "s1" || m.Seq != int64(i+1) || m.Role != in[i].Role {
				t.Errorf("Messages[%d] = {SessionID:%q Seq:%d Role:%q}, want {s1 %d %q}", i, m.SessionID, m.Seq, m.Role, i+1, in[i].Role)
			}
			checkJSON(t, fmt.Sprintf("Messages[%d].Content", i), m.Content, in[i].Content)
		}
		checkRecent(t, "default CreatedAt", got[0].CreatedAt, before, after)
		checkTime(t, "explicit CreatedAt", got[1].CreatedAt, at(0))
		// As AppendMessages would: UpdatedAt moves to now, CreatedAt stays.
		sess, err := st.GetSession(ctx, "s1")
		ok(t, err, "GetSession")
		checkTime(t, "CreatedAt", sess.CreatedAt, at(0))
		checkRecent(t, "UpdatedAt", sess.UpdatedAt, before, after)
		more, err := st.AppendMessages(ctx, "s1", []store.Message{msg(t, "user", "m3")})
		ok(t, err, "AppendMessages after CreateSession with messages")
		if more[0].Seq != 3 {
			t.Errorf("Seq after two messages stored at creation = %d, want 3", more[0].Seq)
		}

		// A rejected creation stores none of its messages.
		isErr(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "b"}, msg(t, "user", "intruder")), store.ErrExists, "CreateSession with a taken ID")
		all, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages")
		if len(all) != 3 {
			t.Errorf("a rejected CreateSession changed the messages: %d, want 3", len(all))
		}
	},
	"AppendAssignsSeq": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a"}), "CreateSession(s1)")
		ok(t, st.CreateSession(ctx, store.Session{ID: "s2", Agent: "a"}), "CreateSession(s2)")
		before := time.Now()
		in := []store.Message{msg(t, "user", "m1"), msg(t, "assistant", "m2"), msg(t, "tool", "m3")}
		// The caller's SessionID and Seq are the store's to assign.
		in[1].SessionID, in[1].Seq = "other", 99
		in[2].CreatedAt = at(0)
		got, err := st.AppendMessages(ctx, "s1", in)
		after := time.Now()
		ok(t, err, "AppendMessages")
		if len(got) != len(in) {
			t.Fatalf("AppendMessages returned %d messages, want %d", len(got), len(in))
		}
		for i, m := range got {
			if m.SessionID != "s1" || m.Seq != int64(i+1) || m.Role != in[i].Role {
				t.Errorf("stored[%d] = {SessionID:%q Seq:%d Role:%q}, want {s1 %d %q}", i, m.SessionID, m.Seq, m.Role, i+1, in[i].Role)
			}
			checkJSON(t, fmt.Sprintf("stored[%d].Content", i), m.Content, in[i].Content)
		}
		checkRecent(t, "default CreatedAt", got[0].CreatedAt, before, after)
		checkTime(t, "explicit CreatedAt", got[2].CreatedAt, at(0))

		// Seq is per session: s2 starts at 1 although s1 is ahead.
		got2, err := st.AppendMessages(ctx, "s2", []store.Message{msg(t, "user", "x")})
		ok(t, err, "AppendMessages(s2)")
		if got2[0].Seq != 1 {
			t.Errorf("first Seq of s2 = %d, want 1", got2[0].Seq)
		}
		more, err := st.AppendMessages(ctx, "s1", []store.Message{msg(t, "user", "m4"), msg(t, "assistant", "m5")})
		ok(t, err, "second AppendMessages(s1)")
		if more[0].Seq != 4 || more[1].Seq != 5 {
			t.Errorf("second batch Seqs = %d, %d, want 4, 5", more[0].Seq, more[1].Seq)
		}

		all, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages")
		var texts []string
		for i, m := range all {
			if m.Seq != int64(i+1) {
				t.Errorf("Messages[%d].Seq = %d, want %d", i, m.Seq, i+1)
			}
			var c struct{ Text string }
			ok(t, jsonUnmarshal(m.Content, &c), "decode content")
			texts = append(texts, c.Text)
		}
		equalStrings(t, "message texts", texts, []string{"m1", "m2", "m3", "m4", "m5"})
		checkTime(t, "Messages[2].CreatedAt", all[2].CreatedAt, at(0))
	},
	// A title is the start of what a user typed and may hold any byte;
	// message content is JSON whose strings may hold \u0000 (a tool's
	// output of a binary file). Both come back as they went in.
	"ArbitraryText": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		title := "nul \x00 and \xff\xfe cut caf\xc3"
		content := json.RawMessage(`{"text":"binary \u0000\u0001 data","n":1}`)
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a", Title: title}, store.Message{Role: "tool", Content: content}), "CreateSession")
		got, err := st.GetSession(ctx, "s1")
		ok(t, err, "GetSession")
		if got.Title != title {
			t.Errorf("Title = %q, want %q", got.Title, title)
		}
		stored, err := st.AppendMessages(ctx, "s1", []store.Message{{Role: "tool", Content: content}})
		ok(t, err, "AppendMessages")
		if len(stored) != 1 || stored[0].Seq != 2 {
			t.Fatalf("AppendMessages = %+v, want one message with Seq 2", stored)
		}
		msgs, err := st.Messages(ctx, "s1")
		ok(t, err, "Messages")
		if len(msgs) != 2 {
			t.Fatalf("Messages returned %d messages, want 2", len(msgs))
		}
		for i, m := range msgs {
			checkJSON(t, fmt.Sprintf("Messages[%d].Content", i), m.Content, content)
		}
	},
	"AppendEmpty": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s1", Agent: "a"}), "CreateSession")
		got, err := st.AppendMessages(ctx, "s1", nil)
		ok(t, err, "AppendMessages(nil)")
		if len(got) != 0 {
			t.Errorf("AppendMessages(nil) returned %d messages", len(got))
		}
		stored, err := st.AppendMessages(ctx, "s1", []store.Message{msg(t, "user", "x")})
		ok(t, err, "AppendMessages")
		if stored[0].Seq != 1 {
			t.Errorf("Seq after an empty append = %d, want 1", stored[0].Seq)
		}
	},
	"AppendBumpsUpdatedAt": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "old", Agent: "a", CreatedAt: at(0), UpdatedAt: at(0)}), "CreateSession(old)")
		ok(t, st.CreateSession(ctx, store.Session{ID: "new", Agent: "a", CreatedAt: at(1), UpdatedAt: at(1)}), "CreateSession(new)")
		before := time.Now()
		_, err := st.AppendMessages(ctx, "old", []store.Message{msg(t, "user", "hi")})
		after := time.Now()
		ok(t, err, "AppendMessages")
		got, err := st.GetSession(ctx, "old")
		ok(t, err, "GetSession")
		checkRecent(t, "UpdatedAt after append", got.UpdatedAt, before, after)
		checkTime(t, "CreatedAt after append", got.CreatedAt, at(0))
		list, err := st.ListSessions(ctx, store.SessionFilter{})
		ok(t, err, "ListSessions")
		equalStrings(t, "sessions after append", sessionIDs(list), []string{"old", "new"})
	},
	"AppendMissingSession": func(t *testing.T, s suite) {
		st := s.store(t)
		_, err := st.AppendMessages(t.Context(), "ghost", []store.Message{msg(t, "user", "x")})
		isErr(t, err, store.ErrNotFound, "AppendMessages to a missing session")
		_, err = st.Messages(t.Context(), "ghost")
		isErr(t, err, store.ErrNotFound, "Messages of a missing session")
	},
	"AppendConcurrent": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateSession(ctx, store.Session{ID: "s", Agent: "a"}), "CreateSession")
		const writers, appends = 8, 15
		type batch struct {
			writer int
			seqs   []int64
		}
		results := make(chan batch, writers*appends)
		errs := make(chan error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				<-start
				for j := range appends {
					var in []store.Message
					for k := range j%3 + 1 {
						in = append(in, msg(t, "user", fmt.Sprintf("w%d-a%d-m%d", w, j, k)))
					}
					got, err := st.AppendMessages(ctx, "s", in)
					if err != nil {
						errs <- fmt.Errorf("writer %d append %d: %w", w, j, err)
						return
					}
					b := batch{writer: w}
					for _, m := range got {
						b.seqs = append(b.seqs, m.Seq)
					}
					results <- b
				}
			})
		}
		close(start)
		wg.Wait()
		close(results)
		close(errs)
		for err := range errs {
			t.Error(err)
		}

		seen := map[int64]bool{}
		last := map[int]int64{}
		total := 0
		for b := range results {
			for i, seq := range b.seqs {
				if seen[seq] {
					t.Errorf("Seq %d assigned twice", seq)
				}
				seen[seq] = true
				if i > 0 && seq != b.seqs[i-1]+1 {
					t.Errorf("batch of writer %d got non-contiguous Seqs %v", b.writer, b.seqs)
				}
			}
			if b.seqs[0] <= last[b.writer] {
				t.Errorf("writer %d: later batch got lower Seq %d after %d", b.writer, b.seqs[0], last[b.writer])
			}
			last[b.writer] = b.seqs[len(b.seqs)-1]
			total += len(b.seqs)
		}
		for seq := int64(1); seq <= int64(total); seq++ {
			if !seen[seq] {
				t.Errorf("gap: Seq %d never assigned (total %d)", seq, total)
			}
		}

		all, err := st.Messages(ctx, "s")
		ok(t, err, "Messages")
		if len(all) != total {
			t.Fatalf("Messages returned %d messages, appends returned %d", len(all), total)
		}
		texts := map[string]bool{}
		for i, m := range all {
			if m.Seq != int64(i+1) {
				t.Fatalf("Messages[%d].Seq = %d, want %d", i, m.Seq, i+1)
			}
			var c struct{ Text string }
			ok(t, jsonUnmarshal(m.Content, &c), "decode content")
			texts[c.Text] = true
		}
		if want := writers * appends * 2; len(texts) != want || total != want {
			t.Errorf("stored %d distinct messages (%d total), want %d", len(texts), total, want)
		}
	},
}
