package results

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"

	"pipeplan/core/model"
	"pipeplan/core/partition"
)

//go:embed testdata/twobw_paper.json
var twobwPaperJSON []byte

// TwoBWPaperRow is one row of 2BW's Table 1.
type TwoBWPaperRow struct {
	Model      string  `json:"model"`
	Layers     int     `json:"layers"`
	Servers    int     `json:"servers"`
	W          int     `json:"w"`
	D          int     `json:"d"`
	Throughput float64 `json:"throughput"`
	B          int     `json:"b"`
	Recompute  bool    `json:"recompute"`
	Chosen     bool    `json:"chosen"`
}

// TwoBWPaper is the stored table with its source.
type TwoBWPaper struct {
	Source string          `json:"source"`
	Rows   []TwoBWPaperRow `json:"rows"`
}

// LoadTwoBWPaper reads testdata/twobw_paper.json.
func LoadTwoBWPaper() (TwoBWPaper, error) {
	var p TwoBWPaper
	err := json.Unmarshal(twobwPaperJSON, &p)
	return p, err
}

// The assumptions of the BERT block model (the paper publishes no profile):
// V100 fp16 tensor-core peak 125 TFLOP/s at 40 % efficiency; fp16 weights
// (one version is 2 B/parameter) with fp32 master weights, Adam's m and v
// and fp16 gradients (14 B/parameter, kept once); activations as
// Korthikanti et al. count them (core/model); NVLink 150 GB/s inside a
// p3.16xlarge, 25 Gbps between them; global batch 1024 (the BERT batch of
// §5.1); 16 GiB per GPU.
const (
	twoBWEffectiveFLOPS     = 0.4 * 125e12
	twoBWStatePerWeightByte = 7
	twoBWIntraBandwidth     = 150e9
	twoBWInterBandwidth     = 3.125e9
	twoBWBatch              = 1024
	twoBWMemoryBytes        = 16 << 30
)

// bertBlocks is a BERT-Large-wide model (h = 1024, 16 heads, s = 128) as
// 2BW's blocks, one per transformer layer.
type bertBlocks struct{ tr model.Transformer }

func (m bertBlocks) NumBlocks() int { return m.tr.Layers }

func (m bertBlocks) BlockCost(k, b int) partition.TwoBWBlockCost {
	return partition.TwoBWBlockCost{
		ComputeSeconds:  m.tr.LayerTrainFLOPs(b, k, model.RecomputeNone) / twoBWEffectiveFLOPS,
		WeightBytes:     2 * m.tr.LayerParamsAt(k),
		ActivationBytes: m.tr.LayerActivationBytesAt(b, k, model.ActivationOptions{}),
		InputBytes:      2 * float64(m.tr.Seq*b*m.tr.Hidden),
	}
}

// bert returns BERT with l layers of BERT-Large's width at sequence length 128.
func bert(layers int) model.Transformer {
	return model.Transformer{Layers: layers, Hidden: 1024, Heads: 16, Seq: 128, Vocab: 30522}
}

// TwoBWRow is the planner's best configuration at one (w, d) of Table 1.
type TwoBWRow struct {
	Paper     TwoBWPaperRow
	Found     bool
	Best      partition.Candidate
	Rank      int // rank of this (w, d)'s best among every (w, d)'s best
	ChosenW   int // the planner's choice over all (w, d)
	ChosenD   int
	Recompute bool
}

// TwoBWRows plans BERT-48 and BERT-192 on 8 servers of 8 V100s with
// PipeDream-2BW's planner (core/partition.PlanTwoBW; the CLI's 2bw takes
// measured layer profiles only) and reads off each (w, d) of Table 1.
func TwoBWRows() ([]TwoBWRow, error) {
	paper, err := LoadTwoBWPaper()
	if err != nil {
		return nil, err
	}
	plans := map[int][]partition.Candidate{}
	var rows []TwoBWRow
	for _, p := range paper.Rows {
		cands, ok := plans[p.Layers]
		if !ok {
			cands, err = partition.PlanTwoBW(context.Background(), bertBlocks{bert(p.Layers)}, partition.TwoBWOptions{
				GPUs: 8 * p.Servers, GPUsPerServer: 8, IntraServerBandwidthBytesPerSec: twoBWIntraBandwidth,
				InterServerBandwidthBytesPerSec: twoBWInterBandwidth, MemoryBytes: twoBWMemoryBytes, BatchSize: twoBWBatch,
				StateBytesPerWeightByte: twoBWStatePerWeightByte}, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p.Model, err)
			}
			plans[p.Layers] = cands
		}
		r := TwoBWRow{Paper: p, ChosenW: cands[0].Execution.DP, ChosenD: cands[0].Execution.PP}
		for i, c := range cands {
			if c.Execution.DP == p.W && c.Execution.PP == p.D {
				r.Found, r.Best, r.Rank = true, c, i+1
				r.Recompute = c.TwoBW.Execution == partition.TwoBWPipelinedRecompute
				break
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// TwoBWMarkdown is the 2BW section's table.
func TwoBWMarkdown() (string, error) {
	rows, err := TwoBWRows()
	if err != nil {
		return "", err
	}
	var tab [][]string
	for _, r := range rows {
		p := r.Paper
		ours := []string{"does not fit", "—", "—", "—", "—"}
		if r.Found {
			ours = []string{fmt.Sprintf("%.0f", r.Best.Predictions.SamplesPerSecond), strconv.Itoa(r.Best.Execution.MicrobatchSize),
				map[bool]string{true: "T", false: "F"}[r.Recompute], strconv.Itoa(r.Rank), r.Best.TwoBW.Execution.String()}
		}
		tab = append(tab, append([]string{p.Model, fmt.Sprintf("(%d, %d)", p.W, p.D), fmt.Sprintf("%.0f", p.Throughput), strconv.Itoa(p.B),
			map[bool]string{true: "T", false: "F"}[p.Recompute], map[bool]string{true: "✓", false: ""}[p.Chosen],
			fmt.Sprintf("(%d, %d)", r.ChosenW, r.ChosenD)}, ours...))
	}
	return table([]string{"model", "(w, d)", "paper seq/s", "paper b", "paper r", "paper's choice", "our choice (w, d)",
		"ours seq/s", "ours b", "ours r", "rank of this (w, d)", "execution"}, tab), nil
}
