package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// PTDPOptions fix part of a PTD-P configuration and leave the rest to the
// search.
type PTDPOptions struct {
	// Fixed holds the execution choices. TP, PP, DP, CP, EP, ETP,
	// MicrobatchSize and Interleave left 0, and Recompute left "" (none,
	// selective, or full on as few layers of each chunk as fit), are
	// searched (CP and EP within MaxSearchedCP and MaxSearchedEP; ETP
	// left 0 is the default, not searched: expertTPs); GlobalBatch must be set; the
	// other fields (SequenceParallel, ScatterGather, FlashAttention,
	// Optimizer, ZeRO, Overlap, Schedule) apply to every candidate as given,
	// ZeRO unless SearchZeRO.
	Fixed plan.Execution
	// SearchZeRO makes the ZeRO stage a searched choice (EvaluatePTDPZeRO):
	// each configuration with d·cp > 1 runs Megatron-LM's distributed
	// optimizer (ZeRO-1) or, where that does not fit, the faster of ZeRO-2
	// and FSDP (ZeRO-3) that fits; with one replica there is nothing to
	// shard and Fixed.ZeRO is kept. A configuration that fits only with
	// full recomputation is also tried at each higher stage with the
	// fewest recomputed layers that fit there (fewestRecomputed).
	SearchZeRO bool
	// SearchCPComm makes context parallelism's communication type a
	// searched choice (Fixed.CPComm ignored): each configuration with
	// cp > 1 is tried with the ring (p2p) and, where t·cp splits the heads
	// and K/V heads (cost.CheckCPComm), the all-to-alls (a2a). The
	// all-gather is not tried: the cost model never makes it faster or
	// smaller than the ring (cost's TestRingDominatesAllGather), so it
	// cannot be the best; pin it to see it. With cp = 1 there is nothing
	// to exchange and CPComm stays "". Otherwise Fixed.CPComm applies to
	// every candidate ("" is p2p).
	SearchCPComm bool
	// AllowCrossNodeTP lets a searched tensor-parallel size span whole
	// nodes; by default t stays inside a server (§4.3.2, takeaway #1).
	AllowCrossNodeTP bool
	// Cost holds the system-side model constants of every prediction.
	Cost cost.Options
	// MaxWork bounds the search's work in layer predictions (SearchWork):
	// past it the search stops with an error wrapping ErrSearchTooLarge;
	// 0 leaves it unbounded.
	MaxWork float64
	// Keep bounds the result: the Keep fastest candidates and the Keep
	// smallest that do not fit, in the order and with the predictions the
	// whole lists would have (0 keeps every one). A bounded search holds
	// no more candidates than that, whatever the space's size, and
	// predicts the time of a configuration that does not fit only if it
	// is kept (cost.Predictor.PredictIfFits).
	Keep int
}

// ErrSearchTooLarge is the error a search past PTDPOptions.MaxWork wraps.
var ErrSearchTooLarge = errors.New("the PTD-P search is over its work limit")

// MoELayerWork is what a prediction of a mixture-of-experts layer costs
// relative to a dense one (its router, permutation and per-expert GEMMs):
// per layer, about 10 µs against 2–5 µs for a dense layer, measured on
// Qwen3 235B-A22B, a 1,024-expert model and dense GPTs on a loaded 2-core
// machine; 5 errs towards the MoE side.
const MoELayerWork = 5

// SearchWork is the work of one prediction of tr in layer predictions: its
// dense layers plus MoELayerWork per mixture-of-experts layer.
func SearchWork(tr model.Transformer) float64 {
	moe := tr.MoELayers()
	return float64(tr.Layers-moe) + MoELayerWork*float64(moe)
}

// PTDPCandidate is one evaluated PTD-P configuration.
type PTDPCandidate struct {
	// Config is the configuration, every degree filled in.
	Config plan.Execution `json:"config"`
	// Prediction is its predicted time and memory. Its StageMemory is left
	// out to keep searches small: cost.Predict the chosen one for it.
	Prediction cost.Prediction `json:"prediction"`
	// Fits reports whether the most loaded GPU's memory fits its capacity.
	Fits bool `json:"fits"`
	// Reason says why a candidate does not fit, e.g.
	// "needs 93.2 GiB (88.2 GiB + 5.0 GiB reserve) > 80.0 GiB"; "" when it fits.
	Reason string `json:"reason,omitempty"`
}

