package gavel

// withoutDominatedPairs returns inst, or a shallow copy of it whose pairs
// run on no worker type where space sharing is worth less than time
// sharing: pair p = (A, B) with throughputs (a, b) on type j is dropped
// there (its throughputs set to 0, so the LP has no variable for it) when
// a/t[A][j] + b/t[B][j] <= 1.
//
// That is exact for max-min fairness (the max-min level and the Pareto
// optimum stay the same). Replace the pair's time y on j by time y*a/t[A][j]
// for A alone on j and y*b/t[B][j] for B alone on j (both variables exist:
// t > 0 there, and the pair's scale factor, shared by A and B, fits j).
// Then A's throughput on j stays y*a and B's y*b, so every throughput row
// and the Pareto objective keep their values; A's time drops from y to
// y*a/t[A][j] <= y (b >= 0), B's likewise, so the time rows still hold;
// the GPUs used on j drop from sf*y to sf*y*(a/t[A][j] + b/t[B][j]) <= sf*y,
// so the capacity rows still hold. Instances with consolidated caps
// (withPlacements) are returned as they are: those rows count the jobs'
// own variables but not the pairs', so the replacement could break them.
func withoutDominatedPairs(inst *Instance, t [][]float64) *Instance {
	if len(inst.consolidatedCaps) > 0 {
		return inst
	}
	dominated := func(pair Pair, j int) bool {
		a, b := pair.Throughputs[j][0], pair.Throughputs[j][1]
		ta, tb := t[pair.A][j], t[pair.B][j]
		return a > 0 && b > 0 && ta > 0 && tb > 0 && a/ta+b/tb <= 1
	}
	var pairs []Pair
	for p, pair := range inst.Pairs {
		copied := false
		for j := range pair.Throughputs {
			if !dominated(pair, j) {
				continue
			}
			if pairs == nil {
				pairs = append([]Pair(nil), inst.Pairs...)
			}
			if !copied {
				pairs[p].Throughputs, copied = append([][2]float64(nil), pair.Throughputs...), true
			}
			pairs[p].Throughputs[j] = [2]float64{}
		}
	}
	if pairs == nil {
		return inst
	}
	out := *inst
	out.Pairs = pairs
	return &out
}
