package cost

import (
	"fmt"

	"pipeplan/core/schedule"
)

// InFlight returns, for pipeline stage i (0-based) of p, how many
// microbatches' activations (per model chunk it holds, in units of one
// chunk's activations) the schedule keeps stashed at its peak, and how many
// weight versions it keeps, for m microbatches per step and v chunks per
// device:
//
//   - gpipe: all m microbatches, one version (dissertation §4.2.2).
//   - 1f1b (PipeDream-Flush): min(p−i, m), one version (§3.2.2, §4.2.2).
//   - interleaved: chunk activations min(2(p−i−1) + (v−1)p + 1, m·v),
//     Megatron-LM's warm-up depth plus the one in flight, which gives the
//     first stage L(1 + (p−1)/(pv)) layers (Korthikanti et al. 2022 §4.2.3);
//     one version; with v = 1 it is 1f1b.
//   - 2bw: p−i, two versions (§3.2.1); it needs m >= p.
//   - pipedream: p−i, one version per in-flight input, p−i (§2.3.2).
func InFlight(kind schedule.Kind, p, i, m, v int) (activations, weightVersions int, err error) {
	if p < 1 || i < 0 || i >= p || m < 1 || v < 1 {
		return 0, 0, fmt.Errorf("schedule: need p >= 1, 0 <= i < p, m >= 1, v >= 1, got p=%d i=%d m=%d v=%d", p, i, m, v)
	}
	if v > 1 && kind != schedule.Interleaved {
		return 0, 0, fmt.Errorf("schedule: interleave %d needs the interleaved schedule, got %q", v, kind)
	}
	switch kind {
	case schedule.GPipe:
		return m, 1, nil
	case schedule.OneFOneB:
		return min(p-i, m), 1, nil
	case schedule.Interleaved:
		if v == 1 {
			return min(p-i, m), 1, nil
		}
		return min(2*(p-i-1)+(v-1)*p+1, m*v), 1, nil
	case schedule.TwoBW:
		if m < p {
			return 0, 0, fmt.Errorf("schedule: 2bw needs m >= p so that two weight versions suffice (§3.2.1), got m=%d p=%d", m, p)
		}
		return p - i, 2, nil
	case schedule.PipeDream:
		return p - i, p - i, nil
	}
	return 0, 0, fmt.Errorf("schedule: must be gpipe, 1f1b, interleaved, 2bw or pipedream, got %q", kind)
}

// BubbleFraction returns the pipeline bubble size of a flushing schedule,
// bubble time over ideal compute time: (p−1)/m for GPipe and 1F1B, and
// (1/v)·(p−1)/m interleaved (dissertation §4.2.2). 2BW and PipeDream do not
// flush: their steady state has no bubble.
func BubbleFraction(kind schedule.Kind, p, m, v int) float64 {
	switch kind {
	case schedule.TwoBW, schedule.PipeDream:
		return 0
	}
	if m < 1 || v < 1 {
		return 0
	}
	return float64(p-1) / float64(v) / float64(m)
}
