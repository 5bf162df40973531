package schedule

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
)

// WriteCSV writes the schedule as CSV, one row per device and one cell per
// action, the layout of torch.distributed.pipelining's _dump_csv /
// _load_csv. With torch set it writes only what torch reads: no weight
// versions and no OPT_STEP (torch steps the optimizer outside the schedule).
func WriteCSV(w io.Writer, s *Schedule, torch bool) error {
	cw := csv.NewWriter(w)
	for _, list := range s.Devices {
		row := make([]string, 0, len(list))
		for _, a := range list {
			if torch {
				if a.Kind == OptStep {
					continue
				}
				a.Version = -1
			}
			row = append(row, a.String())
		}
		if len(row) == 0 {
			// CSV readers skip blank lines: an idle device is a row of empty cells.
			row = []string{"", ""}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadCSV reads a schedule written by WriteCSV or by torch's _dump_csv
// (rows are devices, empty cells are idle steps). Sizes are inferred: the
// largest stage and microbatch ids, and v = stages/devices chunks when
// stages is a larger multiple of the device count. The result is validated.
func ReadCSV(r io.Reader) (*Schedule, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	s := &Schedule{Chunks: 1, Batches: 1}
	cells := 0
	for row := 0; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("csv: %w", err)
		}
		if cells += len(rec); cells > maxActions {
			return nil, fmt.Errorf("csv: more than %d cells", maxActions)
		}
		var list []Action
		for col, cell := range rec {
			if cell == "" {
				continue
			}
			a, err := ParseAction(cell)
			if err != nil {
				return nil, fmt.Errorf("csv: row %d column %d: %v", row+1, col+1, err)
			}
			s.Stages = max(s.Stages, a.Stage+1)
			s.Microbatches = max(s.Microbatches, a.Microbatch+1)
			list = append(list, a)
		}
		s.Devices = append(s.Devices, list)
	}
	if p := len(s.Devices); p > 0 && s.Stages > p && s.Stages%p == 0 {
		s.Chunks = s.Stages / p
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}
