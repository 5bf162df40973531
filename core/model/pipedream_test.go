package model_test

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"pipeplan/core/model"
	"pipeplan/modelprofiles"
)

func loadTestGraph(t testing.TB, file string) *model.Graph {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	g, err := model.ParseGraph(data)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func embedded(t testing.TB, name string) *model.Graph {
	t.Helper()
	g, err := modelprofiles.Graph(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestStatesOfTestGraphs checks the augmented antichain states and their
// order against the reference values in the pipedream anchor README.
func TestStatesOfTestGraphs(t *testing.T) {
	for file, want := range map[string]string{
		"test.txt":  "[4 5 1] [4 5 0] [4 5 2 0] [4 5 3 0] [4 5 1 0]",
		"test2.txt": "[0 4] [0 2] [0 4 2] [0 1] [0 4 1] [0 2 1] [0 4 2 1] [3]",
	} {
		g := loadTestGraph(t, file)
		s, err := g.States()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, aug := range s.Augmented {
			ids := make([]string, len(aug))
			for i, v := range aug {
				ids[i] = g.Nodes[v].ID
			}
			got = append(got, "["+strings.Join(ids, " ")+"]")
		}
		first := map[string]string{"test.txt": "[4] ", "test2.txt": "[0] "}[file]
		if strings.Join(got, " ") != first+want {
			t.Errorf("%s: states %s, want %s", file, strings.Join(got, " "), first+want)
		}
	}
}

// TestStateSums checks the whole-model sums against the anchor README: the
// last state holds the whole model, so its compute is the optimizer's
// "Time taken by single-stage pipeline".
func TestStateSums(t *testing.T) {
	for _, c := range []struct {
		name          string
		seconds, pars float64
	}{
		{"vgg16", 0.672535, 553430176}, {"resnet50", 0.443419, 102228128}, {"gnmt", 0.089416, 775063808},
		{"alexnet", (44.801 + 40.520) / 1000, 244403360},
	} {
		s, err := embedded(t, c.name).States()
		if err != nil {
			t.Fatal(err)
		}
		last := s.Len() - 1
		if math.Abs(s.ComputeSeconds[last]-c.seconds) > 1e-9 {
			t.Errorf("%s: total compute %.9f s, want %.9f", c.name, s.ComputeSeconds[last], c.seconds)
		}
		if fwd := map[string]float64{"vgg16": 0.233902, "resnet50": 0.182488, "gnmt": 0.033533, "alexnet": 0.044801}[c.name]; math.Abs(s.ForwardSeconds[last]-fwd) > 1e-9 {
			t.Errorf("%s: total forward %.9f s, want %.9f", c.name, s.ForwardSeconds[last], fwd)
		}
		if s.ParameterBytes[last] != c.pars {
			t.Errorf("%s: total parameters %v bytes, want %v", c.name, s.ParameterBytes[last], c.pars)
		}
		for j := range s.Len() {
			for _, k := range s.Ancestors[j] {
				if k >= j || s.ComputeSeconds[k] > s.ComputeSeconds[j]+1e-12 {
					t.Fatalf("%s: ancestor %d of state %d breaks the topological order or monotonicity", c.name, k, j)
				}
			}
		}
		if len(s.Ancestors[last]) != last {
			t.Errorf("%s: last state has %d ancestors, want all %d others", c.name, len(s.Ancestors[last]), last)
		}
	}
}

func TestBranchyGraphsAreRefused(t *testing.T) {
	_, err := embedded(t, "inception_v3").States()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(model.MaxGraphStates)) {
		t.Fatalf("err = %v", err)
	}
}

// TestChain checks the linearized chain: on a plain chain (VGG-16) it equals
// the states; on a DAG it keeps every optimizer node and the totals.
func TestChain(t *testing.T) {
	g := embedded(t, "vgg16")
	s, err := g.States()
	if err != nil {
		t.Fatal(err)
	}
	p := g.Chain()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(p.Layers) != s.Len() {
		t.Fatalf("vgg16 chain has %d layers, want %d states", len(p.Layers), s.Len())
	}
	sum := 0.0
	for j, l := range p.Layers {
		sum += l.FwdSeconds + l.BwdSeconds
		if math.Abs(sum-s.ComputeSeconds[j]) > 1e-12 || l.OutputActivationBytes != s.OutputBytes[j] {
			t.Fatalf("vgg16 layer %d: prefix %v / out %v, state %v / %v", j, sum, l.OutputActivationBytes, s.ComputeSeconds[j], s.OutputBytes[j])
		}
	}
	for _, name := range []string{"resnet50", "gnmt", "nasnetalarge"} {
		g := embedded(t, name)
		p := g.Chain()
		if err := p.Validate(); err != nil {
			t.Fatal(name, err)
		}
		kept, total := 0, 0.0
		for v, k := range g.OptimizerNodes() {
			if k {
				kept++
				total += g.Nodes[v].ParameterBytes
			}
		}
		pars := 0.0
		for _, l := range p.Layers {
			pars += l.ParameterBytes
		}
		if len(p.Layers) != kept || pars != total {
			t.Errorf("%s: %d layers / %v parameter bytes, want %d / %v", name, len(p.Layers), pars, kept, total)
		}
	}
}

// TestChainCutBytes checks the cut sizes on a diamond: a -> b -> d, a -> c -> d.
func TestChainCutBytes(t *testing.T) {
	g, err := model.ParseGraph([]byte(`a -- A -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=10.0, parameter_size=0.0
b -- B -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=20.0, parameter_size=0.0
c -- C -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=40.0, parameter_size=0.0
d -- D -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=80.0, parameter_size=0.0
	a -- b
	a -- c
	b -- d
	c -- d
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range g.Chain().Layers {
		got = append(got, fmt.Sprintf("%s:%g", l.Name, l.OutputActivationBytes))
	}
	// a's output crosses the cut after b (c still needs it).
	if want := "a:10 b:30 c:60 d:80"; strings.Join(got, " ") != want {
		t.Fatalf("chain %v, want %s", got, want)
	}
}

func TestParseGraphErrorsNameTheLine(t *testing.T) {
	node := "n%d -- X -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1.0, parameter_size=1.0\n"
	two := fmt.Sprintf(node, 0) + fmt.Sprintf(node, 1)
	for _, c := range []struct{ in, want string }{
		{"", "no node lines"},
		{two + "\tn0 -- n2\n", "line 3: edge destination \"n2\" is not a node"},
		{two + "\tn0 -- n1\n\tn0 -- n1\n", "line 4: duplicate edge"},
		{two + "\tn0 -- n0\n", "line 3: self loop"},
		{two + "\tn0 -- n1\n\tn1 -- n0\n", "cycle"},
		{two + fmt.Sprintf(node, 0), "line 3: duplicate node id"},
		{"n0 -- X -- forward_compute_time=-1.0, backward_compute_time=1.0, activation_size=1.0, parameter_size=1.0\n", "line 1: node \"n0\": forward_compute_time: must be a finite number >= 0, got \"-1.0\""},
		{"n0 -- X -- forward_compute_time=1.0, backward_compute_time=NaN, activation_size=1.0, parameter_size=1.0\n", "backward_compute_time"},
		{"n0 -- X -- backward_compute_time=1.0, forward_compute_time=1.0, activation_size=1.0, parameter_size=1.0\n", "field 1 must be forward_compute_time"},
		{"n0 -- X -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=[1.0; x], parameter_size=1.0\n", "activation_size"},
		{"n0 -- X\n", "line 1: node line must have 3 or 4 fields"},
		{"n0 -- X -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1.0, parameter_size=1.0 -- stage=1\n", "stage_id"},
		{two + "\tn0 -- n1\n" + fmt.Sprintf(node, 2), "line 4: node line after edge lines"},
	} {
		_, err := model.ParseGraph([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseGraph(%q) error = %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestParseGraphListActivationsAndStageIDs(t *testing.T) {
	g, err := model.ParseGraph([]byte("n0 -- LSTM -- forward_compute_time=1.5, backward_compute_time=2.0, activation_size=[6291456.0; 8192.0], parameter_size=3.000 -- stage_id=2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n := g.Nodes[0]; n.ActivationBytes != 6299648 || n.StageID != 2 || n.FwdMillis != 1.5 || n.Line != 1 {
		t.Fatalf("node = %+v", n)
	}
}

// FuzzParseGraph checks that ParseGraph never panics, and that the states
// and chain of any small graph it accepts are built without panicking and
// are consistent.
func FuzzParseGraph(f *testing.F) {
	for _, file := range []string{"test.txt", "test2.txt"} {
		data, err := os.ReadFile("testdata/" + file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if data, err := modelprofiles.Raw("gnmt"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("a -- Input0 -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=1.0, parameter_size=1.0\nb -- __getitem__(0) -- forward_compute_time=1.0, backward_compute_time=1.0, activation_size=[1.0; 2.0], parameter_size=1.0\n\ta -- b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := model.ParseGraph(data)
		if err != nil || len(g.Nodes) > 64 {
			return
		}
		p := g.Chain()
		s, err := g.States()
		if err != nil {
			return
		}
		if s.Len() == 0 || len(p.Layers) == 0 {
			t.Fatalf("accepted graph with %d states and %d chain layers", s.Len(), len(p.Layers))
		}
		for j := range s.Len() {
			if math.IsNaN(s.ComputeSeconds[j]) || s.ComputeSeconds[j] < 0 {
				t.Fatalf("state %d compute %v", j, s.ComputeSeconds[j])
			}
		}
	})
}
