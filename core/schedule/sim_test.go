package schedule

import (
	"context"
	"math"
	"strings"
	"testing"
)

// Dissertation §4.2.1: with equal stages and no communication GPipe and
// 1F1B idle (p−1)(t_f+t_b) per device, a fraction (p−1)/(m+p−1) of the
// step, i.e. (p−1)/m of the ideal time m(t_f+t_b).
func TestFlushBubble(t *testing.T) {
	for _, kind := range []Kind{GPipe, OneFOneB} {
		for _, p := range []int{1, 2, 4, 8} {
			for _, m := range []int{1, 3, 4, 8, 13} {
				tl := simulate(t, kind, Options{Stages: p, Microbatches: m}, Uniform(1, 2, 0, 0))
				want := float64(p-1) / float64(m+p-1)
				if !near(tl.BubbleFraction, want) {
					t.Errorf("%s p=%d m=%d: bubble %v, want (p−1)/(m+p−1) = %v", kind, p, m, tl.BubbleFraction, want)
				}
				ideal := float64(m) * 3
				for d, st := range tl.Devices {
					if !near(st.IdleSeconds/ideal, float64(p-1)/float64(m)) {
						t.Errorf("%s p=%d m=%d device %d: idle/ideal %v, want (p−1)/m", kind, p, m, d, st.IdleSeconds/ideal)
					}
				}
			}
		}
	}
}

// Dissertation §4.2.2: with v chunks per device the bubble is (1/v)(p−1)/m
// of the ideal time.
func TestInterleavedBubble(t *testing.T) {
	for _, p := range []int{2, 4, 8} {
		for _, v := range []int{2, 3, 4} {
			for _, mult := range []int{1, 2, 4} {
				m := p * mult
				f, b := 1.0/float64(v), 2.0/float64(v) // a device's work per microbatch stays 1 + 2
				tl := simulate(t, Interleaved, Options{Stages: p, Microbatches: m, Chunks: v}, Uniform(f, b, 0, 0))
				ideal := float64(m) * 3
				want := float64(p-1) / float64(v*m)
				for d, st := range tl.Devices {
					if !near(st.IdleSeconds/ideal, want) {
						t.Errorf("p=%d v=%d m=%d device %d: idle/ideal %v, want (1/v)(p−1)/m = %v", p, v, m, d, st.IdleSeconds/ideal, want)
					}
				}
			}
		}
	}
}

func TestInterleavedNeedsMultipleOfStages(t *testing.T) {
	if _, err := Generate(Interleaved, Options{Stages: 4, Microbatches: 6, Chunks: 2}); err == nil || !strings.Contains(err.Error(), "microbatches") {
		t.Errorf("m=6, p=4: got %v, want a microbatches error", err)
	}
}

// §3.2.1: 2BW has no flush, so its idle time is the one warm-up and
// cool-down of the whole run, whatever the number of batches, while 1F1B
// with a flush pays it every batch; at most 2 weight versions per stage.
func TestTwoBWSteadyStateHasNoBubble(t *testing.T) {
	const p, m = 4, 8
	for _, batches := range []int{1, 2, 5} {
		tl := simulate(t, TwoBW, Options{Stages: p, Microbatches: m, Batches: batches}, Uniform(1, 2, 0, 0))
		for d, st := range tl.Devices {
			if !near(st.IdleSeconds, float64(p-1)*3) {
				t.Errorf("batches=%d device %d: idle %v, want (p−1)(t_f+t_b) = %v once", batches, d, st.IdleSeconds, float64(p-1)*3)
			}
			if st.PeakWeightVersions > 2 {
				t.Errorf("batches=%d device %d: %d weight versions, want at most 2", batches, d, st.PeakWeightVersions)
			}
			if batches > 2 && st.PeakWeightVersions != 2 {
				t.Errorf("batches=%d device %d: %d weight versions, want 2 (double buffering)", batches, d, st.PeakWeightVersions)
			}
		}
	}
}

