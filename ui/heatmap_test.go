package ui

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
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
// consolidated columns, then one "spread" column per GPU type, each cell
// with its fraction and a tooltip naming the placement and throughput.
func TestPlacedHeatmap(t *testing.T) {
	jobs, types := []string{"0: LM ×2", "1: A3C ×1"}, []string{"v100", "k80"}
	x := [][]float64{{0.25, 0}, {0, 1}}
	ux := [][]float64{{0.75, 0}, {0, 0}}
	tp := [][]float64{{132, 23.8}, {5, 2}}
	ut := [][]float64{{30.4, 16.9}, {0, 0}}
	texts, titles := svgTexts(t, placedHeatmapSVG(jobs, types, x, ux, tp, ut))
	want := []string{"v100", "k80", "v100 (spread)", "k80 (spread)",
		"0: LM ×2", "0.25", "0.00", "0.75", "0.00", "1: A3C ×1", "0.00", "1.00", "0.00", "0.00"}
	if fmt.Sprint(texts) != fmt.Sprint(want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	if len(titles) != 8 || titles[2] != "0: LM ×2 on v100 with its GPUs on separate servers: 0.750 of its time, at 30.4 steps/s there" {
		t.Errorf("tooltips %q", titles)
	}
	// The placement-insensitive heatmap stays as it was: one column per type.
	texts, _ = svgTexts(t, heatmapSVG(jobs, types, x, tp))
	if len(texts) != 2+2*3 || texts[1] != "k80" || texts[3] != "0.25" {
		t.Errorf("plain heatmap texts %q", texts)
	}
}

// TestInkOnContrast: cell text is white on dark fills, near-black on light.
func TestInkOnContrast(t *testing.T) {
	for _, c := range []struct {
		rgb  [3]int
		want string
	}{{[3]int{255, 255, 255}, "#1b1b1b"}, {heatBlue, "#ffffff"}, {heatVermillion, "#1b1b1b"}, {[3]int{0, 0, 0}, "#ffffff"}} {
		if got := inkOn(c.rgb); got != c.want {
			t.Errorf("ink on %v = %s, want %s", c.rgb, got, c.want)
		}
	}
}
