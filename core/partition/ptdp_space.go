package partition

import (
	"fmt"
	"iter"

	"pipeplan/core/cost"
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
	}{{"tp", f.TP}, {"pp", f.PP}, {"dp", f.DP}, {"cp", f.CP}, {"ep", f.EP}, {"microbatch", f.MicrobatchSize}, {"interleave", f.Interleave}} {
		if d.v < 0 {
			return fmt.Errorf("%s: must be >= 1 (or 0 to search), got %d", d.name, d.v)
		}
		if d.v > 0 && d.name != "microbatch" && d.name != "interleave" && n%d.v != 0 {
			return fmt.Errorf("%s: must divide the %d GPUs, got %d", d.name, n, d.v)
		}
	}
	if err := plan.CheckCPComm(f.CPComm); err != nil {
		return fmt.Errorf("cp_comm: %w", err)
	}
	if f.EP > 1 && tr.MoE == nil {
		return fmt.Errorf("ep: expert parallelism needs a mixture-of-experts model, got %d", f.EP)
	}
	if f.EP > 1 && tr.MoE.Experts%f.EP != 0 {
		return fmt.Errorf("ep: must divide the %d experts, got %d", tr.MoE.Experts, f.EP)
	}
	if f.ETP < 0 || f.ETP > plan.MaxDegree {
		return fmt.Errorf("etp: must be 1 to %d (or 0 for the default), got %d", plan.MaxDegree, f.ETP)
	}
	if f.ETP > 0 && tr.MoE == nil {
		return fmt.Errorf("etp: expert tensor parallelism needs a mixture-of-experts model, got %d", f.ETP)
	}
	if f.ETP > 0 && tr.ExpertFFN()%f.ETP != 0 {
		return fmt.Errorf("etp: must divide each expert's inner size %d, got %d", tr.ExpertFFN(), f.ETP)
	}
	if f.ETP > 0 && n%f.ETP != 0 {
		return fmt.Errorf("etp: must divide the %d GPUs, got %d", n, f.ETP)
	}
	if f.TP > 0 && tr.Heads%f.TP != 0 {
		return fmt.Errorf("tp: must divide the %d attention heads, got %d", tr.Heads, f.TP)
	}
	if f.TP > 0 && f.PP > 0 && n%(f.TP*f.PP) != 0 {
		return fmt.Errorf("pp: tp·pp must divide the %d GPUs, got %d·%d", n, f.TP, f.PP)
	}
	if chunks := o.chunks(max(f.Interleave, 1)); max(f.PP, 1)*chunks > cost.MaxChunks(tr.Layers) {
		return fmt.Errorf("pp: pp × %d chunks per device must be <= the %d layers + 2 (chunks holding only the embedding or the output layer), got %d·%d", chunks, tr.Layers, max(f.PP, 1), chunks)
	}
	if f.MicrobatchSize > 0 && f.GlobalBatch%f.MicrobatchSize != 0 {
		return fmt.Errorf("microbatch: must divide the global batch %d, got %d", f.GlobalBatch, f.MicrobatchSize)
	}
	if f.Recompute != "" {
		if _, err := model.ParseRecompute(string(f.Recompute)); err != nil {
			return err
		}
	}
	if n := f.RecomputeLayers; n != 0 && (n < 0 || n > tr.Layers || f.Recompute != model.RecomputeFull) {
		return fmt.Errorf("recompute_layers: must be 1 to the %d layers, with recompute %q, or 0 (every layer); got %d with recompute %q", tr.Layers, model.RecomputeFull, n, f.Recompute)
	}
	if f.RecomputeModules != "" {
		if f.Recompute != model.RecomputeSelective {
			return fmt.Errorf("recompute_modules: %q need recompute %q, got recompute %q", f.RecomputeModules, model.RecomputeSelective, f.Recompute)
		}
		modules, err := model.ParseRecomputeModules(f.RecomputeModules)
		if err != nil {
			return err
		}
		if err := tr.CheckRecomputeModules(modules); err != nil {
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
			case p > tr.Layers || p*o.chunks(1) > cost.MaxChunks(tr.Layers):
				continue
			case f.PP > 0 && p != f.PP:
				continue
			// p need not divide the layers: the first stages take one
			// layer more (uneven splits, as Megatron-LM and Llama 3 allow).
			case f.DP > 0 && (n/(t*p))%f.DP != 0:
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

// Bounds of the searched context- and expert-parallel degrees and of the
// interleaving when p does not divide the layers.
const (
	// MaxSearchedCP is the largest context-parallel size a search tries; it
	// tries cp > 1 only for sequences of at least MinSeqForCP tokens.
	MaxSearchedCP = 16
	// MinSeqForCP is the shortest sequence a search splits with cp > 1.
	MinSeqForCP = 8192
	// MaxSearchedEP is the largest expert-parallel size a search tries.
	MaxSearchedEP = 64
	// MaxUnevenInterleave is the largest v a search tries when p does not
	// divide the layers (the first chunks then take one layer more).
	MaxUnevenInterleave = 8
)

// chains yields the configurations of one (t, p) in chains, one per
// context-parallel size cp and communication type (cpComms), expert-parallel size ep, interleaving v and
// recomputation strategy, each over the microbatch sizes b dividing B/d in
// increasing order (d = n/(t·p·cp)). Memory never decreases along a chain
// (stashed activations grow with b; m·b is fixed), so a search may stop a
// chain at its first configuration that does not fit. Every chain is
// yielded in one buffer, valid until the next.
func (o PTDPOptions) chains(tr model.Transformer, n, t, p int) iter.Seq[[]plan.Execution] {
	return func(yield func([]plan.Execution) bool) {
		f := o.Fixed
		rs := recomputeChoices
		if f.Recompute != "" {
			rs = []model.Recompute{f.Recompute}
		}
		vs := o.interleaves(tr, p)
		var chain []plan.Execution
		for _, cp := range o.contextSizes(tr, n/(t*p)) {
			d := n / (t * p * cp)
			// d past plan.MaxDegree is no valid execution (65,536 GPUs at
			// t = p = 1 and B = 2^20 would be d = 65,536).
			if d > plan.MaxDegree || f.GlobalBatch%d != 0 || (f.DP > 0 && d != f.DP) {
				continue
			}
			perPipeline := f.GlobalBatch / d
			bs := divisors(perPipeline)
			for _, comm := range o.cpComms(tr, t, cp) {
				for _, ep := range o.expertSizes(tr, t*cp*d) {
					for _, etp := range o.expertTPs(t*cp*d, ep) {
						for _, v := range vs {
							for _, r := range rs {
								chain = chain[:0]
								for _, b := range bs {
									if (f.MicrobatchSize > 0 && b != f.MicrobatchSize) || !interleaveOK(p, perPipeline/b, v) || !o.simulable(p, perPipeline/b) {
										continue
									}
									cfg := f
									cfg.TP, cfg.PP, cfg.DP, cfg.CP, cfg.CPComm, cfg.EP, cfg.ETP, cfg.MicrobatchSize, cfg.Interleave, cfg.Recompute = t, p, d, cp, comm, ep, etp, b, v, r
									chain = append(chain, cfg)
								}
								if len(chain) > 0 && !yield(chain) {
									return
								}
							}
						}
					}
				}
			}
		}
	}
}

// cpComms lists the context-parallel communication types to try with t
// tensor- and cp context-parallel ranks: with SearchCPComm and cp > 1 the
// ring and the all-to-alls where t·cp splits the heads and K/V heads (not
// the all-gather, which the ring dominates: PTDPOptions.SearchCPComm);
// with cp = 1 none is used ("" when searched); otherwise the fixed one,
// none when it cannot run (a2a: t·cp does not divide the heads).
func (o PTDPOptions) cpComms(tr model.Transformer, t, cp int) []string {
	if o.SearchCPComm && cp == 1 {
		return []string{""}
	}
	comms := []string{o.Fixed.CPComm}
	if o.SearchCPComm {
		comms = []string{plan.CPCommP2P, plan.CPCommA2A}
	}
	out := comms[:0:0]
	for _, comm := range comms {
		if cost.CheckCPComm(tr, plan.Execution{TP: t, CP: cp, CPComm: comm}) == nil {
			out = append(out, comm)
		}
	}
	return out
}

// contextSizes lists the context-parallel sizes to try with rest = n/(t·p)
// GPUs per pipeline stage: the fixed one where it divides rest (none
// otherwise: those candidates are skipped), or 1 and, for sequences of at
// least MinSeqForCP tokens, the powers of two up to MaxSearchedCP that
// divide rest and split the sequence into 2·cp load-balanced chunks.
func (o PTDPOptions) contextSizes(tr model.Transformer, rest int) []int {
	if f := o.Fixed.CP; f > 0 {
		if rest%f != 0 {
			return nil
		}
		return []int{f}
	}
	cps := []int{1}
	if tr.Seq < MinSeqForCP {
		return cps
	}
	for cp := 2; cp <= MaxSearchedCP && rest%cp == 0 && tr.Seq%(2*cp) == 0; cp *= 2 {
		cps = append(cps, cp)
	}
	return cps
}

// expertSizes lists the expert-parallel sizes to try: the fixed one where
// the t·cp·d ranks of a stage can host it (none otherwise: those
// candidates are skipped), 1 for a dense model, else the powers of two up
// to MaxSearchedEP dividing the experts and the ranks (MoE parallel
// folding; see cost's expert grid), ep = 1 included.
func (o PTDPOptions) expertSizes(tr model.Transformer, ranks int) []int {
	if f := o.Fixed.EP; f > 0 {
		if ranks%f != 0 {
			return nil
		}
		return []int{f}
	}
	eps := []int{1}
	if tr.MoE == nil {
		return eps
	}
	for ep := 2; ep <= MaxSearchedEP && tr.MoE.Experts%ep == 0 && ranks%ep == 0; ep *= 2 {
		eps = append(eps, ep)
	}
	return eps
}

// expertTPs lists the expert-tensor-parallel sizes to try with ranks =
// t·cp·d and expert parallelism ep: the fixed one where etp·ep divides the
// ranks (none otherwise), else only the default (0:
// plan.Execution.ExpertTP, each expert whole on its rank with expert
// parallelism, as Megatron-Bridge's MoE recipes run). Searching etp = t
// as well doubled the candidates of every MoE search with t > 1 and put
// the presets' default searches past MaxWork; pinned, any etp is costed.
func (o PTDPOptions) expertTPs(ranks, ep int) []int {
	if f := o.Fixed.ETP; f > 0 {
		if ranks%(f*ep) != 0 {
			return nil
		}
		return []int{f}
	}
	return []int{0}
}

// interleaves lists the numbers of model chunks per device v to try with p
// stages: the fixed value; v = 1 when the schedule is not the interleaved
// one; every v splitting the layers evenly over p·v chunks when p divides
// them; otherwise v up to MaxUnevenInterleave with p·v ≤
// cost.MaxChunks(layers) (uneven chunks: those at the ends take one layer
// fewer, or only the embedding or the output layer, as Megatron-LM allows).
func (o PTDPOptions) interleaves(tr model.Transformer, p int) []int {
	f := o.Fixed
	switch {
	case f.Interleave > 0:
		return []int{f.Interleave}
	case f.Schedule != "" && f.Schedule != schedule.Interleaved:
		return []int{1}
	case tr.Layers%p == 0:
		return divisors(tr.Layers / p)
	}
	var vs []int
	for v := 1; v <= MaxUnevenInterleave && p*v <= cost.MaxChunks(tr.Layers); v++ {
		vs = append(vs, v)
	}
	return vs
}

// chunks returns the model chunks per device of the fixed schedule with
// interleave v (plan.Execution.Chunks).
func (o PTDPOptions) chunks(v int) int {
	f := o.Fixed
	f.Interleave = v
	return f.Chunks()
}

// simulable reports whether the fixed schedule runs m microbatches on p
// stages (dualpipe-v: at least 2p, schedule.KindInfo.MinMicrobatches) and,
// where it is V-shaped, whether they are within what the cost model
// simulates (cost.MaxSimulatedStageMicrobatches); other schedules are not
// simulated.
func (o PTDPOptions) simulable(p, m int) bool {
	kind, err := o.Fixed.Schedule.Info()
	return err != nil || (m >= kind.MinMicrobatches(p) && (!kind.VShaped || cost.Simulable(p, m)))
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

// noCandidateError explains a search of the given (t, p) pairs that had no
// configuration to evaluate: when freeing the pinned expert-,
// expert-tensor- or context-parallel size would have left some, it names that field and
// value (no searched tp, pp and dp hosts it), or the global batch where
// the schedule needs more microbatches (dualpipe-v); otherwise it lists the
// constraints the fixed choices failed together.
func (o PTDPOptions) noCandidateError(tr model.Transformer, c hw.Cluster, pairs [][2]int) error {
	hosts := func(free PTDPOptions) bool {
		for _, tp := range pairs {
			for range free.chains(tr, c.GPUs(), tp[0], tp[1]) {
				return true
			}
		}
		return false
	}
	f := o.Fixed
	if f.EP > 1 {
		free := o
		free.Fixed.EP = 0
		if hosts(free) {
			return fmt.Errorf("ep: no searched tp, pp and dp can host the pinned expert-parallel size: it must divide tp·cp·dp, got %d", f.EP)
		}
	}
	if f.ETP > 1 {
		free := o
		free.Fixed.ETP = 0
		if hosts(free) {
			return fmt.Errorf("etp: no searched tp, pp and dp can host the pinned expert-tensor-parallel size: etp·ep must divide tp·cp·dp, got etp %d", f.ETP)
		}
	}
	if f.CP > 1 {
		free := o
		free.Fixed.CP = 0
		if hosts(free) {
			return fmt.Errorf("cp: no searched tp, pp and dp can host the pinned context-parallel size: it must divide the %d GPUs over tp·pp, got %d", c.GPUs(), f.CP)
		}
	}
	if kind, err := f.Schedule.Info(); err == nil && kind.MinMicrobatchesPerDevice > 1 {
		free := o
		free.Fixed.Schedule = ""
		if hosts(free) {
			need := fmt.Sprintf("%d per pipeline device × pp", kind.MinMicrobatchesPerDevice)
			if f.PP > 0 {
				need = fmt.Sprintf("%d microbatches a step (%s %d)", kind.MinMicrobatches(f.PP), need, f.PP)
			}
			return fmt.Errorf("global_batch: %s needs at least %s, which the global batch %d gives under no searched configuration; raise the global batch or pin a smaller pp", f.Schedule, need, f.GlobalBatch)
		}
	}
	return fmt.Errorf("config: no (tp, pp, dp, microbatch, interleave) with tp·pp·dp = %d GPUs, the global batch %d a multiple of dp·microbatch, dp at most %d and at most %d pipeline stages (one per layer) satisfies the fixed choices",
		c.GPUs(), f.GlobalBatch, plan.MaxDegree, tr.Layers)
}
