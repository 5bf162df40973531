package request

import "pipeplan/core/cost"

// MaxCalibrationBytes bounds an inline calibration (runner profile writes
// a few kilobytes).
const MaxCalibrationBytes = 32 << 10

// validateCalibration checks plan.calibration: empty, or a calibration
// file (cost.ParseCalibration) measured on plan.gpu.
func (p Plan) validateCalibration() error {
	if p.Calibration == "" {
		return nil
	}
	if len(p.Calibration) > MaxCalibrationBytes {
		return fieldErr("plan.calibration", "must be at most %d bytes, got %d", MaxCalibrationBytes, len(p.Calibration))
	}
	c, err := cost.ParseCalibration([]byte(p.Calibration))
	if err != nil {
		return fieldErr("plan.calibration", "%v", err)
	}
	if c.GPU != p.GPU {
		return fieldErr("plan.calibration", "measured on %q (%s), but plan.gpu is %q: a calibration holds only for its own GPU", c.GPU, c.Device, p.GPU)
	}
	return nil
}
