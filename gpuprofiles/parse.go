package gpuprofiles

import (
	"encoding/json"
	"fmt"
	"sort"

	"pipeplan/core/hw"
)

// record is one entry of gpus.json as published; pointers are the fields the
// file may leave null.
type record struct {
	ID                  string              `json:"id"`
	Vendor              string              `json:"vendor"`
	Name                string              `json:"name"`
	FormFactor          string              `json:"form_factor"`
	MemoryGiB           *float64            `json:"memory_gib"`
	MemoryBandwidthGBps *float64            `json:"memory_bandwidth_gbps"`
	PeakDenseTFLOPS     map[string]*float64 `json:"peak_dense_tflops"`
	MeasuredMatmul      *struct {
		BF16 *float64 `json:"bf16"`
		FP8  *float64 `json:"fp8"`
	} `json:"measured_matmul_tflops"`
	Interconnect struct {
		IntraNode *linkRecord `json:"intra_node"`
		Host      *linkRecord `json:"host"`
	} `json:"interconnect"`
	TDPWatts       *float64 `json:"tdp_w"`
	LogicalDevices *int     `json:"logical_devices"`
}

// linkRecord is an interconnect entry of gpus.json (GB/s are decimal).
type linkRecord struct {
	Type               string   `json:"type"`
	Generation         *int     `json:"generation"`
	BidirectionalGBps  *float64 `json:"bidirectional_gbps"`
	UnidirectionalGBps *float64 `json:"unidirectional_gbps"`
	DomainGPUs         *int     `json:"domain_gpus"`
}

// peakKeys maps gpus.json peak_dense_tflops keys to hw precision keys.
var peakKeys = map[string]string{
	"fp64":        hw.PrecisionFP64,
	"fp64_tensor": hw.PrecisionFP64Tensor,
	"fp32":        hw.PrecisionFP32,
	"tf32":        hw.PrecisionTF32,
	"fp16":        hw.PrecisionFP16,
	"bf16":        hw.PrecisionBF16,
	"fp8":         hw.PrecisionFP8,
	"int8_tops":   hw.PrecisionINT8,
}

// Parse reads a JSON array in the gpus.json format (see README.md) and
// returns the validated GPU profiles in file order. Null figures stay unknown
// (absent keys, nil links, zeros); errors name the entry and field, e.g.
// "gpus[3].memory_gib: must be a finite number > 0, got -1".
func Parse(data []byte) ([]hw.GPU, error) {
	var recs []record
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("gpus: %w", err)
	}
	seen := make(map[string]int, len(recs))
	out := make([]hw.GPU, 0, len(recs))
	for i, r := range recs {
		field := fmt.Sprintf("gpus[%d]", i)
		if j, dup := seen[r.ID]; dup && r.ID != "" {
			return nil, fmt.Errorf("%s.id: duplicate %q (also gpus[%d])", field, r.ID, j)
		}
		seen[r.ID] = i
		g, err := convert(r, field)
		if err != nil {
			return nil, err
		}
		if err := g.Validate(field); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// convert turns a record into SI units.
func convert(r record, field string) (hw.GPU, error) {
	g := hw.GPU{ID: r.ID, Name: r.Name, Vendor: r.Vendor, FormFactor: r.FormFactor, LogicalDevices: 1, PeakFLOPS: map[string]float64{}}
	if r.MemoryGiB == nil {
		return g, fmt.Errorf("%s.memory_gib: required, got null", field)
	}
	g.MemoryBytes = *r.MemoryGiB * (1 << 30)
	if r.MemoryBandwidthGBps != nil {
		g.MemoryBandwidthBytesPerSec = *r.MemoryBandwidthGBps * 1e9
	}
	keys := make([]string, 0, len(r.PeakDenseTFLOPS))
	for k := range r.PeakDenseTFLOPS {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := r.PeakDenseTFLOPS[k]
		key, ok := peakKeys[k]
		if !ok {
			return g, fmt.Errorf("%s.peak_dense_tflops.%s: unknown precision", field, k)
		}
		if v != nil {
			g.PeakFLOPS[key] = *v * 1e12
		}
	}
	if m := r.MeasuredMatmul; m != nil {
		g.MeasuredMatmulFLOPS = map[string]float64{}
		if m.BF16 != nil {
			g.MeasuredMatmulFLOPS[hw.PrecisionBF16] = *m.BF16 * 1e12
		}
		if m.FP8 != nil {
			g.MeasuredMatmulFLOPS[hw.PrecisionFP8] = *m.FP8 * 1e12
		}
	}
	g.IntraNode = convertLink(r.Interconnect.IntraNode)
	g.Host = convertLink(r.Interconnect.Host)
	if r.TDPWatts != nil {
		g.TDPWatts = *r.TDPWatts
	}
	if r.LogicalDevices != nil {
		g.LogicalDevices = *r.LogicalDevices
	}
	return g, nil
}

// convertLink returns the link's per-direction bandwidth: the unidirectional
// figure, else half the bidirectional one (the file's convention), else 0
// (unknown).
func convertLink(l *linkRecord) *hw.Link {
	if l == nil {
		return nil
	}
	out := &hw.Link{Type: l.Type}
	if l.Generation != nil {
		out.Generation = *l.Generation
	}
	if l.DomainGPUs != nil {
		out.DomainGPUs = *l.DomainGPUs
	}
	switch {
	case l.UnidirectionalGBps != nil:
		out.BandwidthBytesPerSec = *l.UnidirectionalGBps * 1e9
	case l.BidirectionalGBps != nil:
		out.BandwidthBytesPerSec = *l.BidirectionalGBps * 1e9 / 2
	}
	return out
}
