// Package gpuprofiles holds sourced specifications of real GPUs, embedded
// from gpus.json (see README.md for provenance), and converts them into
// hw.GPU device profiles in SI units (bytes, bytes/s, FLOP/s).
package gpuprofiles

import (
	_ "embed"
	"fmt"
	"sync"

	"pipeplan/core/hw"
)

//go:embed gpus.json
var embedded []byte

var (
	loadOnce sync.Once
	loaded   []hw.GPU
	loadErr  error
)

// All returns every embedded GPU profile, in file order. The slice and its
// maps are fresh copies the caller may modify.
func All() []hw.GPU {
	loadOnce.Do(func() { loaded, loadErr = Parse(embedded) })
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
