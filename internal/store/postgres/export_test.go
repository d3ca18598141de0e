package postgres

// Crash ends the replica's heartbeat and listener without leaving the
// replicas table: what kill -9 leaves behind.
func (c *Cluster) Crash() { c.stop() }

// Wrap is wrap, for the tests of its translations.
func Wrap(op string, err error) error { return wrap(op, err) }
