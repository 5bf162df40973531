package app

import (
	"fmt"

	"pipeplan/app/request"
	"pipeplan/core/cost"
	"pipeplan/core/hw"
	"pipeplan/core/model"
)

// calibratedCurve is the GEMM efficiency curve of the request's
// calibration (plan.calibration, checked by request.Plan.Validate): its
// measurements against the cluster GPU's peak at the model's training
// precision, which must be the precision they were measured at; nil
// without a calibration.
func calibratedCurve(in request.Plan, tr model.Transformer, c hw.Cluster) (*cost.EfficiencyCurve, error) {
	if in.Calibration == "" {
		return nil, nil
	}
	cal, err := cost.ParseCalibration([]byte(in.Calibration))
	if err != nil {
		return nil, &request.FieldError{Field: "plan.calibration", Msg: err.Error()}
	}
	prec := string(tr.TrainingPrecision())
	if cal.Precision != prec {
		return nil, &request.FieldError{Field: "plan.calibration", Msg: fmt.Sprintf("measured at %s, but the model trains at %s", cal.Precision, prec)}
	}
	peak, err := c.GPU.Peak(prec)
	if err != nil {
		return nil, &request.FieldError{Field: "plan.calibration", Msg: err.Error()}
	}
	curve, err := cost.Calibrate(cal.Measurements, peak)
	if err != nil {
		return nil, &request.FieldError{Field: "plan.calibration", Msg: err.Error()}
	}
	return &curve, nil
}
