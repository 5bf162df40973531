package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxGraphStates bounds the number of antichain states States builds: the
// PipeDream DP is quadratic to cubic in it (Inception-v3 has 221,564 states,
// which the original optimizer cannot solve either).
const MaxGraphStates = 5000

// States are the "layers" of PipeDream's partitioning DP for a graph: cuts
// through the DAG built as antichains, exactly as PipeDream's optimizer
// (optimizer_graph_hierarchical.py with graph.antichain_dag()) builds them,
// in the order of its topological sort. State j's down-set down(j) is its
// augmented antichain and all their predecessors; a stage from state k+1 to
// state j holds down(j) \ down(k).
type States struct {
	// Augmented lists, per state, its augmented antichain as node indices of
	// the graph: the added predecessors (ascending) followed by the antichain.
	Augmented [][]int
	// ComputeSeconds[j] is Σ (forward+backward)/1000 over down(j), in seconds.
	ComputeSeconds []float64
	// ForwardSeconds[j] is the forward part of ComputeSeconds[j].
	ForwardSeconds []float64
	// ActivationBytes[j] is Σ activation_size over down(j).
	ActivationBytes []float64
	// ParameterBytes[j] is Σ parameter_size over down(j).
	ParameterBytes []float64
	// OutputBytes[j] is Σ activation_size over the augmented antichain: the
	// bytes that cross the cut after state j.
	OutputBytes []float64
	// Ancestors lists, per state, every state that precedes it in the state
	// graph (transitively), ascending.
	Ancestors [][]int
	// Parents lists, per state, its direct predecessors in the state graph, ascending.
	Parents [][]int
}

// Len is the number of states.
func (s *States) Len() int { return len(s.ComputeSeconds) }

// OptimizerNodes reports which nodes PipeDream's optimizer keeps: it drops
// every source whose description starts with "Input" and then every sink
// whose description starts with "__getitem__".
func (g *Graph) OptimizerNodes() []bool {
	keep := make([]bool, len(g.Nodes))
	for v, n := range g.Nodes {
		keep[v] = !(len(g.In[v]) == 0 && strings.HasPrefix(n.Desc, "Input"))
	}
	sink := make([]bool, len(g.Nodes))
	for v, n := range g.Nodes {
		sink[v] = keep[v] && len(g.Out[v]) == 0 && strings.HasPrefix(n.Desc, "__getitem__")
	}
	for v := range keep {
		keep[v] = keep[v] && !sink[v]
	}
	return keep
}

// antichains holds the reachability sets the antichain search needs.
type antichains struct {
	g          *Graph
	keep       []bool
	pred, succ []bitset // transitive, over kept nodes, excluding the node itself
}

