package cli

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"pipeplan/core/partition"
	"pipeplan/modelprofiles"
)

func TestPartitionMadPipeCommand(t *testing.T) {
	v := partitionJSON(t, "--model", "vgg16", "--algorithm", "madpipe", "--level-sizes", "4", "--level-bandwidths", "12e9", "--memory-bytes", "12e9")
	g, err := modelprofiles.Graph("vgg16")
	if err != nil {
		t.Fatal(err)
	}
	want, err := partition.MadPipe(context.Background(), g.Chain(), 4, 12e9, 12e9, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := v["bottleneck_seconds"].(float64); math.Abs(got-want.PeriodSeconds) > 1e-12*want.PeriodSeconds {
		t.Errorf("bottleneck_seconds = %v, want MadPipe's period %v", got, want.PeriodSeconds)
	}
	stages := v["stages"].([]any)
	if len(stages) != len(want.Stages) {
		t.Fatalf("%d stages, want %d", len(stages), len(want.Stages))
	}
	next := 0.0
	for _, s := range stages {
		st := s.(map[string]any)
		if st["first_layer"].(float64) != next || st["replicas"].(float64) != 1 {
			t.Fatalf("stage %v: want first_layer %v and replicas 1", st, next)
		}
		next = st["last_layer"].(float64) + 1
	}
	if next != 40 || v["noam"].(float64) < 1 {
		t.Errorf("stages end at %v (want 40 layers), noam %v", next, v["noam"])
	}
	var table bytes.Buffer
	if err := Run([]string{"partition", "--model", "vgg16", "--algorithm", "madpipe", "--level-sizes", "4", "--level-bandwidths", "12e9", "--memory-bytes", "12e9"}, &table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "SPECIAL") {
		t.Errorf("table output has no SPECIAL column:\n%s", table.String())
	}
}

func TestPartitionMadPipeCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "vgg16", "--algorithm", "madpipe"}, "--memory-bytes: madpipe needs the memory per GPU"},
		{[]string{"--model", "vgg16", "--algorithm", "madpipe", "--memory-bytes", "1e6"}, "needs"},
		{[]string{"--model", "vgg16", "--algorithm", "madpipe", "--memory-bytes", "1e10", "--export-plan", "x.json"}, "--export-plan: not supported for madpipe"},
	} {
		err := Run(append([]string{"partition"}, tc.args...), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}
