package partition

import (
	"context"
	"fmt"
	"testing"

	"pipeplan/modelprofiles"
)

// BenchmarkSearchPTDPDeepSeekV3_16384 is the whole PTD-P search (t, p, cp,
// ep, d, b, v, recompute) for DeepSeek-V3 (671B, 256 routed experts, MLA;
// its Hugging Face config, modelprofiles/llm/deepseek-v3.json) on 16,384
// H100s: at its 4K pre-training length with the report's final batch of
// 15,360 sequences (expert parallelism searched, cp not: the sequence is
// under MinSeqForCP), and at its 32K long-context extension with 1,920
// (both searched; DeepSeek-V3 technical report §4.2–4.3); keeping what the
// app keeps (shown) and every candidate (all). It fails if the search
// kept no ep > 1 (nor, at 32K, no cp > 1) of all its candidates.
func BenchmarkSearchPTDPDeepSeekV3_16384(b *testing.B) {
	tr, _, err := modelprofiles.Transformer("deepseek-v3")
	if err != nil {
		b.Fatal(err)
	}
	c := h100Cluster(b, 16384)
	for _, run := range []struct{ seq, batch int }{{4096, 15360}, {32768, 1920}} {
		for _, keep := range []int{appKeep, 0} {
			name := fmt.Sprintf("seq%d/shown", run.seq)
			if keep == 0 {
				name = fmt.Sprintf("seq%d/all", run.seq)
			}
			b.Run(name, func(b *testing.B) {
				tr.Seq = run.seq
				fixed := megatronDefaults
				fixed.GlobalBatch = run.batch
				var res PTDPResult
				for b.Loop() {
					if res, err = SearchPTDP(context.Background(), tr, c, PTDPOptions{Fixed: fixed, Keep: keep}, nil); err != nil {
						b.Fatal(err)
					}
				}
				if keep == 0 {
					maxCP, maxEP := 1, 1
					for _, cand := range append(res.Candidates, res.Infeasible...) {
						maxCP, maxEP = max(maxCP, cand.Config.CP), max(maxEP, cand.Config.EP)
					}
					if maxEP == 1 || (run.seq >= MinSeqForCP) != (maxCP > 1) {
						b.Fatalf("searched cp up to %d, ep up to %d", maxCP, maxEP)
					}
				}
				b.ReportMetric(float64(res.Evaluated), "evaluated")
			})
		}
	}
}