func (g *Graph) newAntichains() *antichains {
	n := len(g.Nodes)
	a := &antichains{g: g, keep: g.OptimizerNodes(), pred: make([]bitset, n), succ: make([]bitset, n)}
	order := g.topoOrder()
	for _, v := range order {
		a.pred[v] = newBitset(n)
		for _, u := range g.In[v] {
			if a.keep[u] {
				a.pred[v].union(a.pred[u])
				a.pred[v].add(u)
			}
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		a.succ[v] = newBitset(n)
		for _, w := range g.Out[v] {
			if a.keep[w] {
				a.succ[v].union(a.succ[w])
				a.succ[v].add(w)
			}
		}
	}
	return a
}

// topoOrder returns the nodes in a topological order (the graph is acyclic,
// ParseGraph checks it).
func (g *Graph) topoOrder() []int {
	indeg := make([]int, len(g.Nodes))
	var ready, order []int
	for v := range g.Nodes {
		if indeg[v] = len(g.In[v]); indeg[v] == 0 {
			ready = append(ready, v)
		}
	}
	for len(ready) > 0 {
		v := ready[0]
		ready = ready[1:]
		order = append(order, v)
		for _, w := range g.Out[v] {
			if indeg[w]--; indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	return order
}

// augment returns A plus every predecessor p of some a in A with an
// out-edge to a node that is neither a nor a predecessor of a (graph.py
// augment_antichain); the added nodes come first, ascending.
func (a *antichains) augment(anti []int) []int {
	extra := newBitset(len(a.g.Nodes))
	for _, x := range anti {
		px := a.pred[x]
		px.each(func(p int) {
			for _, o := range a.g.Out[p] {
				if a.keep[o] && o != x && !px.has(o) {
					extra.add(p)
					return
				}
			}
		})
	}
	var out []int
	extra.each(func(p int) { out = append(out, p) })
	return append(out, anti...)
}

// deaugment appends to out the elements of s that precede no other
// element of s, without duplicates, in order (graph.py
// deaugment_augmented_antichain).
func (a *antichains) deaugment(out, s []int) []int {
	from := len(out)
	for _, x := range s {
		dominated := false
		for _, y := range s {
			if a.succ[x].has(y) {
				dominated = true
				break
			}
		}
		if !dominated && !slices.Contains(out[from:], x) {
			out = append(out, x)
		}
	}
	return out
}

// next calls f with each antichain that follows anti, whose augmented
// form is aug (graph.py next_antichains): replace one element x of aug by
// an out-neighbour y not in anti none of whose successors is in aug. The
// slice f gets is reused after it returns.
func (a *antichains) next(anti, aug []int, f func(nx []int) error) error {
	inAug := newBitset(len(a.g.Nodes))
	for _, x := range aug {
		inAug.add(x)
	}
	repl := slices.Clone(aug)
	var nx []int
	for i, x := range aug {
		for _, y := range a.g.Out[x] {
			if !a.keep[y] || slices.Contains(anti, y) || a.succ[y].intersects(inAug) {
				continue
			}
			repl[i] = y
			nx = a.deaugment(nx[:0], repl)
			if err := f(nx); err != nil {
				return err
			}
		}
		repl[i] = x
	}
	return nil
}

// appendAntichainKey appends the antichain's elements, ascending, each
// followed by a comma, to b: its map key. A lookup with string(key) of
// the result does not allocate; only a new antichain's key is kept.
func appendAntichainKey(b []byte, anti []int) []byte {
	var sb [32]int
	s := append(sb[:0], anti...)
	slices.Sort(s)
	for _, v := range s {
		b = strconv.AppendInt(b, int64(v), 10)
		b = append(b, ',')
	}
	return b
}

// States builds PipeDream's antichain states: a breadth-first search from
// the first remaining source (in file order) over next antichains, then the
// reference's depth-first topological sort of the state graph (children in
// the order they were found). It fails when the graph has more than
// MaxGraphStates states.
func (g *Graph) States() (*States, error) {
	a := g.newAntichains()
	first := -1
	for v := range g.Nodes {
		if !a.keep[v] {
			continue
		}
		hasIn := false
		for _, u := range g.In[v] {
			hasIn = hasIn || a.keep[u]
		}
		if !hasIn {
			first = v
			break
		}
	}
	if first < 0 {
		return nil, fmt.Errorf("graph: no nodes left after dropping Input sources and __getitem__ sinks")
	}
	// The search's queue holds each antichain once, in the order found
	// (a repeat is done by the time it would be dequeued): antichain q is
	// the q-th dequeued, its augmented form augs[q].
	ids := map[string]int{}
	var key []byte
	antis, augs := [][]int{{first}}, [][]int{a.augment([]int{first})}
	children := [][]int{nil}
	ids[string(appendAntichainKey(key, antis[0]))] = 0
	for from := 0; from < len(antis); from++ {
		err := a.next(antis[from], augs[from], func(nx []int) error {
			key = appendAntichainKey(key[:0], nx)
			to, seen := ids[string(key)]
			if !seen {
				if len(augs) == MaxGraphStates {
					return fmt.Errorf("graph: more than %d antichain states; PipeDream's DP is infeasible on this graph (merge branches first)", MaxGraphStates)
				}
				to = len(augs)
				ids[string(key)] = to
				nx = slices.Clone(nx)
				antis, augs = append(antis, nx), append(augs, a.augment(nx))
				children = append(children, nil)
			}
			children[from] = append(children[from], to)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return a.states(augs, children), nil
}

// reversePostorder is the depth-first topological order graph.py's
// topological_sort gives a graph whose nodes all descend from node 0.
func reversePostorder(children [][]int) []int {
	n := len(children)
	visited := make([]bool, n)
	post := make([]int, 0, n)
	type frame struct{ v, next int }
	stack := []frame{{0, 0}}
	visited[0] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next < len(children[top.v]) {
			w := children[top.v][top.next]
			top.next++
			if !visited[w] {
				visited[w] = true
				stack = append(stack, frame{w, 0})
			}
			continue
		}
		post = append(post, top.v)
		stack = stack[:len(stack)-1]
	}
	slices.Reverse(post)
	return post
}

// states renumbers the found antichains in topological order and computes
// their sums and ancestor sets.
func (a *antichains) states(augs, children [][]int) *States {
	order := reversePostorder(children)
	pos := make([]int, len(order))
	for i, s := range order {
		pos[s] = i
	}
	n := len(order)
	st := &States{
		Augmented: make([][]int, n), ComputeSeconds: make([]float64, n), ForwardSeconds: make([]float64, n),
		ActivationBytes: make([]float64, n), ParameterBytes: make([]float64, n),
		OutputBytes: make([]float64, n), Ancestors: make([][]int, n), Parents: make([][]int, n),
	}
	for old, kids := range children {
		for _, k := range kids {
			if p := pos[old]; !slices.Contains(st.Parents[pos[k]], p) {
				st.Parents[pos[k]] = append(st.Parents[pos[k]], p)
			}
		}
	}
	anc := make([]bitset, n)
	down := newBitset(len(a.g.Nodes))
	for j, old := range order {
		aug := augs[old]
		st.Augmented[j] = aug
		clear(down)
		for _, x := range aug {
			down.add(x)
			down.union(a.pred[x])
			st.OutputBytes[j] += a.g.Nodes[x].ActivationBytes
		}
		down.each(func(v int) {
			nd := a.g.Nodes[v]
			st.ComputeSeconds[j] += (nd.FwdMillis + nd.BwdMillis) / 1000
			st.ForwardSeconds[j] += nd.FwdMillis / 1000
			st.ActivationBytes[j] += nd.ActivationBytes
			st.ParameterBytes[j] += nd.ParameterBytes
		})
		slices.Sort(st.Parents[j])
		anc[j] = newBitset(n)
		for _, p := range st.Parents[j] {
			anc[j].union(anc[p])
			anc[j].add(p)
		}
		if c := anc[j].count(); c > 0 {
			st.Ancestors[j] = make([]int, 0, c)
			anc[j].each(func(k int) { st.Ancestors[j] = append(st.Ancestors[j], k) })
		}
	}
	return st
}
