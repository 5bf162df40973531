package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pipeplan/server"
)

// apiCall is one request the worker and the native handler both answer.
type apiCall struct {
	name, method, path, body string
	header                   []string // name, value pairs
}

// calls reach every endpoint of /api/v1 with small inputs, and some of
// its errors.
func calls(t *testing.T) []apiCall {
	inst, err := os.ReadFile("../core/gavel/testdata/instances/paper_example_3job.json")
	if err != nil {
		t.Fatal(err)
	}
	return []apiCall{
		{name: "gpus", method: "GET", path: "/api/v1/gpus"},
		{name: "models", method: "GET", path: "/api/v1/models"},
		{name: "openapi", method: "GET", path: "/api/v1/openapi.json"},
		{name: "plan", method: "POST", path: "/api/v1/plan", body: `{"model": "gpt-1.7b", "nodes": 4, "planner": "ptdp", "global_batch": 512}`},
		{name: "plan custom", method: "POST", path: "/api/v1/plan", body: `{"model": "custom", "custom": {"layers": 24, "hidden": 2048, "heads": 16},
			"nodes": 1, "global_batch": 64, "tp": 2, "pp": 4, "microbatch": 1, "interleave": 1, "recompute": "none"}`},
		{name: "plan pipedream", method: "POST", path: "/api/v1/plan", body: `{"model": "pd-vgg16", "nodes": 1, "gpus_per_node": 4, "planner": "pipedream"}`},
		{name: "schedule", method: "POST", path: "/api/v1/schedule", body: `{"kind": "interleaved", "stages": 4, "microbatches": 8, "chunks": 2}`},
		{name: "schedule svg", method: "POST", path: "/api/v1/schedule", body: `{"kind": "1f1b", "stages": 4, "microbatches": 8}`, header: []string{"Accept", "image/svg+xml"}},
		{name: "gavel allocate", method: "POST", path: "/api/v1/gavel/allocate", body: `{"instance": ` + string(inst) + `, "policy": "max_min_fairness_perf"}`},
		{name: "gavel simulate", method: "POST", path: "/api/v1/gavel/simulate", body: `{"workload": "job-types", "gpus": [4, 4, 4], "trace_jobs": 6, "trace_jobs_per_hour": 2}`},
		{name: "bad field", method: "POST", path: "/api/v1/plan", body: `{"nodes": -1}`},
		{name: "infeasible", method: "POST", path: "/api/v1/plan", body: `{"model": "gpt-1t", "nodes": 1, "gpus_per_node": 1}`},
		{name: "not JSON", method: "POST", path: "/api/v1/plan", body: `a=1`, header: []string{"Content-Type", "application/x-www-form-urlencoded"}},
		{name: "wrong method", method: "GET", path: "/api/v1/plan"},
		{name: "unknown path", method: "GET", path: "/api/v1/nope"},
	}
}

// newRequest builds c's request for base ("" for the native handler).
func (c apiCall) newRequest(t *testing.T, base string) *http.Request {
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header.Set(c.header[i], c.header[i+1])
	}
	return req
}

// TestWorkerd builds the worker (./build.sh worker), serves it with
// workerd, Cloudflare's runtime, on a free loopback port and checks that
// every endpoint answers as the native handler does: the same status,
// content type and bytes. workerd comes from scripts/workerd.sh; without
// it the test skips, or fails under CI=true.
func TestWorkerd(t *testing.T) {
	workerd := findWorkerd(t)
	dir := t.TempDir()
	build := exec.Command("bash", "../build.sh", "worker", filepath.Join(dir, "build"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("./build.sh worker: %v\n%s", err, out)
	}
	config, err := os.ReadFile("workerd.capnp")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "workerd.capnp"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	base := startWorkerd(t, workerd, filepath.Join(dir, "workerd.capnp"))

	native := server.NewAPIHandler(server.DefaultAPIOptions())
	// Each request starts a Go instance in workerd (the first compiles the
	// module): a generous timeout, and no assertion on time.
	client := &http.Client{Timeout: 3 * time.Minute}
	for _, c := range calls(t) {
		t.Run(c.name, func(t *testing.T) {
			want := httptest.NewRecorder()
			native.ServeHTTP(want, c.newRequest(t, ""))
			resp, err := client.Do(c.newRequest(t, base))
			if err != nil {
				t.Fatalf("workerd: %v", err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("workerd: reading the answer: %v", err)
			}
			if resp.StatusCode != want.Code {
				t.Errorf("status %d from workerd, %d native (%.300s)", resp.StatusCode, want.Code, got)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Allow"} {
				if g, w := resp.Header.Get(h), want.Header().Get(h); g != w {
					t.Errorf("%s %q from workerd, %q native", h, g, w)
				}
			}
			if where, ok := sameAnswer(got, want.Body.Bytes()); !ok {
				t.Errorf("workerd answers %d bytes, native %d, first different at %s:\nworkerd %.300s\nnative  %.300s", len(got), want.Body.Len(), where, got, want.Body)
			}
		})
	}
}

// findWorkerd returns the workerd binary that scripts/workerd.sh installs;
// without it the test skips, or fails in CI, which installs it (.ci/run).
func findWorkerd(t *testing.T) string {
	out, err := exec.Command("bash", "../scripts/workerd.sh", "path").Output()
	if err == nil {
		return strings.TrimSpace(string(out))
	}
	msg := "workerd is not installed: scripts/workerd.sh install (with npm) installs it"
	if exit, ok := err.(*exec.ExitError); ok && len(exit.Stderr) > 0 {
		msg = strings.TrimSpace(string(exit.Stderr))
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// startWorkerd serves config with workerd on a loopback port the test
// holds open (handed over as a file descriptor, so no other process can
// take it) and returns its base URL. Connections wait in the socket's
// queue until workerd accepts them, so no polling is needed; workerd's
// output is logged when the test fails.
func startWorkerd(t *testing.T, workerd, config string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(workerd, "serve", config, "--socket-fd", "http=3")
	cmd.ExtraFiles = []*os.File{f} // fd 3
	cmd.Stdout, cmd.Stderr = &logs, &logs
	err = cmd.Start()
	f.Close()
	if err != nil {
		ln.Close()
		t.Fatalf("starting workerd: %v", err)
	}
	base := "http://" + ln.Addr().String()
	// The child holds the socket now; closing ours makes a workerd that
	// exits refuse connections instead of leaving them queued.
	ln.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("workerd output:\n%s", logs.String())
		}
	})
	return base
}

// sameAnswer reports whether the worker's answer is the native one: the
// same bytes, or the same JSON with every number equal to within 1e-12 of
// its size. Go's math package computes some functions (math.Exp among
// them) in assembly on amd64 and in Go on js/wasm, so a prediction can
// differ in its last bit between the two builds; anything more is a
// different answer. It returns where the first difference is.
func sameAnswer(got, want []byte) (string, bool) {
	if bytes.Equal(got, want) {
		return "", true
	}
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return "the bytes (not JSON)", false
	}
	return sameJSON("$", g, w)
}

func sameJSON(path string, g, w any) (string, bool) {
	switch w := w.(type) {
	case map[string]any:
		g, ok := g.(map[string]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for k, wv := range w {
			if where, ok := sameJSON(path+"."+k, g[k], wv); !ok {
				return where, false
			}
		}
		return "", true
	case []any:
		g, ok := g.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if where, ok := sameJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); !ok {
				return where, false
			}
		}
		return "", true
	case float64:
		g, ok := g.(float64)
		return path, ok && math.Abs(g-w) <= 1e-12*math.Max(math.Abs(g), math.Abs(w))
	default:
		return path, g == w
	}
}
