package gpuprofiles

import (
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/core/hw"
)

func TestAllEmbedded(t *testing.T) {
	all := All()
	if len(all) != 25 {
		t.Fatalf("%d profiles, the gpus.json snapshot has 24 and variants.json 1", len(all))
	}
	a, err := ByID("nvidia-a100-sxm4-80gb")
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"memory", a.MemoryBytes, 80 * (1 << 30)},
		{"memory bandwidth", a.MemoryBandwidthBytesPerSec, 2039e9},
		{"bf16 peak", a.PeakFLOPS[hw.PrecisionBF16], 312e12},
		{"tf32 peak", a.PeakFLOPS[hw.PrecisionTF32], 156e12},
		{"int8 peak", a.PeakFLOPS[hw.PrecisionINT8], 624e12},
		{"measured bf16 matmul", a.MeasuredMatmulFLOPS[hw.PrecisionBF16], 271.2e12},
		{"NVLink per direction", a.IntraNode.BandwidthBytesPerSec, 300e9},
		{"PCIe per direction", a.Host.BandwidthBytesPerSec, 32e9},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("A100 %s = %g, gpus.json gives %g", c.name, c.got, c.want)
		}
	}
	if _, ok := a.PeakFLOPS[hw.PrecisionFP8]; ok {
		t.Error("A100 has an fp8 peak, but gpus.json says null")
	}
	// Nulls stay unknown.
	k80, _ := ByID("nvidia-k80-gk210-die")
	if _, err := k80.Peak(hw.PrecisionBF16); err == nil {
		t.Error("K80 bf16 peak: no error, gpus.json has null")
	}
	if k80.IntraNode != nil {
		t.Error("K80 has an intra-node fabric, gpus.json has null")
	}
	tpu, _ := ByID("google-tpu-v4")
	if tpu.IntraNode == nil || tpu.IntraNode.BandwidthBytesPerSec != 0 {
		t.Errorf("TPU v4 ICI bandwidth %+v, want a link with unknown (0) bandwidth", tpu.IntraNode)
	}
	v5e, _ := ByID("google-tpu-v5e")
	if v5e.IntraNode.BandwidthBytesPerSec != 200e9 {
		t.Errorf("TPU v5e ICI %g B/s, want half of the 400 GB/s bidirectional", v5e.IntraNode.BandwidthBytesPerSec)
	}
	mi, _ := ByID("amd-mi250x")
	if mi.LogicalDevices != 2 {
		t.Errorf("MI250X logical devices %d, want 2", mi.LogicalDevices)
	}
	// Callers get copies.
	a.PeakFLOPS[hw.PrecisionBF16] = 1
	if again, _ := ByID("nvidia-a100-sxm4-80gb"); again.PeakFLOPS[hw.PrecisionBF16] != 312e12 {
		t.Error("mutating a returned profile changed the embedded data")
	}
	if _, err := ByID("nvidia-a100"); err == nil || !strings.Contains(err.Error(), "nvidia-a100-sxm4-80gb") {
		t.Errorf("unknown id: error %v, want one listing the known ids", err)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{}`, "gpus:"},
		{`[{"id":"x","memory_gib":null,"logical_devices":1}]`, "gpus[0].memory_gib: required"},
		{`[{"id":"x","memory_gib":-1}]`, "gpus[0].memory_bytes: must be a finite number > 0"},
		{`[{"id":"x","memory_gib":8,"peak_dense_tflops":{"fp4":1}}]`, "gpus[0].peak_dense_tflops.fp4: unknown precision"},
		{`[{"id":"x","memory_gib":8,"peak_dense_tflops":{"bf16":-5}}]`, "gpus[0].peak_flops[bf16]"},
		{`[{"id":"x","memory_gib":8},{"id":"x","memory_gib":8}]`, `gpus[1].id: duplicate "x"`},
		{`[{"id":"","memory_gib":8}]`, "gpus[0].id: must not be empty"},
		{`[{"id":"x","memory_gib":8,"logical_devices":0}]`, "gpus[0].logical_devices"},
		{`[{"id":"x","memory_gib":8,"interconnect":{"host":{"unidirectional_gbps":-2}}}]`, "gpus[0].host.bandwidth_bytes_per_sec"},
		{`[{"id":"x","memory_gib":1e300}]`, "gpus[0].memory_bytes"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s): error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

// FuzzParse checks that Parse never panics and that what it accepts is valid.
func FuzzParse(f *testing.F) {
	// Seeds: single real records (the whole file is too large for the mutator to make progress).
	var recs []json.RawMessage
	if err := json.Unmarshal(gpusJSON, &recs); err != nil {
		f.Fatal(err)
	}
	for _, i := range []int{0, 10, 20, 23} {
		f.Add([]byte("[" + string(recs[i]) + "]"))
	}
	f.Add([]byte(`[{"id":"x","memory_gib":8,"peak_dense_tflops":{"bf16":1,"fp8":null},"interconnect":{"intra_node":{"bidirectional_gbps":10}}}]`))
	f.Add([]byte(`[{"id":"x","memory_gib":8},{"id":"x"}]`))
	f.Add([]byte(`[{"id":"x","memory_gib":8,"interconnect":{"intra_node":{"type":"NVLink","unidirectional_gbps":900,"domain_gpus":72}}}]`))
	f.Add([]byte(`[{"id":"x","memory_gib":8,"interconnect":{"intra_node":{"domain_gpus":-1}}}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		gpus, err := Parse(data)
		if err != nil {
			return
		}
		for i, g := range gpus {
			if err := g.Validate("gpu"); err != nil {
				t.Fatalf("gpus[%d] accepted but invalid: %v", i, err)
			}
		}
	})
}

