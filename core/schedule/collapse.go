package schedule

import (
	"math"
	"sort"
)

// steadyState is a run of identical periods of a timeline: from
// FromSeconds on, Repeats consecutive windows of PeriodSeconds in which
// every device does the same actions, each window's shifted by one period
// from the last (the 1F1B steady state, for instance).
type steadyState struct {
	FromSeconds, PeriodSeconds float64
	Repeats                    int
}

// findSteadyState finds the repeated period around the middle of the step:
// the period is the shortest shift that maps device 0's actions from the
// middle on (an eighth of them, or one period if longer) onto later ones of
// the same kind, stage and duration; the run is
// extended window by window while every device's actions repeat. ok is
// false when fewer than three windows repeat.
func findSteadyState(t *Timeline) (steadyState, bool) {
	if len(t.Ops) == 0 || len(t.Ops[0]) < 8 || !(t.StepSeconds > 0) {
		return steadyState{}, false
	}
	ops := t.Ops[0]
	n, c := len(ops), len(ops)/2
	tol := 1e-9 * t.StepSeconds
	near := func(a, b float64) bool { return math.Abs(a-b) <= tol }
	same := func(a, b Op, shift float64) bool {
		return a.Kind == b.Kind && a.Stage == b.Stage &&
			near(b.StartSeconds-a.StartSeconds, shift) && near(b.EndSeconds-a.EndSeconds, shift)
	}
	period := 0.0
	// The shift must hold over an eighth of the actions at least, not only
	// locally (interleaved 1F1B repeats a forward-backward pair within
	// each group of microbatches, and its chunks every group).
	span := max(n/8, 2)
	for L := 1; L <= n/4 && c+L+span <= n; L++ {
		p := ops[c+L].StartSeconds - ops[c].StartSeconds
		if !(p > tol) {
			continue
		}
		ok := true
		for q := c; q < c+max(L, span) && q+L < n && ok; q++ {
			ok = same(ops[q], ops[q+L], p)
		}
		if ok {
			period = p
			break
		}
	}
	if period == 0 {
		return steadyState{}, false
	}
	from := ops[c].StartSeconds
	// window returns the actions of device d starting in window q.
	window := func(d, q int) []Op {
		lo, hi := from+float64(q)*period-tol, from+float64(q+1)*period-tol
		o := t.Ops[d]
		i := sort.Search(len(o), func(i int) bool { return o[i].StartSeconds >= lo })
		j := sort.Search(len(o), func(i int) bool { return o[i].StartSeconds >= hi })
		return o[i:j]
	}
	repeats := func(q int) bool { // window q is window 0 shifted
		if from+float64(q)*period < t.StartSeconds-tol || from+float64(q+1)*period > t.EndSeconds+tol {
			return false
		}
		for d := range t.Ops {
			a, b := window(d, 0), window(d, q)
			if len(a) != len(b) {
				return false
			}
			for i := range a {
				if !same(a[i], b[i], float64(q)*period) {
					return false
				}
			}
		}
		return true
	}
	lo, hi := 0, 0
	for repeats(hi + 1) {
		hi++
	}
	for repeats(lo - 1) {
		lo--
	}
	if hi-lo+1 < 3 {
		return steadyState{}, false
	}
	return steadyState{FromSeconds: from + float64(lo)*period, PeriodSeconds: period, Repeats: hi - lo + 1}, true
}

// gap is the part of a steady state a drawing leaves out: the drawn
// timeline runs to AtSeconds, shows a band of BandSeconds (drawn time) in
// its place, and continues ShiftSeconds earlier than the real timeline.
type gap struct {
	AtSeconds, BandSeconds, ShiftSeconds float64
	// Periods and PeriodSeconds say what the band stands for.
	Periods       int
	PeriodSeconds float64
}

// real maps a drawn time to the real one.
func (g gap) real(sec float64) float64 {
	if g.Periods > 0 && sec >= g.AtSeconds+g.BandSeconds {
		return sec + g.ShiftSeconds
	}
	return sec
}

// collapse returns a copy of t drawn without all but the first and last
// windows of its steady state ss, the rest replaced by a band as wide as
// bandFraction of the drawn step, and that gap. Actions that start before
// the gap are kept where they are, those that end after it move earlier.
func collapse(t *Timeline, ss steadyState, bandFraction float64) (*Timeline, gap) {
	at := ss.FromSeconds + ss.PeriodSeconds
	left := ss.PeriodSeconds * float64(ss.Repeats-2) // the time left out
	band := bandFraction * (t.StepSeconds - left) / (1 - bandFraction)
	g := gap{AtSeconds: at, BandSeconds: band, ShiftSeconds: left - band, Periods: ss.Repeats - 2, PeriodSeconds: ss.PeriodSeconds}
	c := *t
	c.Ops = make([][]Op, len(t.Ops))
	for d, ops := range t.Ops {
		for _, o := range ops {
			switch {
			case o.StartSeconds < at:
				c.Ops[d] = append(c.Ops[d], o)
			case o.EndSeconds > at+left:
				o.StartSeconds -= g.ShiftSeconds
				o.EndSeconds -= g.ShiftSeconds
				c.Ops[d] = append(c.Ops[d], o)
			}
		}
	}
	c.EndSeconds = t.EndSeconds - g.ShiftSeconds
	c.StepSeconds = c.EndSeconds - c.StartSeconds
	return &c, g
}
