package partition

import (
	"fmt"
	"math"

	"pipeplan/core/hw"
	"pipeplan/core/plan"
)

// System is what the planners know of the hardware, and the one place
// where each planner's cluster inputs — workers, the bandwidth inside and
// between servers, the memory per GPU — are derived from the topology.
type System struct {
	// GPU is the device of every worker. The profile planners read only its
	// ID, which run plans name; PTD-P's cost model reads its rates.
	GPU hw.GPU
	// Levels is the topology, innermost first: Levels[0] groups GPUs into a
	// server (see hw.Cluster).
	Levels []hw.Level
	// MemoryBytes is the memory of one GPU that stages must fit in; 0 means
	// unlimited (MadPipe needs a limit).
	MemoryBytes float64
}

// SystemOf is cluster c as the planners see it, limited by its GPU's memory.
func SystemOf(c hw.Cluster) System {
	return System{GPU: c.GPU, Levels: c.Levels, MemoryBytes: c.GPU.MemoryBytes}
}

// Validate checks the topology and the memory; errors name the field.
func (s System) Validate() error {
	if len(s.Levels) == 0 {
		return fmt.Errorf("levels: need at least one level, got none")
	}
	gpus := 1
	for i, l := range s.Levels {
		if err := l.Validate(fmt.Sprintf("levels[%d]", i)); err != nil {
			return err
		}
		if gpus > maxTwoBWGPUs/l.Workers {
			return fmt.Errorf("levels[%d].workers: more than %d GPUs in all", i, maxTwoBWGPUs)
		}
		gpus *= l.Workers
	}
	if math.IsNaN(s.MemoryBytes) || math.IsInf(s.MemoryBytes, 0) || s.MemoryBytes < 0 {
		return fmt.Errorf("memory_bytes: must be a finite number >= 0, got %v", s.MemoryBytes)
	}
	return nil
}

// Cluster is the system as core/hw describes it.
func (s System) Cluster() hw.Cluster { return hw.Cluster{GPU: s.GPU, Levels: s.Levels} }

// GPUs is the number of workers.
func (s System) GPUs() int { return s.Cluster().GPUs() }

// GPUsPerServer is the number of GPUs of the innermost level, a server.
func (s System) GPUsPerServer() int { return s.Cluster().GPUsPerNode() }

// IntraServerBandwidthBytesPerSec is the bandwidth between the GPUs of a
// server (2BW's B_high, §3.3.3): the innermost level's.
func (s System) IntraServerBandwidthBytesPerSec() float64 {
	return s.Levels[0].BandwidthBytesPerSec
}

// InterServerBandwidthBytesPerSec is the bandwidth between servers (2BW's
// B_low, §3.3.3): that of the innermost level a group of GPUs spanning more
// than one server crosses — Levels[1] unless it groups a single unit,
// never an outer level (racks, pods) that only larger groups cross. 2BW's
// two-tier model charges every transfer leaving a server at this rate, so
// it is optimistic for rings that span those outer levels. A single server
// has no traffic between servers; it gets the intra-server bandwidth.
func (s System) InterServerBandwidthBytesPerSec() float64 {
	g := s.GPUsPerServer()
	if s.GPUs() <= g {
		return s.IntraServerBandwidthBytesPerSec()
	}
	return s.Cluster().GroupBandwidthBytesPerSec(g+1, 1)
}

// PairBandwidthBytesPerSec is the one bandwidth MadPipe assumes between
// every pair of GPUs: the slowest level the job's GPUs cross (every level
// grouping more than one unit), or the innermost level's on one GPU.
func (s System) PairBandwidthBytesPerSec() float64 {
	bw := math.Inf(1)
	for _, l := range s.Levels {
		if l.Workers > 1 {
			bw = math.Min(bw, l.BandwidthBytesPerSec)
		}
	}
	if math.IsInf(bw, 1) {
		return s.Levels[0].BandwidthBytesPerSec
	}
	return bw
}

// PlanCluster is the system as a run plan describes it: servers of
// GPUsPerServer GPUs and the topology.
func (s System) PlanCluster() plan.Cluster {
	g := s.GPUsPerServer()
	return plan.Cluster{GPU: s.GPU.ID, Nodes: s.GPUs() / g, GPUsPerNode: g, Levels: s.Levels}
}
