package schedule

import (
	"fmt"
	"strings"
)

// Versioning is the rule that picks the weight version a microbatch uses.
type Versioning uint8

// The versioning rules.
const (
	// Synchronous schedules use one weight version per step (flush, then optimizer step).
	Synchronous Versioning = iota
	// Stashed uses the latest local version in the forward pass and stashes
	// it for the backward pass; every backward pass makes a new version (§2.4.3).
	Stashed
	// VerticalSync uses, on every stage, the version the input stage used (§2.4.3).
	VerticalSync
	// DoubleBuffered makes a new version every m microbatches and uses the
	// version each action names (PipeDream-2BW, §3.2.1).
	DoubleBuffered
)

// String names the rule.
func (v Versioning) String() string {
	switch v {
	case Synchronous:
		return "synchronous"
	case Stashed:
		return "stashed"
	case VerticalSync:
		return "vertical-sync"
	case DoubleBuffered:
		return "double-buffered"
	}
	return fmt.Sprintf("Versioning(%d)", uint8(v))
}

// Schedule is one ordered list of actions per device.
type Schedule struct {
	// Kind is the generator that made the schedule ("" for a loaded one).
	Kind Kind
	// Stages is the number of (virtual) stages; stage s is chunk s/(Stages/Chunks).
	Stages int
	// Chunks is the number of model chunks per device (v; 1 unless interleaved).
	Chunks int
	// Microbatches is the number of microbatches per batch (m).
	Microbatches int
	// Batches is the number of batches the lists run (>1 only for schedules
	// without flushes, whose steady state spans batches).
	Batches int
	// Versioning is the weight-version rule of the schedule.
	Versioning Versioning
	// Devices holds one ordered action list per device (rank).
	Devices [][]Action
}

// TotalMicrobatches is Microbatches × Batches.
func (s *Schedule) TotalMicrobatches() int { return s.Microbatches * s.Batches }

// Chunk returns the chunk index of a (virtual) stage.
func (s *Schedule) Chunk(stage int) int {
	perChunk := s.Stages / s.Chunks
	if perChunk == 0 {
		return 0
	}
	return stage / perChunk
}

// Grid prints the schedule as a step × device table, one column per device,
// like torch's _format_pipeline_order.
func (s *Schedule) Grid() string {
	steps := 0
	for _, d := range s.Devices {
		steps = max(steps, len(d))
	}
	width := len(fmt.Sprint(steps))
	var b strings.Builder
	fmt.Fprintf(&b, "%*s", width+6, "")
	for r := range s.Devices {
		fmt.Fprintf(&b, " %-9s", fmt.Sprintf("Rank %d", r))
	}
	b.WriteString("\n")
	for i := range steps {
		fmt.Fprintf(&b, "Step %0*d:", width, i)
		for _, d := range s.Devices {
			cell := ""
			if i < len(d) {
				cell = d[i].String()
			}
			fmt.Fprintf(&b, " %-9s", cell)
		}
		b.WriteString("\n")
	}
	return b.String()
}
