package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// MaxPlanBytes bounds the size of a plan file Parse accepts.
const MaxPlanBytes = 32 << 20

// Parse decodes and validates a plan. Unknown fields are errors, so a typo
// in a hand-edited plan is reported rather than silently ignored. A
// version-1 plan is converted to the current schema (parseV1).
func Parse(data []byte) (*Plan, error) {
	if len(data) > MaxPlanBytes {
		return nil, fmt.Errorf("plan: %d bytes is over the %d-byte limit", len(data), MaxPlanBytes)
	}
	var probe struct {
		Version int `json:"version"`
	}
	// Only the first value is read here; on error the strict decoding
	// below reports it.
	probeErr := json.NewDecoder(bytes.NewReader(data)).Decode(&probe)
	var p *Plan
	if probeErr == nil && probe.Version == 1 {
		var err error
		if p, err = parseV1(data); err != nil {
			return nil, err
		}
	} else {
		p = new(Plan)
		if err := decodeStrict(bytes.NewReader(data), p); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// Marshal validates the plan and encodes it as indented JSON.
func (p *Plan) Marshal() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return append(out, '\n'), nil
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// fields and trailing data.
func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}
