package schedule

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

// svgCounts parses an SVG and counts its elements by name and the
// <title> texts, failing on malformed XML.
func svgCounts(t *testing.T, data []byte) (map[string]int, []string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(string(data)))
	counts := map[string]int{}
	var titles []string
	inTitle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid SVG: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			counts[e.Name.Local]++
			inTitle = e.Name.Local == "title"
		case xml.CharData:
			if inTitle {
				titles = append(titles, string(e))
			}
		case xml.EndElement:
			inTitle = false
		}
	}
	return counts, titles
}

func TestRenderSVGSmall(t *testing.T) {
	tl := simulate(t, OneFOneB, Options{Stages: 4, Microbatches: 8}, Uniform(1, 2, 0, 0))
	out := RenderSVG(tl, SVGOptions{})
	counts, titles := svgCounts(t, out)
	// one box per F and B, a hatched idle background per device, 3 legend
	// swatches (forward, backward, idle) and 3 rects in the patterns.
	if got, want := counts["rect"], 4*16+4+3+3; got != want {
		t.Errorf("%d rects, want %d", got, want)
	}
	found := false
	for _, ti := range titles {
		if strings.HasPrefix(ti, "GPU 2 · 2B5 · backward · microbatch 5 · chunk 0") {
			found = true
		}
	}
	if !found {
		t.Errorf("no tooltip for GPU 2's backward of microbatch 5 in %d titles", len(titles))
	}
	for _, want := range []string{`fill="url(#idle)"`, ">GPU 3<", "bubble 27.3%", ">0 s<", ">30 s<", ">7<"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

// At p=64, m=512 the renderer aggregates: a bounded number of elements,
// the 1F1B steady state drawn as alternating runs.
func TestRenderSVGLargeAggregates(t *testing.T) {
	tl := simulate(t, OneFOneB, Options{Stages: 64, Microbatches: 512}, Uniform(1, 2, 0, 0))
	out := RenderSVG(tl, SVGOptions{})
	counts, titles := svgCounts(t, out)
	if counts["rect"] > 64*20 {
		t.Errorf("%d rects for p=64, m=512, want an aggregated drawing (<= %d)", counts["rect"], 64*20)
	}
	alternating := 0
	for _, ti := range titles {
		if strings.Contains(ti, "alternating forwards and backwards") {
			alternating++
		}
	}
	if alternating < 64 {
		t.Errorf("%d alternating runs, want one per device at least", alternating)
	}
	if len(out) > 1<<20 {
		t.Errorf("SVG is %d bytes, want under 1 MiB", len(out))
	}
}

// Zooming into the warm-up of the large pipeline draws individual boxes,
// all inside the plot, with the axis starting at the window.
func TestRenderSVGZoom(t *testing.T) {
	tl := simulate(t, OneFOneB, Options{Stages: 64, Microbatches: 512}, Uniform(1, 2, 0, 0))
	out := RenderSVG(tl, SVGOptions{FromSeconds: 40, ToSeconds: 100})
	_, titles := svgCounts(t, out)
	boxes := 0
	for _, ti := range titles {
		if strings.Contains(ti, " · microbatch ") {
			boxes++
		}
	}
	// Each device runs back to back from its first forward, so ~60 s of
	// 1 s forwards and 2 s backwards over 64 devices.
	if boxes < 64*10 || boxes > 64*61 {
		t.Errorf("%d boxes in the zoomed window, want individual boxes", boxes)
	}
	if strings.Contains(string(out), "alternating forwards and backwards") {
		t.Error("zoomed drawing is aggregated")
	}
	for _, want := range []string{">40 s<", ">100 s<", "showing 40 s – 100 s"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("axis lacks %q", want)
		}
	}
	if strings.Contains(string(out), ">30 s<") {
		t.Error("axis has a tick before the window")
	}
}

// A long 1F1B steady state too big to draw box by box is collapsed: the
// boxes drawn, the band's count of left-out periods and the tooltips' real
// times add up to the whole step, the title keeps the real step, and the
// SVG stays small.
func TestRenderSVGCollapsesSteadyState(t *testing.T) {
	const p, m = 8, 1536
	tl := simulate(t, OneFOneB, Options{Stages: p, Microbatches: m}, Uniform(1, 2, 0, 0))
	out := string(RenderSVG(tl, SVGOptions{WidthPx: 900, MaxBoxes: 400}))
	_, titles := svgCounts(t, []byte(out))
	boxes, periods := 0, 0
	for _, ti := range titles {
		if strings.Contains(ti, " · microbatch ") {
			boxes++
		}
		fmt.Sscanf(ti, "%d repeated steady-state periods of 3 s", &periods)
	}
	// 1F1B on uniform stages: warm-up and drain of p−1 microbatches around
	// m−p+1 one-forward-one-backward periods of 3 s; all but the first
	// and last steady-state windows found are left out.
	if periods < m-2*p || periods > m-p {
		t.Fatalf("%d periods left out, want about m − p = %d", periods, m-p)
	}
	// The F and B of the microbatches not left out, and up to one action
	// per device that straddles the band's end.
	if want := 2 * p * (m - periods); boxes < want || boxes > want+p {
		t.Errorf("%d boxes drawn, want the F and B of the %d microbatches not left out = %d (+ up to %d)", boxes, m-periods, want, p)
	}
	if !strings.Contains(out, "step 4629 s") || !strings.Contains(out, "· 4627 s – 4629 s</title>") || !strings.Contains(out, "the whole step to scale: 4629 s") {
		t.Errorf("the real step (4629 s = 3·(m+p−1)) is not the title's, the last backward's end and the overview's")
	}
	if len(out) > 100<<10 {
		t.Errorf("SVG is %d bytes, want under 100 KB", len(out))
	}
	if keep := string(RenderSVG(tl, SVGOptions{WidthPx: 900, MaxBoxes: 400, KeepSteadyState: true})); strings.Contains(keep, "left out") {
		t.Error("KeepSteadyState collapsed the steady state")
	}
}

// The title counts pipeline stages p and chunks v, not virtual stages, and
// says where a V places them.
func TestRenderSVGTitleNamesChunks(t *testing.T) {
	tl := simulate(t, Interleaved, Options{Stages: 8, Chunks: 12, Microbatches: 16}, Uniform(1, 2, 0, 0))
	if out := string(RenderSVG(tl, SVGOptions{})); !strings.Contains(out, "interleaved · p = 8 stages × v = 12 chunks · 16 microbatches") {
		t.Errorf("title: %.200s", out[strings.Index(out, "<title>"):])
	}
	tl = simulate(t, ZBV, Options{Stages: 4, Microbatches: 8}, Uniform(1, 2, 1, 0))
	if out := string(RenderSVG(tl, SVGOptions{})); !strings.Contains(out, "zb-v · p = 4 stages × 2 chunks in a V · 8 microbatches") {
		t.Errorf("zb-v title: %.200s", out[strings.Index(out, "<title>"):])
	}
}

// The legend names what the dark backward boxes are: whole backwards, input
// gradients, or under DualPipeV, which runs both, either.
func TestRenderSVGLegendBackwards(t *testing.T) {
	for _, c := range []struct {
		kind       Kind
		want, not  string
		microbatch int
	}{
		{OneFOneB, ">backward<", "input gradient", 8},
		{ZBH1, ">I: input gradient<", "B: backward", 8},
		{DualPipeV, ">B: backward, or I: input gradient<", ">I: input gradient<", 8},
	} {
		out := string(RenderSVG(simulate(t, c.kind, Options{Stages: 4, Microbatches: c.microbatch}, Uniform(1, 2, 1, 0)), SVGOptions{}))
		if !strings.Contains(out, c.want) || strings.Contains(out, c.not) {
			t.Errorf("%s: legend lacks %q or has %q", c.kind, c.want, c.not)
		}
	}
}
