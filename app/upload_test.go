package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pipeplan/app/request"
	"pipeplan/modelprofiles"
)

func TestUploadedGraphPlansLikeThePreset(t *testing.T) {
	raw, err := modelprofiles.Raw("vgg16")
	if err != nil {
		t.Fatal(err)
	}
	prof, err := ParseUploadedProfile("graph.txt", raw, 128)
	if err != nil {
		t.Fatal(err)
	}
	in := request.Default().Plan
	in.GPU, in.Nodes, in.GPUsPerNode, in.InterNodeGBps, in.Planner = "nvidia-v100-sxm2-32gb", 16, 1, 1.25, "pipedream"
	in.GlobalBatch = 1920 // 15-1: one minibatch of 128 per replica
	up, err := PlanProfile(context.Background(), prof, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Model = "pd-vgg16"
	pre, err := Plan(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if up.Plan == nil || pre.Plan == nil || up.Candidates[0].SamplesPerSecond != pre.Candidates[0].SamplesPerSecond {
		t.Errorf("uploaded graph.txt and the preset plan differently: %+v vs %+v", up.Candidates, pre.Candidates)
	}
}

func TestParseUploadedProfileErrors(t *testing.T) {
	for _, c := range []struct {
		data string
		mb   int
		want string
	}{
		{`{"microbatch_size": 0, "layers": []}`, 1, "x.json"},
		{"not a graph", 8, "x.json"},
		{"node1 -- x", 0, "minibatch"},
		{uploadChain(request.MaxUploadedLayers + 1), 1, "x.json: the profile has 513 layers, over the limit of 512"},
	} {
		if _, err := ParseUploadedProfile("x.json", []byte(c.data), c.mb); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseUploadedProfile(%q) = %v, want an error containing %q", c.data, err, c.want)
		}
	}
}

// uploadChain is a JSON profile of n layers that differ (the PipeDream
// DP's worst case: no two stages alike).
func uploadChain(n int) string {
	layers := make([]string, n)
	for i := range layers {
		layers[i] = fmt.Sprintf(`{"fwd_seconds": %g, "bwd_seconds": %g, "output_activation_bytes": %d, "parameter_bytes": %d}`,
			1e-4*float64(1+i%7), 2e-4*float64(1+i%11), 1e6*(1+i%13), 1e5*(1+i%17))
	}
	return `{"microbatch_size": 32, "layers": [` + strings.Join(layers, ", ") + `]}`
}

// TestUploadedProfileWorstAccepted: the largest accepted upload parses to
// MaxUploadedLayers layers (the worst case of the layer limit).
func TestUploadedProfileWorstAccepted(t *testing.T) {
	p, err := ParseUploadedProfile("x.json", []byte(uploadChain(request.MaxUploadedLayers)), 1)
	if err != nil || len(p.Layers) != request.MaxUploadedLayers {
		t.Fatalf("%d layers: %d parsed, err %v", request.MaxUploadedLayers, len(p.Layers), err)
	}
}

func FuzzParseUploadedProfile(f *testing.F) {
	raw, _ := modelprofiles.Raw("alexnet")
	f.Add(raw, 8)
	f.Add([]byte(`{"microbatch_size": 2, "layers": [{"fwd_seconds": 0.1, "bwd_seconds": 0.2, "output_activation_bytes": 10, "parameter_bytes": 5}]}`), 1)
	f.Add([]byte("node1 -- Input -- forward_compute_time=0.0, backward_compute_time=0.0, activation_size=1.0, parameter_size=0.0"), 4)
	f.Add([]byte(uploadChain(request.MaxUploadedLayers+1)), 1)
	f.Fuzz(func(t *testing.T, data []byte, mb int) {
		p, err := ParseUploadedProfile("f", data, mb)
		if err != nil {
			return
		}
		if p.MicrobatchSize < 1 || len(p.Layers) == 0 || len(p.Layers) > request.MaxUploadedLayers {
			t.Fatalf("accepted a profile with microbatch %d and %d layers", p.MicrobatchSize, len(p.Layers))
		}
	})
}
