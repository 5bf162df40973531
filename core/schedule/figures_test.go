package schedule

import (
	"strings"
	"testing"
)

// The dissertation's timeline figures (narayanan-dissertation-2021) are
// not in its text, so each golden order below is derived from the text
// that describes the figure and from the schedule's definition, with 4
// devices and the figure's microbatch count; inputs are numbered from 1 as
// in the figures and a prime marks the second model chunk.

// checkOrders compares each device's compute order with the golden one.
func checkOrders(t *testing.T, name string, tl *Timeline, want []string) {
	t.Helper()
	for d, w := range want {
		if got := strings.Join(computeOrder(tl, d), " "); got != w {
			t.Errorf("%s device %d:\n got  %s\n want %s", name, d+1, got, w)
		}
	}
}

// Figure 2.4 (PipeDream, 4 workers, backward twice the forward): "the input
// stage admits exactly four inputs", the output stage runs each input's
// backward right after its forward, and in steady state "every worker is
// performing either a forward or backward pass". Figure 3.1b is the same
// PipeDream timeline.
func TestFigure2_4PipeDream(t *testing.T) {
	tl := simulate(t, PipeDream, Options{Stages: 4, Microbatches: 8}, Uniform(1, 2, 0, 0))
	checkOrders(t, "figure 2.4", tl, []string{
		"F1 F2 F3 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 B6 B7 B8",
		"F1 F2 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 F8 B6 B7 B8",
		"F1 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 F8 B7 B8",
		"F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8",
	})
	// Steady state: from worker 1's first backward to its last forward no worker idles.
	from, to := tl.Ops[0][4].StartSeconds, tl.Ops[0][11].EndSeconds
	for d, ops := range tl.Ops {
		busy := 0.0
		for _, o := range ops {
			busy += max(0, min(o.EndSeconds, to)-max(o.StartSeconds, from))
		}
		if busy != to-from {
			t.Errorf("figure 2.4 worker %d: busy %v of the steady state [%v, %v]", d+1, busy, from, to)
		}
	}
}

// Figure 2.8 and §2.4.3: with weight stashing input 5 uses the updates of
// input 1 on worker 1 and of input 2 on worker 2; with vertical sync
// (Figure 2.4's text) input 5 uses input 1's update on every worker.
func TestFigure2_8WeightStashing(t *testing.T) {
	version := func(tl *Timeline, d, input int) int {
		for _, o := range tl.Ops[d] {
			if o.Kind == Forward && o.Microbatch == input-1 {
				return o.UsedVersion
			}
		}
		return -1
	}
	stash := simulate(t, PipeDream, Options{Stages: 4, Microbatches: 8}, Uniform(1, 2, 0, 0))
	if v1, v2 := version(stash, 0, 5), version(stash, 1, 5); v1 != 1 || v2 != 2 {
		t.Errorf("weight stashing: input 5 uses versions %d (worker 1) and %d (worker 2), want 1 and 2", v1, v2)
	}
	vsync := simulate(t, PipeDream, Options{Stages: 4, Microbatches: 8, VerticalSync: true}, Uniform(1, 2, 0, 0))
	for d := range 4 {
		if v := version(vsync, d, 5); v != 1 {
			t.Errorf("vertical sync: input 5 uses version %d on worker %d, want 1", v, d+1)
		}
	}
}

// Figure 3.1a and Figure 4.3 (GPipe): all forwards, then all backwards in
// microbatch order, then the flush; Figure 4.3 has 8 microbatches and a
// bubble of (p−1)/m of the ideal time, Figure 3.1a batches of 4.
func TestFigure3_1aAnd4_3GPipe(t *testing.T) {
	for _, m := range []int{4, 8} {
		tl := simulate(t, GPipe, Options{Stages: 4, Microbatches: m}, Uniform(1, 2, 0, 0))
		var f, b []string
		for k := 1; k <= m; k++ {
			f, b = append(f, "F"+itoa(k)), append(b, "B"+itoa(k))
		}
		row := strings.Join(append(f, b...), " ")
		checkOrders(t, "gpipe m="+itoa(m), tl, []string{row, row, row, row})
		if got, want := tl.Devices[0].IdleSeconds/(float64(m)*3), 3/float64(m); !near(got, want) {
			t.Errorf("gpipe m=%d: bubble/ideal %v, want %v", m, got, want)
		}
	}
}

