package gavel

import (
	_ "embed"
	"sync"
)

//go:embed data/simulation_throughputs.json
var simulationThroughputsJSON []byte

var defaultThroughputs = sync.OnceValues(func() (*ThroughputTable, error) {
	return ParseThroughputs(simulationThroughputsJSON)
})

// DefaultThroughputs returns Gavel's simulation throughputs (embedded
// simulation_throughputs.json): 26 job types on k80, p100, v100 and their
// unconsolidated variants. The table is parsed once and shared; it is read-only.
func DefaultThroughputs() *ThroughputTable {
	t, err := defaultThroughputs()
	if err != nil {
		panic("gavel: embedded throughputs are invalid: " + err.Error())
	}
	return t
}
