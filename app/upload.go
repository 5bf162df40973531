package app

import (
	"bytes"
	"fmt"

	"pipeplan/app/request"
	"pipeplan/core/model"
)

// UploadedID is the model id of a profile the user uploaded; links do not
// carry the file, only this id.
const UploadedID = "uploaded"

// ParseUploadedProfile reads an uploaded layer profile: the JSON profile
// format (model.ParseProfile) or PipeDream's profiler graph.txt
// (model.ParseGraph, planned as the chain of its layers), which does not
// record its minibatch size, so graphMicrobatch gives it. A profile of
// more than request.MaxUploadedLayers layers is refused.
func ParseUploadedProfile(fileName string, data []byte, graphMicrobatch int) (model.Profile, error) {
	p, err := parseUploadedProfile(fileName, data, graphMicrobatch)
	if err == nil && len(p.Layers) > request.MaxUploadedLayers {
		return model.Profile{}, fmt.Errorf("%s: the profile has %d layers, over the limit of %d (the planners' work grows with the cube of the layers): merge layers first",
			fileName, len(p.Layers), request.MaxUploadedLayers)
	}
	return p, err
}

// parseUploadedProfile is ParseUploadedProfile without the layer limit.
func parseUploadedProfile(fileName string, data []byte, graphMicrobatch int) (model.Profile, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		p, err := model.ParseProfile(data)
		if err != nil {
			return model.Profile{}, fmt.Errorf("%s: %w", fileName, err)
		}
		if p.Name == "" {
			p.Name = fileName
		}
		return *p, nil
	}
	if graphMicrobatch < 1 {
		return model.Profile{}, fmt.Errorf("%s: a graph.txt does not record its minibatch size; give one >= 1, got %d", fileName, graphMicrobatch)
	}
	g, err := model.ParseGraph(data)
	if err != nil {
		return model.Profile{}, fmt.Errorf("%s: %w", fileName, err)
	}
	p := g.Chain()
	if len(p.Layers) == 0 {
		return model.Profile{}, fmt.Errorf("%s: the graph has no layers to plan", fileName)
	}
	p.Name, p.MicrobatchSize = fileName, graphMicrobatch
	return p, nil
}
