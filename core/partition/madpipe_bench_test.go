package partition

import (
	"context"
	"testing"

	"pipeplan/modelprofiles"
)

// BenchmarkMadPipeResNet50 runs MadPipe on PipeDream's ResNet-50 profile
// (176 layers, minibatch 128) over 8 GPUs of 16 GB at 12 GB/s, the
// setting of madpipe-2020 §5.1 (target: under 2 s).
func BenchmarkMadPipeResNet50(b *testing.B) {
	g, err := modelprofiles.Graph("resnet50")
	if err != nil {
		b.Fatal(err)
	}
	prof := g.Chain()
	for b.Loop() {
		if _, err := MadPipe(context.Background(), prof, 8, 12e9, 16e9, nil); err != nil {
			b.Fatal(err)
		}
	}
}
