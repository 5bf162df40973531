package model

import "slices"

// Chain linearizes the graph into a chain profile for chain partitioners
// (MadPipe, 2BW): one layer per node PipeDream's optimizer keeps (Input
// sources and __getitem__ sinks dropped), in a depth-first topological order
// that finishes a branch before starting the next (ties: file order). Times
// are converted from milliseconds to seconds. A layer's
// OutputActivationBytes is what crosses a cut right after it: the summed
// activations of every earlier-or-same node with an edge past the cut (for
// a plain chain, the layer's own output; the last layer keeps its own
// output). MicrobatchSize is g.MicrobatchSize (0 when unknown).
func (g *Graph) Chain() Profile {
	keep := g.OptimizerNodes()
	order := g.chainOrder(keep)
	pos := make([]int, len(g.Nodes))
	for i, v := range order {
		pos[v] = i
	}
	p := Profile{Name: g.Name, MicrobatchSize: g.MicrobatchSize, Layers: make([]Layer, len(order))}
	for i, v := range order {
		n := g.Nodes[v]
		p.Layers[i] = Layer{Name: n.ID, FwdSeconds: n.FwdMillis / 1000, BwdSeconds: n.BwdMillis / 1000, ParameterBytes: n.ParameterBytes}
	}
	// Each node's output crosses every cut from its own position up to (not
	// including) its last consumer's position.
	cross := make([]float64, len(order)+1)
	for i, v := range order {
		last := i
		for _, w := range g.Out[v] {
			if keep[w] {
				last = max(last, pos[w])
			}
		}
		cross[i] += g.Nodes[v].ActivationBytes
		cross[last] -= g.Nodes[v].ActivationBytes
	}
	run := 0.0
	for i := range order {
		run += cross[i]
		p.Layers[i].OutputActivationBytes = max(run, 0)
	}
	if n := len(order); n > 0 {
		p.Layers[n-1].OutputActivationBytes = g.Nodes[order[n-1]].ActivationBytes
	}
	return p
}

// chainOrder is a topological order of the kept nodes that always continues
// with the most recently enabled node (depth first), so branches stay together.
func (g *Graph) chainOrder(keep []bool) []int {
	indeg := make([]int, len(g.Nodes))
	var stack []int
	for v := len(g.Nodes) - 1; v >= 0; v-- {
		if !keep[v] {
			continue
		}
		for _, u := range g.In[v] {
			if keep[u] {
				indeg[v]++
			}
		}
		if indeg[v] == 0 {
			stack = append(stack, v)
		}
	}
	var order []int
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, v)
		var ready []int
		for _, w := range g.Out[v] {
			if keep[w] {
				if indeg[w]--; indeg[w] == 0 {
					ready = append(ready, w)
				}
			}
		}
		slices.Reverse(ready)
		stack = append(stack, ready...)
	}
	return order
}
