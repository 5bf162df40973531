package app

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/app/request"
)

// TestCostTable61Claims checks §6.3.1's reading of Table 6.1 on Gavel's
// measured throughputs and GCP on-demand prices: dollar-normalized speedups
// over the K80 are smaller than raw ones for every model, and the V100 —
// fastest for every model — is not the cheapest per step for A3C, whose
// cheapest is the K80. (Table 6.1's own numbers come from a different
// measurement campaign, e.g. ResNet-50 V100 9.6× where Gavel's table gives
// 7.1×, so they are not compared digit by digit.)
func TestCostTable61Claims(t *testing.T) {
	cl := request.PaperCluster()
	cl.Workload, cl.GPUs = request.WorkloadJobTypes, []int{8, 8, 8}
	cl.Jobs = []request.Job{
		{Type: "ResNet-50 (batch size 64)", Scale: 1, Weight: 1},
		{Type: "A3C", Scale: 1, Weight: 1},
		{Type: "CycleGAN", Scale: 1, Weight: 1},
		{Type: "Transformer (batch size 128)", Scale: 1, Weight: 1},
	}
	res, err := Cost(context.Background(), cl, request.DefaultCost())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		for j := 0; j < 2; j++ { // v100, p100
			if !(r.Speedup[j] > 1) || !(r.DollarSpeedup[j] < r.Speedup[j]) {
				t.Errorf("%s on %s: speedup %.2f, dollar-normalized %.2f", r.Job, res.WorkerTypes[j], r.Speedup[j], r.DollarSpeedup[j])
			}
			want := r.Throughputs[j] * 3600 / request.DefaultCost().Prices[j]
			if math.Abs(r.StepsPerDollar[j]-want) > 1e-9*want {
				t.Errorf("%s: steps per dollar %v, want %v", r.Job, r.StepsPerDollar[j], want)
			}
		}
	}
	if got := res.Rows[1].Cheapest; got != "k80" {
		t.Errorf("A3C cheapest on %s, want k80 (Table 6.1: dollar-normalized 0.4× on P100 and V100)", got)
	}
}

func TestCostMinCostMeetsDeadlines(t *testing.T) {
	cl := request.PaperCluster()
	cl.Workload, cl.GPUs = request.WorkloadJobTypes, []int{8, 8, 8}
	in := request.DefaultCost()
	res, err := Cost(context.Background(), cl, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Problem != "" {
		t.Fatalf("problem: %s", res.Problem)
	}
	for m, h := range res.FinishHours {
		if h > in.DeadlineHours*(1+1e-6) {
			t.Errorf("job %d finishes in %.2f h, after its %v h deadline", m, h, in.DeadlineHours)
		}
	}
	if !(res.DollarsPerHour > 0) {
		t.Errorf("cost rate %v", res.DollarsPerHour)
	}
	in.DeadlineHours = 1 // 10 V100-hours of work cannot finish in 1 hour
	if res, err := Cost(context.Background(), cl, in); err != nil || res.Problem == "" {
		t.Errorf("impossible deadline: err %v, problem %q", err, res.Problem)
	}
}

// TestCostPerJobStepsAndSLOOverride: a job's own steps replace the page's
// V100-hours of work, and its own SLO the page's deadline (§6.4.3): with
// a 1-hour SLO it must finish within the hour, others within the deadline.
func TestCostPerJobStepsAndSLOOverride(t *testing.T) {
	cl := request.PaperCluster()
	cl.Workload, cl.GPUs = request.WorkloadJobTypes, []int{8, 8, 8}
	cl.Jobs[0].Steps, cl.Jobs[0].SLOHours = 5000, 1
	in := request.DefaultCost()
	res, err := Cost(context.Background(), cl, in)
	if err != nil || res.Problem != "" {
		t.Fatalf("err %v, problem %q", err, res.Problem)
	}
	if h := res.FinishHours[0]; !(h <= 1+1e-6) {
		t.Errorf("job 0 with a 1-hour SLO finishes in %v h", h)
	}
	for m, h := range res.FinishHours[1:] {
		if !(h <= in.DeadlineHours*(1+1e-6)) {
			t.Errorf("job %d finishes in %v h, after the %v-hour deadline", m+1, h, in.DeadlineHours)
		}
	}
}

// TestCostPricesTodaysGPUs: the GPUs beyond Gavel's (issue 11) each have a
// sourced on-demand price; the spot list lacks B200 and L4, whose prices
// then come from the first list that has them; a GPU no list prices is an
// error naming the field and the GPU; the page's own prices win when they
// match the types.
func TestCostPricesTodaysGPUs(t *testing.T) {
	types := []string{"nvidia-a100-sxm4-80gb", "nvidia-h100-sxm5-80gb", "nvidia-h200-sxm-141gb", "nvidia-b200-sxm", "amd-mi300x", "nvidia-l4", "nvidia-l40s"}
	lists := PriceListsFor(types)
	byID := map[string]PricePreset{}
	for _, l := range lists {
		byID[l.ID] = l
	}
	od, spot := byID["specialty-clouds-2026"], byID["gpu-clouds-spot-2026"]
	for j, wt := range types {
		if od.Prices[j] <= 0 {
			t.Errorf("%s: no on-demand price in %q", wt, od.Name)
		}
	}
	if od.Source == "" || od.Date == "" || spot.Source == "" || spot.Date == "" {
		t.Fatalf("price lists without source or date: %+v %+v", od, spot)
	}
	got, err := CostPrices(types, request.Cost{Preset: "gpu-clouds-spot-2026"})
	if err != nil {
		t.Fatal(err)
	}
	for j := range types {
		want := spot.Prices[j]
		if want == 0 {
			want = od.Prices[j] // B200, L4: no spot price; the on-demand list is the first that has one
		}
		if got[j] != want {
			t.Errorf("%s: price %v, want %v", types[j], got[j], want)
		}
	}
	if spot.Prices[1] >= od.Prices[1] {
		t.Errorf("H100 spot %v not below on-demand %v", spot.Prices[1], od.Prices[1])
	}
	if _, err := CostPrices([]string{"v100", "google-tpu-v5e"}, request.Cost{Preset: "gcp-on-demand"}); err == nil || !strings.Contains(err.Error(), "cost.prices[1]") || !strings.Contains(err.Error(), "google-tpu-v5e") {
		t.Errorf("a TPU no list prices: error %v, want one naming cost.prices[1] and the GPU", err)
	}
	own := []float64{1, 2}
	if got, err := CostPrices([]string{"v100", "k80"}, request.Cost{Preset: "custom", Prices: own}); err != nil || got[0] != 1 || got[1] != 2 {
		t.Errorf("the page's own prices: %v, %v", got, err)
	}
}
