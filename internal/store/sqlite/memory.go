package sqlite

import (
	"context"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/store"
)

// PutMemory implements store.MemoryStore. Replacing a memory keeps its
// CreatedAt; zero timestamps mean now.
func (db *DB) PutMemory(ctx context.Context, m store.Memory) error {
	if m.Agent == "" || m.Key == "" {
		return errors.New("put memory: empty agent or key")
	}
	t := now()
	_, err := db.exec(ctx, len(m.Value), `INSERT INTO memories (agent, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		m.Agent, m.Key, m.Value, toDB(orNow(m.CreatedAt, t)), toDB(orNow(m.UpdatedAt, t)))
	return wrap(fmt.Sprintf("put memory %q of agent %q", m.Key, m.Agent), err)
}

// RecallMemory implements store.MemoryStore.
//
// Matching happens here rather than in SQL: SQLite's LIKE and lower() fold
// only ASCII letters, and "case-insensitive" should hold for "Über" too.
// The rows stream newest first from the (agent, updated_at) index and the
// scan stops at limit, so the cost is one pass over the agent's memories at
// worst.
func (db *DB) RecallMemory(ctx context.Context, agent, query string, limit int) ([]store.Memory, error) {
	op := fmt.Sprintf("recall memory of agent %q", agent)
	q := "SELECT agent, key, value, created_at, updated_at FROM memories WHERE agent = ? ORDER BY updated_at DESC, key"
	args := []any{agent}
	if query == "" {
		q, args = limitOffset(q, args, limit, 0)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	var out []store.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, wrap(op, err)
		}
		if !memoryMatches(m, query) {
			continue
		}
		out = append(out, m)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(op, err)
	}
	return out, nil
}

// memoryMatches reports whether m's key or value contains query, ignoring
// case.
func memoryMatches(m store.Memory, query string) bool {
	return containsFold(m.Key, query) || containsFold(m.Value, query)
}

// containsFold reports whether sub occurs in s under Unicode simple case
// folding, the equivalence strings.EqualFold uses; bytes that are not
// valid UTF-8 match only themselves. It compares rune by rune instead of
// lower-casing both strings because case variants can differ in length
// (K, the Kelvin sign, is three bytes; k is one) and because lower-casing
// rewrites invalid bytes.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	for i := range len(s) {
		if hasPrefixFold(s[i:], sub) {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with prefix under simple folding.
func hasPrefixFold(s, prefix string) bool {
	for prefix != "" {
		if s == "" {
			return false
		}
		r1, n1 := utf8.DecodeRuneInString(s)
		r2, n2 := utf8.DecodeRuneInString(prefix)
		if r1 == utf8.RuneError && n1 == 1 || r2 == utf8.RuneError && n2 == 1 {
			// Not a character on one side: compare a single byte, so that
			// a query cut in the middle of a character still matches.
			n1, n2 = 1, 1
			if s[0] != prefix[0] {
				return false
			}
		} else if !equalFoldRune(r1, r2) {
			return false
		}
		s, prefix = s[n1:], prefix[n2:]
	}
	return true
}

// equalFoldRune reports whether a and b are in the same case-folding orbit.
func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

// DeleteMemory implements store.MemoryStore.
func (db *DB) DeleteMemory(ctx context.Context, agent, key string) error {
	res, err := db.exec(ctx, 0, "DELETE FROM memories WHERE agent = ? AND key = ?", agent, key)
	if err == nil {
		err = rowsAffected(res)
	}
	return wrap(fmt.Sprintf("delete memory %q of agent %q", key, agent), err)
}

func scanMemory(r scanner) (store.Memory, error) {
	var m store.Memory
	var created, updated int64
	if err := r.Scan(&m.Agent, &m.Key, &m.Value, &created, &updated); err != nil {
		return store.Memory{}, err
	}
	m.CreatedAt, m.UpdatedAt = fromDB(created), fromDB(updated)
	return m, nil
}
