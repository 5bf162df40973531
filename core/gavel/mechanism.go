package gavel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Combination is what the mechanism schedules: one job, or two jobs sharing
// the same GPUs (space sharing, §5.4.2).
type Combination struct {
	// JobIDs holds one job ID, or two for a co-located pair.
	JobIDs []int
	// ScaleFactor is the number of GPUs the combination occupies.
	ScaleFactor int
	// X is the policy's time fraction per worker type (a row of the
	// allocation): with UnconsolidatedX set, the consolidated time.
	X []float64
	// UnconsolidatedX, if set, is the policy's time fraction per worker type
	// with the GPUs on separate servers (Allocation.UnconsolidatedX): the
	// mechanism then tracks both placements apart and places combinations
	// chosen for this share into the gaps that others leave.
	UnconsolidatedX []float64
	// Runnable reports per worker type whether the combination can run there
	// (throughput > 0); the mechanism never schedules it elsewhere.
	Runnable []bool
}

// Placement is one combination's micro-task in a round (§5.5).
type Placement struct {
	// Combination indexes the combinations passed to Schedule.
	Combination int
	// WorkerType indexes ClusterSpec.WorkerTypes.
	WorkerType int
	// Workers are the GPU indices (within the worker type) the combination runs on.
	Workers []int
	// Consolidated reports whether the GPUs span as few servers as possible.
	Consolidated bool
	// LeaseRenewed reports that the combination keeps the GPUs it had last round.
	LeaseRenewed bool
}

// comboKey identifies a combination across rounds: its job IDs, -1 padded.
type comboKey [2]int

func keyOf(c Combination) comboKey {
	k := comboKey{c.JobIDs[0], -1}
	if len(c.JobIDs) > 1 {
		k[1] = c.JobIDs[1]
	}
	return k
}

// lease is where a combination ran in the last round.
type lease struct {
	workerType   int
	workers      []int
	consolidated bool
}

// Mechanism is Gavel's round-based scheduling mechanism (§5.5, Algorithm 2):
// every round it grants GPUs to the combinations furthest behind their
// allocation, then places them, packing multi-GPU jobs on servers and
// renewing leases.
type Mechanism struct {
	cluster      ClusterSpec
	roundSeconds float64
	// received[c][j] is the time combination c ran on worker type j since
	// the last Reset, plus half a round (Gavel's initial value, which keeps
	// fractions finite); entries k+j count the unconsolidated time on type j
	// of combinations with Combination.UnconsolidatedX (column).
	received map[comboKey][]float64
	leases   map[comboKey]lease
}

// NewMechanism returns a mechanism for cluster with rounds of roundSeconds.
func NewMechanism(cluster ClusterSpec, roundSeconds float64) (*Mechanism, error) {
	if err := cluster.Validate(); err != nil {
		return nil, err
	}
	if !(roundSeconds > 0) || math.IsInf(roundSeconds, 0) {
		return nil, fmt.Errorf("mechanism: round_s: must be > 0 and finite, got %v", roundSeconds)
	}
	return &Mechanism{
		cluster:      cluster,
		roundSeconds: roundSeconds,
		received:     map[comboKey][]float64{},
		leases:       map[comboKey]lease{},
	}, nil
}

// Reset forgets the time received so far (called when the allocation
// changes, so that fractions measure progress towards the new allocation).
func (m *Mechanism) Reset() {
	clear(m.received)
}

// Record adds seconds of run time on p's worker type (and placement, for
// placement-sensitive combinations) to combination c, and remembers p's GPUs
// for lease renewal in the next round.
func (m *Mechanism) Record(c Combination, p Placement, seconds float64) {
	k := keyOf(c)
	m.receivedOf(k)[m.column(c, p.WorkerType, !p.Consolidated)] += seconds
	m.leases[k] = lease{workerType: p.WorkerType, workers: p.Workers, consolidated: p.Consolidated}
}

// column is the index into received of worker type j, unconsolidated or
// not; combinations without UnconsolidatedX count all their time on j.
func (m *Mechanism) column(c Combination, j int, spread bool) int {
	if spread && c.UnconsolidatedX != nil {
		return len(m.cluster.WorkerTypes) + j
	}
	return j
}

// receivedOf returns k's time counters, creating them at half a round.
func (m *Mechanism) receivedOf(k comboKey) []float64 {
	r, ok := m.received[k]
	if !ok {
		r = make([]float64, 2*len(m.cluster.WorkerTypes))
		for j := range r {
			r[j] = m.roundSeconds / 2
		}
		m.received[k] = r
	}
	return r
}

// candidate is one (combination, worker type, placement) choice with its
// priority; spread marks the unconsolidated share of a placement-sensitive
// combination.
type candidate struct {
	combo, workerType int
	spread            bool
	priority, x       float64
	firstJob          int
}

// Schedule picks and places the combinations to run in the next round
// (§5.5, Algorithm 2). Priorities are X / f, element-wise, where f is the
// fraction of the worker type's time the combination received; both X and f
// are normalized per worker type so priorities compare across types (and,
// for placement-sensitive combinations, per placement: the unconsolidated
// share of a type is a column of its own). The
// greedy pass takes the highest priority first, skips combinations sharing a
// job with one already chosen and those that do not fit; GPUs still idle
// afterwards go to runnable combinations without allocation, in job-ID order
// (work conservation). Combinations absent from combos are forgotten.
func (m *Mechanism) Schedule(combos []Combination) ([]Placement, error) {
	if err := m.check(combos); err != nil {
		return nil, err
	}
	m.forgetAbsent(combos)
	cands, fill := m.candidates(combos)
	slices.SortFunc(cands, compareCandidates)
	slices.SortStableFunc(fill, func(a, b candidate) int { return cmp.Compare(a.firstJob, b.firstJob) })
	free := append([]int(nil), m.cluster.NumWorkers...)
	busyJobs := map[int]bool{}
	var chosen []candidate
	for _, c := range append(cands, fill...) {
		combo := combos[c.combo]
		if combo.ScaleFactor > free[c.workerType] || anyBusy(combo.JobIDs, busyJobs) {
			continue
		}
		free[c.workerType] -= combo.ScaleFactor
		for _, id := range combo.JobIDs {
			busyJobs[id] = true
		}
		chosen = append(chosen, c)
	}
	return m.place(combos, chosen), nil
}

