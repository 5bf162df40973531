package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
)

// MaxProfileBytes bounds the size of a profile file ParseProfile and
// ParseGraph accept.
const MaxProfileBytes = 16 << 20

// ParseProfile decodes and validates a JSON layer profile. The schema is the
// JSON form of Profile:
//
//	{
//	  "name": "vgg16",                 // optional
//	  "microbatch_size": 64,           // samples the numbers were measured at, >= 1
//	  "device": "nvidia-v100-sxm2-16gb", // optional gpuprofiles id
//	  "layers": [                      // execution order, at least one
//	    {"name": "conv1_1",            // optional
//	     "fwd_seconds": 0.0012,        // forward time of one microbatch, >= 0
//	     "bwd_seconds": 0.0025,        // backward time of one microbatch, >= 0
//	     "output_activation_bytes": 1.6e7, // output size for one microbatch, >= 0
//	     "parameter_bytes": 7168}      // weight bytes, >= 0
//	  ]
//	}
//
// Unknown fields and trailing data are errors, so a typo is reported rather
// than silently ignored.
func ParseProfile(data []byte) (*Profile, error) {
	if len(data) > MaxProfileBytes {
		return nil, fmt.Errorf("profile: %d bytes is over the %d-byte limit", len(data), MaxProfileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("profile: trailing data after the JSON value")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks that the profile has at least one layer, a positive
// microbatch size and finite, non-negative numbers; the error names the
// field and the bad value.
func (p *Profile) Validate() error {
	if p.MicrobatchSize < 1 {
		return fmt.Errorf("profile.microbatch_size: must be >= 1, got %d", p.MicrobatchSize)
	}
	return p.ValidateLayers()
}

// ValidateLayers checks that the profile has layers and that every layer's
// times and sizes are finite and non-negative; errors name the layer and
// field. Planners that need no microbatch size (MadPipe) check only this.
func (p *Profile) ValidateLayers() error {
	if len(p.Layers) == 0 {
		return fmt.Errorf("profile.layers: must have at least one layer, got 0")
	}
	for i, l := range p.Layers {
		for _, f := range []struct {
			name string
			v    float64
		}{
			{"fwd_seconds", l.FwdSeconds}, {"bwd_seconds", l.BwdSeconds},
			{"output_activation_bytes", l.OutputActivationBytes}, {"parameter_bytes", l.ParameterBytes},
		} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
				return fmt.Errorf("profile.layers[%d].%s: must be a finite number >= 0, got %v", i, f.name, f.v)
			}
		}
	}
	return nil
}
