package results

import (
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/model"
)

// TestThousands checks the digit grouping of the published-runs tables.
func TestThousands(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {999.4, "999"}, {1000, "1,000"}, {12036, "12,036"}, {1234567.6, "1,234,568"}, {-16384, "−16,384"}} {
		if got := thousands(c.v); got != c.want {
			t.Errorf("thousands(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestGroupPublished: runs are grouped by GPU in order of first
// appearance, dense before MoE, each group in the input's order.
func TestGroupPublished(t *testing.T) {
	moe := model.Transformer{MoE: &model.MoE{Experts: 8, TopK: 2}}
	run := func(id, gpu string, tr model.Transformer) cost.PublishedComparison {
		c := cost.PublishedComparison{Transformer: tr}
		c.Run.ID, c.Run.GPU = id, gpu
		return c
	}
	groups := groupPublished([]cost.PublishedComparison{
		run("a", "h100", moe), run("b", "b200", model.Transformer{}), run("c", "h100", model.Transformer{}), run("d", "h100", moe)})
	want := []struct {
		gpu string
		moe bool
		ids string
	}{{"h100", false, "c"}, {"h100", true, "ad"}, {"b200", false, "b"}}
	if len(groups) != len(want) {
		t.Fatalf("%d groups, want %d", len(groups), len(want))
	}
	for i, g := range groups {
		ids := ""
		for _, r := range g.rows {
			ids += r.Run.ID
		}
		if g.gpu != want[i].gpu || g.moe != want[i].moe || ids != want[i].ids {
			t.Errorf("group %d: %s MoE %v runs %q, want %+v", i, g.gpu, g.moe, ids, want[i])
		}
	}
}