// candidates lists the runnable (combination, worker type, placement)
// choices: those with allocation, with priorities, and the rest as
// fill-ins. Columns k+j are the unconsolidated shares.
func (m *Mechanism) candidates(combos []Combination) (cands, fill []candidate) {
	k := len(m.cluster.WorkerTypes)
	sumX := make([]float64, 2*k)
	sumT := make([]float64, 2*k)
	for _, c := range combos {
		r := m.receivedOf(keyOf(c))
		for col := range 2 * k {
			sumX[col] += allocated(c, col, k)
			sumT[col] += r[col]
		}
	}
	for i, c := range combos {
		r := m.received[keyOf(c)]
		for col := range 2 * k {
			j, spread := col%k, col >= k
			if !c.Runnable[j] || c.ScaleFactor > m.cluster.NumWorkers[j] || (spread && c.UnconsolidatedX == nil) {
				continue
			}
			x := allocated(c, col, k)
			cand := candidate{combo: i, workerType: j, spread: spread, x: x, firstJob: c.JobIDs[0]}
			switch {
			case x > 0:
				cand.priority = (x / sumX[col]) / (r[col] / sumT[col])
				cands = append(cands, cand)
			case !spread:
				fill = append(fill, cand)
			}
		}
	}
	return cands, fill
}

// allocated is c's allocation in column col of k worker types (k+j: the
// unconsolidated share on type j).
func allocated(c Combination, col, k int) float64 {
	if col < k {
		return c.X[col]
	}
	if c.UnconsolidatedX == nil {
		return 0
	}
	return c.UnconsolidatedX[col-k]
}

// forgetAbsent drops the state of combinations that are no longer offered.
func (m *Mechanism) forgetAbsent(combos []Combination) {
	present := make(map[comboKey]bool, len(combos))
	for _, c := range combos {
		present[keyOf(c)] = true
	}
	for k := range m.received {
		if !present[k] {
			delete(m.received, k)
		}
	}
	for k := range m.leases {
		if !present[k] {
			delete(m.leases, k)
		}
	}
}

// check validates the combinations' shapes and values.
func (m *Mechanism) check(combos []Combination) error {
	k := len(m.cluster.WorkerTypes)
	seen := map[comboKey]bool{}
	for i, c := range combos {
		if len(c.JobIDs) < 1 || len(c.JobIDs) > 2 {
			return fmt.Errorf("mechanism: combinations[%d].job_ids: want 1 or 2 jobs, got %d", i, len(c.JobIDs))
		}
		if len(c.JobIDs) == 2 && c.JobIDs[0] == c.JobIDs[1] {
			return fmt.Errorf("mechanism: combinations[%d].job_ids: a job cannot pair with itself (%d)", i, c.JobIDs[0])
		}
		if seen[keyOf(c)] {
			return fmt.Errorf("mechanism: combinations[%d]: duplicate jobs %v", i, c.JobIDs)
		}
		seen[keyOf(c)] = true
		if c.ScaleFactor < 1 {
			return fmt.Errorf("mechanism: combinations[%d].scale_factor: must be >= 1, got %d", i, c.ScaleFactor)
		}
		if len(c.X) != k || len(c.Runnable) != k {
			return fmt.Errorf("mechanism: combinations[%d]: x and runnable need %d entries, got %d and %d", i, k, len(c.X), len(c.Runnable))
		}
		if c.UnconsolidatedX != nil && len(c.UnconsolidatedX) != k {
			return fmt.Errorf("mechanism: combinations[%d].unconsolidated_x: needs %d entries, got %d", i, k, len(c.UnconsolidatedX))
		}
		for col := range 2 * k {
			if x := allocated(c, col, k); !(x >= 0) || math.IsInf(x, 0) {
				return fmt.Errorf("mechanism: combinations[%d].%s: must be >= 0 and finite, got %v", i, columnName(col, k), x)
			}
		}
	}
	return nil
}

// columnName names column col of k worker types for errors: "x[j]" or
// "unconsolidated_x[j]".
func columnName(col, k int) string {
	if col < k {
		return fmt.Sprintf("x[%d]", col)
	}
	return fmt.Sprintf("unconsolidated_x[%d]", col-k)
}

// compareCandidates orders candidates by decreasing priority, then
// decreasing allocation, then job ID, worker type and combination index.
func compareCandidates(a, b candidate) int {
	if c := cmp.Compare(b.priority, a.priority); c != 0 {
		return c
	}
	if c := cmp.Compare(b.x, a.x); c != 0 {
		return c
	}
	if c := cmp.Compare(a.firstJob, b.firstJob); c != 0 {
		return c
	}
	if c := cmp.Compare(a.workerType, b.workerType); c != 0 {
		return c
	}
	if a.spread != b.spread {
		if a.spread {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.combo, b.combo)
}

// anyBusy reports whether one of ids is already scheduled this round.
func anyBusy(ids []int, busy map[int]bool) bool {
	for _, id := range ids {
		if busy[id] {
			return true
		}
	}
	return false
}
