package ui

import (
	"testing"

	"pipeplan/core/gavel"
)

// TestTraceMix: job types are counted per scale factor, most frequent
// first, ties by name, and only traceMixShown are named.
func TestTraceMix(t *testing.T) {
	var jobs []gavel.JobOutcome
	add := func(model string, sf, n int) {
		for range n {
			jobs = append(jobs, gavel.JobOutcome{JobType: model, ScaleFactor: sf})
		}
	}
	add("A3C", 1, 2)
	add("planned: GPT 1.7B (job 4)", 2, 3)
	add("LM (batch size 20)", 1, 2)
	add("LM (batch size 20)", 2, 1)
	if got, want := traceMix(jobs), "planned: GPT 1.7B (job 4) ×2: 3, A3C ×1: 2, LM (batch size 20) ×1: 2, LM (batch size 20) ×2: 1"; got != want {
		t.Errorf("traceMix = %q, want %q", got, want)
	}
	for _, m := range []string{"a", "b", "c", "d", "e"} {
		add(m, 1, 1)
	}
	if got, want := traceMix(jobs), "planned: GPT 1.7B (job 4) ×2: 3, A3C ×1: 2, LM (batch size 20) ×1: 2, LM (batch size 20) ×2: 1, a ×1: 1, b ×1: 1, 3 more types"; got != want {
		t.Errorf("traceMix of 9 types = %q, want %q", got, want)
	}
}