// §3.2.1: microbatch k (1-based) uses version max(⌊(k−1)/m⌋−1, 0) in both
// passes, and the simulator accepts it (the version exists when used).
func TestTwoBWVersions(t *testing.T) {
	const p, m = 4, 5
	tl := simulate(t, TwoBW, Options{Stages: p, Microbatches: m, Batches: 4}, Uniform(1, 2, 0, 0))
	for d, ops := range tl.Ops {
		for _, o := range ops {
			k := o.Microbatch + 1
			if want := max((k-1)/m-1, 0); o.UsedVersion != want {
				t.Errorf("device %d %v: version %d, want max(⌊(k−1)/m⌋−1, 0) = %d", d, o.Action, o.UsedVersion, want)
			}
		}
	}
	if _, err := Generate(TwoBW, Options{Stages: 4, Microbatches: 3}); err == nil {
		t.Error("2bw with m < p: want an error")
	}
}

// A 2BW-style schedule that names a version before it exists is rejected.
func TestVersionUsedBeforeItExists(t *testing.T) {
	s, err := Generate(TwoBW, Options{Stages: 2, Microbatches: 2, Batches: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range s.Devices[0] {
		if a.Microbatch == 2 { // first microbatch of batch 1 asks for version 1 (not 0)
			s.Devices[0][i].Version = 1
		}
	}
	_, err = Simulate(context.Background(), s, Uniform(1, 2, 0, 0), nil)
	if err == nil || !strings.Contains(err.Error(), "does not exist yet") {
		t.Errorf("got %v, want a version-does-not-exist error", err)
	}
}

// §4.2.1/§3.2.3: 1F1B keeps min(p−i, m) activations on stage i, GPipe m.
func TestInFlightActivations(t *testing.T) {
	for _, p := range []int{1, 3, 4, 8} {
		for _, m := range []int{1, 2, 4, 9, 16} {
			oneF := simulate(t, OneFOneB, Options{Stages: p, Microbatches: m}, Uniform(1, 2, 0, 0))
			gp := simulate(t, GPipe, Options{Stages: p, Microbatches: m}, Uniform(1, 2, 0, 0))
			for i := range p {
				if got, want := oneF.Devices[i].PeakActivations, min(p-i, m); got != want {
					t.Errorf("1f1b p=%d m=%d stage %d: %d activations, want min(p−i, m) = %d", p, m, i, got, want)
				}
				if got := gp.Devices[i].PeakActivations; got != m {
					t.Errorf("gpipe p=%d m=%d stage %d: %d activations, want m = %d", p, m, i, got, m)
				}
			}
		}
	}
}

// Peak memory is activations × ActivationBytes + versions × WeightBytes.
func TestPeakMemory(t *testing.T) {
	c := Costs{Stages: []StageCost{
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 10, WeightBytes: 1000},
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 20, WeightBytes: 2000},
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 30, WeightBytes: 3000},
	}}
	tl := simulate(t, OneFOneB, Options{Stages: 3, Microbatches: 6}, c)
	for i, st := range tl.Devices {
		want := float64(3-i)*c.Stages[i].ActivationBytes + c.Stages[i].WeightBytes
		if st.PeakMemoryBytes != want {
			t.Errorf("stage %d: peak %v bytes, want %v", i, st.PeakMemoryBytes, want)
		}
	}
	pd := simulate(t, PipeDream, Options{Stages: 3, Microbatches: 6}, c)
	for i, st := range pd.Devices {
		want := float64(3-i) * (c.Stages[i].ActivationBytes + c.Stages[i].WeightBytes)
		if st.PeakMemoryBytes != want {
			t.Errorf("pipedream stage %d: peak %v bytes, want (p−i)(activation + weights) = %v", i, st.PeakMemoryBytes, want)
		}
	}
}

