package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// post sends body to path with a JSON content type (or ctype, if given).
func post(h http.Handler, path, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// apiErr decodes an error answer, failing unless it is {"error", "field"}.
func apiErr(t *testing.T, rec *httptest.ResponseRecorder) apiError {
	t.Helper()
	var e apiError
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("error content type %q", ct)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
		t.Errorf("error body %q is not {\"error\", \"field\"}: %v", rec.Body, err)
	}
	return e
}

func TestAPIv1Catalogs(t *testing.T) {
	h := NewAPIHandler(DefaultAPIOptions())
	for _, path := range []string{"/api/v1/gpus", "/api/v1/models"} {
		rec := get(h, "GET", path, nil)
		var list []map[string]any
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &list) != nil || len(list) < 3 || list[0]["id"] == nil {
			t.Errorf("GET %s: %d %.200s", path, rec.Code, rec.Body)
		}
	}
	rec := get(h, "GET", "/api/v1/openapi.json", nil)
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi.json: %v", err)
	}
	for path := range endpoints {
		if doc.Paths[path]["post"] == nil {
			t.Errorf("openapi.json does not describe POST %s", path)
		}
	}
	for _, path := range []string{"/api/v1/gpus", "/api/v1/models", "/api/v1/openapi.json"} {
		if doc.Paths[path]["get"] == nil {
			t.Errorf("openapi.json does not describe GET %s", path)
		}
	}
}

func TestAPIv1Errors(t *testing.T) {
	h := NewAPIHandler(DefaultAPIOptions())
	for _, c := range []struct {
		name, method, path, ctype, body string
		status                          int
		field                           string
	}{
		{"no content type", "POST", "/api/v1/plan", "", `{}`, 415, ""},
		{"form post", "POST", "/api/v1/plan", "application/x-www-form-urlencoded", `a=1`, 415, ""},
		{"GET a POST endpoint", "GET", "/api/v1/plan", "", ``, 405, ""},
		{"POST a catalog", "POST", "/api/v1/gpus", "application/json", `{}`, 405, ""},
		{"unknown path", "GET", "/api/v1/nope", "", ``, 404, ""},
		{"body over the limit", "POST", "/api/v1/plan", "application/json", strings.Repeat(" ", 1<<17), 413, ""},
		{"null body", "POST", "/api/v1/plan", "application/json", `null`, 400, ""},
		{"bad field", "POST", "/api/v1/plan", "application/json; charset=utf-8", `{"nodes": -1}`, 400, "plan.nodes"},
		{"tiny bandwidth", "POST", "/api/v1/plan", "application/json", `{"inter_node_gbps": 5e-324}`, 400, "plan.inter_node_gbps"},
		{"wrong type", "POST", "/api/v1/plan", "application/json", `{"gpus_per_node": "8"}`, 400, "plan.gpus_per_node"},
		{"unknown preset", "POST", "/api/v1/plan", "application/json", `{"model": "gpt-9"}`, 400, "plan.model"},
		{"nothing fits", "POST", "/api/v1/plan", "application/json", `{"model": "gpt-1t", "nodes": 1, "gpus_per_node": 1}`, 422, ""},
		{"unknown policy", "POST", "/api/v1/gavel/allocate", "application/json", `{"instance": {}, "policy": "nope"}`, 400, "policy"},
		{"bad instance", "POST", "/api/v1/gavel/allocate", "application/json", `{"instance": {"worker_types": []}, "policy": "fifo"}`, 400, "instance"},
		{"bad schedule kind", "POST", "/api/v1/schedule", "application/json", `{"kind": "zz"}`, 400, "kind"},
		{"simulate the paper workload", "POST", "/api/v1/gavel/simulate", "application/json", `{"workload": "paper-3job", "gpus": [1, 1]}`, 422, ""},
		{"simulate too many jobs", "POST", "/api/v1/gavel/simulate", "application/json", `{"trace_jobs": 100000}`, 400, "cluster.trace_jobs"},
	} {
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d (%.300s)", c.name, rec.Code, c.status, rec.Body)
			continue
		}
		if e := apiErr(t, rec); e.Field != c.field || len(e.Error) > 1000 {
			t.Errorf("%s: field %q, want %q (%.300s)", c.name, e.Field, c.field, e.Error)
		}
	}
}

