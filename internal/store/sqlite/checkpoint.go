package sqlite

import (
	"context"
	"errors"

	sqlitedrv "modernc.org/sqlite"
)

// Checkpoints between commits, when nobody waits.
//
// In WAL mode a commit appends pages to the -wal file, and a checkpoint
// copies them back into the database file, with an fsync of each. SQLite
// runs one by default inside the commit that takes the WAL past 1,000
// pages: about every 30th blocking A2A send (strace: 193 fsyncs in 3,000
// writes), whose caller (and, in a group commit, every caller in the
// batch) then waited for the two fsyncs and the copy. The writer connection turns that off (wal_autocheckpoint(0)),
// and the committer runs the same PASSIVE checkpoint itself once it has
// answered its callers and finds no write queued: a client that sends one
// request at a time gets its answer first and sends its next request
// while the checkpoint runs. A committer that is never idle checkpoints
// anyway once the WAL holds maxWALPages, after answering the batch, so
// the WAL stays bounded.
//
// The checkpoint runs on the writer's connection, between transactions:
// a checkpoint on another connection, concurrent with commits, rarely
// finds the WAL fully copied at the moment a write begins, so the writer
// never starts the WAL over and it grows without bound (332 MB after
// 6,400 sends at c=16 in a test).
//
// Durability does not change: a commit is in the -wal file (write(2),
// synchronous=NORMAL) before it returns, whether or not a checkpoint has
// copied it since.
//
// Measured on 2 busy cores, medians of interleaved runs: the write of a
// blocking send with 1 ms between writes (BenchmarkCreateSessionWithTask,
// c=1,think=1ms) took 6-10% less (495 -> 465 µs, and 438 -> 395 µs in an
// earlier set); process CPU unchanged; two allocations per commit more
// (countWAL's connection status).

// checkpointPages is how many pages written to the WAL make a checkpoint
// due: SQLite's default wal_autocheckpoint. maxWALPages is how many make
// the committer run it even though writes are queued.
const (
	checkpointPages = 1000
	maxWALPages     = 2 * checkpointPages
)

// countWAL adds the pages the writer's last commits appended to the WAL
// to db.walPages. Committer only.
func (db *DB) countWAL() {
	ctx := context.Background()
	conn, err := db.w.Conn(ctx)
	if err != nil {
		db.walPages = maxWALPages // cannot tell: checkpoint rather than let the WAL grow
		return
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		st, ok := dc.(sqlitedrv.DBStatus)
		if !ok {
			return errors.New("the sqlite driver reports no connection status")
		}
		// Pages the connection wrote since the last reset: in WAL mode,
		// the frames its commits appended.
		pages, _, err := st.Status(sqlitedrv.DBStatusCacheWrite, true)
		db.walPages += pages
		return err
	})
	if err != nil {
		db.walPages = maxWALPages
	}
}

// checkpointIfDue runs a PASSIVE checkpoint (it copies what no reader
// still needs and waits for no reader) if the WAL has grown by at least
// pages since the last. Committer only, between transactions.
func (db *DB) checkpointIfDue(pages int) {
	if db.walPages < pages {
		return
	}
	db.walPages = 0
	var busy, frames, copied int // SQLite's answer: busy flag, pages in the WAL, pages copied
	err := db.w.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
	switch {
	case err != nil && err.Error() != db.checkpointErr:
		db.checkpointErr = err.Error()
		db.log.Warn("checkpoint of the write-ahead log failed; the log grows until one succeeds", "err", err)
	case err == nil && db.checkpointErr != "":
		db.checkpointErr = ""
		db.log.Info("checkpoint of the write-ahead log succeeded again", "frames", frames, "copied", copied)
	}
}
