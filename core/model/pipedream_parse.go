package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// GraphNode is one node (a module) of a PipeDream profile graph, with its
// numbers as PipeDream's profiler printed them: times in milliseconds for one
// whole minibatch, sizes in bytes for that minibatch.
type GraphNode struct {
	// ID is the node's id string (e.g. "node4").
	ID string
	// Desc is the module description (e.g. "Conv2d(3, 64, ...)", "Input0").
	Desc string
	// FwdMillis is the forward time of one minibatch, in milliseconds.
	FwdMillis float64
	// BwdMillis is the backward time of one minibatch, in milliseconds.
	BwdMillis float64
	// ActivationBytes is the size of the node's output(s); list-valued sizes are summed.
	ActivationBytes float64
	// ParameterBytes is the size of the node's weights.
	ParameterBytes float64
	// StageID is the optional stage_id field, or -1 when absent.
	StageID int
	// Line is the 1-based line of the node in the file.
	Line int
}

// Graph is a PipeDream profile graph (graph.txt): nodes in file order and
// directed data dependencies between them.
type Graph struct {
	// Name names the model (e.g. "vgg16"); ParseGraph leaves it empty.
	Name string
	// MicrobatchSize is the minibatch size the profile was measured at, when
	// known (graph.txt does not say; 0 means unknown).
	MicrobatchSize int
	// Nodes are the nodes in file order.
	Nodes []GraphNode
	// Out lists, per node index, the indices of its out-neighbours in file order.
	Out [][]int
	// In lists, per node index, the indices of its in-neighbours in file order.
	In [][]int
}

// ParseGraph reads PipeDream's graph.txt format (written by Graph.__str__ of
// PipeDream's graph/graph.py; format in the pipedream anchor README): node
// lines "<id> -- <desc> -- forward_compute_time=<f>, backward_compute_time=<f>,
// activation_size=<f or [f; f]>, parameter_size=<f>[ -- stage_id=<n>]", then
// edge lines "\t<src> -- <dst>". Errors name the 1-based line. Duplicate ids
// or edges, unknown ids, self loops and cycles are errors.
func ParseGraph(data []byte) (*Graph, error) {
	if len(data) > MaxProfileBytes {
		return nil, fmt.Errorf("graph: %d bytes is over the %d-byte limit", len(data), MaxProfileBytes)
	}
	g := &Graph{}
	index := map[string]int{}
	edges := map[[2]int]bool{}
	lines := strings.Split(string(data), "\n")
	for n, line := range lines {
		lineNo := n + 1
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasPrefix(line, "\t") {
			src, dst, err := parseEdge(line[1:], index)
			if err != nil {
				return nil, fmt.Errorf("graph: line %d: %w", lineNo, err)
			}
			if edges[[2]int{src, dst}] {
				return nil, fmt.Errorf("graph: line %d: duplicate edge %s -- %s", lineNo, g.Nodes[src].ID, g.Nodes[dst].ID)
			}
			edges[[2]int{src, dst}] = true
			g.Out[src] = append(g.Out[src], dst)
			g.In[dst] = append(g.In[dst], src)
			continue
		}
		if len(edges) > 0 {
			return nil, fmt.Errorf("graph: line %d: node line after edge lines", lineNo)
		}
		node, err := parseNode(line)
		if err != nil {
			return nil, fmt.Errorf("graph: line %d: %w", lineNo, err)
		}
		if _, dup := index[node.ID]; dup {
			return nil, fmt.Errorf("graph: line %d: duplicate node id %q", lineNo, node.ID)
		}
		node.Line = lineNo
		index[node.ID] = len(g.Nodes)
		g.Nodes = append(g.Nodes, node)
		g.Out = append(g.Out, nil)
		g.In = append(g.In, nil)
	}
	if len(g.Nodes) == 0 {
		return nil, fmt.Errorf("graph: no node lines")
	}
	if cyc := g.cycleNode(); cyc >= 0 {
		return nil, fmt.Errorf("graph: line %d: node %q cannot be ordered: the edges form a cycle through or before it", g.Nodes[cyc].Line, g.Nodes[cyc].ID)
	}
	return g, nil
}

