package gavel

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ExtraJobType is a job type outside Gavel's measurements, e.g. a model
// whose throughputs the planner predicted: it runs at one scale factor and
// co-locates with no other job.
type ExtraJobType struct {
	// Model names the type; it must not be a model of the table.
	Model string
	// ScaleFactor is the number of GPUs the job uses.
	ScaleFactor int
	// Isolated[wt] is its steps/s alone on ScaleFactor GPUs of worker type
	// wt, consolidated; a worker type left out gets 0 (cannot run there).
	Isolated map[string]float64
	// Unconsolidated[wt], optional, is its steps/s with its GPUs on separate
	// servers (the table's wt+UnconsolidatedSuffix type); where left out,
	// Placed falls back on the consolidated value.
	Unconsolidated map[string]float64
}

// WithJobTypes returns a copy of t with the extra job types added (t itself,
// possibly the shared DefaultThroughputs, is not changed). Extra types
// co-locate with nothing: every pair with them has a [0, 0] entry, so space
// sharing (PairsFromTable) skips them (§5.3.1). Errors name the field and
// value: an empty or clashing model, a scale factor below 1, an unknown
// worker type or a throughput that is negative or not finite.
func (t *ThroughputTable) WithJobTypes(extra []ExtraJobType) (*ThroughputTable, error) {
	if err := t.checkExtra(extra); err != nil {
		return nil, err
	}
	out := &ThroughputTable{
		workerTypes: slices.Clone(t.workerTypes),
		isolated:    map[string]map[JobKey]float64{},
		colocated:   map[string]map[[2]JobKey][2]float64{},
	}
	for wt, iso := range t.isolated {
		out.isolated[wt] = maps.Clone(iso)
	}
	for wt, col := range t.colocated {
		out.colocated[wt] = maps.Clone(col)
	}
	base := t.baseWorkerTypes()
	keys := make([]JobKey, len(extra))
	for i, e := range extra {
		keys[i] = JobKey{Model: e.Model, ScaleFactor: e.ScaleFactor}
		for _, wt := range base {
			out.isolated[wt][keys[i]] = e.Isolated[wt]
			if v, ok := e.Unconsolidated[wt]; ok {
				out.isolated[wt+UnconsolidatedSuffix][keys[i]] = v
			}
		}
	}
	for wt, col := range out.colocated {
		for _, k := range keys {
			for other := range out.isolated[wt] {
				zeroPair(col, k, other)
			}
			for _, other := range keys {
				zeroPair(col, k, other)
			}
		}
	}
	return out, nil
}

// zeroPair records that job types a and b cannot share GPUs, if their scale
// factors are equal (pairs of unequal ones are never looked up).
func zeroPair(col map[[2]JobKey][2]float64, a, b JobKey) {
	if a.ScaleFactor == b.ScaleFactor {
		col[[2]JobKey{a, b}] = [2]float64{}
		col[[2]JobKey{b, a}] = [2]float64{}
	}
}

// checkExtra validates extra job types against t.
func (t *ThroughputTable) checkExtra(extra []ExtraJobType) error {
	models := map[string]bool{}
	for _, iso := range t.isolated {
		for k := range iso {
			models[k.Model] = true
		}
	}
	base := t.baseWorkerTypes()
	seen := map[JobKey]bool{}
	for i, e := range extra {
		field := fmt.Sprintf("throughputs: extra[%d]", i)
		k := JobKey{Model: e.Model, ScaleFactor: e.ScaleFactor}
		switch {
		case e.Model == "":
			return fmt.Errorf("%s.model: must not be empty", field)
		case models[e.Model]:
			return fmt.Errorf("%s.model: %q clashes with a job type of the table", field, e.Model)
		case e.ScaleFactor < 1:
			return fmt.Errorf("%s.scale_factor: must be >= 1, got %d", field, e.ScaleFactor)
		case seen[k]:
			return fmt.Errorf("%s: duplicate job type %s", field, k)
		}
		seen[k] = true
		for _, wt := range slices.Sorted(maps.Keys(e.Isolated)) {
			if !slices.Contains(base, wt) {
				return fmt.Errorf("%s.isolated: unknown worker type %q (known: %v)", field, wt, base)
			}
			if err := checkThroughput(fmt.Sprintf("extra[%d].isolated[%s]", i, wt), e.Isolated[wt]); err != nil {
				return err
			}
		}
		for _, wt := range slices.Sorted(maps.Keys(e.Unconsolidated)) {
			if _, ok := t.isolated[wt+UnconsolidatedSuffix]; !ok || strings.HasSuffix(wt, UnconsolidatedSuffix) {
				return fmt.Errorf("%s.unconsolidated: worker type %q has no %s variant in the table", field, wt, UnconsolidatedSuffix)
			}
			if err := checkThroughput(fmt.Sprintf("extra[%d].unconsolidated[%s]", i, wt), e.Unconsolidated[wt]); err != nil {
				return err
			}
		}
	}
	return nil
}

// baseWorkerTypes returns t's worker types without the unconsolidated variants.
func (t *ThroughputTable) baseWorkerTypes() []string {
	var out []string
	for _, wt := range t.workerTypes {
		if !strings.HasSuffix(wt, UnconsolidatedSuffix) {
			out = append(out, wt)
		}
	}
	return out
}
