// Package gpuprofiles holds sourced specifications of real GPUs, from
// gpus.json, the parts it lacks in variants.json (the H800) and the per-GPU
// network bandwidth of network.json (see
// README.md for provenance), and converts them into hw.GPU device profiles
// in SI units (bytes, bytes/s, FLOP/s).
//
// The JSON files are the source of truth. Their parsed, checked values are
// generated into data_gen.go (go generate; TestGenerated fails when it is
// stale), so a program, the playground's first render among them, parses
// nothing at run time.
package gpuprofiles

//go:generate go test -run ^TestGenerated$ -update

import (
	"encoding/json"
	"fmt"

	"pipeplan/core/hw"
)

// All returns every GPU profile of gpus.json, then of variants.json, in
// file order. The slice and
// its maps are fresh copies the caller may modify.
func All() []hw.GPU {
	out := make([]hw.GPU, len(embeddedGPUs))
	for i, g := range embeddedGPUs {
		out[i] = clone(g)
	}
	return out
}

// ByID returns the embedded profile with the given gpus.json id (e.g.
// "nvidia-a100-sxm4-80gb"), or an error listing the known ids.
func ByID(id string) (hw.GPU, error) {
	all := All()
	for _, g := range all {
		if g.ID == id {
			return g, nil
		}
	}
	ids := make([]string, len(all))
	for i, g := range all {
		ids[i] = g.ID
	}
	return hw.GPU{}, fmt.Errorf("gpu %q: unknown id; known ids: %v", id, ids)
}

// appendVariants appends the parts of variants.json — gpus.json's format
// under "gpus", for parts the shared anchors do not list (README.md) — to
// gpus, which it returns; errors name the entry and field, and an id
// gpus.json already has is one. TestGenerated runs it to generate
// embeddedGPUs.
func appendVariants(gpus []hw.GPU, data []byte) ([]hw.GPU, error) {
	var f struct {
		GPUs json.RawMessage `json:"gpus"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("variants: %w", err)
	}
	more, err := Parse(f.GPUs)
	if err != nil {
		return nil, fmt.Errorf("variants.%w", err)
	}
	for i, g := range more {
		for _, h := range gpus {
			if h.ID == g.ID {
				return nil, fmt.Errorf("variants.gpus[%d].id: %q is in gpus.json already", i, g.ID)
			}
		}
	}
	return append(gpus, more...), nil
}

// applyNetwork sets NetworkBandwidthBytesPerSec of the GPUs network.json
// lists (Gb/s per GPU, decimal); an entry naming an unknown GPU or a
// non-positive rate is an error naming it. TestGenerated runs it to
// generate embeddedGPUs.
func applyNetwork(gpus []hw.GPU, data []byte) error {
	var f struct {
		GPUs []struct {
			ID         string  `json:"id"`
			GbitPerGPU float64 `json:"gbit_per_gpu"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("network: %w", err)
	}
	for i, n := range f.GPUs {
		if !(n.GbitPerGPU > 0) {
			return fmt.Errorf("network.gpus[%d].gbit_per_gpu: must be > 0, got %v", i, n.GbitPerGPU)
		}
		found := false
		for j := range gpus {
			if gpus[j].ID == n.ID {
				gpus[j].NetworkBandwidthBytesPerSec, found = n.GbitPerGPU*1e9/8, true
			}
		}
		if !found {
			return fmt.Errorf("network.gpus[%d].id: no GPU %q in gpus.json", i, n.ID)
		}
	}
	return nil
}

// clone deep-copies g's maps and links.
func clone(g hw.GPU) hw.GPU {
	g.PeakFLOPS = cloneMap(g.PeakFLOPS)
	g.MeasuredMatmulFLOPS = cloneMap(g.MeasuredMatmulFLOPS)
	if g.IntraNode != nil {
		l := *g.IntraNode
		g.IntraNode = &l
	}
	if g.Host != nil {
		l := *g.Host
		g.Host = &l
	}
	return g
}

func cloneMap(m map[string]float64) map[string]float64 {
	if m == nil {
		return nil
	}
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