// PTDPResult is the outcome of a PTD-P search.
type PTDPResult struct {
	// Candidates are the configurations that fit, fastest first.
	Candidates []PTDPCandidate `json:"candidates"`
	// Infeasible are configurations that do not fit in memory, the smallest
	// footprint first: for each (t, p, v, recompute), its smallest failing
	// microbatch size.
	Infeasible []PTDPCandidate `json:"infeasible"`
	// Feasible and Evaluated count the configurations that fit and all
	// those evaluated, whether PTDPOptions.Keep kept them or not.
	Feasible  int `json:"feasible"`
	Evaluated int `json:"evaluated"`
}

// SearchPTDP enumerates every PTD-P configuration (t, p, d, b, v,
// recompute) of dissertation §4.3, with context (cp) and expert (ep)
// parallelism, with SearchCPComm the context-parallel communication type
// and, with SearchZeRO, the ZeRO stage, with t·cp·p·d = N for transformer tr on
// cluster c, predicts each with cost.Predict, and ranks them. Searched
// degrees follow Megatron-LM's rules: t divides the heads and the GPUs of a
// node (or, when allowed, is a multiple of them), p need not divide the
// layers (the first stages then take one more), b divides B/d, and
// interleaving (v > 1) needs p dividing the layers, p > 1 and m a multiple
// of p (§4.2.2). Microbatch sizes larger than one that does not
// fit are skipped: they need more memory still. When no candidate fits the
// error reports the smallest memory one would need. progress, if not nil,
// counts the (t, p) pairs done.
func SearchPTDP(ctx context.Context, tr model.Transformer, c hw.Cluster, opt PTDPOptions, progress Progress) (PTDPResult, error) {
	if err := tr.Validate(); err != nil {
		return PTDPResult{}, err
	}
	if err := c.Validate(); err != nil {
		return PTDPResult{}, err
	}
	if err := opt.validateFixed(tr, c); err != nil {
		return PTDPResult{}, err
	}
	pairs := opt.degreePairs(tr, c)
	pred, err := cost.NewPredictor(tr, c, opt.Cost)
	if err != nil {
		return PTDPResult{}, err
	}
	predict := pred.PredictPeak
	if opt.Keep > 0 {
		predict = pred.PredictIfFits
	}
	var res PTDPResult
	predictions, work := 0, SearchWork(tr)
	// plain is the latest chain without recomputation (its configuration,
	// microbatch 0) and the largest microbatch of it that fit: the chains
	// of one configuration come none, selective, full.
	var plain struct {
		chain plan.Execution
		fit   int
	}
	for i, tp := range pairs {
		if err := ctx.Err(); err != nil {
			return PTDPResult{}, err
		}
		// One pair's chains at a time: a request's whole space may be far
		// larger than the work limit lets the search go.
		for chain := range opt.chains(tr, c.GPUs(), tp[0], tp[1]) {
			var misfits zeroMisfits
			this := chainOf(chain[0])
			for _, cfg := range chain {
				cand, n, err := evaluateZeRO(predict, cfg, opt.SearchZeRO, &misfits)
				if err != nil {
					return PTDPResult{}, err
				}
				res.Evaluated++
				if predictions += n; opt.MaxWork > 0 && float64(predictions)*work > opt.MaxWork {
					return PTDPResult{}, fmt.Errorf("%w (%.3g layer predictions; %d of %d (t, p) pairs done)", ErrSearchTooLarge, opt.MaxWork, i, len(pairs))
				}
				if !cand.Fits {
					res.Infeasible = res.keep(res.Infeasible, cand, memoryNeed(&cand), opt.Keep, memoryNeed)
					break // larger microbatches need more memory still
				}
				if cfg.Recompute == model.RecomputeNone {
					plain.chain, plain.fit = this, cfg.MicrobatchSize
				}
				// Searched recomputation: of full recomputation's
				// candidates, recompute as few layers as fit — unless the
				// configuration fits without recomputation, or the fewest
				// could not be among the Keep kept.
				fitsPlain := plain.chain == this && cfg.MicrobatchSize <= plain.fit
				outOfReach := opt.Keep > 0 && len(res.Candidates) == opt.Keep &&
					iterationTime(&cand)*MinRecomputeSpeedup >= iterationTime(&res.Candidates[opt.Keep-1])
				if cfg.Recompute == model.RecomputeFull && opt.Fixed.Recompute == "" && !fitsPlain && !outOfReach {
					if cand, n, err = fewestRecomputed(pred, cand, opt.SearchZeRO); err != nil {
						return PTDPResult{}, err
					}
					predictions += n
				}
				res.Feasible++
				res.Candidates = res.keep(res.Candidates, cand, iterationTime(&cand), opt.Keep, iterationTime)
			}
		}
		if progress != nil {
			progress(i+1, len(pairs))
		}
	}
	if res.Evaluated == 0 {
		return PTDPResult{}, opt.noCandidateError(tr, c, pairs)
	}
	if opt.Keep == 0 {
		sortStable(res.Candidates, iterationTime)
		sortStable(res.Infeasible, memoryNeed)
	}
	for i := range res.Infeasible {
		cand := &res.Infeasible[i]
		if opt.Keep > 0 {
			// Kept: its time too (PredictIfFits left it out).
			if cand.Prediction, err = pred.PredictPeak(cand.Config); err != nil {
				return PTDPResult{}, err
			}
		}
		cand.Reason = memoryReason(cand.Prediction.Memory)
	}
	if len(res.Candidates) == 0 {
		best := res.Infeasible[0]
		return res, fmt.Errorf("memory: does not fit: the smallest configuration (tp=%d pp=%d dp=%d microbatch=%d interleave=%d recompute=%s) %s",
			best.Config.TP, best.Config.PP, best.Config.DP, best.Config.MicrobatchSize, best.Config.Interleave, best.Config.Recompute, best.Reason)
	}
	return res, nil
}

