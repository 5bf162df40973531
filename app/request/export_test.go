package request

import "pipeplan/core/plan"

// encodeUnchecked encodes s without validating it, to test Decode's checks.
func encodeUnchecked(s State) (string, error) { return plan.EncodeFragment(s) }