// Figure 3.2 (PipeDream-2BW, 4 workers, m = 4): the new version W(4)_4 is
// first used by input 9's forward; input 7's backward on worker 3 still
// uses the old version although the new one exists; each worker can drop
// W(0) once input 8's backward is done.
func TestFigure3_2TwoBW(t *testing.T) {
	tl := simulate(t, TwoBW, Options{Stages: 4, Microbatches: 4, Batches: 3}, Uniform(1, 2, 0, 0))
	checkOrders(t, "figure 3.2", tl, []string{
		"F1 F2 F3 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 F9 B6 F10 B7 F11 B8 F12 B9 B10 B11 B12",
	})
	first := -1
	for _, o := range tl.Ops[3] {
		if o.Kind == Forward && o.UsedVersion == 1 && first < 0 {
			first = o.Microbatch + 1
		}
	}
	if first != 9 {
		t.Errorf("worker 4 first uses version 1 for input %d, want 9", first)
	}
	var newVersionAt float64 // worker 3's 4th backward ends: version 1 exists
	n := 0
	for _, o := range tl.Ops[2] {
		if o.Kind == Backward {
			if n++; n == 4 {
				newVersionAt = o.EndSeconds
			}
			if o.Microbatch == 6 && (o.UsedVersion != 0 || o.StartSeconds < newVersionAt) {
				t.Errorf("worker 3 input 7 backward at %v uses version %d; version 1 exists from %v", o.StartSeconds, o.UsedVersion, newVersionAt)
			}
		}
		if o.Kind.isCompute() && o.UsedVersion == 0 && o.Microbatch > 7 {
			t.Errorf("worker 3 uses W(0) for input %d after input 8", o.Microbatch+1)
		}
	}
}

// Figure 4.4 top (1F1B, 8 microbatches): device i warms up with p−i
// forwards; bottom (interleaved, 2 chunks): Megatron's interleaved order,
// whose flush comes sooner for the same work per device.
func TestFigure4_4OneFOneBAndInterleaved(t *testing.T) {
	top := simulate(t, OneFOneB, Options{Stages: 4, Microbatches: 8}, Uniform(1, 2, 0, 0))
	checkOrders(t, "figure 4.4 top", top, []string{
		"F1 F2 F3 F4 B1 F5 B2 F6 B3 F7 B4 F8 B5 B6 B7 B8",
		"F1 F2 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 F8 B6 B7 B8",
		"F1 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 F8 B7 B8",
		"F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 F8 B8",
	})
	bottom := simulate(t, Interleaved, Options{Stages: 4, Microbatches: 8, Chunks: 2}, Uniform(0.5, 1, 0, 0))
	checkOrders(t, "figure 4.4 bottom", bottom, []string{
		"F1 F2 F3 F4 F1' F2' F3' F4' F5 F6 F7 B1' F8 B2' F5' B3' F6' B4' F7' B1 F8' B2 B3 B4 B5' B6' B7' B8' B5 B6 B7 B8",
	})
	if got := computeOrder(bottom, 3); strings.Join(got, " ") !=
		"F1 F2 F3 F4 F1' B1' F2' B2' F3' B3' F4' B4' F5 B1 F6 B2 F7 B3 F8 B4 F5' B5' F6' B6' F7' B7' F8' B8' B5 B6 B7 B8" {
		t.Errorf("figure 4.4 bottom device 4: %s", strings.Join(got, " "))
	}
	if bottom.StepSeconds >= top.StepSeconds {
		t.Errorf("interleaved step %v, want shorter than 1F1B's %v", bottom.StepSeconds, top.StepSeconds)
	}
}
