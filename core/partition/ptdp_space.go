package partition

import (
	"fmt"

	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/core/schedule"
)

// MaxGlobalBatch bounds the global batch size (in samples) the planners
// accept, so that enumerating its divisors stays cheap.
const MaxGlobalBatch = 1 << 24

// recomputeChoices are the recomputation strategies a search tries, cheapest first.
var recomputeChoices = []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull}

// validateFixed checks the degrees the caller fixed; errors name the field.
func (o PTDPOptions) validateFixed(tr model.Transformer, c hw.Cluster) error {
	f, n := o.Fixed, c.GPUs()
	if f.GlobalBatch < 1 || f.GlobalBatch > MaxGlobalBatch {
		return fmt.Errorf("global_batch: must be in [1, %d], got %d", MaxGlobalBatch, f.GlobalBatch)
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"tp", f.TP}, {"pp", f.PP}, {"dp", f.DP}, {"microbatch", f.MicrobatchSize}, {"interleave", f.Interleave}} {
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
	if f.MicrobatchSize > 0 && f.GlobalBatch%f.MicrobatchSize != 0 {
		return fmt.Errorf("microbatch: must divide the global batch %d, got %d", f.GlobalBatch, f.MicrobatchSize)
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
			// p need not divide the layers: the first stages take one
			// layer more (uneven splits, as Megatron-LM and Llama 3 allow).
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

// chainsFor lists the configurations of one (t, p) in chains, one per
// interleaving v and recomputation strategy, each over the microbatch sizes
// b dividing B/d in increasing order. Memory never decreases along a chain
// (stashed activations grow with b; m·b is fixed), so a search may stop a
// chain at its first configuration that does not fit.
func (o PTDPOptions) chainsFor(tr model.Transformer, n, t, p int) [][]plan.Execution {
	f := o.Fixed
	d := n / (t * p)
	if f.GlobalBatch%d != 0 {
		return nil
	}
	perPipeline := f.GlobalBatch / d
	rs := recomputeChoices
	if f.Recompute != "" {
		rs = []model.Recompute{f.Recompute}
	}
	var chains [][]plan.Execution
	for _, v := range o.interleaves(tr, p) {
		for _, r := range rs {
			var chain []plan.Execution
			for _, b := range divisors(perPipeline) {
				if (f.MicrobatchSize > 0 && b != f.MicrobatchSize) || !interleaveOK(p, perPipeline/b, v) {
					continue
				}
				cfg := f
				cfg.TP, cfg.PP, cfg.DP, cfg.MicrobatchSize, cfg.Interleave, cfg.Recompute = t, p, d, b, v, r
				chain = append(chain, cfg)
			}
			if len(chain) > 0 {
				chains = append(chains, chain)
			}
		}
	}
	return chains
}

// interleaves lists the numbers of model chunks per device v to try with p
// stages: the fixed value, or every v splitting the layers evenly over p·v
// chunks (only v = 1 when p does not divide the layers or the schedule is
// not the interleaved one).
func (o PTDPOptions) interleaves(tr model.Transformer, p int) []int {
	f := o.Fixed
	switch {
	case f.Interleave > 0:
		return []int{f.Interleave}
	case tr.Layers%p != 0 || (f.Schedule != "" && f.Schedule != schedule.Interleaved):
		return []int{1}
	}
	return divisors(tr.Layers / p)
}

// interleaveOK reports whether v > 1 chunks per device may be used with p
// stages and m microbatches: p > 1 and m a multiple of p (§4.2.2).
func interleaveOK(p, m, v int) bool {
	return v == 1 || (p > 1 && m%p == 0)
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