// §2.4.3: with weight stashing, the gradient of stage i (0-based) is
// computed with weights p−1−i updates old; a stage keeps p−i versions.
// With vertical sync every stage uses the input stage's version.
func TestPipeDreamStaleness(t *testing.T) {
	const p, m = 5, 20
	tl := simulate(t, PipeDream, Options{Stages: p, Microbatches: m}, Uniform(1, 2, 0, 0))
	for i, ops := range tl.Ops {
		updates := 0
		for _, o := range ops {
			if o.Kind != Backward {
				continue
			}
			if o.Microbatch >= p && updates-o.UsedVersion != p-1-i {
				t.Errorf("stage %d microbatch %d: staleness %d, want p−1−i = %d", i, o.Microbatch, updates-o.UsedVersion, p-1-i)
			}
			updates++
		}
		if got := tl.Devices[i].PeakWeightVersions; got != p-i {
			t.Errorf("stage %d: %d weight versions, want p−i = %d", i, got, p-i)
		}
	}
	vs := simulate(t, PipeDream, Options{Stages: p, Microbatches: m, VerticalSync: true}, Uniform(1, 2, 0, 0))
	input := map[int]int{}
	for _, o := range vs.Ops[0] {
		input[o.Microbatch] = o.UsedVersion
	}
	for i, ops := range vs.Ops {
		for _, o := range ops {
			if o.UsedVersion != input[o.Microbatch] {
				t.Errorf("vertical sync stage %d %v: version %d, want the input stage's %d", i, o.Action, o.UsedVersion, input[o.Microbatch])
			}
		}
	}
}

// Qi et al. 2023: ZB-H1's bubble is (p−1)(T_F+T_B−T_W) per device at equal
// stage times (T_B the input-gradient time, here m ≥ p and T_W ≤ T_F),
// with 1F1B's peak of p stashed microbatches. A W longer than F fills
// only F of each gap: (p−1)(T_F+T_B−min(T_W, T_F)), found on this
// generator and checked here.
func TestZBH1Bubble(t *testing.T) {
	for m := 1; m < 8; m++ { // fewer microbatches than stages: valid, no formula
		tl := simulate(t, ZBH1, Options{Stages: 8, Microbatches: m}, Uniform(1, 2, 1, 0))
		if tl.Devices[0].PeakActivations != m {
			t.Errorf("p=8 m=%d: device 0 stashes %d microbatches, want m", m, tl.Devices[0].PeakActivations)
		}
	}
	for _, p := range []int{2, 4, 5, 8} {
		for _, m := range []int{p, 2*p + 1, 4 * p} {
			for _, c := range [][3]float64{{1, 2, 1}, {2, 3, 1}, {1, 1.5, 0.5}, {1, 4, 2}, {0.5, 2, 1.5}} {
				tf, tbw, tw := c[0], c[1], c[2]
				tl := simulate(t, ZBH1, Options{Stages: p, Microbatches: m}, Uniform(tf, tbw, tw, 0))
				want := float64(p-1) * (tf + (tbw - tw) - min(tw, tf))
				for d, st := range tl.Devices {
					if !near(st.IdleSeconds, want) {
						t.Errorf("p=%d m=%d T=%v device %d: idle %v, want (p−1)(T_F+T_B−T_W) = %v", p, m, c, d, st.IdleSeconds, want)
					}
					if st.PeakActivations > p {
						t.Errorf("p=%d m=%d device %d: %d stashed microbatches, want <= p", p, m, d, st.PeakActivations)
					}
				}
			}
		}
	}
}

