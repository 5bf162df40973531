package app

import "pipeplan/app/request"

// KnownModel reports whether this build can plan the model a request names:
// a preset, an embedded PipeDream profile, the custom transformer or a
// Hugging Face config. A shared link from another build may name a preset
// this one lacks.
func KnownModel(id string) bool {
	if id == request.HFModel || id == customID {
		return true
	}
	_, err := modelByID(id)
	return err == nil
}