// TestAPIv1Bounds: a request past its deadline is a 504, one over the
// concurrency limit a 503 with Retry-After, both in JSON.
func TestAPIv1Bounds(t *testing.T) {
	h := NewAPIHandler(APIOptions{MaxConcurrent: 1, Timeout: time.Nanosecond}).(*apiHandler)
	rec := post(h, "/api/v1/plan", `{}`)
	if rec.Code != http.StatusGatewayTimeout {
		t.Errorf("past the deadline: status %d, want 504 (%s)", rec.Code, rec.Body)
	}
	apiErr(t, rec)
	h.slots <- struct{}{} // one request running
	rec = post(h, "/api/v1/plan", `{}`)
	<-h.slots
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("over the limit: status %d Retry-After %q, want 503 with one", rec.Code, rec.Header().Get("Retry-After"))
	}
	apiErr(t, rec)
}

func TestAPIv1Services(t *testing.T) {
	h := NewAPIHandler(DefaultAPIOptions())
	rec := post(h, "/api/v1/plan", `{"model": "gpt-1.7b", "nodes": 4, "planner": "ptdp", "global_batch": 512}`)
	var res struct {
		Candidates []map[string]any `json:"candidates"`
		Plan       map[string]any   `json:"plan"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &res) != nil || len(res.Candidates) == 0 || res.Plan == nil {
		t.Errorf("plan: %d %.300s", rec.Code, rec.Body)
	}
	if old := post(h, "/api/plan", `{"model": "gpt-1.7b", "nodes": 4, "planner": "ptdp", "global_batch": 512}`); old.Body.String() != rec.Body.String() {
		t.Errorf("/api/plan answers differently from /api/v1/plan")
	}
	rec = post(h, "/api/v1/schedule", `{"kind": "interleaved", "stages": 4, "microbatches": 8, "chunks": 2}`)
	var rep struct {
		Kind           string  `json:"kind"`
		BubbleFraction float64 `json:"bubble_fraction"`
		Devices        []any   `json:"devices"`
	}
	// Interleaved 1F1B's bubble is (p−1)/(v·m) of the ideal time (§4.2.2),
	// so (p−1)/(v·m + p − 1) of the step.
	want := 3.0 / (2*8 + 3)
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &rep) != nil || rep.Kind != "interleaved" || len(rep.Devices) != 4 ||
		rep.BubbleFraction < want-1e-9 || rep.BubbleFraction > want+1e-9 {
		t.Errorf("schedule: %d %+v, want bubble %v", rec.Code, rep, want)
	}
	// ZB-V at equal F, I and W per chunk (fwd 1 s, bwd 2 s a device: 0.5 s
	// each a chunk) idles only for the p−1 chunk forwards before the last
	// device starts: (p−1)·0.5 s of a step 2m·1.5 s + (p−1)·0.5 s.
	rec = post(h, "/api/v1/schedule", `{"kind": "zb-v", "stages": 4, "microbatches": 8}`)
	want = 1.5 / (24 + 1.5)
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &rep) != nil || rep.Kind != "zb-v" || len(rep.Devices) != 4 ||
		rep.BubbleFraction < want-1e-9 || rep.BubbleFraction > want+1e-9 {
		t.Errorf("zb-v schedule: %d %+v, want bubble %v", rec.Code, rep, want)
	}
	// DualPipeV the same at equal times; with fewer than 2 microbatches a
	// stage it is refused naming the field.
	rec = post(h, "/api/v1/schedule", `{"kind": "dualpipe-v", "stages": 4, "microbatches": 8}`)
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &rep) != nil || rep.Kind != "dualpipe-v" ||
		rep.BubbleFraction < want-1e-9 || rep.BubbleFraction > want+1e-9 {
		t.Errorf("dualpipe-v schedule: %d %+v, want bubble %v", rec.Code, rep, want)
	}
	rec = post(h, "/api/v1/schedule", `{"kind": "dualpipe-v", "stages": 4, "microbatches": 7}`)
	if e := apiErr(t, rec); rec.Code != 400 || e.Field != "microbatches" || !strings.Contains(e.Error, "dualpipe-v needs at least 8 on 4 stages (2 a stage), got 7") {
		t.Errorf("dualpipe-v with 7 microbatches: %d %+v", rec.Code, e)
	}
	rec = post(h, "/api/v1/schedule", `{}`, "Accept", "image/svg+xml")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(rec.Body.String(), "<svg") {
		t.Errorf("schedule SVG: %d %q %.100s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	inst, err := os.ReadFile("../core/gavel/testdata/instances/paper_example_3job.json")
	if err != nil {
		t.Fatal(err)
	}
	rec = post(h, "/api/v1/gavel/allocate", `{"instance": `+string(inst)+`, "policy": "max_min_fairness_perf"}`)
	var al struct {
		Allocation [][]float64 `json:"allocation"`
		Objective  float64     `json:"objective"`
	}
	// §5.4.1: the optimum's min normalized throughput is 8/11.
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &al) != nil || len(al.Allocation) != 3 || al.Objective < 8.0/11-1e-9 || al.Objective > 8.0/11+1e-9 {
		t.Errorf("allocate: %d %.300s", rec.Code, rec.Body)
	}
	rec = post(h, "/api/v1/gavel/simulate", `{"workload": "job-types", "gpus": [8, 8, 8], "trace_jobs": 6, "trace_jobs_per_hour": 2}`)
	var sim struct {
		JobsCompleted int     `json:"jobs_completed"`
		AvgJCT        float64 `json:"avg_jct_s"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &sim) != nil || sim.JobsCompleted != 6 || !(sim.AvgJCT > 0) {
		t.Errorf("simulate: %d %.300s", rec.Code, rec.Body)
	}
	// A body that omits the cluster simulates the default one (Gavel's
	// types in whole servers; until November 2026 the default was the
	// §5.4.1 example, which does not simulate).
	rec = post(h, "/api/v1/gavel/simulate", `{"trace_jobs": 4}`)
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &sim) != nil || sim.JobsCompleted != 4 {
		t.Errorf("simulate the default cluster: %d %.300s", rec.Code, rec.Body)
	}
}

