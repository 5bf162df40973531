package gavel

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// UnconsolidatedSuffix turns a worker type into its unconsolidated variant in
// Gavel's throughput data: the job's GPUs sit on different servers (§5.4.1,
// placement sensitivity).
const UnconsolidatedSuffix = "_unconsolidated"

// JobKey names a job type at a scale factor, like Gavel's throughput keys
// "('ResNet-50 (batch size 64)', 1)".
type JobKey struct {
	// Model is the job table's model string.
	Model string
	// ScaleFactor is the number of GPUs the job uses.
	ScaleFactor int
}

// String formats k as Gavel's Python tuple key.
func (k JobKey) String() string {
	return fmt.Sprintf("('%s', %d)", k.Model, k.ScaleFactor)
}

// ParseJobKey parses a key "('<model>', <scale factor>)" (Gavel's regex
// `\('(.*)', (\d+)\)`).
func ParseJobKey(s string) (JobKey, error) {
	if !strings.HasPrefix(s, "('") || !strings.HasSuffix(s, ")") {
		return JobKey{}, fmt.Errorf("job key %q: want ('<model>', <scale factor>)", s)
	}
	inner := s[2 : len(s)-1]
	sep := strings.LastIndex(inner, "', ")
	if sep <= 0 {
		return JobKey{}, fmt.Errorf("job key %q: want ('<model>', <scale factor>)", s)
	}
	digits := inner[sep+3:]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return JobKey{}, fmt.Errorf("job key %q: scale factor %q is not a number", s, digits)
	}
	sf, err := strconv.Atoi(digits)
	if err != nil || sf < 1 {
		return JobKey{}, fmt.Errorf("job key %q: scale factor must be >= 1, got %q", s, digits)
	}
	return JobKey{Model: inner[:sep], ScaleFactor: sf}, nil
}

// ThroughputTable holds measured throughputs (steps/s of the whole job) per
// worker type: isolated, and co-located with a second job (space sharing).
type ThroughputTable struct {
	workerTypes []string
	isolated    map[string]map[JobKey]float64
	colocated   map[string]map[[2]JobKey][2]float64
}

// WorkerTypes returns the table's worker types, sorted, including the
// unconsolidated variants.
func (t *ThroughputTable) WorkerTypes() []string {
	return append([]string(nil), t.workerTypes...)
}

// Isolated returns the throughput of job type k running alone on k.ScaleFactor
// GPUs of workerType with consolidated placement; 0 means it cannot run there.
func (t *ThroughputTable) Isolated(workerType string, k JobKey) (float64, error) {
	byKey, ok := t.isolated[workerType]
	if !ok {
		return 0, fmt.Errorf("throughputs: unknown worker type %q", workerType)
	}
	v, ok := byKey[k]
	if !ok {
		return 0, fmt.Errorf("throughputs: worker type %q: unknown job type %s", workerType, k)
	}
	return v, nil
}

// Placed returns k's isolated throughput on workerType with the given
// placement: consolidated (all GPUs on as few servers as possible) or not, in
// which case the "_unconsolidated" measurement is used where the data has one
// (§5.4.1, placement sensitivity).
func (t *ThroughputTable) Placed(workerType string, k JobKey, consolidated bool) (float64, error) {
	if !consolidated {
		if v, err := t.Isolated(workerType+UnconsolidatedSuffix, k); err == nil {
			return v, nil
		}
	}
	return t.Isolated(workerType, k)
}

// Colocated returns the throughputs [a, b] of job types a and b sharing the
// same GPUs of workerType; [0, 0] means they cannot be co-located.
func (t *ThroughputTable) Colocated(workerType string, a, b JobKey) ([2]float64, error) {
	byPair, ok := t.colocated[workerType]
	if !ok {
		return [2]float64{}, fmt.Errorf("throughputs: unknown worker type %q", workerType)
	}
	v, ok := byPair[[2]JobKey{a, b}]
	if !ok {
		return [2]float64{}, fmt.Errorf("throughputs: worker type %q: no co-located entry for %s with %s", workerType, a, b)
	}
	return v, nil
}

