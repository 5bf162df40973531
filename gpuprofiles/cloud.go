package gpuprofiles

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"pipeplan/core/hw"
)

// WorkerType is one of Gavel's worker types and the GPU it stands for.
type WorkerType struct {
	// Name is Gavel's name of the type, e.g. "v100".
	Name string `json:"worker_type"`
	// GPU is the gpus.json id of the GPU, e.g. "nvidia-v100-sxm2-16gb".
	GPU string `json:"gpu"`
	// Source says why this GPU.
	Source string `json:"source"`
}

// PriceList is a sourced, dated list of prices per GPU-hour.
type PriceList struct {
	// ID names the list, e.g. "gcp-on-demand".
	ID string `json:"id"`
	// Name is the human-readable name, e.g. "GCP on-demand (2020)".
	Name string `json:"name"`
	// Source says where the prices come from; Date when they held.
	Source string `json:"source"`
	Date   string `json:"date"`
	// DollarsPerGPUHour maps gpus.json ids to the price of one GPU-hour.
	DollarsPerGPUHour map[string]float64 `json:"dollars_per_gpu_hour"`
}

// cloudFile is cloud.json: Gavel's worker types and the price lists.
type cloudFile struct {
	WorkerTypes []WorkerType `json:"gavel_worker_types"`
	PriceLists  []PriceList  `json:"price_lists"`
}

// parseCloud reads a cloud.json and checks that every GPU it names is one
// of gpus, names are unique and prices are finite and > 0. TestGenerated
// runs it to generate embeddedCloud.
func parseCloud(data []byte, gpus []hw.GPU) (cloudFile, error) {
	var f cloudFile
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("cloud: %w", err)
	}
	known := map[string]bool{}
	for _, g := range gpus {
		known[g.ID] = true
	}
	seen := map[string]bool{}
	for i, w := range f.WorkerTypes {
		switch {
		case w.Name == "" || seen[w.Name] || known[w.Name]:
			return f, fmt.Errorf("gavel_worker_types[%d].worker_type: must be a new name, not a gpus.json id, got %q", i, w.Name)
		case !known[w.GPU]:
			return f, fmt.Errorf("gavel_worker_types[%d].gpu: unknown gpus.json id %q", i, w.GPU)
		case w.Source == "":
			return f, fmt.Errorf("gavel_worker_types[%d].source: required", i)
		}
		seen[w.Name] = true
	}
	ids := map[string]bool{}
	for i, p := range f.PriceLists {
		field := fmt.Sprintf("price_lists[%d]", i)
		switch {
		case p.ID == "" || ids[p.ID]:
			return f, fmt.Errorf("%s.id: must be unique, got %q", field, p.ID)
		case p.Name == "" || p.Source == "" || p.Date == "":
			return f, fmt.Errorf("%s (%s): name, source and date are required", field, p.ID)
		}
		ids[p.ID] = true
		for gpu, v := range p.DollarsPerGPUHour {
			if !known[gpu] {
				return f, fmt.Errorf("%s.dollars_per_gpu_hour: unknown gpus.json id %q", field, gpu)
			}
			if !(v > 0) || math.IsInf(v, 0) {
				return f, fmt.Errorf("%s.dollars_per_gpu_hour[%s]: must be a finite price > 0, got %v", field, gpu, v)
			}
		}
	}
	return f, nil
}

// GavelWorkerTypes returns Gavel's worker types (dissertation §5.7), fastest
// first: v100, p100, k80.
func GavelWorkerTypes() []WorkerType { return slices.Clone(embeddedCloud.WorkerTypes) }

// GavelWorkerTypeNames returns the names of GavelWorkerTypes, same order.
func GavelWorkerTypeNames() []string {
	var out []string
	for _, w := range embeddedCloud.WorkerTypes {
		out = append(out, w.Name)
	}
	return out
}

// WorkerTypeGPU returns the gpus.json id a worker type stands for: the GPU
// of one of Gavel's types, or the name itself when it is a gpus.json id
// (any GPU of gpus.json is a worker type named by its id).
func WorkerTypeGPU(name string) (string, error) {
	for _, w := range embeddedCloud.WorkerTypes {
		if w.Name == name {
			return w.GPU, nil
		}
	}
	if _, err := ByID(name); err != nil {
		return "", fmt.Errorf("worker type %q: neither one of Gavel's %v nor a gpus.json id", name, GavelWorkerTypeNames())
	}
	return name, nil
}

// PriceLists returns the price lists, in file order; the first is the default.
func PriceLists() []PriceList {
	lists := embeddedCloud.PriceLists
	out := make([]PriceList, len(lists))
	for i, p := range lists {
		out[i] = p
		out[i].DollarsPerGPUHour = cloneMap(p.DollarsPerGPUHour)
	}
	return out
}

// PriceListByID returns the price list with the given id.
func PriceListByID(id string) (PriceList, error) {
	for _, p := range PriceLists() {
		if p.ID == id {
			return p, nil
		}
	}
	var ids []string
	for _, p := range PriceLists() {
		ids = append(ids, p.ID)
	}
	return PriceList{}, fmt.Errorf("price list %q: unknown; known: %v", id, ids)
}

// DefaultPriceList is the first price list: Gavel's GCP on-demand prices.
func DefaultPriceList() PriceList { return PriceLists()[0] }

// ForWorkerTypes returns the price of one GPU-hour of each worker type
// (see WorkerTypeGPU), or an error naming the first type the list has no
// price for.
func (p PriceList) ForWorkerTypes(types []string) ([]float64, error) {
	out := make([]float64, len(types))
	for j, wt := range types {
		gpu, err := WorkerTypeGPU(wt)
		if err != nil {
			return nil, err
		}
		v, ok := p.DollarsPerGPUHour[gpu]
		if !ok {
			return nil, fmt.Errorf("price list %s: no price for %s (%s)", p.Name, wt, gpu)
		}
		out[j] = v
	}
	return out, nil
}
