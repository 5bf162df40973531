package gavel

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultGPUsPerServer is the server size used when a ClusterSpec or an
// Instance gives none: Gavel's physical-cluster workers of 4 GPUs (its
// PHYSICAL_CLUSTER.md launches each worker with -g 4), the setting of
// RESULTS.md's simulations and the CLI's --gpus-per-server default. The
// application layer gives each worker type its real size instead
// (gpuprofiles' servers.json, request.Cluster.GPUsPerServer).
const DefaultGPUsPerServer = 4

// MaxWorkersPerType bounds a worker type's GPU count (the mechanism keeps
// per-GPU state).
const MaxWorkersPerType = 1 << 20

// ClusterSpec is the cluster the mechanism places jobs on: a GPU count per
// worker type, with the GPUs of a type grouped into servers.
type ClusterSpec struct {
	// WorkerTypes names the GPU types, e.g. ["k80","p100","v100"].
	WorkerTypes []string `json:"worker_types"`
	// NumWorkers is the GPU count per worker type.
	NumWorkers []int `json:"num_workers"`
	// GPUsPerServer is the server size per worker type; nil means DefaultGPUsPerServer.
	GPUsPerServer []int `json:"gpus_per_server,omitempty"`
}

// ParseClusterSpec parses "36:36:36" as GPU counts for workerTypes, in order
// (Gavel's cluster_spec), with DefaultGPUsPerServer GPUs per server; a
// type may have 0 GPUs as long as the cluster has one (ClusterSpec.Validate).
func ParseClusterSpec(s string, workerTypes []string) (ClusterSpec, error) {
	parts := strings.Split(s, ":")
	if len(parts) != len(workerTypes) {
		return ClusterSpec{}, fmt.Errorf("cluster %q: want %d counts (%s), got %d", s, len(workerTypes), strings.Join(workerTypes, ":"), len(parts))
	}
	spec := ClusterSpec{WorkerTypes: append([]string(nil), workerTypes...), NumWorkers: make([]int, len(parts))}
	for j, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return ClusterSpec{}, fmt.Errorf("cluster %q: %s count %q is not an integer", s, workerTypes[j], p)
		}
		spec.NumWorkers[j] = n
	}
	return spec, spec.Validate()
}

// Validate checks names, counts (>= 0, at least one GPU in all) and server
// sizes (>= 1).
func (c ClusterSpec) Validate() error {
	if len(c.WorkerTypes) == 0 {
		return fmt.Errorf("cluster.worker_types: must not be empty")
	}
	if len(c.NumWorkers) != len(c.WorkerTypes) {
		return fmt.Errorf("cluster.num_workers: must have %d entries, got %d", len(c.WorkerTypes), len(c.NumWorkers))
	}
	if c.GPUsPerServer != nil && len(c.GPUsPerServer) != len(c.WorkerTypes) {
		return fmt.Errorf("cluster.gpus_per_server: must have %d entries, got %d", len(c.WorkerTypes), len(c.GPUsPerServer))
	}
	seen := map[string]bool{}
	for j, w := range c.WorkerTypes {
		if w == "" || seen[w] {
			return fmt.Errorf("cluster.worker_types[%d]: must be a unique non-empty name, got %q", j, w)
		}
		seen[w] = true
		if c.NumWorkers[j] < 0 || c.NumWorkers[j] > MaxWorkersPerType {
			return fmt.Errorf("cluster.num_workers[%d]: must be in [0, %d], got %d", j, MaxWorkersPerType, c.NumWorkers[j])
		}
		if c.serverSize(j) < 1 {
			return fmt.Errorf("cluster.gpus_per_server[%d]: must be >= 1, got %d", j, c.serverSize(j))
		}
	}
	if c.TotalWorkers() == 0 {
		return fmt.Errorf("cluster.num_workers: the cluster needs at least one GPU, got %v", c.NumWorkers)
	}
	return nil
}

// serverSize is the number of GPUs per server of worker type j.
func (c ClusterSpec) serverSize(j int) int {
	return serverSizeOf(c.GPUsPerServer, j)
}

// serverSizeOf is sizes[j], or DefaultGPUsPerServer when sizes is nil.
func serverSizeOf(sizes []int, j int) int {
	if sizes == nil {
		return DefaultGPUsPerServer
	}
	return sizes[j]
}

// minServers is the fewest servers of size gpusPerServer that hold n GPUs:
// a job on that many is consolidated (§5.3.1), on more unconsolidated.
func minServers(gpusPerServer, n int) int {
	return (n + gpusPerServer - 1) / gpusPerServer
}

// consolidatedSlots is how many jobs of scale s fit consolidated at once on
// workers GPUs in servers of size gpusPerServer (the last one holding the
// remainder): floor(size/s) per server when s fits in one, else one per
// group of minServers(size, s) whole servers (exact when the size divides
// s, a lower bound otherwise, where the mechanism may pair the pieces of
// two jobs on one server).
func consolidatedSlots(workers, gpusPerServer, s int) int {
	full, rest := workers/gpusPerServer, workers%gpusPerServer
	if s <= gpusPerServer {
		return full*(gpusPerServer/s) + rest/s
	}
	return full / minServers(gpusPerServer, s)
}

// TotalWorkers is the number of GPUs of all types.
func (c ClusterSpec) TotalWorkers() int {
	n := 0
	for _, w := range c.NumWorkers {
		n += w
	}
	return n
}
