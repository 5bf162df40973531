package gavel

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// JobType is one of the job (model) types of Gavel's job table (Table 5.2).
type JobType struct {
	// Model is the model string used in throughput keys, e.g. "ResNet-50 (batch size 64)".
	Model string `json:"model"`
	// Family groups batch-size variants, e.g. "ResNet-50".
	Family string `json:"family"`
	// BatchSize is the per-job batch size; 0 for models without one (A3C, CycleGAN).
	BatchSize int `json:"batch_size"`
	// Distributed reports whether the model may run with a scale factor above 1.
	Distributed bool `json:"distributed"`
	// NeedsDataDir reports whether the job reads a dataset directory.
	NeedsDataDir bool `json:"needs_data_dir"`
}

//go:embed data/job_table.json
var jobTableJSON []byte

var defaultJobTable = sync.OnceValues(func() ([]JobType, error) {
	return ParseJobTable(jobTableJSON)
})

// DefaultJobTable returns Gavel's 26 job types in JobTable order (embedded data).
func DefaultJobTable() []JobType {
	jt, err := defaultJobTable()
	if err != nil {
		panic("gavel: embedded job table is invalid: " + err.Error())
	}
	return append([]JobType(nil), jt...)
}

// ParseJobTable parses a job table in the format of data/job_table.json.
func ParseJobTable(data []byte) ([]JobType, error) {
	var doc struct {
		JobTypes []struct {
			JobType
			BatchSize *int `json:"batch_size"`
		} `json:"job_types"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("job table: %w", err)
	}
	if len(doc.JobTypes) == 0 {
		return nil, fmt.Errorf("job table: job_types: must not be empty")
	}
	seen := map[string]bool{}
	out := make([]JobType, len(doc.JobTypes))
	for i, e := range doc.JobTypes {
		jt := e.JobType
		if e.BatchSize != nil {
			jt.BatchSize = *e.BatchSize
		}
		if jt.Model == "" {
			return nil, fmt.Errorf("job table: job_types[%d].model: must not be empty", i)
		}
		if seen[jt.Model] {
			return nil, fmt.Errorf("job table: job_types[%d].model: duplicate %q", i, jt.Model)
		}
		if jt.BatchSize < 0 {
			return nil, fmt.Errorf("job table: job_types[%d].batch_size: must be >= 0, got %d", i, jt.BatchSize)
		}
		seen[jt.Model] = true
		out[i] = jt
	}
	return out, nil
}
