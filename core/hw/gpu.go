package hw

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Precision keys of GPU.PeakFLOPS, as gpus.json names them. They match the
// string values of model.Precision where both exist.
const (
	PrecisionFP64       = "fp64"
	PrecisionFP64Tensor = "fp64_tensor"
	PrecisionFP32       = "fp32"
	PrecisionTF32       = "tf32"
	PrecisionFP16       = "fp16"
	PrecisionBF16       = "bf16"
	PrecisionFP8        = "fp8"
	PrecisionINT8       = "int8"
)

// Link is one interconnect of a GPU (a peer fabric such as NVLink, or the host
// link such as PCIe).
type Link struct {
	// Type names the fabric, e.g. "NVLink", "PCIe", "Infinity Fabric (xGMI)".
	Type string `json:"type"`
	// Generation is the fabric generation; 0 when unknown.
	Generation int `json:"generation,omitempty"`
	// BandwidthBytesPerSec is the per-GPU bandwidth in one direction (summed
	// over all links), the figure bus-bandwidth and all-reduce models use;
	// 0 when no source gave it.
	BandwidthBytesPerSec float64 `json:"bandwidth_bytes_per_sec"`
	// DomainGPUs is how many GPUs one domain of the fabric joins where it
	// spans more than a server (a GB200 NVL72 rack: 72); 0 when it is the
	// server's.
	DomainGPUs int `json:"domain_gpus,omitempty"`
}

// MaxDomainGPUs bounds Link.DomainGPUs: the largest NVLink domains
// announced join 576 GPUs (NVIDIA's NVLink Switch).
const MaxDomainGPUs = 576

// GPU is the device profile of one accelerator: capacity, rates and links.
// Unknown figures are absent (missing map keys, nil links, zero bandwidths),
// never guessed.
type GPU struct {
	// ID is the stable slug from gpus.json, e.g. "nvidia-a100-sxm4-80gb".
	ID string `json:"id"`
	// Name is the marketing name.
	Name string `json:"name"`
	// Vendor is "NVIDIA", "AMD" or "Google".
	Vendor string `json:"vendor,omitempty"`
	// FormFactor is "SXM4", "PCIe", "OAM", ...
	FormFactor string `json:"form_factor,omitempty"`
	// MemoryBytes is the device memory capacity (the vendor's "GB" figure read
	// as GiB, 2^30 bytes, since HBM capacities are binary-sized).
	MemoryBytes float64 `json:"memory_bytes"`
	// MemoryBandwidthBytesPerSec is the peak device memory bandwidth; 0 if unknown.
	MemoryBandwidthBytesPerSec float64 `json:"memory_bandwidth_bytes_per_sec"`
	// PeakFLOPS holds the peak dense FLOP/s (ops/s for int8) per precision
	// key (PrecisionFP16, ...); a missing key means unsupported or unsourced.
	PeakFLOPS map[string]float64 `json:"peak_flops"`
	// MeasuredMatmulFLOPS holds the best measured matmul FLOP/s per precision
	// (a community benchmark, not a spec), when known. It bounds GEMM efficiency.
	MeasuredMatmulFLOPS map[string]float64 `json:"measured_matmul_flops,omitempty"`
	// IntraNode is the GPU-to-GPU fabric inside a node; nil when the part has
	// none (PCIe-only cards talk over Host).
	IntraNode *Link `json:"intra_node,omitempty"`
	// Host is the host link; nil when unknown.
	Host *Link `json:"host,omitempty"`
	// NetworkBandwidthBytesPerSec is the scale-out network bandwidth per GPU
	// and direction of the reference server this part ships in (e.g. one
	// 400 Gb/s ConnectX-7 port per GPU in a DGX H100); 0 if unknown.
	NetworkBandwidthBytesPerSec float64 `json:"network_bandwidth_bytes_per_sec,omitempty"`
	// TDPWatts is the maximum board or module power; 0 if unknown.
	TDPWatts float64 `json:"tdp_watts,omitempty"`
	// LogicalDevices is how many devices software sees per package (2 for MI250X).
	LogicalDevices int `json:"logical_devices"`
}