// iterationTime and memoryNeed are the keys the candidates and the
// non-fitting ones are ranked by, ascending.
func iterationTime(c *PTDPCandidate) float64 { return c.Prediction.IterationSeconds }
func memoryNeed(c *PTDPCandidate) float64    { return needBytes(c.Prediction.Memory) }

// keep adds c, whose key is kc, to list: with k = 0 at the end, doubling the list's capacity
// when it is full (a search may find thousands of candidates of about 500
// bytes, and append's growth by a quarter past 256 elements would
// allocate and copy them several times over), to be sorted by key once
// the search is done; with k > 0 in its place in list, kept sorted by key
// with ties in the order they came, as a stable sort would put them, and
// at most k long.
func (PTDPResult) keep(list []PTDPCandidate, c PTDPCandidate, kc float64, k int, key func(*PTDPCandidate) float64) []PTDPCandidate {
	if k == 0 {
		if len(list) == cap(list) {
			list = slices.Grow(list, max(len(list), 64))
		}
		return append(list, c)
	}
	i := sort.Search(len(list), func(j int) bool { return key(&list[j]) > kc })
	if i == k {
		return list
	}
	if len(list) < k {
		list = append(list, PTDPCandidate{})
	}
	copy(list[i+1:], list[i:len(list)-1])
	list[i] = c
	return list
}

// EvaluatePTDP predicts one fully specified configuration; unlike the
// search it accepts any layout cost.Predict does (uneven layer splits,
// tensor parallelism across nodes) and explains a memory overflow.
func EvaluatePTDP(tr model.Transformer, c hw.Cluster, cfg plan.Execution, opt cost.Options) (PTDPCandidate, error) {
	pr, err := cost.Predict(tr, c, cfg, opt)
	if err != nil {
		return PTDPCandidate{}, err
	}
	return candidate(cfg, pr), nil
}

// candidate is cfg with its prediction pr, the reason when it does not fit.
func candidate(cfg plan.Execution, pr cost.Prediction) PTDPCandidate {
	cand := unreasoned(cfg, pr)
	if !cand.Fits {
		cand.Reason = memoryReason(pr.Memory)
	}
	return cand
}

// unreasoned is candidate without the Reason.
func unreasoned(cfg plan.Execution, pr cost.Prediction) PTDPCandidate {
	return PTDPCandidate{Config: cfg, Prediction: pr, Fits: pr.Memory.Fits()}
}

// sortStable sorts cands by key, ascending, keeping the order of equal
// keys. It sorts their indices, then moves each candidate into place
// along the permutation's cycles: a search's thousands of candidates are
// large, and a sort of the candidates themselves would move each many
// times.
func sortStable(cands []PTDPCandidate, key func(*PTDPCandidate) float64) {
	keys := make([]float64, len(cands))
	from := make([]int, len(cands)) // position i takes the candidate at from[i]
	for i := range cands {
		keys[i], from[i] = key(&cands[i]), i
	}
	sort.SliceStable(from, func(a, b int) bool { return keys[from[a]] < keys[from[b]] })
	for i := range from {
		if from[i] < 0 {
			continue // placed along an earlier cycle
		}
		first, j := cands[i], i
		for from[j] != i {
			cands[j], j, from[j] = cands[from[j]], from[j], -1
		}
		cands[j], from[j] = first, -1
	}
}

