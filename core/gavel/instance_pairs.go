package gavel

import (
	"encoding/json"
	"fmt"
)

// ParsePairs decodes a *.pairs.json file of Gavel's LP instances
// ({"worker_types": [...], "pairs": [[a, b, [[tput_a, tput_b] per worker type]], ...]},
// a and b being job ids of inst) into inst.Pairs, whose A and B are indices
// into inst.Jobs. The worker types must match the instance's.
func ParsePairs(data []byte, inst *Instance) error {
	var raw struct {
		WorkerTypes []string            `json:"worker_types"`
		Pairs       [][]json.RawMessage `json:"pairs"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("pairs: %w", err)
	}
	if len(raw.WorkerTypes) != len(inst.WorkerTypes) {
		return fmt.Errorf("pairs.worker_types: must equal the instance's %v, got %v", inst.WorkerTypes, raw.WorkerTypes)
	}
	for j, w := range raw.WorkerTypes {
		if w != inst.WorkerTypes[j] {
			return fmt.Errorf("pairs.worker_types[%d]: must be %q as in the instance, got %q", j, inst.WorkerTypes[j], w)
		}
	}
	index := make(map[int]int, len(inst.Jobs))
	for i, job := range inst.Jobs {
		index[job.ID] = i
	}
	pairs := make([]Pair, len(raw.Pairs))
	for p, entry := range raw.Pairs {
		if len(entry) != 3 {
			return fmt.Errorf("pairs.pairs[%d]: must be [a, b, throughputs], got %d elements", p, len(entry))
		}
		var ids [2]int
		for s := range ids {
			if err := json.Unmarshal(entry[s], &ids[s]); err != nil {
				return fmt.Errorf("pairs.pairs[%d][%d]: job id: %w", p, s, err)
			}
		}
		a, okA := index[ids[0]]
		b, okB := index[ids[1]]
		if !okA || !okB {
			return fmt.Errorf("pairs.pairs[%d]: unknown job id in (%d, %d)", p, ids[0], ids[1])
		}
		pairs[p] = Pair{A: a, B: b}
		if err := json.Unmarshal(entry[2], &pairs[p].Throughputs); err != nil {
			return fmt.Errorf("pairs.pairs[%d][2]: throughputs: %w", p, err)
		}
	}
	old := inst.Pairs
	inst.Pairs = pairs
	if err := validatePairs(inst); err != nil {
		inst.Pairs = old
		return err
	}
	return nil
}

// PairsFromTable builds inst.Pairs for space sharing from a throughput
// table's co-located entries: every pair of jobs a < b with equal scale
// factors and a non-zero entry on some worker type (the construction of
// Gavel's *.pairs.json instances). Jobs need their JobType.
func PairsFromTable(inst *Instance, tt *ThroughputTable) error {
	var pairs []Pair
	for a := range inst.Jobs {
		ka := JobKey{Model: inst.Jobs[a].JobType, ScaleFactor: inst.Jobs[a].ScaleFactor}
		for b := a + 1; b < len(inst.Jobs); b++ {
			kb := JobKey{Model: inst.Jobs[b].JobType, ScaleFactor: inst.Jobs[b].ScaleFactor}
			if ka.ScaleFactor != kb.ScaleFactor {
				continue
			}
			p := Pair{A: a, B: b, Throughputs: make([][2]float64, len(inst.WorkerTypes))}
			nonzero := false
			for j, w := range inst.WorkerTypes {
				v, err := tt.Colocated(w, ka, kb)
				if err != nil {
					return fmt.Errorf("jobs %d and %d: %w", a, b, err)
				}
				p.Throughputs[j] = v
				nonzero = nonzero || v[0] > 0 || v[1] > 0
			}
			if nonzero {
				pairs = append(pairs, p)
			}
		}
	}
	old := inst.Pairs
	inst.Pairs = pairs
	if err := validatePairs(inst); err != nil {
		inst.Pairs = old
		return err
	}
	return nil
}
