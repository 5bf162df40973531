package gavel

import "sort"

// place assigns GPUs to the chosen combinations (§5.5): in decreasing order
// of scale factor, each keeps last round's GPUs if they were consolidated and
// are free (lease renewal), else gets GPUs on as few servers as possible,
// best fit, avoiding GPUs that other chosen combinations hold on lease.
// Combinations chosen for their unconsolidated share (placement
// sensitivity) come last: they renew any lease, and otherwise fill the
// servers with the fewest free GPUs first, the gaps the others cannot use.
func (m *Mechanism) place(combos []Combination, chosen []candidate) []Placement {
	used := make([][]bool, len(m.cluster.WorkerTypes))
	reserved := make([][]bool, len(used))
	for j, n := range m.cluster.NumWorkers {
		used[j] = make([]bool, n)
		reserved[j] = make([]bool, n)
	}
	for _, c := range chosen {
		if l, ok := m.leases[keyOf(combos[c.combo])]; ok && l.workerType == c.workerType {
			for _, g := range l.workers {
				reserved[c.workerType][g] = true
			}
		}
	}
	order := make([]int, len(chosen))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ca, cb := chosen[order[a]], chosen[order[b]]
		if ca.spread != cb.spread {
			return cb.spread
		}
		return combos[ca.combo].ScaleFactor > combos[cb.combo].ScaleFactor
	})
	out := make([]Placement, len(chosen))
	for _, i := range order {
		c := chosen[i]
		combo := combos[c.combo]
		j := c.workerType
		p := Placement{Combination: c.combo, WorkerType: j}
		if l, ok := m.leases[keyOf(combo)]; ok && (l.consolidated || c.spread) && l.workerType == j && len(l.workers) == combo.ScaleFactor && allFree(used[j], l.workers) {
			p.Workers = append([]int(nil), l.workers...)
			p.LeaseRenewed = true
		} else {
			p.Workers = m.pickGPUs(j, combo.ScaleFactor, used[j], reserved[j], c.spread)
		}
		for _, g := range p.Workers {
			used[j][g] = true
		}
		p.Consolidated = m.serversUsed(j, p.Workers) == m.minServers(j, combo.ScaleFactor)
		out[i] = p
	}
	return out
}

// pickGPUs chooses n free GPUs of worker type j, consolidated if possible
// (or, for spread, from the fullest servers first), preferring GPUs nobody
// holds on lease. The scheduler guarantees n free GPUs.
func (m *Mechanism) pickGPUs(j, n int, used, reserved []bool, spread bool) []int {
	gather := m.gather
	if spread {
		gather = m.gatherGaps
	}
	unreserved, okU := gather(j, n, func(g int) bool { return !used[g] && !reserved[g] })
	if okU {
		return unreserved
	}
	all, okA := gather(j, n, func(g int) bool { return !used[g] })
	if okA || unreserved == nil {
		return all
	}
	return unreserved
}

// gather picks n GPUs of type j among those free() allows: from the
// best-fitting single server if one fits, else from the servers with the
// most free GPUs first. It reports whether the choice is consolidated; it
// returns nil if fewer than n GPUs are free.
func (m *Mechanism) gather(j, n int, free func(int) bool) ([]int, bool) {
	counts, total := m.freePerServer(j, free)
	if total < n {
		return nil, false
	}
	best := -1
	for s, c := range counts {
		if c >= n && (best < 0 || c < counts[best]) {
			best = s
		}
	}
	if best >= 0 {
		return m.take(j, []int{best}, n, free), true
	}
	order := make([]int, len(counts))
	for s := range order {
		order[s] = s
	}
	sort.SliceStable(order, func(a, b int) bool { return counts[order[a]] > counts[order[b]] })
	nServers, got := 0, 0
	for got < n {
		got += counts[order[nServers]]
		nServers++
	}
	return m.take(j, order[:nServers], n, free), nServers == m.minServers(j, n)
}

// gatherGaps picks n GPUs of type j among those free() allows from the
// servers with the fewest free GPUs first (placement sensitivity: a job
// that runs well unconsolidated uses the gaps and leaves whole servers to
// jobs that need them). It reports true when it found n GPUs; it returns
// nil if fewer than n GPUs are free.
func (m *Mechanism) gatherGaps(j, n int, free func(int) bool) ([]int, bool) {
	counts, total := m.freePerServer(j, free)
	if total < n {
		return nil, false
	}
	var order []int
	for s, c := range counts {
		if c > 0 {
			order = append(order, s)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return counts[order[a]] < counts[order[b]] })
	return m.take(j, order, n, free), true
}

// freePerServer counts the GPUs of type j that free() allows per server,
// and in all.
func (m *Mechanism) freePerServer(j int, free func(int) bool) ([]int, int) {
	size, workers := m.cluster.serverSize(j), m.cluster.NumWorkers[j]
	counts := make([]int, (workers+size-1)/size)
	total := 0
	for g := range workers {
		if free(g) {
			counts[g/size]++
			total++
		}
	}
	return counts, total
}

// take returns the first n free GPUs of the given servers of type j, in
// server order, sorted.
func (m *Mechanism) take(j int, servers []int, n int, free func(int) bool) []int {
	size, workers := m.cluster.serverSize(j), m.cluster.NumWorkers[j]
	out := make([]int, 0, n)
	for _, s := range servers {
		for g := s * size; g < min((s+1)*size, workers) && len(out) < n; g++ {
			if free(g) {
				out = append(out, g)
			}
		}
	}
	sort.Ints(out)
	return out
}

// minServers is the fewest servers of type j that hold n GPUs.
func (m *Mechanism) minServers(j, n int) int {
	return minServers(m.cluster.serverSize(j), n)
}

// serversUsed counts the distinct servers of type j among gpus.
func (m *Mechanism) serversUsed(j int, gpus []int) int {
	size := m.cluster.serverSize(j)
	seen := map[int]bool{}
	for _, g := range gpus {
		seen[g/size] = true
	}
	return len(seen)
}

// allFree reports whether none of gpus is used.
func allFree(used []bool, gpus []int) bool {
	for _, g := range gpus {
		if g >= len(used) || used[g] {
			return false
		}
	}
	return true
}
