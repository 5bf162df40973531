package hw

import (
	"math"
	"strings"
	"testing"
)

// a100 is an A100-SXM4-80GB as gpuprofiles loads it (NVLink 3: 600 GB/s
// bidirectional = 300 GB/s per direction; PCIe 4 x16: 32 GB/s per direction).
func a100() GPU {
	return GPU{
		ID: "nvidia-a100-sxm4-80gb", FormFactor: "SXM4", MemoryBytes: 80 << 30, MemoryBandwidthBytesPerSec: 2039e9,
		PeakFLOPS:           map[string]float64{PrecisionBF16: 312e12, PrecisionFP16: 312e12},
		MeasuredMatmulFLOPS: map[string]float64{PrecisionBF16: 271.2e12},
		IntraNode:           &Link{Type: "NVLink", Generation: 3, BandwidthBytesPerSec: 300e9},
		Host:                &Link{Type: "PCIe", Generation: 4, BandwidthBytesPerSec: 32e9},
		LogicalDevices:      1,
	}
}

func TestNewClusterDefaults(t *testing.T) {
	c, err := NewCluster(a100(), 8, 384, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.GPUs() != 3072 || c.GPUsPerNode() != 8 {
		t.Errorf("GPUs %d per node %d, want 3072 and 8", c.GPUs(), c.GPUsPerNode())
	}
	if c.Levels[0].BandwidthBytesPerSec != 300e9 {
		t.Errorf("intra-node %g B/s, want NVLink's 300e9 per direction", c.Levels[0].BandwidthBytesPerSec)
	}
	if c.Levels[1].BandwidthBytesPerSec != 25e9 {
		t.Errorf("inter-node %g B/s, want one 200 Gb/s NIC = 25e9", c.Levels[1].BandwidthBytesPerSec)
	}
	c2, _ := NewCluster(a100(), 8, 2, 12.5e9)
	if c2.Levels[1].BandwidthBytesPerSec != 12.5e9 {
		t.Errorf("configured inter-node %g, want 12.5e9", c2.Levels[1].BandwidthBytesPerSec)
	}
	pcie := a100()
	pcie.FormFactor = "PCIe"
	if bw := pcie.PeerBandwidthBytesPerSec(); bw != 32e9 {
		t.Errorf("PCIe card peer bandwidth %g, want the host link's 32e9 (its NVLink bridge pairs only two cards)", bw)
	}
}

func TestGroupLevel(t *testing.T) {
	c, err := NewCluster(a100(), 8, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ size, stride, want int }{
		{1, 1, -1}, {8, 1, 0}, {2, 4, 0}, {2, 8, 1}, {4, 2, 0}, {4, 4, 1}, {32, 1, 1}, {3, 3, 0},
	}
	for _, k := range cases {
		if got := c.GroupLevel(k.size, k.stride); got != k.want {
			t.Errorf("GroupLevel(%d, %d) = %d, want %d", k.size, k.stride, got, k.want)
		}
	}
	// Brute force: the level is the first whose block holds ranks 0 and (size-1)·stride.
	for size := 2; size <= 8; size++ {
		for stride := 1; stride <= 4; stride++ {
			last := (size - 1) * stride
			want := 0
			if last >= 8 {
				want = 1
			}
			if got := c.GroupLevel(size, stride); got != want {
				t.Errorf("GroupLevel(%d, %d) = %d, brute force %d", size, stride, got, want)
			}
		}
	}
	if bw := c.GroupBandwidthBytesPerSec(1, 1); bw != 0 {
		t.Errorf("one-GPU group bandwidth %g, want 0", bw)
	}
}

// TestRingBandwidthPoolsInterfaces: on DGX A100 servers (8 GPUs on
// NVSwitch, one 200 Gb/s NIC each) a ring over a group with k GPUs in
// each server crosses the network on k NICs, at most the server's fabric;
// inside a server it gets the fabric; with one GPU per server, one NIC.
// NVIDIA measures 192 GB/s all-reduce bus bandwidth across such servers
// (github.com/NVIDIA/nccl issue 812), eight NICs' worth.
func TestRingBandwidthPoolsInterfaces(t *testing.T) {
	c, err := NewCluster(a100(), 8, 32, 0)
	if err != nil {
		t.Fatal(err)
	}
	nic, fabric := c.Levels[1].BandwidthBytesPerSec, c.Levels[0].BandwidthBytesPerSec
	for _, k := range []struct {
		size, stride int
		want         float64
	}{
		{32, 1, min(8*nic, fabric)}, // t 1: eight of the group's GPUs in each server
		{32, 2, 4 * nic},
		{32, 4, 2 * nic},
		{32, 8, nic}, // t 8: one per server
		{32, 16, nic},
		{8, 1, fabric},
		{4, 2, fabric},
		{1, 1, 0},
	} {
		if got := c.RingBandwidthBytesPerSec(k.size, k.stride); got != k.want {
			t.Errorf("RingBandwidthBytesPerSec(%d, %d) = %.4g, want %.4g", k.size, k.stride, got, k.want)
		}
	}
	if busbw := 192e9; c.RingBandwidthBytesPerSec(32, 1) < busbw {
		t.Errorf("a t = 1 ring across servers gets %.3g B/s, under the %.3g measured", c.RingBandwidthBytesPerSec(32, 1), busbw)
	}
}

func TestClusterValidate(t *testing.T) {
	bad := []struct {
		mut  func(*Cluster)
		want string
	}{
		{func(c *Cluster) { c.Levels[1].Workers = 0 }, "cluster.levels[1].workers: must be >= 1, got 0"},
		{func(c *Cluster) { c.Levels[0].BandwidthBytesPerSec = math.NaN() }, "cluster.levels[0].bandwidth_bytes_per_sec"},
		{func(c *Cluster) { c.Levels[1].BandwidthBytesPerSec = -1 }, "cluster.levels[1].bandwidth_bytes_per_sec"},
		{func(c *Cluster) { c.Levels = nil }, "cluster.levels"},
		{func(c *Cluster) { c.Levels[1].Workers = 1 << 30 }, "cluster.levels[1].workers"},
		{func(c *Cluster) { c.GPU.MemoryBytes = 0 }, "cluster.gpu.memory_bytes"},
		{func(c *Cluster) { c.GPU.PeakFLOPS[PrecisionBF16] = math.Inf(1) }, "cluster.gpu.peak_flops[bf16]"},
		{func(c *Cluster) { c.GPU.ID = "" }, "cluster.gpu.id"},
		{func(c *Cluster) { c.GPU.LogicalDevices = 0 }, "cluster.gpu.logical_devices"},
	}
	for _, k := range bad {
		c, err := NewCluster(a100(), 8, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		k.mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), k.want) {
			t.Errorf("error %v, want one containing %q", err, k.want)
		}
	}
	noLinks := a100()
	noLinks.IntraNode, noLinks.Host = nil, nil
	if _, err := NewCluster(noLinks, 8, 1, 0); err == nil || !strings.Contains(err.Error(), "cluster.levels[0].bandwidth_bytes_per_sec") {
		t.Errorf("GPU without known links: error %v, want one naming the intra-node bandwidth", err)
	}
}

func TestPeakAndCeiling(t *testing.T) {
	g := a100()
	if _, err := g.Peak(PrecisionFP8); err == nil || !strings.Contains(err.Error(), "fp8") {
		t.Errorf("A100 fp8 peak: error %v, want one naming fp8", err)
	}
	if c, ok := g.MatmulCeiling(PrecisionBF16); !ok || math.Abs(c-271.2/312) > 1e-12 {
		t.Errorf("ceiling %v %v, want 271.2/312", c, ok)
	}
	// fp16 has the same peak and tensor-core path as bf16: bf16's ceiling.
	if c, ok := g.MatmulCeiling(PrecisionFP16); !ok || math.Abs(c-271.2/312) > 1e-12 {
		t.Errorf("fp16 ceiling %v %v, want bf16's 271.2/312", c, ok)
	}
	if _, ok := g.MatmulCeiling(PrecisionFP32); ok {
		t.Error("fp32 ceiling reported without a measurement")
	}
	g.PeakFLOPS[PrecisionFP16] *= 2
	if _, ok := g.MatmulCeiling(PrecisionFP16); ok {
		t.Error("fp16 ceiling borrowed from bf16 although their peaks differ")
	}
}
