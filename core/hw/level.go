// Package hw describes the system side of a plan: GPU device profiles and
// hierarchical cluster topologies with a bandwidth per level.
package hw

import "fmt"

// Level is one level of a hierarchical cluster topology, innermost first as
// PipeDream's optimizer takes them: Workers units of the level below (GPUs at
// level 0) connected at BandwidthBytesPerSec.
type Level struct {
	// Workers is the number of units of the level below grouped at this level.
	Workers int `json:"workers"`
	// BandwidthBytesPerSec is the bandwidth between those units, in bytes/s.
	BandwidthBytesPerSec float64 `json:"bandwidth_bytes_per_sec"`
}

// Validate checks one level; errors name the field, e.g.
// "cluster.levels[1].workers: must be >= 1, got 0" for field "cluster.levels[1]".
func (l Level) Validate(field string) error {
	if l.Workers < 1 {
		return fmt.Errorf("%s.workers: must be >= 1, got %d", field, l.Workers)
	}
	return positive(field+".bandwidth_bytes_per_sec", l.BandwidthBytesPerSec)
}