// ZB-V as its authors tabulate it (Qi et al. 2024; the sail-sg
// zero-bubble README's comparison "assuming T_F=T_B=T_W": bubble rate 0,
// activation memory 1× 1F1B's, pipeline communication 2×): with equal F, I
// and W per chunk and m >= 2p, no device idles between its first action
// and its last, so the step is the work 2m(T_F+T_B+T_W) of one device plus
// the p−1 forwards before the last device starts; every device stashes at
// most 2p chunks, p microbatches of a whole stage as 1F1B's first stage;
// and each microbatch crosses devices 2(p−1) times each way, 1F1B's p−1
// twice. Device r runs stages r and 2p−1−r; with fewer microbatches the
// schedule stays valid, and the step is the registry's closed form
// 6m(1 + Bubble) at every m.
func TestZBVZeroBubble(t *testing.T) {
	for p := 1; p <= 8; p++ {
		for m := 1; m <= 4*p+1; m++ {
			tl := simulate(t, ZBV, Options{Stages: p, Microbatches: m}, Uniform(1, 2, 1, 0))
			for d, ops := range tl.Ops {
				first, second := ZBVStages(p, d)
				start, end := math.Inf(1), math.Inf(-1)
				for _, o := range ops {
					if o.Stage != first && o.Stage != second {
						t.Fatalf("p=%d m=%d device %d runs stage %d, want %d and %d", p, m, d, o.Stage, first, second)
					}
					if o.Kind.isCompute() {
						start, end = min(start, o.StartSeconds), max(end, o.EndSeconds)
					}
				}
				if m < 2*p {
					continue
				}
				if idle := end - start - tl.Devices[d].BusySeconds; !near(idle, 0) {
					t.Errorf("p=%d m=%d device %d: idle %v between its first and last action, want 0", p, m, d, idle)
				}
				if a := tl.Devices[d].PeakActivations; a != 2*p {
					t.Errorf("p=%d m=%d device %d: %d chunk activations stashed, want 2p = %d (1F1B's p whole-stage ones)", p, m, d, a, 2*p)
				}
			}
			// The registry's closed form, at every m.
			if b, err := ZBV.Bubble(p, m, VChunks); err != nil || !near(tl.StepSeconds, float64(6*m)*(1+b)) {
				t.Errorf("p=%d m=%d: step %v, want 6m(1 + bubble %v) (error %v)", p, m, tl.StepSeconds, b, err)
			}
			if m < 2*p {
				continue
			}
			if want := float64(2*m*3 + p - 1); !near(tl.StepSeconds, want) {
				t.Errorf("p=%d m=%d: step %v, want 2m(T_F+T_B+T_W) + (p−1)T_F = %v", p, m, tl.StepSeconds, want)
			}
			s, err := Generate(ZBV, Options{Stages: p, Microbatches: m})
			if err != nil {
				t.Fatal(err)
			}
			c, err := WithCommunication(s)
			if err != nil {
				t.Fatal(err)
			}
			var sends int
			for _, list := range c.Devices {
				for _, a := range list {
					if a.Kind == SendF {
						sends++
					}
				}
			}
			if sends != 2*(p-1)*m {
				t.Errorf("p=%d m=%d: %d forward sends, want 2(p−1)m = %d", p, m, sends, 2*(p-1)*m)
			}
		}
	}
}

// With communication c per link and one microbatch, the step is the
// critical path p(t_f+t_b) + 2(p−1)c.
func TestCommunicationOnTheCriticalPath(t *testing.T) {
	for _, kind := range []Kind{GPipe, OneFOneB} {
		tl := simulate(t, kind, Options{Stages: 4, Microbatches: 1}, Uniform(1, 2, 0, 0.25))
		if want := 4*3 + 2*3*0.25; !near(tl.StepSeconds, want) {
			t.Errorf("%s: step %v, want %v", kind, tl.StepSeconds, want)
		}
	}
}

// §2.4.2, Figure 2.7: in a 2-1 configuration the two replicas of stage 0
// take even and odd inputs, and when the replicated stage has twice the work
// the pipeline has a full steady state: idle time does not grow with m.
func TestOneFOneBRR(t *testing.T) {
	c := Costs{Stages: []StageCost{{FwdSeconds: 2, BwdSeconds: 4, ActivationBytes: 1}, {FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 1}}}
	var idle []float64
	for _, m := range []int{8, 16, 32} {
		tl := simulate(t, OneFOneBRR, Options{Stages: 2, Microbatches: m, Replicas: []int{2, 1}}, c)
		for rep := range 2 {
			for _, o := range tl.Ops[rep] {
				if o.Microbatch%2 != rep {
					t.Errorf("m=%d replica %d ran input %d", m, rep, o.Microbatch)
				}
			}
		}
		// NOAM = ⌈3 workers / 2 input replicas⌉ = 2 in flight per replica.
		if a, b, c := tl.Devices[0].PeakActivations, tl.Devices[1].PeakActivations, tl.Devices[2].PeakActivations; a != 2 || b != 2 || c != 1 {
			t.Errorf("m=%d: in-flight %d, %d, %d; want NOAM 2, 2 and 1", m, a, b, c)
		}
		idle = append(idle, tl.Devices[2].IdleSeconds)
	}
	if idle[0] != idle[1] || idle[1] != idle[2] {
		t.Errorf("stage-1 idle for m=8,16,32: %v, want constant (full steady state)", idle)
	}
}

