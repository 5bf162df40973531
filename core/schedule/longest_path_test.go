package schedule

import (
	"context"
	"math/rand/v2"
	"testing"
)

// refStart computes every action's start time independently of the
// simulator, as the longest path to it in the dependency graph (device
// order plus data dependencies), by memoized recursion.
func refStart(s *Schedule, c Costs) map[Action]float64 {
	type place struct{ device, index int }
	where := map[[3]int]place{}
	for d, list := range s.Devices {
		for i, a := range list {
			where[[3]int{a.Stage, int(a.Kind), a.Microbatch}] = place{d, i}
		}
	}
	split := func(st, mb int) bool { _, ok := where[[3]int{st, int(BackwardInput), mb}]; return ok }
	memo := map[place]float64{}
	var start func(p place) float64
	var end func(st int, k ActionKind, mb, consumer int, link float64) float64
	end = func(st int, k ActionKind, mb, consumer int, link float64) float64 {
		p := where[[3]int{st, int(k), mb}]
		a := s.Devices[p.device][p.index]
		t := start(p) + c.duration(a)
		if p.device != consumer {
			t += link
		}
		return t
	}
	start = func(p place) float64 {
		if t, ok := memo[p]; ok {
			return t
		}
		a, t := s.Devices[p.device][p.index], 0.0
		if p.index > 0 {
			prev := s.Devices[p.device][p.index-1]
			t = start(place{p.device, p.index - 1}) + c.duration(prev)
		}
		bwd := func(st int) ActionKind {
			if split(st, a.Microbatch) {
				return BackwardInput
			}
			return Backward
		}
		switch a.Kind {
		case Forward:
			if a.Stage > 0 {
				t = max(t, end(a.Stage-1, Forward, a.Microbatch, p.device, c.stage(a.Stage-1).CommSeconds))
			}
		case Backward, BackwardInput:
			t = max(t, end(a.Stage, Forward, a.Microbatch, p.device, 0))
			if a.Stage < s.Stages-1 {
				t = max(t, end(a.Stage+1, bwd(a.Stage+1), a.Microbatch, p.device, c.stage(a.Stage).CommSeconds))
			}
		case BackwardWeight:
			t = max(t, end(a.Stage, BackwardInput, a.Microbatch, p.device, 0))
		case OptStep:
			for mb := range s.TotalMicrobatches() {
				k := Backward
				if split(a.Stage, mb) {
					k = BackwardWeight
				}
				t = max(t, end(a.Stage, k, mb, p.device, 0))
			}
		}
		memo[p] = t
		return t
	}
	out := map[Action]float64{}
	for d, list := range s.Devices {
		for i, a := range list {
			out[a] = start(place{d, i})
		}
	}
	return out
}

// The simulator's start times equal the longest-path reference on every
// kind, with random per-stage costs and communication.
func TestSimulateMatchesLongestPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kind := range Kinds {
		for trial := range 5 {
			o := Options{Stages: 2 + rng.IntN(4), Microbatches: 1 + rng.IntN(9)}
			switch kind {
			case Interleaved:
				o.Chunks = 2 + rng.IntN(2)
				o.Microbatches = o.Stages * (1 + rng.IntN(3))
			case DualPipeV:
				o.Microbatches = 2*o.Stages + rng.IntN(5)
			case TwoBW:
				o.Microbatches = o.Stages + rng.IntN(3)
				o.Batches = 1 + rng.IntN(3)
			case OneFOneBRR:
				o.Replicas = make([]int, o.Stages)
				for i := range o.Replicas {
					o.Replicas[i] = 1 + rng.IntN(2)
				}
			case OneFOneBStar:
				o.Groups = make([]int, o.Stages)
				g := 1
				for i := o.Stages - 1; i >= 0; i-- {
					g += rng.IntN(2)
					o.Groups[i] = g
				}
			}
			s, err := Generate(kind, o)
			if err != nil {
				t.Fatal(err)
			}
			c := Costs{}
			for range s.Stages {
				b := 0.5 + rng.Float64()*2
				c.Stages = append(c.Stages, StageCost{FwdSeconds: 0.2 + rng.Float64(), BwdSeconds: b, WgradSeconds: b * rng.Float64(), CommSeconds: rng.Float64() / 2})
			}
			tl, err := Simulate(context.Background(), s, c, nil)
			if err != nil {
				t.Fatalf("%s %+v: %v", kind, o, err)
			}
			ref := refStart(s, c)
			for _, ops := range tl.Ops {
				for _, op := range ops {
					if !near(op.StartSeconds, ref[op.Action]) {
						t.Fatalf("%s trial %d %+v: %v starts at %v, longest path says %v", kind, trial, o, op.Action, op.StartSeconds, ref[op.Action])
					}
				}
			}
		}
	}
}
