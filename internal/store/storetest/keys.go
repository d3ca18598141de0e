package storetest

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

func apiKey(id, principal string) store.APIKey {
	return store.APIKey{ID: id, Principal: principal, Label: "label of " + id, Hash: sha256.Sum256([]byte("secret-" + id)), CreatedBy: "admin"}
}

func keyIDs(ks []store.APIKey) []string { return keys(ks, func(k store.APIKey) string { return k.ID }) }

var keyTests = map[string]func(t *testing.T, s suite){
	"CreateLookup": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		before := time.Now()
		k := apiKey("k1", "ci-bot")
		ok(t, st.CreateAPIKey(ctx, k), "CreateAPIKey")
		after := time.Now()
		got, err := st.LiveAPIKey(ctx, k.Hash)
		ok(t, err, "LiveAPIKey")
		if got.ID != "k1" || got.Principal != "ci-bot" || got.Label != k.Label || got.Hash != k.Hash || got.CreatedBy != "admin" || got.Revoked() {
			t.Errorf("LiveAPIKey = %+v, want the key as created", got)
		}
		checkRecent(t, "CreatedAt", got.CreatedAt, before, after)
		byID, err := st.GetAPIKey(ctx, "k1")
		ok(t, err, "GetAPIKey")
		if byID.Hash != k.Hash {
			t.Errorf("GetAPIKey hash differs from the created one")
		}
		_, err = st.LiveAPIKey(ctx, sha256.Sum256([]byte("another")))
		isErr(t, err, store.ErrNotFound, "LiveAPIKey of an unknown hash")
		_, err = st.GetAPIKey(ctx, "nope")
		isErr(t, err, store.ErrNotFound, "GetAPIKey of an unknown id")
	},
	"Exists": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		ok(t, st.CreateAPIKey(ctx, apiKey("k1", "a")), "CreateAPIKey")
		isErr(t, st.CreateAPIKey(ctx, apiKey("k1", "b")), store.ErrExists, "CreateAPIKey with a taken id")
		same := apiKey("k2", "b")
		same.Hash = apiKey("k1", "a").Hash
		isErr(t, st.CreateAPIKey(ctx, same), store.ErrExists, "CreateAPIKey with a taken hash")
	},
	"ListNewestFirst": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		for i, x := range []struct{ id, p string }{{"k1", "a"}, {"k2", "b"}, {"k3", "a"}} {
			k := apiKey(x.id, x.p)
			k.CreatedAt = at(i)
			ok(t, st.CreateAPIKey(ctx, k), "CreateAPIKey(%s)", x.id)
		}
		all, err := st.ListAPIKeys(ctx, "")
		ok(t, err, "ListAPIKeys")
		equalStrings(t, "all keys", keyIDs(all), []string{"k3", "k2", "k1"})
		checkTime(t, "k1 CreatedAt", all[2].CreatedAt, at(0))
		as, err := st.ListAPIKeys(ctx, "a")
		ok(t, err, "ListAPIKeys(a)")
		equalStrings(t, "a's keys", keyIDs(as), []string{"k3", "k1"})
		none, err := st.ListAPIKeys(ctx, "nobody")
		ok(t, err, "ListAPIKeys(nobody)")
		if len(none) != 0 {
			t.Errorf("ListAPIKeys(nobody) = %d keys", len(none))
		}
	},
	"Revoke": func(t *testing.T, s suite) {
		st := s.store(t)
		ctx := t.Context()
		k := apiKey("k1", "a")
		ok(t, st.CreateAPIKey(ctx, k), "CreateAPIKey")
		ok(t, st.CreateAPIKey(ctx, apiKey("k2", "a")), "CreateAPIKey(k2)")
		got, err := st.RevokeAPIKey(ctx, "k1", "root", at(5))
		ok(t, err, "RevokeAPIKey")
		if !got.Revoked() || got.RevokedBy != "root" || got.ID != "k1" {
			t.Errorf("RevokeAPIKey = %+v, want k1 revoked by root", got)
		}
		checkTime(t, "RevokedAt", got.RevokedAt, at(5))
		_, err = st.LiveAPIKey(ctx, k.Hash)
		isErr(t, err, store.ErrNotFound, "LiveAPIKey of a revoked key")
		_, err = st.RevokeAPIKey(ctx, "k1", "root", time.Time{})
		isErr(t, err, store.ErrNotFound, "RevokeAPIKey twice")
		_, err = st.RevokeAPIKey(ctx, "nope", "root", time.Time{})
		isErr(t, err, store.ErrNotFound, "RevokeAPIKey of an unknown id")
		// The revoked key stays listed, with its revocation; the other
		// key is untouched.
		all, err := st.ListAPIKeys(ctx, "a")
		ok(t, err, "ListAPIKeys")
		for _, x := range all {
			if x.Revoked() != (x.ID == "k1") {
				t.Errorf("key %s: revoked = %v", x.ID, x.Revoked())
			}
		}
		if _, err := st.LiveAPIKey(ctx, apiKey("k2", "a").Hash); err != nil {
			t.Errorf("LiveAPIKey(k2) after revoking k1: %v", err)
		}
		// A zero time means now.
		before := time.Now()
		got, err = st.RevokeAPIKey(ctx, "k2", "root", time.Time{})
		ok(t, err, "RevokeAPIKey(k2)")
		checkRecent(t, "RevokedAt", got.RevokedAt, before, time.Now())
	},
}