func TestDeadlockIsReported(t *testing.T) {
	// Groups increasing along the pipeline: stage 1 waits for a second
	// forward that stage 0 only runs after a backward that needs stage 1.
	s := &Schedule{Kind: OneFOneBStar, Stages: 2, Chunks: 1, Microbatches: 3, Batches: 1, Devices: [][]Action{
		oneFOneB(0, seq(3), 0, anyVersion), oneFOneB(1, seq(3), 1, anyVersion)}}
	_, err := Simulate(context.Background(), s, Uniform(1, 2, 0, 0), nil)
	if err == nil || !strings.Contains(err.Error(), "deadlocks") || !strings.Contains(err.Error(), "device 1 stuck") {
		t.Errorf("got %v, want a deadlock naming device 1", err)
	}
	// A backward before its own forward on the same device.
	s = &Schedule{Stages: 1, Chunks: 1, Microbatches: 1, Batches: 1, Devices: [][]Action{{act(0, Backward, 0), act(0, Forward, 0)}}}
	if _, err := Simulate(context.Background(), s, Uniform(1, 2, 0, 0), nil); err == nil || !strings.Contains(err.Error(), "0B0") {
		t.Errorf("got %v, want a deadlock naming 0B0", err)
	}
}

func TestValidateRejectsBadSchedules(t *testing.T) {
	base := func() *Schedule {
		s, err := Generate(OneFOneB, Options{Stages: 2, Microbatches: 2})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := map[string]func(s *Schedule){
		"no backward":     func(s *Schedule) { s.Devices[1][len(s.Devices[1])-2] = act(1, RecvF, 1) },
		"cannot hold":     func(s *Schedule) { s.Devices[1] = s.Devices[1][:1] },
		"already runs":    func(s *Schedule) { s.Devices[0] = append(s.Devices[0], act(0, Forward, 0)) },
		"stage must be":   func(s *Schedule) { s.Devices[0][0].Stage = 7 },
		"microbatch must": func(s *Schedule) { s.Devices[0][0].Microbatch = 9 },
		"backward on": func(s *Schedule) {
			s.Devices[1] = append(s.Devices[1], act(0, Backward, 1))
			s.Devices[0] = drop(s.Devices[0], act(0, Backward, 1))
		},
		"both a whole":       func(s *Schedule) { s.Devices[0] = append(s.Devices[0], act(0, BackwardInput, 0)) },
		"schedule.chunks":    func(s *Schedule) { s.Chunks = 3 },
		"schedule.stages":    func(s *Schedule) { s.Stages = 0 },
		"first stage":        func(s *Schedule) { s.Devices[0] = append(s.Devices[0], act(0, RecvF, 0)) },
		"SEND_F on device 1": func(s *Schedule) { s.Devices[1] = append(s.Devices[1], act(0, SendF, 0)) },
		"takes no microbat": func(s *Schedule) {
			s.Devices[0] = append(s.Devices[0], Action{Stage: 0, Kind: OptStep, Microbatch: 0, Version: -1})
		},
	}
	for want, mutate := range cases {
		s := base()
		mutate(s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	if err := base().Validate(); err != nil {
		t.Errorf("unmodified: %v", err)
	}
}

// drop removes action a from list.
func drop(list []Action, a Action) []Action {
	var out []Action
	for _, x := range list {
		if x != a {
			out = append(out, x)
		}
	}
	return out
}

func TestCostsValidation(t *testing.T) {
	s, err := Generate(OneFOneB, Options{Stages: 2, Microbatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	for want, c := range map[string]Costs{
		"costs.stages: must have 1 or 2":   {Stages: make([]StageCost, 3)},
		"costs.stages[0].fwd_seconds":      Uniform(-1, 1, 0, 0),
		"costs.stages[0].wgrad_seconds":    Uniform(1, 1, 2, 0),
		"costs.opt_step_seconds":           {Stages: []StageCost{{}}, OptStepSeconds: -1},
		"costs.stages[0].activation_bytes": {Stages: []StageCost{{ActivationBytes: -2}}},
	} {
		if _, err := Simulate(context.Background(), s, c, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

// Sends and receives lowered into the lists do not change 1F1B's timing
// when each receive sits right before its consumer.
func TestSendRecvActions(t *testing.T) {
	s, err := Generate(OneFOneB, Options{Stages: 3, Microbatches: 4})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Simulate(context.Background(), s, Uniform(1, 2, 0, 0.5), nil)
	if err != nil {
		t.Fatal(err)
	}
	lowered, err := WithCommunication(s)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := Simulate(context.Background(), lowered, Uniform(1, 2, 0, 0.5), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tl.StepSeconds != plain.StepSeconds {
		t.Errorf("step with sends/receives %v, without %v", tl.StepSeconds, plain.StepSeconds)
	}
	if got, want := countKind(lowered, SendF), 2*4; got != want {
		t.Errorf("%d SEND_F actions, want %d", got, want)
	}
}

func countKind(s *Schedule, k ActionKind) int {
	n := 0
	for _, l := range s.Devices {
		for _, a := range l {
			if a.Kind == k {
				n++
			}
		}
	}
	return n
}

func TestCancel(t *testing.T) {
	s, err := Generate(OneFOneB, Options{Stages: 16, Microbatches: 4096})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Simulate(ctx, s, Uniform(1, 2, 0, 0), nil); err != context.Canceled {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestProgressReachesTotal(t *testing.T) {
	s, err := Generate(OneFOneB, Options{Stages: 4, Microbatches: 8})
	if err != nil {
		t.Fatal(err)
	}
	last := [2]int{}
	if _, err := Simulate(context.Background(), s, Uniform(1, 2, 0, 0), func(done, total int) { last = [2]int{done, total} }); err != nil {
		t.Fatal(err)
	}
	if last[0] != last[1] || last[1] != 4*16+4 {
		t.Errorf("last progress %v, want [68 68]", last)
	}
}

// TestStepperMatchesSimulate times every kind that needs no replicas or
// groups with a Stepper and with Simulate, with unequal stages and
// communication: the same step; and a Stepper reused under other costs
// gives their step.
func TestStepperMatchesSimulate(t *testing.T) {
	for _, in := range registry {
		if in.Kind == OneFOneBRR || in.Kind == OneFOneBStar {
			continue // need replicas or groups per stage
		}
		o := Options{Stages: 4, Microbatches: 8}
		if in.Chunked {
			o.Chunks = 2
		}
		if in.MultiBatch {
			o.Batches = 3
		}
		s, err := Generate(in.Kind, o)
		if err != nil {
			t.Fatalf("%s: %v", in.Kind, err)
		}
		st, err := NewStepper(s)
		if err != nil {
			t.Fatalf("%s: %v", in.Kind, err)
		}
		for _, scale := range []float64{1, 2.5} {
			c := Costs{Stages: make([]StageCost, s.Stages), OptStepSeconds: 0.3 * scale}
			for i := range c.Stages {
				f := scale * (1 + 0.25*float64(i%3))
				c.Stages[i] = StageCost{FwdSeconds: f, BwdSeconds: 2 * f, WgradSeconds: 0.8 * f, CommSeconds: 0.1 * scale}
			}
			got, err := st.StepSeconds(c)
			if err != nil {
				t.Fatalf("%s: %v", in.Kind, err)
			}
			if want := simulate(t, in.Kind, o, c).StepSeconds; !near(got, want) {
				t.Errorf("%s ×%v: Stepper %v, Simulate %v", in.Kind, scale, got, want)
			}
		}
	}
}