// TestNetworkBandwidth checks network.json's per-GPU defaults: DGX H100 has
// one 400 Gb/s port per GPU (50 GB/s), DGX A100 200 Gb/s, and a part
// without an entry stays unknown.
func TestNetworkBandwidth(t *testing.T) {
	for id, want := range map[string]float64{"nvidia-h100-sxm5-80gb": 50e9, "nvidia-a100-sxm4-80gb": 25e9, "nvidia-t4": 0} {
		g, err := ByID(id)
		if err != nil {
			t.Fatal(err)
		}
		if g.NetworkBandwidthBytesPerSec != want {
			t.Errorf("%s: network %v B/s, want %v", id, g.NetworkBandwidthBytesPerSec, want)
		}
	}
	if err := applyNetwork(All(), []byte(`{"gpus":[{"id":"nope","gbit_per_gpu":400}]}`)); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown id: error %v, want one naming it", err)
	}
}

// The H800 of variants.json is the H100 SXM5 with NVLink cut to 200 GB/s
// a direction and FP64 unsourced; its DeepSeek cluster's network is
// 400 Gb/s a GPU. A variant repeating a gpus.json id, or with a bad
// figure, is refused naming the entry and field.
func TestVariants(t *testing.T) {
	h800, err := ByID("nvidia-h800-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	h100, err := ByID("nvidia-h100-sxm5-80gb")
	if err != nil {
		t.Fatal(err)
	}
	if h800.IntraNode == nil || h800.IntraNode.BandwidthBytesPerSec != 200e9 || h800.NetworkBandwidthBytesPerSec != 50e9 {
		t.Errorf("H800 links: NVLink %+v, network %v B/s", h800.IntraNode, h800.NetworkBandwidthBytesPerSec)
	}
	for _, p := range []string{hw.PrecisionBF16, hw.PrecisionFP8} {
		if h800.PeakFLOPS[p] != h100.PeakFLOPS[p] || h800.MemoryBytes != h100.MemoryBytes {
			t.Errorf("H800 %s peak %v, H100 %v", p, h800.PeakFLOPS[p], h100.PeakFLOPS[p])
		}
	}
	if _, err := h800.Peak(hw.PrecisionFP64); err == nil {
		t.Error("H800 FP64 peak: want none (not sourced)")
	}
	gpus, _ := Parse(gpusJSON)
	for _, c := range []struct{ data, want string }{
		{`{"gpus": [{"id": "nvidia-h100-sxm5-80gb", "memory_gib": 80, "peak_dense_tflops": {"bf16": 989}, "interconnect": {}}]}`, `variants.gpus[0].id: "nvidia-h100-sxm5-80gb" is in gpus.json already`},
		{`{"gpus": [{"id": "x", "memory_gib": -1, "peak_dense_tflops": {}, "interconnect": {}}]}`, "variants.gpus[0].memory"},
		{`{"gpus": 3}`, "variants.gpus: json"},
	} {
		if _, err := appendVariants(gpus, []byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.data, err, c.want)
		}
	}
}