// ParseThroughputs parses Gavel's throughput JSON
// ({worker type: {job key: {"null": x, job key: [self, other]}}}).
func ParseThroughputs(data []byte) (*ThroughputTable, error) {
	var doc map[string]map[string]map[string]throughputEntry
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("throughputs: %w", err)
	}
	if len(doc) == 0 {
		return nil, fmt.Errorf("throughputs: no worker types")
	}
	t := &ThroughputTable{
		isolated:  map[string]map[JobKey]float64{},
		colocated: map[string]map[[2]JobKey][2]float64{},
	}
	for wt, jobs := range doc {
		if wt == "" {
			return nil, fmt.Errorf("throughputs: empty worker type name")
		}
		t.workerTypes = append(t.workerTypes, wt)
		iso := map[JobKey]float64{}
		col := map[[2]JobKey][2]float64{}
		for ks, entries := range jobs {
			k, err := ParseJobKey(ks)
			if err != nil {
				return nil, fmt.Errorf("throughputs: %s: %w", wt, err)
			}
			if err := parseJobEntries(wt, k, entries, iso, col); err != nil {
				return nil, err
			}
		}
		t.isolated[wt] = iso
		t.colocated[wt] = col
	}
	sort.Strings(t.workerTypes)
	return t, nil
}

// throughputEntry is one value of Gavel's throughput JSON, a number (the
// isolated throughput) or a pair [self, other] (co-located), parsed in the
// one pass of the document's decoding: per-entry json.Unmarshal calls made
// the table's first use take seconds in a browser tab. A malformed value
// keeps its error for parseJobEntries to report with where it is.
type throughputEntry struct {
	pair bool
	v    [2]float64
	err  error
}

// UnmarshalJSON reads a number or an array of two numbers; anything else
// is recorded as the entry's error (the document is valid JSON already).
func (e *throughputEntry) UnmarshalJSON(data []byte) error {
	s := strings.TrimSpace(string(data))
	parts := []string{s}
	if e.pair = strings.HasPrefix(s, "["); e.pair {
		if parts = strings.Split(strings.TrimSuffix(s[1:], "]"), ","); len(parts) != 2 {
			e.err = fmt.Errorf("want [self, other], got %d values", len(parts))
			return nil
		}
	}
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			e.err = fmt.Errorf("want a number, got %.20q", strings.TrimSpace(p))
			return nil
		}
		e.v[i] = v
	}
	return nil
}

// parseJobEntries reads one job key's "null" and co-located entries.
func parseJobEntries(wt string, k JobKey, entries map[string]throughputEntry, iso map[JobKey]float64, col map[[2]JobKey][2]float64) error {
	where := wt + "." + k.String()
	e, ok := entries["null"]
	switch {
	case !ok:
		return fmt.Errorf("throughputs: %s: missing \"null\" (isolated throughput)", where)
	case e.err != nil:
		return fmt.Errorf("throughputs: %s.null: %w", where, e.err)
	case e.pair:
		return fmt.Errorf("throughputs: %s.null: want a number, got a pair", where)
	}
	if err := checkThroughput(where+".null", e.v[0]); err != nil {
		return err
	}
	iso[k] = e.v[0]
	for otherKey, e := range entries {
		if otherKey == "null" {
			continue
		}
		other, err := ParseJobKey(otherKey)
		if err != nil {
			return fmt.Errorf("throughputs: %s: %w", where, err)
		}
		if other.ScaleFactor != k.ScaleFactor {
			return fmt.Errorf("throughputs: %s.%s: co-located scale factors differ", where, other)
		}
		switch {
		case e.err != nil:
			return fmt.Errorf("throughputs: %s.%s: %w", where, other, e.err)
		case !e.pair:
			return fmt.Errorf("throughputs: %s.%s: want [self, other], got a number", where, other)
		}
		for i, p := range e.v {
			if !validThroughput(p) { // the field is formatted only for the error
				return checkThroughput(fmt.Sprintf("%s.%s[%d]", where, other, i), p)
			}
		}
		col[[2]JobKey{k, other}] = e.v
	}
	return nil
}

// validThroughput reports whether v is a finite throughput >= 0.
func validThroughput(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }

// checkThroughput rejects negative or non-finite throughputs.
func checkThroughput(field string, v float64) error {
	if !validThroughput(v) {
		return fmt.Errorf("throughputs: %s: must be a finite number >= 0, got %v", field, v)
	}
	return nil
}
