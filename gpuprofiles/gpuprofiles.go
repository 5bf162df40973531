// Package gpuprofiles holds sourced specifications of real GPUs, embedded
// from gpus.json and the per-GPU network bandwidth of network.json (see
// README.md for provenance), and converts them into hw.GPU device profiles
// in SI units (bytes, bytes/s, FLOP/s).
package gpuprofiles

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"pipeplan/core/hw"
)

//go:embed gpus.json
var embedded []byte

//go:embed network.json
var embeddedNetwork []byte

var (
	loadOnce sync.Once
	loaded   []hw.GPU
	loadErr  error
)

// All returns every embedded GPU profile, in file order. The slice and its
// maps are fresh copies the caller may modify.
func All() []hw.GPU {
	loadOnce.Do(func() {
		if loaded, loadErr = Parse(embedded); loadErr == nil {
			loadErr = applyNetwork(loaded, embeddedNetwork)
		}
	})
	if loadErr != nil {
		// The embedded file is checked by the package tests; reaching this is a build defect.
		panic("gpuprofiles: embedded gpus.json: " + loadErr.Error())
	}
	out := make([]hw.GPU, len(loaded))
	for i, g := range loaded {
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

// applyNetwork sets NetworkBandwidthBytesPerSec of the GPUs network.json
// lists (Gb/s per GPU, decimal); an entry naming an unknown GPU or a
// non-positive rate is an error naming it.
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
