package schedule_test

import (
	"context"
	"fmt"

	"pipeplan/core/schedule"
)

// Generate 1F1B for 4 stages and 8 microbatches, simulate it with a
// backward twice as long as the forward, and read the bubble and memory.
func ExampleSimulate() {
	s, err := schedule.Generate(schedule.OneFOneB, schedule.Options{Stages: 4, Microbatches: 8})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Devices[1][:5])
	tl, err := schedule.Simulate(context.Background(), s, schedule.Uniform(1, 2, 0, 0), nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("step %g s, bubble %.4f = (p−1)/(m+p−1)\n", tl.StepSeconds, tl.BubbleFraction)
	for d, st := range tl.Devices {
		fmt.Printf("device %d: %d activations in flight at most\n", d, st.PeakActivations)
	}
	// Output:
	// [1F0 1F1 1F2 1B0 1F3]
	// step 33 s, bubble 0.2727 = (p−1)/(m+p−1)
	// device 0: 4 activations in flight at most
	// device 1: 3 activations in flight at most
	// device 2: 2 activations in flight at most
	// device 3: 1 activations in flight at most
}

// CheckStar validates a MadPipe partition: groups for the period, and each
// device's peak memory against the limit.
func ExampleCheckStar() {
	stages := []schedule.StageCost{
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 100, WeightBytes: 50},
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 100, WeightBytes: 50},
		{FwdSeconds: 1, BwdSeconds: 2, ActivationBytes: 100, WeightBytes: 50},
	}
	rep, err := schedule.CheckStar(context.Background(), stages, 6, 250, 12)
	if err != nil {
		panic(err)
	}
	fmt.Println("groups", rep.Groups, "peak bytes", rep.PeakMemoryBytes, "over the limit", rep.OverLimit)
	// Output:
	// groups [2 1 1] peak bytes [250 150 150] over the limit []
}
