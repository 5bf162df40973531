package hw

import "fmt"

// DefaultInterNodeBandwidthBytesPerSec is the network bandwidth between nodes
// per GPU and direction for a GPU whose profile has none
// (GPU.NetworkBandwidthBytesPerSec): one 200 Gb/s NIC per GPU, as in a DGX
// A100 node (8 HDR-200 InfiniBand ports for 8 GPUs; dissertation §4.5).
const DefaultInterNodeBandwidthBytesPerSec = 200e9 / 8

// Cluster is a homogeneous cluster of one GPU type with a hierarchical
// topology. Levels run innermost first: Levels[0] groups GPUs into a node
// (bandwidth of the node's fabric), Levels[1] groups nodes (the network), and
// further levels may group those (racks, pods). A bandwidth is per GPU and
// direction, the rate one GPU sends at when all GPUs of the group communicate.
type Cluster struct {
	// GPU is the device every worker has.
	GPU GPU `json:"gpu"`
	// Levels is the topology, innermost first.
	Levels []Level `json:"levels"`
}

// NewCluster builds a two-level cluster of nodes × gpusPerNode GPUs. Inside a
// node GPUs talk at the GPU's peer bandwidth (NVLink where the part has it,
// else its host link); between nodes at interNodeBandwidthBytesPerSec, or,
// when that is 0, at the GPU's NetworkBandwidthBytesPerSec (its reference
// server's network), else DefaultInterNodeBandwidthBytesPerSec. The result
// is validated.
func NewCluster(gpu GPU, gpusPerNode, nodes int, interNodeBandwidthBytesPerSec float64) (Cluster, error) {
	if interNodeBandwidthBytesPerSec == 0 {
		interNodeBandwidthBytesPerSec = gpu.NetworkBandwidthBytesPerSec
	}
	if interNodeBandwidthBytesPerSec == 0 {
		interNodeBandwidthBytesPerSec = DefaultInterNodeBandwidthBytesPerSec
	}
	c := Cluster{GPU: gpu, Levels: []Level{
		{Workers: gpusPerNode, BandwidthBytesPerSec: gpu.PeerBandwidthBytesPerSec()},
		{Workers: nodes, BandwidthBytesPerSec: interNodeBandwidthBytesPerSec},
	}}
	if err := c.Validate(); err != nil {
		return Cluster{}, err
	}
	return c, nil
}

// Validate checks the cluster; errors name the field, e.g.
// "cluster.levels[1].workers: must be >= 1, got 0".
func (c Cluster) Validate() error {
	if err := c.GPU.Validate("cluster.gpu"); err != nil {
		return err
	}
	if len(c.Levels) == 0 {
		return fmt.Errorf("cluster.levels: must have at least one level, got none")
	}
	total := 1
	for i, l := range c.Levels {
		if err := l.Validate(fmt.Sprintf("cluster.levels[%d]", i)); err != nil {
			return err
		}
		if total > maxGPUs/l.Workers {
			return fmt.Errorf("cluster.levels[%d].workers: cluster would exceed %d GPUs", i, maxGPUs)
		}
		total *= l.Workers
	}
	return nil
}

// maxGPUs bounds cluster sizes so that GPU counts never overflow an int.
const maxGPUs = 1 << 24

// GPUs returns the number of GPUs in the cluster.
func (c Cluster) GPUs() int {
	n := 1
	for _, l := range c.Levels {
		n *= l.Workers
	}
	return n
}

// GPUsPerNode returns the number of GPUs sharing the innermost level (a node).
func (c Cluster) GPUsPerNode() int {
	if len(c.Levels) == 0 {
		return 0
	}
	return c.Levels[0].Workers
}

// GroupLevel returns the outermost level a communication group crosses: a
// group of size GPUs whose ranks are stride apart (ranks r, r+stride, ...),
// placed in rank order and aligned to level boundaries, as Megatron-LM lays
// out tensor (stride 1), data (stride t) and pipeline (stride t·d) groups.
// A group of one GPU crosses no level and returns -1.
func (c Cluster) GroupLevel(size, stride int) int {
	if size <= 1 {
		return -1
	}
	span := (size-1)*stride + 1
	covered := 1
	for i, l := range c.Levels {
		covered *= l.Workers
		if span <= covered {
			return i
		}
	}
	return len(c.Levels) - 1
}

// GroupBandwidthBytesPerSec returns the per-GPU bandwidth of the level that a
// group (see GroupLevel) crosses; a one-GPU group gets 0: it never communicates.
func (c Cluster) GroupBandwidthBytesPerSec(size, stride int) float64 {
	i := c.GroupLevel(size, stride)
	if i < 0 {
		return 0
	}
	return c.Levels[i].BandwidthBytesPerSec
}

// GroupGPUsPerNode returns how many GPUs of a group (see GroupLevel) one
// node holds: all of them when the group stays inside a node, otherwise
// the node's GPUs stride apart, at least one.
func (c Cluster) GroupGPUsPerNode(size, stride int) int {
	if c.GroupLevel(size, stride) < 1 {
		return size
	}
	return max(1, min(size, c.Levels[0].Workers/stride))
}

// RingBandwidthBytesPerSec returns the per-GPU bandwidth of a ring
// collective (all-reduce, reduce-scatter, all-gather) over a group (see
// GroupLevel). A group that crosses nodes with k GPUs in each node gets k
// times its level's bandwidth, at most the node's fabric (never less than
// the level's): NCCL runs one ring (channel) per network interface, each
// carrying 1/k of the buffer and leaving the node through its own GPU's
// interface, so the k interfaces serve the group together while every
// byte still crosses the node's fabric once. A group with one GPU per node
// (t = 8 on 8-GPU nodes) gets one interface; a group inside a node, the
// node's fabric (GroupBandwidthBytesPerSec).
func (c Cluster) RingBandwidthBytesPerSec(size, stride int) float64 {
	bw := c.GroupBandwidthBytesPerSec(size, stride)
	if c.GroupLevel(size, stride) < 1 {
		return bw
	}
	pooled := bw * float64(c.GroupGPUsPerNode(size, stride))
	return max(bw, min(pooled, c.Levels[0].BandwidthBytesPerSec))
}
