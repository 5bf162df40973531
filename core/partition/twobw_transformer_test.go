package partition

import (
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// v100 is enough of a V100 for the cost model's compute time.
var v100 = hw.GPU{ID: "v100", Name: "V100", MemoryBytes: 16 << 30, MemoryBandwidthBytesPerSec: 900e9,
	LogicalDevices: 1, PeakFLOPS: map[string]float64{hw.PrecisionFP16: 125e12}}

func bert48() model.Transformer {
	return model.Transformer{Layers: 48, Hidden: 1024, Heads: 16, Seq: 128, Vocab: 30522, Precision: model.FP16}
}

// TestTransformerBlocks checks the adapter against independent totals: its
// blocks' weights add up to the parameters of eq. 4.3 (less the position
// embedding), their compute over a microbatch to the cost model's compute of
// the whole model, and a larger microbatch is no slower per sample (the
// efficiency curve rises with the GEMMs' size).
func TestTransformerBlocks(t *testing.T) {
	tr := bert48()
	m, err := NewTransformerBlocks(tr, v100, false, cost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var weights, seconds1, seconds8 float64
	for k := 0; k < m.NumBlocks(); k++ {
		weights += m.BlockCost(k, 1).WeightBytes
		seconds1 += m.BlockCost(k, 1).ComputeSeconds
		seconds8 += m.BlockCost(k, 8).ComputeSeconds
	}
	if want := 2 * tr.Params(); math.Abs(weights/want-1) > 0.01 {
		t.Errorf("block weights %.4g bytes, 2 B × eq. 4.3's %.4g parameters = %.4g", weights, tr.Params(), want)
	}
	if !(seconds8/8 <= seconds1) || !(seconds1 > 0) {
		t.Errorf("per-sample compute at b = 8 %.4g s above b = 1's %.4g s", seconds8/8, seconds1)
	}
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	state, err := m.StateBytesPerWeightByte("")
	if err != nil || state <= 0 {
		t.Fatalf("mixed Adam's state per weight byte %v, %v", state, err)
	}
	cands, err := PlanTwoBW(context.Background(), m, TwoBWOptions{GPUs: 16, GPUsPerServer: 8,
		IntraServerBandwidthBytesPerSec: 150e9, InterServerBandwidthBytesPerSec: 3.125e9,
		MemoryBytes: 14 << 30, BatchSize: 512, StateBytesPerWeightByte: state, MicrobatchSize: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cands {
		if c.Execution.MicrobatchSize != 4 {
			t.Errorf("microbatch fixed at 4, candidate has %d", c.Execution.MicrobatchSize)
		}
	}
}

// TestTransformerBlocksBadInput checks the errors name the field.
func TestTransformerBlocksBadInput(t *testing.T) {
	tr := bert48()
	tr.Precision = model.BF16 // the V100 has no bf16 peak
	if _, err := NewTransformerBlocks(tr, v100, false, cost.Options{}); err == nil {
		t.Error("bf16 on a V100: no error")
	}
	m, err := NewTransformerBlocks(bert48(), v100, false, cost.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.StateBytesPerWeightByte("lamb"); err == nil || !strings.Contains(err.Error(), "optimizer") {
		t.Errorf("optimizer lamb: %v", err)
	}
	opt := testTwoBWOptions()
	opt.MicrobatchSize = -1
	if _, err := PlanTwoBW(context.Background(), m, opt, nil); err == nil || !strings.HasPrefix(err.Error(), "microbatch:") {
		t.Errorf("microbatch -1: %v", err)
	}
}

// TestTwoBWExecutionText checks that every execution's name reads back and
// an unknown one is an error naming the field.
func TestTwoBWExecutionText(t *testing.T) {
	for _, e := range []TwoBWExecution{TwoBWNoPipelining, TwoBWPipelined, TwoBWPipelinedRecompute} {
		b, _ := e.MarshalText()
		var got TwoBWExecution
		if err := got.UnmarshalText(b); err != nil || got != e {
			t.Errorf("%s: read back %v, %v", e, got, err)
		}
	}
	var e TwoBWExecution
	if err := e.UnmarshalText([]byte("3bw")); err == nil || !strings.HasPrefix(err.Error(), "execution:") {
		t.Errorf("3bw: %v", err)
	}
}
