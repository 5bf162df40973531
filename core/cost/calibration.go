package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Calibration is a GPU's measured GEMM efficiency, as `runner profile`
// writes it: timed matmuls of increasing size on one device at one
// precision. Calibrate(Measurements, the GPU's peak at Precision) turns it
// into the EfficiencyCurve the transformer cost model takes
// (Options.Efficiency).
type Calibration struct {
	// GPU is the gpuprofiles id of the device measured ("" when none
	// matched, e.g. a CPU).
	GPU string `json:"gpu"`
	// Device is the device as the measuring framework names it (torch's
	// CUDA device name, or "cpu").
	Device string `json:"device"`
	// Precision is the GEMMs' precision, a core/hw precision key ("bf16", "fp32").
	Precision string `json:"precision"`
	// Source says how and with what the measurements were taken.
	Source string `json:"source,omitempty"`
	// Measurements are the timed matmuls (FLOPs = 2·n³ for n×n by n×n).
	Measurements []Measurement `json:"measurements"`
}

// Limits of a calibration file: a few hundred timed matmuls, each of at
// least one FLOP and at most 1e25, taking between a picosecond and 1e6 s
// (so that every efficiency against a real peak is a positive number).
const (
	MaxCalibrationBytes        = 1 << 20
	MaxCalibrationMeasurements = 10000
	maxCalibrationFLOPs        = 1e25
	minCalibrationSeconds      = 1e-12
	maxCalibrationSeconds      = 1e6
)

// ParseCalibration reads a calibration file strictly (unknown fields and
// trailing data are errors) and checks it: a precision, at least one
// measurement, each with FLOPs and seconds within the limits above.
func ParseCalibration(data []byte) (*Calibration, error) {
	if len(data) > MaxCalibrationBytes {
		return nil, fmt.Errorf("calibration: %d bytes is over the %d-byte limit", len(data), MaxCalibrationBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Calibration
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("calibration: trailing data after the JSON value")
	}
	switch {
	case c.Precision == "":
		return nil, fmt.Errorf("calibration.precision: must name the GEMMs' precision (e.g. bf16), got \"\"")
	case len(c.Measurements) > MaxCalibrationMeasurements:
		return nil, fmt.Errorf("calibration.measurements: at most %d, got %d", MaxCalibrationMeasurements, len(c.Measurements))
	}
	if len(c.Measurements) == 0 {
		return nil, fmt.Errorf("calibration.measurements: need at least one, got none")
	}
	for i, m := range c.Measurements {
		if !(m.FLOPs >= 1 && m.FLOPs <= maxCalibrationFLOPs) {
			return nil, fmt.Errorf("calibration.measurements[%d].flops: must be in [1, %g], got %v", i, maxCalibrationFLOPs, m.FLOPs)
		}
		if !(m.Seconds >= minCalibrationSeconds && m.Seconds <= maxCalibrationSeconds) {
			return nil, fmt.Errorf("calibration.measurements[%d].seconds: must be in [%g, %g], got %v", i, minCalibrationSeconds, maxCalibrationSeconds, m.Seconds)
		}
	}
	return &c, nil
}
