package schedule

import (
	"strings"
	"testing"
)

// DualPipeV at equal chunk times F = I = W: each device runs its two V
// stages, its steady state pairs one chunk's forward with the other's
// whole backward m − 2p + r + 1 times each way and p − r − 1 times more
// (F1 with B0), it stashes 2p + 1 chunk activations (deepseek-ai/DualPipe's
// "PP+1" for PP = 2p chunks), and the step is 2m(F+I+W) + (p−1)F, the
// registry's closed form. DeepSeek's table gives (p−1)(F&B + B − 3W) =
// 2(p−1) here with the pair at F + B; torch's order idles half that.
func TestDualPipeV(t *testing.T) {
	for p := 1; p <= 8; p++ {
		for m := 2 * p; m <= 6*p; m++ {
			s, err := Generate(DualPipeV, Options{Stages: p, Microbatches: m})
			if err != nil {
				t.Fatal(err)
			}
			for r, list := range s.Devices {
				first, second := ZBVStages(p, r)
				pairs := 0
				for i, a := range list {
					if a.Stage != first && a.Stage != second {
						t.Fatalf("p=%d m=%d device %d runs stage %d, want %d and %d", p, m, r, a.Stage, first, second)
					}
					if i > 0 && a.Kind == Backward && list[i-1].Kind == Forward && list[i-1].Stage != a.Stage {
						pairs++
					}
				}
				if want := 2*(m-2*p+r+1) + p - r - 1; pairs != want {
					t.Errorf("p=%d m=%d device %d: %d forwards paired with the other chunk's backward, want 2(m−2p+r+1) + p−r−1 = %d", p, m, r, pairs, want)
				}
			}
			tl := simulate(t, DualPipeV, Options{Stages: p, Microbatches: m}, Uniform(1, 2, 1, 0))
			for d := range p {
				if a := tl.Devices[d].PeakActivations; a != 2*p+1 {
					t.Errorf("p=%d m=%d device %d: %d chunk activations stashed, want 2p + 1 = %d", p, m, d, a, 2*p+1)
				}
			}
			if want := float64(6*m + p - 1); !near(tl.StepSeconds, want) {
				t.Errorf("p=%d m=%d: step %v, want 2m(F+I+W) + (p−1)F = %v", p, m, tl.StepSeconds, want)
			}
			if b, err := DualPipeV.Bubble(p, m, VChunks); err != nil || !near(tl.StepSeconds, float64(6*m)*(1+b)) {
				t.Errorf("p=%d m=%d: step %v, want 6m(1 + bubble %v) (error %v)", p, m, tl.StepSeconds, b, err)
			}
		}
	}
}

// DualPipeV needs a microbatch per stage, 2p, as torch's ScheduleDualPipeV;
// fewer is an error naming the field and both numbers.
func TestDualPipeVNeedsTwoMicrobatchesPerDevice(t *testing.T) {
	_, err := Generate(DualPipeV, Options{Stages: 4, Microbatches: 7})
	if err == nil || !strings.Contains(err.Error(), "microbatches") || !strings.Contains(err.Error(), "8") || !strings.Contains(err.Error(), "got 7") {
		t.Fatalf("4 stages, 7 microbatches: error %v, want one naming microbatches, 8 and 7", err)
	}
	if _, _, err := DualPipeV.InFlight(4, 0, 7, 1); err == nil {
		t.Error("InFlight with m < 2p: no error")
	}
}
