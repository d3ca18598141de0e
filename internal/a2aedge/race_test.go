//go:build race

package a2aedge

const raceEnabled = true
