package partition

import (
	"context"
	"slices"
	"strings"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
	"pipeplan/core/plan"
	"pipeplan/modelprofiles"
)

// TestSearchPTDPCPComm: with all-to-all context parallelism pinned the
// search tries only the (t, cp) whose t·cp divides Llama 3 405B's 8 K/V
// heads (cp up to 8 at t = 1), and an unknown type is refused naming the
// field.
func TestSearchPTDPCPComm(t *testing.T) {
	tr := llama405B
	tr.Seq = 65536
	fixed := megatronDefaults
	fixed.GlobalBatch, fixed.CPComm = 64, plan.CPCommA2A
	res, err := SearchPTDP(context.Background(), tr, h100Cluster(t, 1024), PTDPOptions{Fixed: fixed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cps := map[int]bool{}
	for _, c := range append(res.Candidates, res.Infeasible...) {
		cfg := c.Config
		if 8%(cfg.TP*cfg.CP) != 0 {
			t.Fatalf("a2a with t·cp = %d·%d, which does not divide the 8 K/V heads", cfg.TP, cfg.CP)
		}
		cps[cfg.CP] = true
	}
	if !cps[8] || cps[16] {
		t.Errorf("searched cp %v: want up to 8 (t = 1), not 16", cps)
	}
	fixed.CPComm = "ulysses"
	if _, err := SearchPTDP(context.Background(), tr, h100Cluster(t, 1024), PTDPOptions{Fixed: fixed}, nil); err == nil || !strings.Contains(err.Error(), `cp_comm: must be one of`) {
		t.Errorf("cp_comm ulysses: %v", err)
	}
}

// bruteForceCPComm is the best fitting configuration of tr on c with
// interleaving 1, found the plain way: every t dividing the heads and the
// 8 GPUs of a server, p, cp (a power of two up to MaxSearchedCP splitting
// the sequence into 2·cp chunks; fixed.CP where pinned), d = n/(t·p·cp) dividing the batch, the
// communication types comms (every one for cp > 1; "" for cp = 1),
// microbatch and recomputation, each predicted with cost.Predict (those it
// refuses, a2a where t·cp does not split the heads, skipped); cp = 1
// keeps fixed.CPComm, as a pinned type applies to every candidate. It returns
// the best and the number of fitting configurations with cp > 1 of each type.
func bruteForceCPComm(t *testing.T, tr model.Transformer, c hw.Cluster, fixed plan.Execution, comms []string) (PTDPCandidate, map[string]int) {
	t.Helper()
	n := c.GPUs()
	var best PTDPCandidate
	fits := map[string]int{}
	for tp := 1; tp <= 8; tp *= 2 {
		for p := 1; tp*p <= n; p *= 2 {
			for cp := 1; cp <= MaxSearchedCP && tp*p*cp <= n; cp *= 2 {
				d := n / (tp * p * cp)
				if tr.Heads%tp != 0 || fixed.GlobalBatch%d != 0 || (cp > 1 && tr.Seq%(2*cp) != 0) || (fixed.CP > 0 && cp != fixed.CP) {
					continue
				}
				types := comms
				if cp == 1 {
					types = []string{fixed.CPComm}
				}
				for _, comm := range types {
					for b := 1; b <= fixed.GlobalBatch/d; b++ {
						for _, r := range []model.Recompute{model.RecomputeNone, model.RecomputeSelective, model.RecomputeFull} {
							cfg := fixed
							cfg.TP, cfg.PP, cfg.CP, cfg.DP, cfg.CPComm, cfg.MicrobatchSize, cfg.Interleave, cfg.Recompute, cfg.EP = tp, p, cp, d, comm, b, 1, r, 1
							if (fixed.GlobalBatch/d)%b != 0 {
								continue
							}
							pr, err := cost.Predict(tr, c, cfg, cost.Options{})
							if err != nil || !pr.Memory.Fits() {
								continue
							}
							if cp > 1 {
								fits[comm]++
							}
							if best.Prediction.IterationSeconds == 0 || pr.IterationSeconds < best.Prediction.IterationSeconds {
								best = PTDPCandidate{Config: cfg, Prediction: pr, Fits: true}
							}
						}
					}
				}
			}
		}
	}
	return best, fits
}

// TestSearchPTDPCPCommSearched: with the communication type searched, the
// search finds the configuration and time the brute force over t, p, cp,
// all three types, b and recomputation finds, having tried the ring and
// the all-to-alls (the all-gather, which the ring dominates, left out);
// pinned to each type, it finds the brute force's best with only that
// type, and every candidate with cp > 1 uses it. Two cases on 16 H100s:
// Llama 3 8B at 32K, where the ring hides behind the attention, and a
// 1.3B GPT with 16 K/V heads at 16K with cp pinned to 16, across servers,
// where the all-to-alls' 1/cp shares beat the ring's whole K/V: the
// searched types must differ between them, so the search is seen to
// leave the default.
func TestSearchPTDPCPCommSearched(t *testing.T) {
	llama, _, err := modelprofiles.Transformer("llama3-8b")
	if err != nil {
		t.Fatal(err)
	}
	llama.Seq = 32768
	gpt := model.Transformer{Name: "GPT 1.3B", Layers: 24, Hidden: 2048, Heads: 16, Seq: 16384, Vocab: 51200}
	c := h100Cluster(t, 16)
	all := []string{plan.CPCommP2P, plan.CPCommAllGather, plan.CPCommA2A}
	winners := map[string]bool{}
	for _, tr := range []model.Transformer{llama, gpt} {
		fixed := megatronDefaults
		fixed.GlobalBatch, fixed.Interleave = 16, 1
		if tr.Name == gpt.Name {
			fixed.CP = 16
		}
		check := func(name string, opt PTDPOptions, comms, searched []string) string {
			name = tr.Name + ", " + name
			want, fits := bruteForceCPComm(t, tr, c, opt.Fixed, comms)
			if want.Prediction.IterationSeconds == 0 {
				t.Fatalf("%s: nothing fits in the brute force", name)
			}
			res, err := SearchPTDP(context.Background(), tr, c, opt, nil)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := res.Candidates[0]
			if got.Config != want.Config || got.Prediction.IterationSeconds != want.Prediction.IterationSeconds {
				t.Errorf("%s: best %+v in %v s, brute force %+v in %v s", name, got.Config, got.Prediction.IterationSeconds, want.Config, want.Prediction.IterationSeconds)
			}
			seen := map[string]int{}
			for _, cand := range res.Candidates {
				if cand.Config.CP == 1 {
					continue
				}
				if !slices.Contains(searched, cand.Config.CPComm) {
					t.Errorf("%s: candidate with cp %d uses cp_comm %q", name, cand.Config.CP, cand.Config.CPComm)
				}
				seen[cand.Config.CPComm]++
			}
			for _, comm := range searched {
				if seen[comm] != fits[comm] {
					t.Errorf("%s: %d fitting candidates with cp_comm %q, brute force %d", name, seen[comm], comm, fits[comm])
				}
			}
			t.Logf("%s: best t=%d p=%d cp=%d %q d=%d b=%d %s: %.4f s; fitting per type %v", name, want.Config.TP, want.Config.PP, want.Config.CP,
				want.Config.CPComm, want.Config.DP, want.Config.MicrobatchSize, want.Config.Recompute, want.Prediction.IterationSeconds, fits)
			return want.Config.CPComm
		}
		winners[check("searched", PTDPOptions{Fixed: fixed, SearchCPComm: true}, all, []string{plan.CPCommP2P, plan.CPCommA2A})] = true
		for _, comm := range all {
			pinned := fixed
			pinned.CPComm = comm
			check("pinned "+comm, PTDPOptions{Fixed: pinned}, []string{comm}, []string{comm})
		}
	}
	if len(winners) < 2 {
		t.Errorf("the searched bests use cp_comm %v; want the two cases to choose differently", winners)
	}
}
