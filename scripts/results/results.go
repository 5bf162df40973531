package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"pipeplan/cli"
)

// Section is one generated part of RESULTS.md.
type Section struct {
	// Name is the marker name: <!-- results:Name begin -->.
	Name string
	// Build computes the section's markdown (commands and table).
	Build func() (string, error)
}

// Sections lists every generated section, in the order of RESULTS.md.
func Sections() []Section {
	return []Section{
		{"published-runs", PublishedRunsMarkdown},
		{"korthikanti", KorthikantiMarkdown},
		{"pipedream", PipeDreamMarkdown},
		{"twobw", TwoBWMarkdown},
		{"twobw-figures", TwoBWFiguresMarkdown},
		{"ptdp-table", PTDPTableMarkdown},
		{"ptdp-figures", PTDPFiguresMarkdown},
		{"ptdp-zero3", PTDPZeroMarkdown},
		{"madpipe", MadPipeMarkdown},
		{"schedules", SchedulesMarkdown},
	}
}

func beginMarker(name string) string { return "<!-- results:" + name + " begin -->" }
func endMarker(name string) string   { return "<!-- results:" + name + " end -->" }

// Rewrite replaces the text between each section's markers in doc by what
// the section computes now. A section whose markers are missing is an
// error (add them to RESULTS.md where the table belongs).
func Rewrite(doc []byte) ([]byte, error) {
	out := string(doc)
	for _, s := range Sections() {
		body, err := s.Build()
		if err != nil {
			return nil, fmt.Errorf("section %s: %w", s.Name, err)
		}
		b, e := beginMarker(s.Name), endMarker(s.Name)
		i := strings.Index(out, b)
		j := strings.Index(out, e)
		if i < 0 || j < i {
			return nil, fmt.Errorf("section %s: RESULTS.md lacks the markers %q ... %q", s.Name, b, e)
		}
		out = out[:i+len(b)] + "\n" + strings.TrimRight(body, "\n") + "\n" + out[j:]
	}
	return []byte(out), nil
}

// runJSON runs pipeplan's CLI with args plus --json and decodes its output into v.
func runJSON(v any, args ...string) error {
	var buf bytes.Buffer
	if err := cli.Run(append(append([]string{}, args...), "--json"), &buf); err != nil {
		return fmt.Errorf("pipeplan %s: %w", strings.Join(args, " "), err)
	}
	if err := json.Unmarshal(buf.Bytes(), v); err != nil {
		return fmt.Errorf("pipeplan %s: output: %w", strings.Join(args, " "), err)
	}
	return nil
}

// command is the shell form of a CLI invocation as RESULTS.md shows it.
func command(args ...string) string { return "go run . " + strings.Join(args, " ") }

// geomean is the geometric mean of xs (NaN for none).
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

// table renders a markdown table.
func table(header []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// commandTable renders rows as the CLI commands that computed them, in a
// fenced block, then a markdown table under header: row gives each row's
// command and cells.
func commandTable[R any](rows []R, header []string, row func(R) (cmd string, cells []string)) string {
	cmds := make([]string, len(rows))
	tab := make([][]string, len(rows))
	for i, r := range rows {
		cmds[i], tab[i] = row(r)
	}
	return codeBlock(cmds) + "\n" + table(header, tab)
}

// codeBlock renders shell commands as a fenced block.
func codeBlock(lines []string) string {
	return "```\n" + strings.Join(lines, "\n") + "\n```\n"
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