// Peak returns the peak dense FLOP/s of g at precision p (a Precision* key),
// or an error naming the GPU when the figure is unsupported or unsourced.
func (g GPU) Peak(p string) (float64, error) {
	v, ok := g.PeakFLOPS[p]
	if !ok || v <= 0 {
		return 0, fmt.Errorf("gpu %s: no peak %s FLOP/s (unsupported or not sourced); known: %v", g.ID, p, g.Precisions())
	}
	return v, nil
}

// Precisions lists the precision keys g has a peak rate for, sorted.
func (g GPU) Precisions() []string {
	return sortedKeys(g.PeakFLOPS)
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// MatmulCeiling returns the fraction of the peak at precision p that the best
// measured matmul reached (e.g. 0.87 for A100 bf16), and false when no
// measurement exists. fp16 and bf16 run on the same tensor-core path: where
// only one of them was measured and both have the same peak, the other's
// ceiling is that one's.
func (g GPU) MatmulCeiling(p string) (float64, bool) {
	peak, err := g.Peak(p)
	if err != nil {
		return 0, false
	}
	if m, ok := g.MeasuredMatmulFLOPS[p]; ok && m > 0 {
		return math.Min(1, m/peak), true
	}
	twin := map[string]string{PrecisionFP16: PrecisionBF16, PrecisionBF16: PrecisionFP16}[p]
	if twinPeak, err := g.Peak(twin); twin != "" && err == nil && twinPeak == peak {
		if m, ok := g.MeasuredMatmulFLOPS[twin]; ok && m > 0 {
			return math.Min(1, m/peak), true
		}
	}
	return 0, false
}

// PeerBandwidthBytesPerSec is the default bandwidth between the GPUs of one
// node, per GPU and direction: the peer fabric when there is one, else the
// host link. A PCIe card's NVLink is a bridge joining only two cards, so PCIe
// parts use the host link. It returns 0 when neither is known.
func (g GPU) PeerBandwidthBytesPerSec() float64 {
	if g.IntraNode != nil && g.IntraNode.BandwidthBytesPerSec > 0 && !strings.HasPrefix(g.FormFactor, "PCIe") {
		return g.IntraNode.BandwidthBytesPerSec
	}
	if g.Host != nil {
		return g.Host.BandwidthBytesPerSec
	}
	return 0
}

// Validate checks the figures a plan needs; field names are prefixed by field
// (e.g. "cluster.gpu").
func (g GPU) Validate(field string) error {
	if g.ID == "" {
		return fmt.Errorf("%s.id: must not be empty", field)
	}
	if err := positive(field+".memory_bytes", g.MemoryBytes); err != nil {
		return err
	}
	if err := nonNegative(field+".memory_bandwidth_bytes_per_sec", g.MemoryBandwidthBytesPerSec); err != nil {
		return err
	}
	for _, k := range g.Precisions() {
		if err := positive(fmt.Sprintf("%s.peak_flops[%s]", field, k), g.PeakFLOPS[k]); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(g.MeasuredMatmulFLOPS) {
		if err := positive(fmt.Sprintf("%s.measured_matmul_flops[%s]", field, k), g.MeasuredMatmulFLOPS[k]); err != nil {
			return err
		}
	}
	if g.IntraNode != nil {
		if err := nonNegative(field+".intra_node.bandwidth_bytes_per_sec", g.IntraNode.BandwidthBytesPerSec); err != nil {
			return err
		}
		if d := g.IntraNode.DomainGPUs; d < 0 || d > MaxDomainGPUs {
			return fmt.Errorf("%s.intra_node.domain_gpus: must be 0 (the server) to %d, got %d", field, MaxDomainGPUs, d)
		}
	}
	if g.Host != nil {
		if err := nonNegative(field+".host.bandwidth_bytes_per_sec", g.Host.BandwidthBytesPerSec); err != nil {
			return err
		}
	}
	if g.LogicalDevices < 1 {
		return fmt.Errorf("%s.logical_devices: must be >= 1, got %d", field, g.LogicalDevices)
	}
	return nil
}

// positive returns an error naming field unless v is finite and > 0.
func positive(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return fmt.Errorf("%s: must be a finite number > 0, got %v", field, v)
	}
	return nil
}

// nonNegative returns an error naming field unless v is finite and >= 0.
func nonNegative(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("%s: must be a finite number >= 0, got %v", field, v)
	}
	return nil
}
