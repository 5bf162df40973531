package cost

// DefaultCollectiveLatencySeconds is the fixed start-up time charged per step
// of a collective (a ring of d GPUs takes 2(d−1) steps for an all-reduce)
// and per point-to-point transfer.
const DefaultCollectiveLatencySeconds = 2e-6

// Comm holds the communication model's constants.
type Comm struct {
	// BandwidthEfficiency is the fraction of a link's bandwidth a transfer
	// achieves (NCCL bus bandwidth over link bandwidth), in (0, 1].
	BandwidthEfficiency float64 `json:"bandwidth_efficiency"`
	// LatencySeconds is the start-up time per collective step or transfer.
	LatencySeconds float64 `json:"latency_seconds"`
}

// DefaultComm is the communication model used when none is given.
var DefaultComm = Comm{BandwidthEfficiency: 0.8, LatencySeconds: DefaultCollectiveLatencySeconds}

// RingAllReduceBytes returns the bytes each of d GPUs sends in a ring
// all-reduce of a bytes-sized buffer, 2(d−1)/d·|W| (PipeDream §2.4.1).
func RingAllReduceBytes(d int, bytes float64) float64 {
	if d <= 1 {
		return 0
	}
	return 2 * float64(d-1) / float64(d) * bytes
}

// RingGatherBytes returns the bytes each of d GPUs sends in a ring
// all-gather or reduce-scatter whose full buffer has bytes, (d−1)/d·bytes:
// half an all-reduce (used by sequence parallelism, the distributed optimizer
// and the gather of §4.4.1).
func RingGatherBytes(d int, bytes float64) float64 {
	if d <= 1 {
		return 0
	}
	return float64(d-1) / float64(d) * bytes
}

// TensorParallelBytesPerLayer returns the bytes each GPU of a t-way tensor-
// parallel group sends per transformer layer and microbatch: two all-reduces
// of b·s·h values forward and two backward, 8bsh(t−1)/t values (§4.3.2),
// times bytesPerValue; full recomputation repeats the two forward ones.
func TensorParallelBytesPerLayer(b, s, h, t int, bytesPerValue float64, fullRecompute bool) float64 {
	return TensorParallelAllReduces(fullRecompute) * RingAllReduceBytes(t, float64(b)*float64(s)*float64(h)*bytesPerValue)
}

// TensorParallelAllReduces returns the number of b·s·h all-reduces a
// tensor-parallel transformer layer issues per microbatch: two forward (g)
// and two backward (f) (§4.2.3), two more when the forward pass is recomputed.
func TensorParallelAllReduces(fullRecompute bool) float64 {
	if fullRecompute {
		return 6
	}
	return 4
}

// AllReduceSeconds returns the time of a ring all-reduce of bytes over d GPUs
// on links of bandwidthBytesPerSec per GPU and direction.
func (c Comm) AllReduceSeconds(d int, bytes, bandwidthBytesPerSec float64) float64 {
	if d <= 1 || bytes <= 0 {
		return 0
	}
	return RingAllReduceBytes(d, bytes)/(bandwidthBytesPerSec*c.BandwidthEfficiency) + 2*float64(d-1)*c.LatencySeconds
}

// GatherSeconds returns the time of a ring all-gather or reduce-scatter whose
// full buffer has bytes, over d GPUs.
func (c Comm) GatherSeconds(d int, bytes, bandwidthBytesPerSec float64) float64 {
	if d <= 1 || bytes <= 0 {
		return 0
	}
	return RingGatherBytes(d, bytes)/(bandwidthBytesPerSec*c.BandwidthEfficiency) + float64(d-1)*c.LatencySeconds
}

// P2PSeconds returns the time to send bytes from one GPU to another (a
// pipeline stage's activations forward or gradients backward).
func (c Comm) P2PSeconds(bytes, bandwidthBytesPerSec float64) float64 {
	if bytes <= 0 {
		return 0
	}
	return bytes/(bandwidthBytesPerSec*c.BandwidthEfficiency) + c.LatencySeconds
}

// ScatterGatherSeconds returns the time to move a microbatch's boundary
// activation of bytes between two pipeline stages that are each t-way tensor
// parallel (§4.4.1): without the optimization every one of the t GPUs sends
// the whole tensor on its own link; with it each sends 1/t of it across the
// (slower) inter-stage link and the receivers all-gather over their node's
// fabric at intraBandwidthBytesPerSec.
func (c Comm) ScatterGatherSeconds(bytes float64, t int, scatterGather bool, linkBandwidthBytesPerSec, intraBandwidthBytesPerSec float64) float64 {
	if !scatterGather || t <= 1 {
		return c.P2PSeconds(bytes, linkBandwidthBytesPerSec)
	}
	return c.P2PSeconds(bytes/float64(t), linkBandwidthBytesPerSec) + c.GatherSeconds(t, bytes, intraBandwidthBytesPerSec)
}
