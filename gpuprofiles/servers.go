package gpuprofiles

import (
	"encoding/json"
	"fmt"

	"pipeplan/core/hw"
)

// MaxGPUsPerServer bounds servers.json's sizes (a GB200 NVL72 rack, the
// largest NVLink domain of gpus.json, has 72).
const MaxGPUsPerServer = 72

// Server is the reference server of one gpus.json part: how many of its
// GPUs one server (or the largest cloud instance) holds, with the source.
type Server struct {
	// ID is the gpus.json id.
	ID string `json:"id"`
	// GPUsPerServer is the number of gpus.json entries of this id in one server.
	GPUsPerServer int `json:"gpus_per_server"`
	// Name names the server or instance, e.g. "AWS p3.16xlarge".
	Name string `json:"server"`
	// Source says where the count comes from.
	Source string `json:"source"`
}

// parseServers reads a servers.json and checks that it gives every GPU of
// gpus exactly one size in [1, MaxGPUsPerServer] with a source.
// TestGenerated runs it to generate embeddedServers.
func parseServers(data []byte, gpus []hw.GPU) (map[string]Server, error) {
	var f struct {
		Servers []Server `json:"servers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("servers: %w", err)
	}
	known := map[string]bool{}
	for _, g := range gpus {
		known[g.ID] = true
	}
	out := map[string]Server{}
	for i, s := range f.Servers {
		field := fmt.Sprintf("servers[%d]", i)
		switch {
		case !known[s.ID]:
			return nil, fmt.Errorf("%s.id: no GPU %q in gpus.json", field, s.ID)
		case out[s.ID].ID != "":
			return nil, fmt.Errorf("%s.id: %q is listed twice", field, s.ID)
		case s.GPUsPerServer < 1 || s.GPUsPerServer > MaxGPUsPerServer:
			return nil, fmt.Errorf("%s.gpus_per_server (%s): must be in [1, %d], got %d", field, s.ID, MaxGPUsPerServer, s.GPUsPerServer)
		case s.Name == "" || s.Source == "":
			return nil, fmt.Errorf("%s (%s): server and source are required", field, s.ID)
		}
		out[s.ID] = s
	}
	for id := range known {
		if out[id].ID == "" {
			return nil, fmt.Errorf("servers: no entry for gpus.json's %q", id)
		}
	}
	return out, nil
}

// ServerOf returns the reference server of a worker type (one of Gavel's
// names or a gpus.json id, WorkerTypeGPU): Gavel's v100, p100 and k80 take
// the cloud instances its chapters name (AWS p3.16xlarge, GCP, AWS
// p2.16xlarge), today's GPUs their HGX/DGX or cloud servers.
func ServerOf(workerType string) (Server, error) {
	gpu, err := WorkerTypeGPU(workerType)
	if err != nil {
		return Server{}, err
	}
	return embeddedServers[gpu], nil
}

// GPUsPerServer returns the server size of each worker type, in order.
func GPUsPerServer(workerTypes []string) ([]int, error) {
	out := make([]int, len(workerTypes))
	for j, wt := range workerTypes {
		s, err := ServerOf(wt)
		if err != nil {
			return nil, err
		}
		out[j] = s.GPUsPerServer
	}
	return out, nil
}
