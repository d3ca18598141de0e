package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Topics of the notifications the store itself sends, in the transaction
// of the change, so that a replica hears of every committed change and of
// nothing that rolled back. Their payload is the changed record's key.
const (
	// TopicAgent: an agent was put or deleted (payload: its name).
	TopicAgent = "agent"
	// TopicMCPServer: an MCP server registration was put or deleted
	// (payload: its name).
	TopicMCPServer = "mcp_server"
	// TopicPush: a task's push-notification configs changed (payload:
	// the task id).
	TopicPush = "push"
	// TopicTaskEnd: a task reached a terminal state (payload: its id).
	TopicTaskEnd = "task_end"
)

// maxNotify bounds a NOTIFY payload: PostgreSQL refuses more than 8000
// bytes. Larger payloads go through bus_payloads (see Cluster.Publish).
const maxNotify = 7900

// channelFor names the NOTIFY channel of the installation in schema:
// channels are per database, and one database may hold several
// installations, one schema each. Identifiers are at most 63 bytes, so a
// long schema name is replaced by its hash.
func channelFor(schema string) string {
	c := "agentd_" + schema
	if len(c) > 63 {
		sum := sha256.Sum256([]byte(schema))
		c = "agentd_" + hex.EncodeToString(sum[:12])
	}
	return c
}

// note is a notification's payload: a header line "TOPIC REPLICA REF"
// (REF "-" when the body follows inline, else the bus_payloads id of the
// body), then the body. Topics and replica ids hold no space or newline.
func note(topic, replica, ref, body string) string {
	if replica == "" {
		replica = "-"
	}
	return topic + " " + replica + " " + ref + "\n" + body
}

// parseNote splits a notification's payload; ok is false for one agentd
// did not send.
func parseNote(payload string) (topic, replica string, ref int64, body string, ok bool) {
	head, body, found := strings.Cut(payload, "\n")
	if !found {
		return "", "", 0, "", false
	}
	f := strings.Split(head, " ")
	if len(f) != 3 || f[0] == "" {
		return "", "", 0, "", false
	}
	topic, replica = f[0], f[1]
	if replica == "-" {
		replica = ""
	}
	if f[2] != "-" {
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return "", "", 0, "", false
		}
		ref = n
	}
	return topic, replica, ref, body, true
}

// replicaID is the id of the replica this process joined as, "" if none.
func (db *DB) replicaID() string {
	if p := db.replica.Load(); p != nil {
		return *p
	}
	return ""
}

// execNotify runs sql and, in the same implicit transaction (a batch is
// one round trip ending in one Sync), notifies the replicas of topic with
// key: they hear of the change when it commits, and only if it does. A
// key too long for a notification is not announced; the change still
// happens, and replicas see it on their next resync.
func (db *DB) execNotify(ctx context.Context, topic, key, sql string, args ...any) (pgconn.CommandTag, error) {
	payload := note(topic, db.replicaID(), "-", key)
	if db.channel == "" || len(payload) > maxNotify {
		return db.pool.Exec(ctx, sql, args...)
	}
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	b.Queue("SELECT pg_notify($1, $2)", db.channel, payload)
	br := db.pool.SendBatch(ctx, b)
	tag, err := br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("notify replicas: %w", cerr)
	}
	return tag, err
}
