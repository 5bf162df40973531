package model

import (
	"math"
	"strings"
	"testing"
)

// gptTable41 are the GPT configurations of dissertation Table 4.1 (s = 2048,
// V = 51,200) with their published parameter counts in billions.
var gptTable41 = []struct {
	layers, hidden, heads int
	billions              float64
}{
	{24, 2304, 24, 1.7}, {30, 3072, 32, 3.6}, {36, 4096, 32, 7.5}, {40, 6144, 48, 18.4},
	{48, 8192, 64, 39.1}, {60, 10240, 80, 76.1}, {80, 12288, 96, 145.6}, {96, 16384, 128, 310.1},
	{105, 20480, 128, 529.6}, {128, 25600, 160, 1008.0},
}

func gpt(l, h, a int) Transformer {
	return Transformer{Layers: l, Hidden: h, Heads: a, Seq: 2048, Vocab: 51200}
}

// TestParamsEq43 checks Params against eq. 4.3 evaluated literally (exact up
// to float rounding) and against the published counts, rounded as printed.
func TestParamsEq43(t *testing.T) {
	for _, c := range gptTable41 {
		tr := gpt(c.layers, c.hidden, c.heads)
		l, h, V, s := float64(c.layers), float64(c.hidden), float64(tr.Vocab), float64(tr.Seq)
		eq43 := 12 * l * h * h * (1 + 13/(12*h) + (V+s)/(12*l*h))
		if got := tr.Params(); math.Abs(got-eq43) > 1e-12*eq43 {
			t.Errorf("l=%d h=%d: Params = %.0f, eq. 4.3 gives %.0f", c.layers, c.hidden, got, eq43)
		}
		// Table 4.1 prints one decimal, except 1.7/3.6/7.5 which it rounds the same way.
		if got := math.Round(tr.Params()/1e8) / 10; got != c.billions {
			t.Errorf("l=%d h=%d: %.1fB parameters, Table 4.1 says %.1fB", c.layers, c.hidden, got, c.billions)
		}
	}
	// GPT-3 175B (Table 4.2: 174.6 billion).
	if got := math.Round(gpt(96, 12288, 96).Params()/1e8) / 10; got != 174.6 {
		t.Errorf("GPT-3: %.1fB parameters, Table 4.2 says 174.6B", got)
	}
}

// TestIterationFLOPsEq42 checks that full recomputation gives eq. 4.2 and that
// the variants differ by exactly the recomputed forward work.
func TestIterationFLOPsEq42(t *testing.T) {
	for _, c := range gptTable41 {
		tr := gpt(c.layers, c.hidden, c.heads)
		B := 1536
		l, h, V, s, b := float64(c.layers), float64(c.hidden), float64(tr.Vocab), float64(tr.Seq), float64(B)
		eq42 := 96 * b * s * l * h * h * (1 + s/(6*h) + V/(16*l*h))
		if got := tr.IterationFLOPs(B, RecomputeFull); math.Abs(got-eq42) > 1e-12*eq42 {
			t.Errorf("l=%d h=%d: IterationFLOPs(full) = %g, eq. 4.2 gives %g", c.layers, c.hidden, got, eq42)
		}
		none := tr.IterationFLOPs(B, RecomputeNone)
		want := 72*b*s*l*h*h*(1+s/(6*h)) + 6*b*s*h*V
		if math.Abs(none-want) > 1e-12*want {
			t.Errorf("l=%d h=%d: IterationFLOPs(none) = %g, want 72Bslh²(1+s/6h)+6BshV = %g", c.layers, c.hidden, none, want)
		}
		sel := tr.IterationFLOPs(B, RecomputeSelective)
		if d := sel - none; math.Abs(d-4*b*s*s*h*l) > 1e-9*d {
			t.Errorf("selective adds %g FLOPs, want the attention core 4Bs²hl = %g", d, 4*b*s*s*h*l)
		}
	}
}

// TestTrainingDaysEq44 reproduces the two worked examples after eq. 4.4.
func TestTrainingDaysEq44(t *testing.T) {
	cases := []struct {
		tr     Transformer
		tokens float64
		gpus   int
		tflops float64
		days   float64
	}{
		{gpt(96, 12288, 96), 300e9, 1024, 140, 34},
		{gpt(128, 25600, 160), 450e9, 3072, 163, 84},
	}
	for _, c := range cases {
		got := c.tr.TrainingDays(c.tokens, c.gpus, c.tflops*1e12)
		if math.Round(got) != c.days {
			t.Errorf("%.0fB params, %g tokens, %d GPUs at %g TFLOP/s: %.2f days, the dissertation says %g", c.tr.Params()/1e9, c.tokens, c.gpus, c.tflops, got, c.days)
		}
	}
	if d := gpt(2, 64, 2).TrainingDays(1e9, 0, 1e12); !math.IsInf(d, 1) {
		t.Errorf("zero GPUs: got %v days, want +Inf", d)
	}
}

