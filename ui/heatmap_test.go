package ui

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"pipeplan/app"
	"pipeplan/core/gavel"
)

// svgTexts parses an SVG and returns its <text> and <title> contents.
func svgTexts(t *testing.T, svg string) (texts, titles []string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var in string
	for {
		tok, err := dec.Token()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("SVG does not parse: %v", err)
			}
			return texts, titles
		}
		switch v := tok.(type) {
		case xml.StartElement:
			in = v.Name.Local
		case xml.CharData:
			switch in {
			case "text":
				texts = append(texts, string(v))
			case "title":
				titles = append(titles, string(v))
			}
		case xml.EndElement:
			in = ""
		}
	}
}

// TestPlacedHeatmap: a placement-sensitive allocation draws the
// consolidated columns, then one "spread" column per GPU type, then each
// job's total, each cell with its fraction and a tooltip naming the
// placement and throughput.
func TestPlacedHeatmap(t *testing.T) {
	r := app.ClusterResult{Jobs: []string{"0: LM ×2", "1: A3C ×1"}, WorkerTypes: []string{"v100", "k80"},
		X: [][]float64{{0.25, 0}, {0, 1}}, UnconsolidatedX: [][]float64{{0.75, 0}, {0, 0}},
		Throughputs: [][]float64{{132, 23.8}, {5, 2}}, UnconsolidatedThroughputs: [][]float64{{30.4, 16.9}, {0, 0}}}
	texts, titles := svgTexts(t, clusterHeatmapSVG(r))
	want := []string{"v100", "k80", "v100 (spread)", "k80 (spread)", "total",
		"0: LM ×2", "0.25", "0.00", "0.75", "0.00", "1.00", "1: A3C ×1", "0.00", "1.00", "0.00", "0.00", "1.00"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	if len(titles) != 10 || titles[2] != "0: LM ×2 on v100 with its GPUs on separate servers: 0.750 of its time, at 30.4 steps/s there" ||
		titles[4] != "0: LM ×2: 1.000 of its time in all (at most 1)" {
		t.Errorf("tooltips %q", titles)
	}
	// Without placement sensitivity or sharing: one column per type, no total.
	r.UnconsolidatedX, r.UnconsolidatedThroughputs = nil, nil
	texts, _ = svgTexts(t, clusterHeatmapSVG(r))
	if len(texts) != 2+2*3 || texts[1] != "k80" || texts[3] != "0.25" {
		t.Errorf("plain heatmap texts %q", texts)
	}
}

// TestSharedHeatmap: with space sharing (§5.3.1) each job's row gains its
// time in pairs per GPU type (green "shared" columns) and its total, which
// adds its own and shared time; the shared-GPUs heatmap has one row per
// pair that got time, with both jobs' co-located throughputs in the
// tooltip. Pairs without time draw nothing.
func TestSharedHeatmap(t *testing.T) {
	r := app.ClusterResult{Jobs: []string{"0: A ×1", "1: B ×1", "2: C ×1"}, WorkerTypes: []string{"v100", "k80"},
		X: [][]float64{{0, 0.5}, {0, 0}, {0.25, 0}}, Throughputs: [][]float64{{7, 3}, {24, 7}, {9, 4}},
		Pairs: []gavel.Pair{{A: 0, B: 1, Throughputs: [][2]float64{{5.36, 24.1}, {2.1, 2.6}}},
			{A: 0, B: 2, Throughputs: [][2]float64{{4, 8}, {2, 3}}},
			{A: 1, B: 2, Throughputs: [][2]float64{{20, 8}, {6, 3}}}},
		PairX: [][]float64{{0.5, 0}, {0, 0}, {0.5, 0}}}
	texts, titles := svgTexts(t, clusterHeatmapSVG(r))
	want := []string{"v100", "k80", "v100 (shared)", "k80 (shared)", "total",
		"0: A ×1", "0.00", "0.50", "0.50", "0.00", "1.00",
		"1: B ×1", "0.00", "0.00", "1.00", "0.00", "1.00",
		"2: C ×1", "0.25", "0.00", "0.50", "0.00", "0.75"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	if want := "1: B ×1 on v100 sharing its GPUs with another job: 1.000 of its time (with job 0 0.500 at 24.1 steps/s; job 2 0.500 at 20 steps/s)"; titles[7] != want {
		t.Errorf("shared tooltip %q, want %q", titles[7], want)
	}
	// Placement-sensitive too: spread columns between own and shared time.
	placed := r
	placed.UnconsolidatedX, placed.UnconsolidatedThroughputs = [][]float64{{0, 0}, {0, 0}, {0.25, 0}}, [][]float64{{0, 0}, {0, 0}, {9, 4}}
	svg := clusterHeatmapSVG(placed)
	if texts, _ := svgTexts(t, svg); fmt.Sprint(texts[:8]) != "[v100 k80 v100 (spread) k80 (spread) v100 (shared) k80 (shared) total 0: A ×1]" || texts[len(texts)-1] != "1.00" {
		t.Errorf("placed and shared texts %q", texts)
	}
	if !strings.Contains(svg, `aria-label="allocation heatmap: time on each GPU type with the job&#39;s GPUs on one server, then spread over servers, then sharing GPUs with another job, then in all"`) {
		t.Errorf("placed and shared text alternative: %s", svg[:300])
	}
	texts, titles = svgTexts(t, sharedHeatmapSVG(r))
	want = []string{"v100", "k80", "job 0 + job 1", "0.50", "0.00", "job 1 + job 2", "0.50", "0.00"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("shared GPUs texts %q, want %q", texts, want)
	}
	if want := "0: A ×1 and 1: B ×1 sharing v100: 0.500 of their time, at 5.36 and 24.1 steps/s there"; len(titles) != 4 || titles[0] != want {
		t.Errorf("shared GPUs tooltips %q, want first %q", titles, want)
	}
	r.PairX = [][]float64{{0, 0}, {0, 0}, {0, 0}}
	if svg := sharedHeatmapSVG(r); svg != "" {
		t.Errorf("no pair got time, yet %s", svg)
	}
}

// TestSharedHeatmapMostTimeFirst: the shared-GPUs rows are the pairs with
// the most time first, at most maxPairRows of them.
func TestSharedHeatmapMostTimeFirst(t *testing.T) {
	r := app.ClusterResult{WorkerTypes: []string{"v100"}}
	for m := range 2 * maxPairRows {
		r.Jobs = append(r.Jobs, fmt.Sprintf("%d: A ×1", m))
	}
	// Pair p joins jobs p and p+1 for (p%7)/100 of the V100's time.
	for p := range 2*maxPairRows - 1 {
		r.Pairs = append(r.Pairs, gavel.Pair{A: p, B: p + 1, Throughputs: [][2]float64{{1, 1}}})
		r.PairX = append(r.PairX, []float64{float64(p%7) / 100})
	}
	texts, _ := svgTexts(t, sharedHeatmapSVG(r))
	var rows []string
	for i := 1; i < len(texts); i += 2 {
		rows = append(rows, texts[i]+" "+texts[i+1])
	}
	if len(rows) != maxPairRows || rows[0] != "job 6 + job 7 0.06" || rows[1] != "job 13 + job 14 0.06" || rows[maxPairRows-1] != "job 31 + job 32 0.03" {
		t.Errorf("rows %q", rows)
	}
}

// TestHeatmapHuesColourBlindSafe: the blocks' hues (consolidated, spread,
// shared, total) stay apart (CIELAB ΔE*76 >= 10) for normal vision and the
// three dichromacies, as the memory palette does.
func TestHeatmapHuesColourBlindSafe(t *testing.T) {
	hues := map[string][3]int{"blue": heatBlue, "vermillion": heatVermillion, "green": heatGreen, "grey": heatGrey}
	for name, m := range cvdMatrices {
		for a, ha := range hues {
			for b, hb := range hues {
				if a >= b {
					continue
				}
				la := lab(t, fmt.Sprintf("#%02x%02x%02x", ha[0], ha[1], ha[2]), m)
				lb := lab(t, fmt.Sprintf("#%02x%02x%02x", hb[0], hb[1], hb[2]), m)
				if d := math.Hypot(math.Hypot(la[0]-lb[0], la[1]-lb[1]), la[2]-lb[2]); d < 10 {
					t.Errorf("%s: %s and %s differ by ΔE %.1f < 10", name, a, b, d)
				}
			}
		}
	}
}

// TestInkOnContrast: cell text is white on dark fills, near-black on light.
func TestInkOnContrast(t *testing.T) {
	for _, c := range []struct {
		rgb  [3]int
		want string
	}{{[3]int{255, 255, 255}, "#1b1b1b"}, {heatBlue, "#ffffff"}, {heatVermillion, "#1b1b1b"}, {heatGreen, "#1b1b1b"}, {heatGrey, "#ffffff"}} {
		if got := inkOn(c.rgb); got != c.want {
			t.Errorf("ink on %v = %s, want %s", c.rgb, got, c.want)
		}
	}
}
