package cost

import "math"

// leastSquaresOnGrid returns the x among 0, step, 2·step, …, n·step that
// minimises the sum over rows of the squared error errAt(row, x), the
// first such x on a tie: how the fitted constants of the cost model are
// refitted (TestExpertSecondsFit, TestEPOverlapExposedFit,
// TestP2PExposedFit).
func leastSquaresOnGrid[R any](rows []R, n int, step float64, errAt func(R, float64) float64) float64 {
	best, bestCost := 0.0, math.Inf(1)
	for i := 0; i <= n; i++ {
		x := float64(i) * step
		var cost float64
		for _, r := range rows {
			e := errAt(r, x)
			cost += e * e
		}
		if cost < bestCost {
			best, bestCost = x, cost
		}
	}
	return best
}