// parseEdge parses "<src> -- <dst>" against the node ids seen so far.
func parseEdge(s string, index map[string]int) (src, dst int, err error) {
	parts := strings.Split(strings.TrimSpace(s), " -- ")
	if len(parts) != 2 {
		return 0, 0, fmt.Errorf("edge line must be \"<src> -- <dst>\", got %q", s)
	}
	src, ok := index[parts[0]]
	if !ok {
		return 0, 0, fmt.Errorf("edge source %q is not a node", parts[0])
	}
	dst, ok = index[parts[1]]
	if !ok {
		return 0, 0, fmt.Errorf("edge destination %q is not a node", parts[1])
	}
	if src == dst {
		return 0, 0, fmt.Errorf("self loop on %q", parts[0])
	}
	return src, dst, nil
}

// graphKeys are the metadata keys of a node line, in their fixed order.
var graphKeys = [4]string{"forward_compute_time", "backward_compute_time", "activation_size", "parameter_size"}

// parseNode parses one node line.
func parseNode(line string) (GraphNode, error) {
	parts := strings.Split(strings.TrimSpace(line), " -- ")
	if len(parts) != 3 && len(parts) != 4 {
		return GraphNode{}, fmt.Errorf("node line must have 3 or 4 fields separated by \" -- \", got %d", len(parts))
	}
	node := GraphNode{ID: parts[0], Desc: parts[1], StageID: -1}
	if node.ID == "" {
		return GraphNode{}, fmt.Errorf("empty node id")
	}
	fields := strings.Split(parts[2], ", ")
	if len(fields) != len(graphKeys) {
		return GraphNode{}, fmt.Errorf("node %q: metadata must be %d key=value pairs, got %q", node.ID, len(graphKeys), parts[2])
	}
	var vals [4]float64
	for i, f := range fields {
		key, val, ok := strings.Cut(f, "=")
		if !ok || key != graphKeys[i] {
			return GraphNode{}, fmt.Errorf("node %q: field %d must be %s=<number>, got %q", node.ID, i+1, graphKeys[i], f)
		}
		v, err := parseGraphNumber(val, key == "activation_size")
		if err != nil {
			return GraphNode{}, fmt.Errorf("node %q: %s: %w", node.ID, key, err)
		}
		vals[i] = v
	}
	node.FwdMillis, node.BwdMillis, node.ActivationBytes, node.ParameterBytes = vals[0], vals[1], vals[2], vals[3]
	if len(parts) == 4 {
		key, val, ok := strings.Cut(parts[3], "=")
		id, err := strconv.Atoi(val)
		if !ok || key != "stage_id" || err != nil || id < 0 {
			return GraphNode{}, fmt.Errorf("node %q: fourth field must be stage_id=<int >= 0>, got %q", node.ID, parts[3])
		}
		node.StageID = id
	}
	return node, nil
}

// parseGraphNumber parses a finite non-negative number, or, when list is
// true, also a list "[a; b; c]" whose sum it returns (as PipeDream's reader does).
func parseGraphNumber(s string, list bool) (float64, error) {
	items := []string{s}
	if list && strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		items = strings.Split(s[1:len(s)-1], "; ")
	}
	sum := 0.0
	for _, it := range items {
		v, err := strconv.ParseFloat(it, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0, fmt.Errorf("must be a finite number >= 0, got %q", it)
		}
		sum += v
	}
	if math.IsInf(sum, 0) {
		return 0, fmt.Errorf("sum of %q overflows", s)
	}
	return sum, nil
}

// cycleNode returns the index of a node on a directed cycle, or -1.
func (g *Graph) cycleNode() int {
	indeg := make([]int, len(g.Nodes))
	for v := range g.Nodes {
		indeg[v] = len(g.In[v])
	}
	var ready []int
	for v, d := range indeg {
		if d == 0 {
			ready = append(ready, v)
		}
	}
	seen := 0
	for len(ready) > 0 {
		v := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		seen++
		for _, w := range g.Out[v] {
			if indeg[w]--; indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	if seen == len(g.Nodes) {
		return -1
	}
	for v, d := range indeg {
		if d > 0 {
			return v
		}
	}
	return -1
}
