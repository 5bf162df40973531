package partition

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"pipeplan/core/hw"
	"pipeplan/core/plan"
)

// testCluster is 2 servers of 4 GPUs.
var testCluster = plan.Cluster{GPU: "nvidia-v100-sxm2-16gb", Nodes: 2, GPUsPerNode: 4,
	Levels: []hw.Level{{Workers: 4, BandwidthBytesPerSec: 16e9}, {Workers: 2, BandwidthBytesPerSec: 1.25e9}}}

// TestRunPlansOfRandomChainsValidate checks that every PipeDream partition
// and every 2BW configuration of random chains exports as a valid plan whose
// stages and predictions are the planner's.
func TestRunPlansOfRandomChainsValidate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 20; trial++ {
		prof := randomChain(rng, 3+rng.IntN(6))
		prof.MicrobatchSize = 1 + rng.IntN(4)
		cuts, err := ChainCuts(prof)
		if err != nil {
			t.Fatal(err)
		}
		pd, err := PipeDream(context.Background(), cuts, PipeDreamOptions{Levels: testCluster.Levels}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := PipeDreamRunPlan(prof, testCluster, pd)
		if err != nil {
			t.Fatalf("trial %d: pipedream plan: %v", trial, err)
		}
		gpus := 0
		for q, s := range p.Stages {
			if s.Replicas != pd.Stages[q].Replicas {
				t.Errorf("trial %d: stage %d has %d replicas, partition has %d", trial, q, s.Replicas, pd.Stages[q].Replicas)
			}
			gpus += s.Replicas
		}
		if gpus != pd.GPUs || p.Predictions.BottleneckSeconds != pd.BottleneckSeconds {
			t.Errorf("trial %d: plan uses %d GPUs at %v s, partition %d at %v s", trial, gpus, p.Predictions.BottleneckSeconds, pd.GPUs, pd.BottleneckSeconds)
		}

		blocks, err := NewProfileBlocks(prof)
		if err != nil {
			t.Fatal(err)
		}
		batch := 8 * prof.MicrobatchSize * testCluster.GPUs()
		tw, err := PlanTwoBW(context.Background(), blocks, TwoBWOptions{GPUs: 8, GPUsPerServer: 4,
			IntraServerBandwidthBytesPerSec: 16e9, InterServerBandwidthBytesPerSec: 1.25e9, MemoryBytes: 1e15, BatchSize: batch}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tw.Candidates) == 0 {
			t.Fatalf("trial %d: 2BW found no configuration without a memory limit", trial)
		}
		for _, cfg := range tw.Candidates {
			p, err := TwoBWRunPlan(prof, testCluster, cfg, batch)
			if err != nil {
				t.Fatalf("trial %d: 2bw plan of %+v: %v", trial, cfg, err)
			}
			if e := p.Execution; e.PP*e.DP != 8 || e.Schedule != cfg.ScheduleKind() || e.Recompute != cfg.Recompute() || e.Microbatches() != cfg.Microbatches {
				t.Errorf("trial %d: plan %+v does not carry configuration %+v", trial, e, cfg)
			}
		}
	}
}

func TestRunPlansRejectBrokenResults(t *testing.T) {
	prof := randomChain(rand.New(rand.NewPCG(1, 2)), 4)
	prof.MicrobatchSize = 2
	if _, err := PipeDreamRunPlan(prof, testCluster, &PipeDreamResult{}); err == nil || !strings.Contains(err.Error(), "no stages") {
		t.Errorf("PipeDreamRunPlan(empty) = %v, want a no-stages error", err)
	}
	cfg := TwoBWConfig{Stages: 2, DataParallel: 4, FirstBlocks: []int{0}, SamplesPerSecond: 10, Microbatch: 1, Microbatches: 2}
	if _, err := TwoBWRunPlan(prof, testCluster, cfg, 8); err == nil || !strings.Contains(err.Error(), "2 stages but 1 stage starts") {
		t.Errorf("TwoBWRunPlan(mismatch) = %v", err)
	}
	cfg.FirstBlocks = []int{0, 2}
	cfg.SamplesPerSecond = 0
	if _, err := TwoBWRunPlan(prof, testCluster, cfg, 8); err == nil || !strings.Contains(err.Error(), "samples_per_second") {
		t.Errorf("TwoBWRunPlan(zero throughput) = %v", err)
	}
}
