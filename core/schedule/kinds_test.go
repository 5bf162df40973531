package schedule

import (
	"testing"

	"pipeplan/core/plan"
)

// A plan may name exactly the kinds this package generates.
func TestKindsMatchPlan(t *testing.T) {
	if len(Kinds) != len(plan.ScheduleKinds) {
		t.Fatalf("schedule.Kinds %v, plan.ScheduleKinds %v", Kinds, plan.ScheduleKinds)
	}
	for i, k := range Kinds {
		if string(k) != plan.ScheduleKinds[i] {
			t.Errorf("kind %d: schedule %q, plan %q", i, k, plan.ScheduleKinds[i])
		}
		if _, ok := generators[k]; !ok {
			t.Errorf("no generator for %q", k)
		}
	}
}
