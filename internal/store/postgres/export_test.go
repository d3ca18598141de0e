package postgres

// Crash ends the replica's heartbeat and listener without leaving the
// replicas table: what kill -9 leaves behind.
func (c *Cluster) Crash() { c.stop() }