// TestLayerActivationKorthikanti checks the per-layer activation memory
// against the closed forms of Korthikanti et al. 2022, Table 2 (16-bit).
func TestLayerActivationKorthikanti(t *testing.T) {
	for _, c := range gptTable41 {
		tr := gpt(c.layers, c.hidden, c.heads)
		for _, b := range []int{1, 4} {
			s, h, a, bb := float64(tr.Seq), float64(tr.Hidden), float64(tr.Heads), float64(b)
			sbh := s * bb * h
			for _, tp := range []int{1, 2, 8} {
				tt := float64(tp)
				cases := []struct {
					name string
					o    ActivationOptions
					want float64
				}{
					{"tensor parallel", ActivationOptions{TP: tp}, sbh * (10 + 24/tt + 5*a*s/(h*tt))},
					{"+ sequence parallel", ActivationOptions{TP: tp, SequenceParallel: true}, sbh / tt * (34 + 5*a*s/h)},
					{"+ selective", ActivationOptions{TP: tp, Recompute: RecomputeSelective}, sbh * (10 + 24/tt)},
					{"+ sequence parallel + selective", ActivationOptions{TP: tp, SequenceParallel: true, Recompute: RecomputeSelective}, sbh * 34 / tt},
					{"full recompute", ActivationOptions{TP: tp, Recompute: RecomputeFull}, 2 * sbh},
					{"full recompute + sequence parallel", ActivationOptions{TP: tp, SequenceParallel: true, Recompute: RecomputeFull}, 2 * sbh / tt},
				}
				for _, k := range cases {
					if got := tr.LayerActivationBytes(b, k.o); math.Abs(got-k.want) > 1e-9*k.want {
						t.Errorf("h=%d b=%d t=%d %s: %g bytes, Korthikanti Table 2 gives %g", c.hidden, b, tp, k.name, got, k.want)
					}
				}
			}
			if got, want := tr.LayerActivationBytes(b, ActivationOptions{}), sbh*(34+5*a*s/h); math.Abs(got-want) > 1e-9*want {
				t.Errorf("no parallelism: %g bytes, want sbh(34+5as/h) = %g", got, want)
			}
			o := ActivationOptions{TP: 8, SequenceParallel: true}
			if got, want := tr.OutputActivationBytes(b, o), 4*sbh/8*(1+float64(tr.Vocab)/h); math.Abs(got-want) > 1e-9*want {
				t.Errorf("output layer: %g bytes, want 4sbh/t(1+V/h) = %g", got, want)
			}
		}
	}
	// fp32 doubles the stored values but not the 1-byte masks.
	tr := gpt(2, 1024, 16)
	tr.Precision = FP32
	s, h, a := float64(tr.Seq), float64(tr.Hidden), float64(tr.Heads)
	if got, want := tr.LayerActivationBytes(1, ActivationOptions{}), s*h*(66+9*a*s/h); math.Abs(got-want) > 1e-9*want {
		t.Errorf("fp32: %g bytes, want sbh(66+9as/h) = %g", got, want)
	}
}

func TestTransformerValidate(t *testing.T) {
	bad := []struct {
		tr   Transformer
		want string
	}{
		{Transformer{Layers: 0, Hidden: 64, Heads: 2, Seq: 8, Vocab: 10}, "transformer.layers"},
		{Transformer{Layers: 2, Hidden: 64, Heads: 3, Seq: 8, Vocab: 10}, "transformer.heads"},
		{Transformer{Layers: 2, Hidden: 64, Heads: 2, Seq: -1, Vocab: 10}, "transformer.seq"},
		{Transformer{Layers: 2, Hidden: 64, Heads: 2, Seq: 8, Vocab: 10, FFN: -3}, "transformer.ffn"},
		{Transformer{Layers: 2, Hidden: 64, Heads: 2, Seq: 8, Vocab: 10, Precision: "int4"}, "transformer.precision"},
		{Transformer{Layers: 2, Hidden: 1 << 30, Heads: 2, Seq: 8, Vocab: 10}, "transformer.hidden"},
	}
	for _, c := range bad {
		err := c.tr.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one naming %s", c.tr, err, c.want)
		}
	}
	if err := gpt(128, 25600, 160).Validate(); err != nil {
		t.Errorf("1T GPT: %v", err)
	}
	if _, err := ParseRecompute("partial"); err == nil {
		t.Error("ParseRecompute(partial): no error")
	}
}