// ZeRO stages a search chooses between (PTDPOptions.SearchZeRO).
const (
	// ZeRODistributedOptimizer is Megatron-LM's distributed optimizer:
	// optimizer state sharded over d·cp, gradients reduce-scattered and
	// weights all-gathered, the volume of an all-reduce (Megatron-LM,
	// docs/source/api-guide/dist_optimizer.md), so with d·cp > 1 it is never
	// slower nor larger than keeping every state (ZeRO 0).
	ZeRODistributedOptimizer = 1
	// ZeROShardedGradients shards the gradients too (DeepSpeed ZeRO-2,
	// FSDP's SHARD_GRAD_OP): smaller, and a reduce-scatter after every
	// microbatch instead of one per step.
	ZeROShardedGradients = 2
	// ZeROFSDP shards the weights too, gathered for every microbatch's
	// forward and backward: smaller still, and slower again.
	ZeROFSDP = 3
)

// EvaluatePTDPZeRO predicts cfg as EvaluatePTDP does; with
// opt.SearchZeRO and d·cp > 1 replicas it chooses the ZeRO stage: the
// distributed optimizer where it fits — stages 2 and 3 only add
// communication to it (per-microbatch reduce-scatters, per-microbatch
// weight gathers) to save memory — else the faster of stages 2 and 3 that
// fits, else stage 3, the smallest, as the infeasible candidate. It
// returns how many predictions it made (1 to 3).
//
// With opt.SearchCPComm, cp > 1 and no cfg.CPComm it also chooses the
// context-parallel communication type (cpComms): the fastest that fits,
// else the smallest, and counts the predictions of every type.
func EvaluatePTDPZeRO(tr model.Transformer, c hw.Cluster, cfg plan.Execution, opt PTDPOptions) (PTDPCandidate, int, error) {
	pred, err := cost.NewPredictor(tr, c, opt.Cost)
	if err != nil {
		return PTDPCandidate{}, 0, err
	}
	comms := []string{cfg.CPComm}
	if opt.SearchCPComm && cfg.CPComm == "" && cfg.CP > 1 {
		comms = opt.cpComms(tr, cfg.TP, cfg.CP) // p2p first: never empty
	}
	var best PTDPCandidate
	total := 0
	for k, comm := range comms {
		cfg.CPComm = comm
		cand, n, err := evaluateZeRO(pred.Predict, cfg, opt.SearchZeRO, &zeroMisfits{})
		total += n
		if err != nil {
			return PTDPCandidate{}, total, err
		}
		if k == 0 || better(cand, best) {
			best = cand
		}
	}
	if !best.Fits {
		best.Reason = memoryReason(best.Prediction.Memory)
	}
	return best, total, nil
}

// MinRecomputeSpeedup bounds how much faster an execution recomputing
// fewer layers than every one can be: its step takes at least this share
// of full recomputation's. Full recomputation at most doubles each part
// of a step — the forward pass it reruns is part of the compute it adds
// to, and the collectives it repeats (the forward's tensor-parallel ones,
// context parallelism's gathers) are at most as many as the rest — and
// what hides behind the compute (expert, data-parallel and ZeRO-3
// communication) is only more exposed without it.
const MinRecomputeSpeedup = 0.5

// chainOf is the configuration of cfg's chain (PTDPOptions.chains): cfg
// without its microbatch and recomputation.
func chainOf(cfg plan.Execution) plan.Execution {
	cfg.MicrobatchSize, cfg.Recompute = 0, ""
	return cfg
}