// FuzzAPIv1 sends arbitrary bodies to every POST endpoint: the answer is
// JSON (or the schedule's SVG) with a status the API documents, never a
// 500 or a panic; errors are {"error", "field"}. A short deadline bounds
// each request's work.
func FuzzAPIv1(f *testing.F) {
	paths := []string{"/api/v1/plan", "/api/v1/schedule", "/api/v1/gavel/allocate", "/api/v1/gavel/simulate"}
	for _, s := range []struct {
		path uint8
		body string
	}{
		{0, `{}`}, {0, `{"model": "pd-vgg16", "nodes": 1, "gpus_per_node": 4, "planner": "pipedream"}`},
		{0, `{"model": "custom", "custom": {"layers": 8, "hidden": 512, "heads": 8}, "nodes": 2, "tp": 2, "pp": 2, "microbatch": 1, "interleave": 2, "recompute": "full"}`},
		{0, `{"nodes": 1e400}`}, {0, `null`}, {1, `{"kind": "zb-h1", "stages": 3}`}, {1, `{"kind": "zb-v", "stages": 64, "microbatches": 512}`}, {1, `{"kind": "dualpipe-v", "stages": 4, "microbatches": 7}`}, {1, `{"fwd_seconds": 0}`},
		{2, `{"instance": {"worker_types": ["v100"], "num_workers": [1], "jobs": [{"id": 0, "scale_factor": 1}], "throughputs": [[1]]}, "policy": "fifo"}`},
		{2, `{"instance": [], "policy": "x"}`}, {3, `{"workload": "job-types", "gpus": [1, 1, 1], "trace_jobs": 2}`}, {3, `{"gpus": [0, 0]}`},
	} {
		f.Add(s.path, s.body)
	}
	h := NewAPIHandler(APIOptions{MaxConcurrent: 4, Timeout: 2 * time.Second})
	documented := map[int]bool{200: true, 400: true, 413: true, 422: true, 503: true, 504: true}
	f.Fuzz(func(t *testing.T, path uint8, body string) {
		p := paths[int(path)%len(paths)]
		rec := post(h, p, body)
		if !documented[rec.Code] {
			t.Fatalf("POST %s %q: status %d (%s)", p, body, rec.Code, rec.Body)
		}
		if rec.Code != 200 {
			apiErr(t, rec)
		} else if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("POST %s %q: answer is not JSON", p, body)
		}
	})
}
