package partition

import (
	"fmt"
	"math"
)

// PatternOp is one operation of a periodic pattern (madpipe-2020 §3): in
// period k it starts at k·T + StartSeconds and works on microbatch k - Shift.
type PatternOp struct {
	// Kind is "F" or "B" for a stage's forward or backward pass, "SEND_F" or
	// "SEND_B" for the activation or gradient crossing the link after Stage.
	Kind string `json:"kind"`
	// Stage is the index of the stage (for sends: the stage before the link).
	Stage int `json:"stage"`
	// Processor runs a forward or backward pass; -1 for sends.
	Processor int `json:"processor"`
	// Link is the pair of processors a send uses, lower index first.
	Link [2]int `json:"link"`
	// StartSeconds is t, in [0, period).
	StartSeconds float64 `json:"start_seconds"`
	// Shift is h, the index shift.
	Shift int `json:"shift"`
	// DurationSeconds is how long the operation runs.
	DurationSeconds float64 `json:"duration_seconds"`
}

// madPlaced is an allocation with a processor number for every stage.
type madPlaced struct {
	stages    []madStage
	processor []int
	// processors is the number of distinct processors used.
	processors int
}

// madPlace numbers the processors in the order their first stage appears.
func madPlace(a []madStage) madPlaced {
	pl := madPlaced{stages: a, processor: make([]int, len(a))}
	special := -1
	for i, s := range a {
		switch {
		case s.special && special >= 0:
			pl.processor[i] = special
		case s.special:
			special = pl.processors
			fallthrough
		default:
			pl.processor[i] = pl.processors
			pl.processors++
		}
	}
	return pl
}

// madPattern is a periodic pattern of a placed allocation, operations in
// dependency order (forwards down the chain, then backwards up it) with
// their absolute start σ = h·T + t for microbatch 0.
type madPattern struct {
	period float64
	ops    []PatternOp
	sigma  []float64
}

// madOps lists the operations of one microbatch in dependency order, each
// depending on the one before (§3, Figure 1), with their durations.
func madOps(c *madChain, pl madPlaced) []PatternOp {
	n := len(pl.stages)
	var ops []PatternOp
	send := func(kind string, i int) PatternOp {
		a, b := pl.processor[i], pl.processor[i+1]
		return PatternOp{Kind: kind, Stage: i, Processor: -1, Link: [2]int{min(a, b), max(a, b)},
			DurationSeconds: c.output[pl.stages[i].last] / c.bandwidth}
	}
	for i, s := range pl.stages {
		ops = append(ops, PatternOp{Kind: "F", Stage: i, Processor: pl.processor[i], DurationSeconds: c.forward(s.first, s.last)})
		if i+1 < n && pl.processor[i] != pl.processor[i+1] {
			ops = append(ops, send("SEND_F", i))
		}
	}
	for i := n - 1; i >= 0; i-- {
		if i+1 < n && pl.processor[i] != pl.processor[i+1] {
			ops = append(ops, send("SEND_B", i))
		}
		s := pl.stages[i]
		ops = append(ops, PatternOp{Kind: "B", Stage: i, Processor: pl.processor[i], DurationSeconds: c.compute(s.first, s.last) - c.forward(s.first, s.last)})
	}
	return ops
}

// madResource names the processor or link an operation occupies.
func madResource(op PatternOp) [2]int {
	if op.Processor >= 0 {
		return [2]int{op.Processor, op.Processor}
	}
	return op.Link
}

