package gpuprofiles

import (
	"reflect"
	"strings"
	"testing"
)

// TestCloudEmbedded reads cloud.json: Gavel's three worker types, fastest
// first, and its GCP on-demand prices of 2020 (cloud.json's source).
func TestCloudEmbedded(t *testing.T) {
	if got, want := GavelWorkerTypeNames(), []string{"v100", "p100", "k80"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Gavel's worker types %v, want %v", got, want)
	}
	if gpu, err := WorkerTypeGPU("p100"); err != nil || gpu != "nvidia-p100-pcie-16gb" {
		t.Errorf("WorkerTypeGPU(p100) = %q, %v", gpu, err)
	}
	if gpu, err := WorkerTypeGPU("nvidia-h100-sxm5-80gb"); err != nil || gpu != "nvidia-h100-sxm5-80gb" {
		t.Errorf("WorkerTypeGPU of a gpus.json id = %q, %v; want the id itself", gpu, err)
	}
	if _, err := WorkerTypeGPU("a100"); err == nil || !strings.Contains(err.Error(), `"a100"`) {
		t.Errorf("WorkerTypeGPU(a100): error %v, want one naming it", err)
	}
	p := DefaultPriceList()
	if p.ID != "gcp-on-demand" {
		t.Errorf("default price list %q, want gcp-on-demand", p.ID)
	}
	got, err := p.ForWorkerTypes([]string{"k80", "p100", "v100"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.45, 1.46, 2.48}; !reflect.DeepEqual(got, want) {
		t.Errorf("GCP on-demand K80, P100, V100 = %v, cloud.json gives %v", got, want)
	}
	if _, err := p.ForWorkerTypes([]string{"amd-mi250x"}); err == nil {
		t.Error("a price for the MI250X from a 2020 GCP list")
	}
	if _, err := PriceListByID("nope"); err == nil {
		t.Error("PriceListByID(nope): no error")
	}
}

// TestParseCloudRejects checks cloud.json validation names field and value.
func TestParseCloudRejects(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"gavel_worker_types":[{"worker_type":"x","gpu":"nope","source":"s"}]}`, `gavel_worker_types[0].gpu: unknown gpus.json id "nope"`},
		{`{"gavel_worker_types":[{"worker_type":"nvidia-t4","gpu":"nvidia-t4","source":"s"}]}`, `not a gpus.json id, got "nvidia-t4"`},
		{`{"price_lists":[{"id":"a","name":"n","source":"s","date":"d","dollars_per_gpu_hour":{"nvidia-t4":-1}}]}`, `price_lists[0].dollars_per_gpu_hour[nvidia-t4]: must be a finite price > 0, got -1`},
		{`{"price_lists":[{"id":"a","name":"n","source":"s","dollars_per_gpu_hour":{}}]}`, `price_lists[0] (a): name, source and date are required`},
	} {
		if _, err := parseCloud([]byte(c.json), All()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseCloud(%s): error %v, want %q", c.json, err, c.want)
		}
	}
}
