package partition

import (
	"context"
	"errors"
	"testing"

	"pipeplan/core/model"
	"pipeplan/core/plan"
)

// TestSearchPTDPWorkBound: a search past MaxWork stops with
// ErrSearchTooLarge; under it the search is the unbounded one. The work of
// a prediction counts MoE layers MoELayerWork times.
func TestSearchPTDPWorkBound(t *testing.T) {
	tr := model.Transformer{Layers: 8, Hidden: 1024, Heads: 16, Seq: 2048, Vocab: 32000}
	c := h100Cluster(t, 64)
	opt := PTDPOptions{Fixed: plan.Execution{GlobalBatch: 256, FlashAttention: true}, SearchZeRO: true}
	free, err := SearchPTDP(context.Background(), tr, c, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := len(free.Candidates) + len(free.Infeasible) // at least this many predictions
	opt.MaxWork = float64(n-1) * SearchWork(tr)
	if _, err := SearchPTDP(context.Background(), tr, c, opt, nil); !errors.Is(err, ErrSearchTooLarge) {
		t.Errorf("MaxWork below %d predictions: err %v", n, err)
	}
	opt.MaxWork = float64(3*n+1) * SearchWork(tr) // each prediction at most three times (ZeRO 1, then 2 and 3)
	if bounded, err := SearchPTDP(context.Background(), tr, c, opt, nil); err != nil || len(bounded.Candidates) != len(free.Candidates) {
		t.Errorf("MaxWork above the search: %d candidates (unbounded %d), err %v", len(bounded.Candidates), len(free.Candidates), err)
	}
	moe := tr
	moe.MoE = &model.MoE{Experts: 8, TopK: 2, FirstDense: 2}
	if got, want := SearchWork(moe), 2+6*float64(MoELayerWork); got != want {
		t.Errorf("SearchWork(2 dense + 6 MoE layers) = %v, want %v", got, want)
	}
}
