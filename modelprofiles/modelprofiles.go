// Package modelprofiles embeds the per-layer profiles PipeDream published
// (graph.txt files of github.com/msr-fiddle/pipedream, MIT; provenance in
// data/README.md) and loads them by name for the CLI and the playground.
package modelprofiles

import (
	"embed"
	"fmt"

	"pipeplan/core/model"
)

//go:embed data/*.txt
var files embed.FS

// Info describes one embedded profile.
type Info struct {
	// Name is the name to load it by (e.g. "vgg16").
	Name string `json:"name"`
	// Description says what the model is and where the file came from.
	Description string `json:"description"`
	// MicrobatchSize is the per-GPU minibatch the profile was measured at.
	MicrobatchSize int `json:"microbatch_size"`
	// States is the number of antichain states PipeDream's optimizer builds,
	// or 0 when the graph branches too much for its DP.
	States int `json:"states"`
}

// catalog lists the embedded profiles. Minibatch sizes are derived from the
// Input node's activation size (data/README.md) except GNMT's, which is the
// paper's per-GPU minibatch (PipeDream SOSP'19 §5.1).
var catalog = []Info{
	{"alexnet", "AlexNet (PipeDream profile, V100)", 256, 22},
	{"vgg16", "VGG-16 (PipeDream profile, V100)", 128, 40},
	{"resnet18", "ResNet-18 (PipeDream profile, V100)", 256, 100},
	{"resnet18_copy", "ResNet-18, second profiling run (graph_copy.txt)", 256, 100},
	{"resnet50", "ResNet-50 (PipeDream profile, V100)", 128, 240},
	{"resnet101", "ResNet-101 (PipeDream profile, V100)", 64, 410},
	{"resnext50", "ResNeXt-50 (PipeDream profile, V100)", 128, 240},
	{"resnext101", "ResNeXt-101 (PipeDream profile, V100)", 64, 410},
	{"squeezenet1_0", "SqueezeNet 1.0 (PipeDream profile, V100)", 256, 99},
	{"densenet121", "DenseNet-121 (PipeDream profile, V100)", 64, 430},
	{"inception_v3", "Inception-v3 (PipeDream profile; too branchy for the antichain DP)", 128, 0},
	{"nasnetamobile", "NASNet-A Mobile (PipeDream profile; too branchy for the antichain DP)", 128, 0},
	{"nasnetalarge", "NASNet-A Large (PipeDream profile; too branchy for the antichain DP)", 16, 0},
	{"gnmt", "GNMT-8 (PipeDream profile, V100)", 64, 99},
	{"gnmt_large", "GNMT-16 (PipeDream profile, V100)", 64, 1495},
}

// List returns the embedded profiles in a fixed order.
func List() []Info { return append([]Info(nil), catalog...) }

// Raw returns the graph.txt bytes of the named profile.
func Raw(name string) ([]byte, error) {
	for _, in := range catalog {
		if in.Name == name {
			return files.ReadFile("data/" + name + ".txt")
		}
	}
	return nil, fmt.Errorf("model %q: not an embedded profile (have %v)", name, names())
}

// Graph parses the named profile and sets its Name and MicrobatchSize.
func Graph(name string) (*model.Graph, error) {
	data, err := Raw(name)
	if err != nil {
		return nil, err
	}
	g, err := model.ParseGraph(data)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", name, err)
	}
	for _, in := range catalog {
		if in.Name == name {
			g.Name, g.MicrobatchSize = in.Name, in.MicrobatchSize
		}
	}
	return g, nil
}

func names() []string {
	out := make([]string, len(catalog))
	for i, in := range catalog {
		out[i] = in.Name
	}
	return out
}
