// Package model describes the application side of a plan: per-layer profiles
// of a DNN (measured, or imported from PipeDream's profiler) and transformer
// specifications that turn model dimensions into per-layer costs.
package model

// Layer is the profile of one layer, measured at Profile.MicrobatchSize.
type Layer struct {
	// Name is an optional human-readable name (e.g. "conv3_2").
	Name string `json:"name,omitempty"`
	// FwdSeconds is the forward-pass time of this layer for one microbatch.
	FwdSeconds float64 `json:"fwd_seconds"`
	// BwdSeconds is the backward-pass time of this layer for one microbatch.
	BwdSeconds float64 `json:"bwd_seconds"`
	// OutputActivationBytes is the size of the layer's output for one microbatch.
	OutputActivationBytes float64 `json:"output_activation_bytes"`
	// ParameterBytes is the size of the layer's weights.
	ParameterBytes float64 `json:"parameter_bytes"`
}

// Profile is a chain of layer profiles measured on one device at one
// microbatch size: the input of the PipeDream, 2BW and MadPipe partitioners.
type Profile struct {
	// Name names the model (e.g. "vgg16").
	Name string `json:"name,omitempty"`
	// MicrobatchSize is the number of samples the times and activations were measured at.
	MicrobatchSize int `json:"microbatch_size"`
	// Device is the GPU the profile was measured on (a gpuprofiles id when known).
	Device string `json:"device,omitempty"`
	// Layers are the layers in execution order.
	Layers []Layer `json:"layers"`
}
