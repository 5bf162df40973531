// Command gavelsweep regenerates RESULTS.md's Figure 5.9 sweep (issue 11,
// item 5): heterogeneity-aware vs heterogeneity-agnostic LAS on the
// continuous-single trace, 36:36:36, as §5.7.1 sets it up — traces of
// -jobs jobs (the paper: "at least 5000"), average JCT over job IDs
// 4000–4999, the simulation running until those have completed, each input
// rate with several seeds (the paper: 3). It prints the table (mean ±
// standard deviation over the seeds of each policy's average JCT, and of the
// per-seed ratio) and, with -write, replaces the part of RESULTS.md between
// "<!-- gavelsweep:las begin -->" and "<!-- gavelsweep:las end -->" (not
// scripts/results' markers: that test re-runs its tables in CI, this sweep
// is too long for it).
//
// It is not part of the tests (the full sweep is ~30 CPU-minutes);
// core/gavel's TestHeterogeneityAwareLASBeatsAgnostic pins the direction on a
// small run. Run it with scripts/gavel-sweep.sh.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"pipeplan/core/gavel"
)

func main() {
	jobs := flag.Int("jobs", 6000, "jobs per trace")
	rates := flag.String("rates", "3.0,4.5,5.6,6.5", "comma-separated input rates, jobs/hr")
	seeds := flag.Int("seeds", 3, "seeds per rate (0..seeds-1)")
	window := flag.String("window", "4000:5000", "FROM:TO job IDs averaged")
	parallel := flag.Int("j", runtime.NumCPU(), "simulations run at once")
	write := flag.String("write", "", "RESULTS.md to rewrite between the gavel-las-sweep markers")
	flag.Parse()
	if err := run(*jobs, *rates, *seeds, *window, *parallel, *write); err != nil {
		fmt.Fprintln(os.Stderr, "gavelsweep:", err)
		os.Exit(1)
	}
}

// run is one sweep; see the package doc.
func run(jobs int, rateList string, seeds int, window string, parallel int, write string) error {
	var rates []float64
	for _, s := range strings.Split(rateList, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || r <= 0 {
			return fmt.Errorf("-rates: %q is not a positive number", s)
		}
		rates = append(rates, r)
	}
	var from, to int
	if _, err := fmt.Sscanf(window, "%d:%d", &from, &to); err != nil || from < 0 || to <= from || to > jobs {
		return fmt.Errorf("-window: want FROM:TO with 0 <= FROM < TO <= %d, got %q", jobs, window)
	}
	if seeds < 1 || parallel < 1 {
		return fmt.Errorf("-seeds and -j must be >= 1, got %d and %d", seeds, parallel)
	}
	policies := []string{"max_min_fairness_perf", "max_min_fairness"}
	type key struct {
		rate   float64
		seed   int
		policy string
	}
	results := map[key]*gavel.SimResult{}
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	cluster := gavel.ClusterSpec{WorkerTypes: []string{"k80", "p100", "v100"}, NumWorkers: []int{36, 36, 36}}
	for _, rate := range rates {
		for seed := range seeds {
			trace, err := gavel.GenerateTrace(gavel.TraceConfig{NumJobs: jobs, JobsPerHour: rate, Seed: uint64(seed)})
			if err != nil {
				return err
			}
			for _, name := range policies {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					p, err := gavel.PolicyByName(name)
					var res *gavel.SimResult
					if err == nil {
						res, err = gavel.Simulate(context.Background(), gavel.SimConfig{Cluster: cluster, Policy: p, Jobs: trace, WindowFrom: from, WindowTo: to})
					}
					mu.Lock()
					defer mu.Unlock()
					if err != nil && firstErr == nil {
						firstErr = fmt.Errorf("rate %g seed %d %s: %w", rate, seed, name, err)
					}
					results[key{rate, seed, name}] = res
					fmt.Fprintf(os.Stderr, "rate %g seed %d %s done\n", rate, seed, name)
				}()
			}
		}
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d-job traces, window %s, seeds 0–%d, `go run ./scripts/gavelsweep -jobs %d -rates %s -seeds %d -window %s -write RESULTS.md`; mean ± standard deviation over the seeds\n\n",
		jobs, window, seeds-1, jobs, rateList, seeds, window)
	b.WriteString("| rate (jobs/hr) | aware avg JCT | agnostic avg JCT | ratio (per seed) | ratio mean ± sd | aware / agnostic utilization |\n|---|---|---|---|---|---|\n")
	for _, rate := range rates {
		var aware, agn, ratio, ua, ug []float64
		for seed := range seeds {
			a, g := results[key{rate, seed, policies[0]}], results[key{rate, seed, policies[1]}]
			aware, agn = append(aware, a.AvgJCTSeconds/3600), append(agn, g.AvgJCTSeconds/3600)
			ratio = append(ratio, g.AvgJCTSeconds/a.AvgJCTSeconds)
			ua, ug = append(ua, a.Utilization), append(ug, g.Utilization)
		}
		per := make([]string, len(ratio))
		for i, r := range ratio {
			per[i] = fmt.Sprintf("%.2f×", r)
		}
		ma, sa := meanSD(aware)
		mg, sg := meanSD(agn)
		mr, sr := meanSD(ratio)
		mua, _ := meanSD(ua)
		mug, _ := meanSD(ug)
		fmt.Fprintf(&b, "| %.1f | %.1f ± %.1f h | %.1f ± %.1f h | %s | **%.2f ± %.2f×** | %.0f %% / %.0f %% |\n",
			rate, ma, sa, mg, sg, strings.Join(per, ", "), mr, sr, 100*mua, 100*mug)
	}
	fmt.Print(b.String())
	if write == "" {
		return nil
	}
	return replaceBetween(write, "las", b.Bytes())
}

// meanSD returns the mean and the sample standard deviation of xs.
func meanSD(xs []float64) (float64, float64) {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	if len(xs) < 2 {
		return m, 0
	}
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)-1))
}

// replaceBetween rewrites path's text between the named gavelsweep markers.
func replaceBetween(path, name string, body []byte) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	begin, end := []byte("<!-- gavelsweep:"+name+" begin -->\n"), []byte("<!-- gavelsweep:"+name+" end -->")
	i, k := bytes.Index(data, begin), bytes.Index(data, end)
	if i < 0 || k < i {
		return fmt.Errorf("%s: no %q ... %q markers", path, begin, end)
	}
	out := append(append(append([]byte{}, data[:i+len(begin)]...), body...), data[k:]...)
	return os.WriteFile(path, out, 0o644)
}
