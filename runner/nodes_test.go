package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestNodeSpecValidation(t *testing.T) {
	p := loadPlan(t, "tiny-transformer.json") // 1 node × 4 GPUs: 2 stages × 2 replicas
	full, err := newRunConfig(p, options{device: "cpu", steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := newRunConfig(p, options{device: "cpu", steps: 1, scaleDown: true}) // 2 ranks
	if err != nil {
		t.Fatal(err)
	}
	multi := func(nnodes, rank int, endpoint string) options {
		return options{nnodes: nnodes, nodeRank: rank, rdzvEndpoint: endpoint, rdzvID: "job", rdzvBackend: "c10d"}
	}
	for _, tc := range []struct {
		o    options
		c    *runConfig
		want string
	}{
		{multi(0, 0, ""), full, "--nnodes: must be >= 1, got 0"},
		{multi(2, 2, "h:1"), scaled, "--node-rank: must be in [0, 1] for --nnodes 2, got 2"},
		{multi(2, -1, "h:1"), scaled, "--node-rank: must be in [0, 1] for --nnodes 2, got -1"},
		{multi(1, 0, "h:1"), full, `--rdzv-endpoint: only with --nnodes > 1 (a one-node run needs no rendezvous), got "h:1"`},
		{multi(2, 0, ""), scaled, `--rdzv-endpoint: must be host:port (port 1-65535), the same on every node, got ""`},
		{multi(2, 0, "host"), scaled, `--rdzv-endpoint: must be host:port (port 1-65535), the same on every node, got "host"`},
		{multi(2, 0, "host:70000"), scaled, `got "host:70000"`},
		{multi(3, 0, "h:1"), full, "--nnodes 3: the run's 4 ranks (2 stages × 2 replicas × tp 1 × cp 1) do not split evenly over 3 nodes"},
		{multi(2, 0, "h:1"), full, "--nnodes 2: 2 ranks per node × 2 nodes, but the plan's cluster is 1 nodes × 4 GPUs per node; run it with --nnodes 1 (or --scale-down)"},
		{options{nnodes: 2, rdzvEndpoint: "h:1", rdzvID: "job", rdzvBackend: "zmq"}, scaled, `--rdzv-backend: must be one of c10d, static, etcd, etcd-v2, got "zmq"`},
		{options{nnodes: 2, rdzvEndpoint: "h:1", rdzvID: "a b", rdzvBackend: "c10d"}, scaled, `--rdzv-id: must be a non-empty word, got "a b"`},
	} {
		_, err := newNodeSpec(tc.o, p, tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.o, err, tc.want)
		}
	}
	n, err := newNodeSpec(multi(2, 1, "[::1]:29400"), p, scaled)
	if err != nil || n.nproc != 1 || n.nnodes != 2 || n.nodeRank != 1 {
		t.Errorf("scaled-down plan on 2 nodes: %+v, %v", n, err)
	}
	if n, err := newNodeSpec(options{nnodes: 1}, p, full); err != nil || n != singleNode(4) {
		t.Errorf("one node: %+v, %v", n, err)
	}
}

// TestLaunchArgsParsedByTorchrun hands the runner's torchrun command line
// to torch's own parser (torch.distributed.run.get_args_parser), an
// independent reading of the flags: one node gets its loopback master, one
// node of two the rendezvous.
func TestLaunchArgsParsedByTorchrun(t *testing.T) {
	py := torchPython(t)
	t.Parallel()
	parse := func(args []string) map[string]any {
		t.Helper()
		if args[0] != "-m" || args[1] != "torch.distributed.run" {
			t.Fatalf("not torchrun: %v", args)
		}
		enc, _ := json.Marshal(args[2:])
		out, err := exec.Command(py, "-c", `import json, sys
from torch.distributed.run import get_args_parser
a = vars(get_args_parser().parse_args(json.loads(sys.argv[1])))
print(json.dumps({k: v for k, v in a.items() if isinstance(v, (str, int, list)) or v is None}))`, string(enc)).Output()
		if err != nil {
			t.Fatalf("torch's parser rejected %v: %v", args, err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	check := func(got map[string]any, want map[string]any) {
		t.Helper()
		for k, v := range want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("%s: torchrun reads %v, want %v", k, got[k], v)
			}
		}
	}
	check(parse(launchArgs(singleNode(3), 4242)), map[string]any{
		"nnodes": "1", "nproc_per_node": "3", "master_addr": "127.0.0.1", "master_port": 4242, "training_script": "worker.py",
	})
	check(parse(launchArgs(nodeSpec{nproc: 8, nnodes: 4, nodeRank: 2, rdzvBackend: "c10d", rdzvEndpoint: "head:29400", rdzvID: "run7"}, 0)),
		map[string]any{"nnodes": "4", "node_rank": 2, "nproc_per_node": "8", "rdzv_backend": "c10d",
			"rdzv_endpoint": "head:29400", "rdzv_id": "run7", "training_script": "worker.py"})
}

// TestEndToEndTwoNodes runs a scaled-down 2-stage plan as two "nodes" on
// this machine: two runners, one rank each, meeting at a c10d rendezvous on
// the loopback interface. The rendezvous gives each node one of the two
// ranks; the node running the last stage reports the losses and checks
// them against the unpipelined reference, the other says where they are.
func TestEndToEndTwoNodes(t *testing.T) {
	torchPython(t)
	t.Parallel()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	reports := make([]*Report, 2)
	errs := make([]error, 2)
	logs := make([]bytes.Buffer, 2)
	var wg sync.WaitGroup
	for node := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stdout bytes.Buffer
			args := []string{"--check", "--json", "--scale-down", "--steps", "2", "--warmup", "1", "--timeout", hangTimeout,
				"--nnodes", "2", "--node-rank", fmt.Sprint(node), "--rdzv-endpoint", fmt.Sprintf("127.0.0.1:%d", port),
				"--rdzv-id", "two-nodes-test", "testdata/tiny-transformer.json"}
			if errs[node] = run(context.Background(), args, &stdout, &logs[node]); errs[node] == nil {
				var r Report
				errs[node] = json.Unmarshal(stdout.Bytes(), &r)
				reports[node] = &r
			}
		}()
	}
	wg.Wait()
	for node, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v\n%s", node, err, logs[node].String())
		}
	}
	var ranks []int
	checked := 0
	for node, r := range reports {
		if r.Nodes != 2 || r.NodeRank != node || r.Ranks != 2 || len(r.PerRank) != 1 {
			t.Fatalf("node %d: nodes %d node rank %d ranks %d, %d per-rank entries; want 2, %d, 2, 1", node, r.Nodes, r.NodeRank, r.Ranks, len(r.PerRank), node)
		}
		k := r.PerRank[0]
		ranks = append(ranks, k.Rank)
		if k.Stage != k.Rank {
			t.Errorf("node %d: rank %d ran stage %d", node, k.Rank, k.Stage)
		}
		// A worker that records its actions gives this node's stage only.
		if r.PerStageNote == "" && (len(r.PerStage) != 1 || r.PerStage[0].Stage != k.Stage || !(r.PerStage[0].ForwardSeconds > 0)) {
			t.Errorf("node %d: per stage %+v, want stage %d's measured times", node, r.PerStage, k.Stage)
		}
		if !strings.Contains(r.Note, fmt.Sprintf("node %d of 2", node)) {
			t.Errorf("node %d: note %q does not place the node", node, r.Note)
		}
		if k.Stage == 1 {
			checked++
			if len(r.Losses) != 3 || r.MaxLossRelDiff == nil || *r.MaxLossRelDiff > cpuLossTolerance {
				t.Errorf("last-stage node %d: losses %v vs reference %v (max rel. diff %v)", node, r.Losses, r.ReferenceLosses, r.MaxLossRelDiff)
			}
		} else if r.Losses != nil || !strings.Contains(r.Note, "the losses (and --check) are reported by the node(s) running the last stage") {
			t.Errorf("first-stage node %d: losses %v, note %q", node, r.Losses, r.Note)
		}
	}
	slices.Sort(ranks)
	if !slices.Equal(ranks, []int{0, 1}) || checked != 1 {
		t.Errorf("the nodes ran ranks %v (want 0 and 1), %d checked the losses (want 1)", ranks, checked)
	}
}
