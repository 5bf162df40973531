package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"pipeplan/core/plan"
)

// rdzvBackends are the rendezvous backends torchrun (torch 1.13 and 2.x)
// names in --rdzv_backend.
var rdzvBackends = []string{"c10d", "static", "etcd", "etcd-v2"}

// newNodeSpec checks the multi-node flags against the run: the node rank
// lies in [0, nnodes), a rendezvous endpoint host:port is given when there
// are several nodes, the run's ranks split evenly over the nodes, and a
// full-size run's nodes are the plan's (GPUs per node × nodes = the plan's
// GPUs, node for node).
func newNodeSpec(o options, p *plan.Plan, c *runConfig) (nodeSpec, error) {
	ranks := len(c.Ranks)
	switch {
	case o.nnodes < 1:
		return nodeSpec{}, fmt.Errorf("--nnodes: must be >= 1, got %d", o.nnodes)
	case o.nodeRank < 0 || o.nodeRank >= o.nnodes:
		return nodeSpec{}, fmt.Errorf("--node-rank: must be in [0, %d] for --nnodes %d, got %d", o.nnodes-1, o.nnodes, o.nodeRank)
	case o.nnodes == 1 && o.rdzvEndpoint != "":
		return nodeSpec{}, fmt.Errorf("--rdzv-endpoint: only with --nnodes > 1 (a one-node run needs no rendezvous), got %q", o.rdzvEndpoint)
	case o.nnodes == 1:
		return singleNode(ranks), nil
	case !slices.Contains(rdzvBackends, o.rdzvBackend):
		return nodeSpec{}, fmt.Errorf("--rdzv-backend: must be one of %s, got %q", strings.Join(rdzvBackends, ", "), o.rdzvBackend)
	case o.rdzvID == "" || strings.ContainsAny(o.rdzvID, " \t\n="):
		return nodeSpec{}, fmt.Errorf("--rdzv-id: must be a non-empty word, got %q", o.rdzvID)
	}
	host, port, err := net.SplitHostPort(o.rdzvEndpoint)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		return nodeSpec{}, fmt.Errorf("--rdzv-endpoint: must be host:port (port 1-65535), the same on every node, got %q", o.rdzvEndpoint)
	}
	if ranks%o.nnodes != 0 {
		return nodeSpec{}, fmt.Errorf("--nnodes %d: the run's %d ranks (%s) do not split evenly over %d nodes",
			o.nnodes, ranks, c.ranksText(), o.nnodes)
	}
	perNode := ranks / o.nnodes
	if !c.ScaledDown && (o.nnodes != p.Cluster.Nodes || perNode != p.Cluster.GPUsPerNode) {
		return nodeSpec{}, fmt.Errorf("--nnodes %d: %d ranks per node × %d nodes, but the plan's cluster is %d nodes × %d GPUs per node; run it with --nnodes %d (or --scale-down)",
			o.nnodes, perNode, o.nnodes, p.Cluster.Nodes, p.Cluster.GPUsPerNode, p.Cluster.Nodes)
	}
	return nodeSpec{nproc: perNode, nnodes: o.nnodes, nodeRank: o.nodeRank,
		rdzvBackend: o.rdzvBackend, rdzvEndpoint: o.rdzvEndpoint, rdzvID: o.rdzvID}, nil
}

// share describes this node's part of the ranks ("" on one node).
func (n nodeSpec) share() string {
	if n.nnodes <= 1 {
		return ""
	}
	return fmt.Sprintf(" on node %d, 1/%d of the run", n.nodeRank, n.nnodes)
}