// madBuildPattern places the operations of one microbatch in dependency
// order, each at the earliest time its predecessor allows and its resource
// is free modulo the period (modulo list scheduling). On a contiguous
// allocation this is the 1F1B* pattern of §4.1: forwards back to back, and a
// backward waits one period exactly when its group is full. It returns false
// if an operation finds no free slot.
func madBuildPattern(c *madChain, pl madPlaced, period float64) (*madPattern, bool) {
	ops := madOps(c, pl)
	eps := 1e-12 * period
	busy := map[[2]int][][2]float64{} // reserved [start, end) within [0, period)
	pat := &madPattern{period: period, ops: ops, sigma: make([]float64, len(ops))}
	ready := 0.0
	for i, op := range ops {
		d := op.DurationSeconds
		if d > period+eps {
			return nil, false
		}
		res := madResource(op)
		start := ready
		for d > 0 && start-ready <= period+eps {
			x := start - period*math.Floor(start/period)
			shift := 0.0
			for _, iv := range busy[res] {
				for _, off := range [2]float64{0, period} {
					if x < iv[1]+off-eps && iv[0]+off < x+d-eps {
						shift = math.Max(shift, iv[1]+off-x)
					}
				}
			}
			if shift == 0 {
				break
			}
			start += shift
		}
		if start-ready > period+eps {
			return nil, false
		}
		if d > 0 {
			x := start - period*math.Floor(start/period)
			if x+d <= period {
				busy[res] = append(busy[res], [2]float64{x, x + d})
			} else {
				busy[res] = append(busy[res], [2]float64{x, period}, [2]float64{0, x + d - period})
			}
		}
		pat.sigma[i] = start
		pat.ops[i].Shift = int(math.Floor(start / period))
		pat.ops[i].StartSeconds = start - float64(pat.ops[i].Shift)*period
		ready = start + d
	}
	return pat, true
}

// madCheckPattern proves a pattern valid (§3): every operation starts when
// its predecessor in the microbatch's chain has finished, and no two
// operations overlap on a processor or link when the pattern repeats.
func madCheckPattern(p *madPattern) error {
	T := p.period
	eps := 1e-9 * T
	for i := 1; i < len(p.ops); i++ {
		if p.sigma[i] < p.sigma[i-1]+p.ops[i-1].DurationSeconds-eps {
			return fmt.Errorf("op %d (%s stage %d) starts before op %d ends", i, p.ops[i].Kind, p.ops[i].Stage, i-1)
		}
	}
	for i, a := range p.ops {
		if a.StartSeconds < 0 || a.StartSeconds >= T || a.DurationSeconds > T+eps {
			return fmt.Errorf("op %d (%s stage %d) does not fit in the period", i, a.Kind, a.Stage)
		}
		for j := i + 1; j < len(p.ops); j++ {
			b := p.ops[j]
			if madResource(a) != madResource(b) {
				continue
			}
			if a.DurationSeconds <= eps || b.DurationSeconds <= eps {
				continue
			}
			// gap is the time from a's start to b's next start.
			gap := math.Mod(b.StartSeconds-a.StartSeconds+T, T)
			if gap < a.DurationSeconds-eps || T-gap < b.DurationSeconds-eps {
				return fmt.Errorf("ops %d (%s stage %d) and %d (%s stage %d) overlap on the same resource", i, a.Kind, a.Stage, j, b.Kind, b.Stage)
			}
		}
	}
	return nil
}

// madMemory is the peak memory of each processor under a pattern, and the
// activations each stage keeps: a microbatch's inputs stay on a stage from
// the start of its forward to the end of its backward (§4.1); weights (three
// copies) and the buffers of links to other processors are always there.
func madMemory(c *madChain, pl madPlaced, p *madPattern) (memory []float64, activations []int) {
	n := len(pl.stages)
	fStart, bEnd := make([]float64, n), make([]float64, n)
	for i, op := range p.ops {
		switch op.Kind {
		case "F":
			fStart[op.Stage] = p.sigma[i]
		case "B":
			bEnd[op.Stage] = p.sigma[i] + op.DurationSeconds
		}
	}
	T := p.period
	live := func(s int, tau float64) int { // microbatches held by stage s at time tau, up to rounding
		return int(math.Floor((tau-fStart[s])/T+1e-9) - math.Floor((tau-bEnd[s])/T+1e-9))
	}
	memory = make([]float64, pl.processors)
	activations = make([]int, n)
	peak := make([]float64, pl.processors)
	for s, st := range pl.stages {
		q := pl.processor[s]
		memory[q] += 3 * (c.weightSum[st.last+1] - c.weightSum[st.first])
		if s > 0 && pl.processor[s-1] != q {
			memory[q] += 2 * c.output[st.first-1]
		}
		if s+1 < n && pl.processor[s+1] != q {
			memory[q] += 2 * c.output[st.last]
		}
		activations[s] = live(s, fStart[s])
		at := 0.0 // activation bytes on q when stage s starts a forward
		for r := range pl.stages {
			if pl.processor[r] == q {
				at += float64(live(r, fStart[s])) * c.stored(pl.stages[r].first, pl.stages[r].last)
			}
		}
		peak[q] = math.Max(peak[q], at)
	}
	for q := range memory {
		memory[q] += peak[q]
	}
	return memory, activations
}
