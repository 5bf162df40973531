package partition

import (
	"fmt"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// recomputeChoices are the recomputation strategies a search tries, cheapest first.
var recomputeChoices = []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}

// validateFixed checks the degrees the caller fixed; errors name the field.
func (o PTDPOptions) validateFixed(tr model.Transformer, c hw.Cluster) error {
	f, n := o.Fixed, c.GPUs()
	if f.GlobalBatch < 1 {
		return fmt.Errorf("global_batch: must be >= 1, got %d", f.GlobalBatch)
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"tp", f.TP}, {"pp", f.PP}, {"dp", f.DP}, {"microbatch", f.Microbatch}, {"interleave", f.Interleave}} {
		if d.v < 0 {
			return fmt.Errorf("%s: must be >= 1 (or 0 to search), got %d", d.name, d.v)
		}
		if d.v > 0 && d.name != "microbatch" && d.name != "interleave" && n%d.v != 0 {
			return fmt.Errorf("%s: must divide the %d GPUs, got %d", d.name, n, d.v)
		}
	}
	if f.TP > 0 && tr.Heads%f.TP != 0 {
		return fmt.Errorf("tp: must divide the %d attention heads, got %d", tr.Heads, f.TP)
	}
	if f.TP > 0 && f.PP > 0 && n%(f.TP*f.PP) != 0 {
		return fmt.Errorf("pp: tp·pp must divide the %d GPUs, got %d·%d", n, f.TP, f.PP)
	}
	if max(f.PP, 1)*max(f.Interleave, 1) > tr.Layers {
		return fmt.Errorf("pp: pp·interleave must be <= the %d layers, got %d·%d", tr.Layers, max(f.PP, 1), max(f.Interleave, 1))
	}
	if f.Microbatch > 0 && f.GlobalBatch%f.Microbatch != 0 {
		return fmt.Errorf("microbatch: must divide the global batch %d, got %d", f.GlobalBatch, f.Microbatch)
	}
	if f.Recompute != "" {
		if _, err := model.ParseRecompute(string(f.Recompute)); err != nil {
			return err
		}
	}
	return nil
}

// degreePairs lists the (t, p) pairs to search, t then p increasing.
func (o PTDPOptions) degreePairs(tr model.Transformer, c hw.Cluster) [][2]int {
	f, n := o.Fixed, c.GPUs()
	var pairs [][2]int
	for _, t := range divisors(n) {
		switch {
		case tr.Heads%t != 0:
			continue
		case f.TP > 0 && t != f.TP:
			continue
		case f.TP == 0 && !tensorGroupAligned(t, c.GPUsPerNode(), o.AllowCrossNodeTP):
			continue
		}
		for _, p := range divisors(n / t) {
			switch {
			case p > tr.Layers:
				continue
			case f.PP > 0 && p != f.PP:
				continue
			case f.PP == 0 && tr.Layers%p != 0: // an even split, as Megatron-LM requires
				continue
			case f.DP > 0 && t*p*f.DP != n:
				continue
			}
			pairs = append(pairs, [2]int{t, p})
		}
	}
	return pairs
}

// tensorGroupAligned reports whether tensor-parallel groups of t GPUs
// tile the nodes of g GPUs: t divides g (inside a node), or, when allowed,
// g divides t (whole nodes). Other sizes would split groups unevenly
// across node boundaries (t = 6 on 8-GPU nodes).
func tensorGroupAligned(t, g int, crossNode bool) bool {
	return g%t == 0 || (crossNode && t%g == 0)
}

// configsFor lists the configurations of one (t, p): every microbatch size
// b dividing B/d, every interleaving v, every recomputation strategy.
func (o PTDPOptions) configsFor(tr model.Transformer, n, t, p int) []cost.Config {
	f := o.Fixed
	d := n / (t * p)
	if f.GlobalBatch%d != 0 {
		return nil
	}
	perPipeline := f.GlobalBatch / d
	var out []cost.Config
	for _, b := range divisors(perPipeline) {
		if f.Microbatch > 0 && b != f.Microbatch {
			continue
		}
		m := perPipeline / b
		for v := 1; v*p <= tr.Layers; v++ {
			if !o.interleaveOK(tr, p, m, v) {
				continue
			}
			rs := recomputeChoices
			if f.Recompute != "" {
				rs = []model.Recompute{f.Recompute}
			}
			for _, r := range rs {
				cfg := f
				cfg.TP, cfg.PP, cfg.DP, cfg.Microbatch, cfg.Interleave, cfg.Recompute = t, p, d, b, v, r
				out = append(out, cfg)
			}
		}
	}
	return out
}

// interleaveOK reports whether v model chunks per device are allowed: the
// fixed value if one is given, else v = 1, or v > 1 with p > 1 stages,
// m a multiple of p (§4.2.2) and the layers split evenly over p·v chunks.
func (o PTDPOptions) interleaveOK(tr model.Transformer, p, m, v int) bool {
	f := o.Fixed
	if f.Interleave > 0 {
		return v == f.Interleave && (v == 1 || (p > 1 && m%p == 0))
	}
	if v == 1 {
		return true
	}
	if f.Schedule != "" && f.Schedule != cost.ScheduleInterleaved {
		return false
	}
	return p > 1 && m%p == 0 && tr.Layers%(p*v) == 0
}

// divisors returns the divisors of n >= 1 in increasing order.
func divisors(n int) []int {
	var low, high []int
	for k := 1; k*k <= n; k++ {
		if n%k == 0 {
			low = append(low, k)
			if k != n/k {
				high = append(high, n/k)
			}
		}
	}
	for i := len(high) - 1; i >= 0; i-- {
		low = append(low, high[i])
	}
	return low
}