// fewestRecomputed returns cand, a candidate that fits, recomputing as few
// layers of each chunk as fit (cost.Predictor.FewestRecomputeLayers) when
// it recomputes every layer; it is faster and still fits. Where the ZeRO
// stage is searched (searchZeRO, data parallelism), a higher stage than
// the candidate's shards more and can leave room for fewer recomputed
// layers: each stage from the candidate's up to FSDP is refined and the
// fastest kept (the lowest stage of equal times). It returns how many
// predictions it made: each bisection's, of memory alone, and its chosen
// one's count as two.
func fewestRecomputed(pred *cost.Predictor, cand PTDPCandidate, searchZeRO bool) (PTDPCandidate, int, error) {
	last := cand.Config.ZeRO
	if searchZeRO && cand.Config.DP*max(cand.Config.CP, 1) > 1 {
		last = ZeROFSDP
	}
	best, n := cand, 0
	for z := cand.Config.ZeRO; z <= last; z++ {
		cfg := cand.Config
		cfg.ZeRO = z
		ex, pr, ok, err := pred.FewestRecomputeLayers(cfg)
		n += 2
		if err != nil {
			return cand, n, err
		}
		if ok && pr.IterationSeconds < best.Prediction.IterationSeconds {
			best = unreasoned(ex, pr)
		}
	}
	return best, n, nil
}

// better reports whether a is to be preferred to b: a fits and b does not,
// both fit and a is faster, or neither fits and a needs less memory.
func better(a, b PTDPCandidate) bool {
	switch {
	case a.Fits != b.Fits:
		return a.Fits
	case a.Fits:
		return a.Prediction.IterationSeconds < b.Prediction.IterationSeconds
	}
	return needBytes(a.Prediction.Memory) < needBytes(b.Prediction.Memory)
}

// zeroMisfits records the ZeRO stages 1 and 2 known not to fit a chain's
// configuration at a smaller microbatch: memory never decreases along a
// chain, so they do not fit the rest of it either.
type zeroMisfits [ZeROFSDP + 1]bool

// evaluateZeRO is EvaluatePTDPZeRO predicting with predict, for one
// context-parallel communication type, leaving the Reason of a candidate
// that does not fit to its caller. It skips the stages misfits records
// and records those that do not fit; the count of predictions is the one
// without the skips.
func evaluateZeRO(predict func(plan.Execution) (cost.Prediction, error), cfg plan.Execution, searchZeRO bool, misfits *zeroMisfits) (PTDPCandidate, int, error) {
	if !searchZeRO || cfg.DP*max(cfg.CP, 1) == 1 {
		pr, err := predict(cfg)
		if err != nil {
			return PTDPCandidate{}, 1, err
		}
		return unreasoned(cfg, pr), 1, nil
	}
	stage := func(zero int) (ex plan.Execution, pr cost.Prediction, fits bool, err error) {
		ex = cfg
		ex.ZeRO = zero
		if misfits[zero] && zero < ZeROFSDP {
			// Known not to fit. Stage 3 is always predicted: where
			// nothing fits it is the candidate.
			return ex, pr, false, nil
		}
		if pr, err = predict(ex); err != nil {
			return ex, pr, false, err
		}
		fits = pr.Memory.Fits()
		misfits[zero] = !fits
		return ex, pr, fits, nil
	}
	one, prOne, fitsOne, err := stage(ZeRODistributedOptimizer)
	if err != nil {
		return PTDPCandidate{}, 1, err
	}
	if fitsOne {
		return unreasoned(one, prOne), 1, nil
	}
	two, prTwo, fitsTwo, err := stage(ZeROShardedGradients)
	if err != nil {
		return PTDPCandidate{}, 2, err
	}
	three, prThree, fitsThree, err := stage(ZeROFSDP)
	if err != nil {
		return PTDPCandidate{}, 3, err
	}
	if fitsTwo && (!fitsThree || prTwo.IterationSeconds <= prThree.IterationSeconds) {
		return unreasoned(two, prTwo), 3, nil
	}
	return unreasoned(three, prThree), 3, nil
}

// needBytes is the memory a GPU needs for m: the allocation plus the reserve.
func needBytes(m cost.Memory) float64 { return m.PeakBytes + m.ReserveBytes }

// memoryReason says why m does not fit its GPU, with as many decimals (up
// to three) as it takes for the need to read above the capacity: 80.04 GiB
// is "80.04 > 80.00", not "80.0 > 80.0".
func memoryReason(m cost.Memory) string {
	need, capacity := needBytes(m)/(1<<30), m.CapacityBytes/(1<<30)
	d := 1
	for d < 3 && strconv.FormatFloat(need, 'f', d, 64) == strconv.FormatFloat(capacity, 'f', d, 64) {
		d++
	}
	return fmt.Sprintf("needs %.*f GiB (%.*f GiB + %.*f GiB reserve) > %.*f GiB", d, need, d, m.PeakBytes/(1<<30), d, m.ReserveBytes/(1<<30), d, capacity)
}
