package cost

import (
	"math"
	"testing"

	"pipeplan/core/plan"
)

func TestCommVolumes(t *testing.T) {
	// Ring all-reduce: 2(d−1)/d·|W| (PipeDream §2.4.1).
	for _, d := range []int{1, 2, 8, 64} {
		want := 0.0
		if d > 1 {
			want = 2 * float64(d-1) / float64(d) * 1e9
		}
		if got := RingAllReduceBytes(d, 1e9); math.Abs(got-want) > 1e-6 {
			t.Errorf("RingAllReduceBytes(%d) = %g, want %g", d, got, want)
		}
		if got := RingGatherBytes(d, 1e9); math.Abs(got-want/2) > 1e-6 {
			t.Errorf("RingGatherBytes(%d) = %g, want half an all-reduce %g", d, got, want/2)
		}
	}
	// Tensor parallel: 8bsh(t−1)/t values per layer and microbatch (§4.3.2).
	b, s, h, tp := 4, 2048, 12288, 8
	want := 8 * float64(b*s*h) * float64(tp-1) / float64(tp) * 2
	if got := TensorParallelBytesPerLayer(b, s, h, tp, 2, false); math.Abs(got-want) > 1e-6*want {
		t.Errorf("TensorParallelBytesPerLayer = %g, want 8bsh(t−1)/t·2 = %g", got, want)
	}
	if got := TensorParallelBytesPerLayer(b, s, h, tp, 2, true); math.Abs(got-1.5*want) > 1e-6*want {
		t.Errorf("with full recomputation %g, want 1.5× = %g", got, 1.5*want)
	}
	if TensorParallelBytesPerLayer(b, s, h, 1, 2, false) != 0 {
		t.Error("t = 1 communicates")
	}
}

func TestCommTimes(t *testing.T) {
	c := Comm{BandwidthEfficiency: 1, LatencySeconds: 0}
	if got := c.AllReduceSeconds(4, 1e9, 1e9); math.Abs(got-1.5) > 1e-12 {
		t.Errorf("all-reduce of 1 GB over 4 GPUs at 1 GB/s: %g s, want 1.5", got)
	}
	if got := c.P2PSeconds(2e9, 1e9); got != 2 {
		t.Errorf("p2p 2 GB at 1 GB/s: %g s, want 2", got)
	}
	// Scatter/gather (§4.4.1): 1/t across the slow link, then an all-gather over NVLink.
	bytes, tp, inter, intra := 100e6, 8, 25e9, 300e9
	without := c.ScatterGatherSeconds(bytes, tp, false, inter, intra)
	with := c.ScatterGatherSeconds(bytes, tp, true, inter, intra)
	if math.Abs(without-bytes/inter) > 1e-12 {
		t.Errorf("without scatter/gather %g s, want %g", without, bytes/inter)
	}
	wantWith := bytes/8/inter + 7.0/8*bytes/intra
	if math.Abs(with-wantWith) > 1e-12 {
		t.Errorf("with scatter/gather %g s, want %g", with, wantWith)
	}
	if !(with < without/4) {
		t.Errorf("scatter/gather saves too little: %g vs %g", with, without)
	}
	lat := Comm{BandwidthEfficiency: 1, LatencySeconds: 1e-6}
	if got := lat.AllReduceSeconds(8, 0, 1e9); got != 0 {
		t.Errorf("empty all-reduce takes %g s", got)
	}
	if got := lat.AllReduceSeconds(8, 8e3, 1e9); math.Abs(got-(14e3/1e9+14e-6)) > 1e-15 {
		t.Errorf("small all-reduce %g s, want bandwidth term + 2(d−1) latencies", got)
	}
}

// TestDataParallelRingPoolsNICs: a data-parallel group spanning servers
// runs its collectives over the NICs of all its GPUs in each server
// (hw.Cluster.RingBandwidthBytesPerSec): at t = 1 on DGX A100 servers
// eight NICs, at most the NVSwitch fabric; at t = 8, one GPU of the group
// per server, one NIC; the experts' group likewise.
func TestDataParallelRingPoolsNICs(t *testing.T) {
	c := dgxA100(t, 64)
	nic, fabric := c.Levels[1].BandwidthBytesPerSec, c.Levels[0].BandwidthBytesPerSec
	for _, k := range []struct {
		tp   int
		want float64
	}{{1, min(8*nic, fabric)}, {2, 4 * nic}, {8, nic}} {
		ex := plan.Execution{TP: k.tp, PP: 1, DP: 64 / k.tp, MicrobatchSize: 1, GlobalBatch: 64 / k.tp, ZeRO: 3}
		e, err := newEvaluator(gpt(24, 2304, 24), c, ex, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if e.dpBW != k.want || e.edpBW != k.want {
			t.Errorf("t %d: data-parallel rings at %.4g B/s (experts' %.4g), want %.4g (NIC %.4g)", k.tp, e.dpBW, e.edpBW, k.want, nic)
		}
	}
}
