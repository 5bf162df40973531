package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"pipeplan/core/plan"
	"pipeplan/gpuprofiles"
)

// deviceInfo is what a run ran on: the CPU, or CUDA GPUs by torch's name.
type deviceInfo struct {
	// Kind is "cpu" or "cuda".
	Kind string
	// Name is torch.cuda.get_device_name(0) for CUDA.
	Name string
}

// compareDevice keeps the report comparable only when the run used the
// plan's GPU, by name and count; otherwise it marks the report not
// comparable, drops the ratios and says what it compares and what not.
func (r *Report) compareDevice(p *plan.Plan, dev deviceInfo) {
	why := deviceMismatch(p, dev, r.Ranks)
	if why == "" {
		return
	}
	r.Comparable = false
	r.IterationRatio, r.ThroughputRatio = 0, 0
	for i := range r.PerRank {
		r.PerRank[i].MemoryRatio = 0
	}
	r.addNote(why + ": the report compares the losses (numerics, with --check) and the measured peak memory of the runner's model, not the timing, throughput or memory predicted for the plan's GPUs")
}

// deviceMismatch says how the run's device differs from the plan's GPUs,
// or "" when they are the same model and count.
func deviceMismatch(p *plan.Plan, dev deviceInfo, ranks int) string {
	want := p.Cluster.GPU
	if g, err := gpuprofiles.ByID(want); err == nil {
		want = g.Name
	}
	switch {
	case dev.Kind != "cuda":
		return fmt.Sprintf("the run used the CPU, not the plan's %d × %s", p.Cluster.GPUs(), want)
	case !sameGPU(p.Cluster.GPU, dev.Name):
		return fmt.Sprintf("the run used %s, not the plan's %s", dev.Name, want)
	case ranks != p.Cluster.GPUs():
		return fmt.Sprintf("the run used %d GPUs, the plan %d", ranks, p.Cluster.GPUs())
	}
	return ""
}

// memoryToken matches a memory size in a device name ("80gb").
var memoryToken = regexp.MustCompile(`^\d+gb$`)

// sameGPU reports whether torch's device name (e.g. "NVIDIA A100-SXM4-80GB")
// is the gpuprofiles id (e.g. "nvidia-a100-sxm4-80gb"): the name holds the
// id's model token (the one after the vendor), and any memory size the
// name gives is the id's.
func sameGPU(id, name string) bool {
	tokens := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		})
	}
	idTok, nameTok := tokens(id), tokens(name)
	if len(idTok) < 2 || !slices.Contains(nameTok, idTok[1]) {
		return false
	}
	for _, t := range nameTok {
		if memoryToken.MatchString(t) && !slices.Contains(idTok, t) {
			return false
		}
	}
	return true
}
