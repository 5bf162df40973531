package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// gpt3Plan is the ordinary request of the load targets: GPT-3 175B on 128
// nodes of 8 A100s (1024 GPUs), every PTD-P configuration searched.
const gpt3Plan = `{"model": "gpt3-175b", "nodes": 128, "gpus_per_node": 8, "global_batch": 1536}`

// worstPlans are the most expensive plans the schema admits: the largest
// cluster (4096 nodes of 16 GPUs) with MadPipe on the largest profile it
// searches, and every planner ("best") on the largest PipeDream profile
// where PipeDream applies (1024 workers).
var worstPlans = []string{
	`{"model": "pd-resnet101", "nodes": 4096, "gpus_per_node": 16, "planner": "madpipe"}`,
	`{"model": "pd-gnmt_large", "nodes": 64, "gpus_per_node": 16, "planner": "best"}`,
	`{"model": "gpt-1t", "nodes": 4096, "gpus_per_node": 16, "planner": "best", "global_batch": 1048576}`,
}

// send POSTs body to url+path (GET when body is empty) and returns the
// status and the answer.
func send(t testing.TB, client *http.Client, url, path, body string) (int, http.Header, []byte) {
	method := "POST"
	if body == "" {
		method = "GET"
	}
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0, nil, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s %s: reading the answer: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, data
}

// BenchmarkAPIv1PlanGPT3 is POST /api/v1/plan for GPT-3 175B on 1024 GPUs
// through a loopback server; it reports the median latency (target < 20 ms).
func BenchmarkAPIv1PlanGPT3(b *testing.B) {
	srv := httptest.NewServer(NewAPIHandler(DefaultAPIOptions()))
	defer srv.Close()
	client := srv.Client()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if code, _, data := send(b, client, srv.URL, "/api/v1/plan", gpt3Plan); code != 200 {
			b.Fatalf("status %d: %.300s", code, data)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}

// TestAPIv1Load sends 2,000 requests from 16 concurrent clients (the
// catalogs, schedules, small plans and one GPT-3 plan in eight) to a
// server that runs 16 at once: every one is answered 200, and the heap
// the process took from the system stays under 512 MiB.
func TestAPIv1Load(t *testing.T) {
	if testing.Short() {
		t.Skip("the load test sends 2,000 requests")
	}
	srv := httptest.NewServer(NewAPIHandler(APIOptions{MaxConcurrent: 16, Timeout: 2 * time.Minute}))
	defer srv.Close()
	mix := []struct{ path, body string }{
		{"/api/v1/gpus", ""},
		{"/api/v1/plan", `{"model": "gpt-1.7b", "nodes": 4, "planner": "ptdp", "global_batch": 512}`},
		{"/api/v1/models", ""},
		{"/api/v1/schedule", `{"kind": "interleaved", "stages": 4, "microbatches": 8, "chunks": 2}`},
		{"/api/v1/plan", `{"model": "pd-vgg16", "nodes": 1, "gpus_per_node": 4, "planner": "pipedream"}`},
		{"/api/v1/gpus", ""},
		{"/api/v1/schedule", `{"kind": "1f1b", "stages": 8, "microbatches": 32}`},
		{"/api/v1/plan", gpt3Plan},
	}
	const requests, clients = 2000, 16
	var (
		mu     sync.Mutex
		errors []string
		wg     sync.WaitGroup
	)
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = clients
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < requests; i += clients {
				r := mix[i%len(mix)]
				if code, _, data := send(t, client, srv.URL, r.path, r.body); code != 200 {
					mu.Lock()
					errors = append(errors, fmt.Sprintf("%s: %d %.200s", r.path, code, data))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(errors) > 0 {
		t.Errorf("%d of %d requests failed, the first: %s", len(errors), requests, errors[0])
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap from the system %d MiB, peak RSS %s", ms.HeapSys>>20, peakRSS())
	if ms.HeapSys > 512<<20 {
		t.Errorf("the heap took %d MiB from the system, over 512 MiB", ms.HeapSys>>20)
	}
}

// peakRSS is this process's peak resident memory (VmHWM), or "unknown"
// where /proc does not tell.
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// worstEnv names the environment variable that makes
// TestAPIv1WorstRequestProcess run (in the sub-process of
// TestAPIv1WorstRequest) and says how many copies of each worst request
// it sends at once.
const worstEnv = "PIPEPLAN_WORST_REQUESTS"

// TestAPIv1WorstRequest runs the worst requests in a fresh process, so
// that its peak RSS is theirs: first each alone, then 16 of each at once
// while an ordinary request is sent. Every answer is one the API documents
// for its limits (200, 422 with a reason, 503 with Retry-After for the
// excess, 504 past the deadline), the ordinary request is answered, and
// the process peaks under 1 GiB.
func TestAPIv1WorstRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("the worst requests take tens of seconds of CPU")
	}
	for _, copies := range []int{1, 16} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAPIv1WorstRequestProcess$", "-test.v")
		cmd.Env = append(os.Environ(), worstEnv+"="+strconv.Itoa(copies))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		t.Logf("%d at once:\n%s", copies, out.String())
		if err != nil {
			t.Fatalf("%d at once: %v", copies, err)
		}
		if cmd.ProcessState == nil {
			continue
		}
		if rss := maxRSSBytes(cmd.ProcessState); rss > 1<<30 {
			t.Errorf("%d at once: the server process peaked at %d MiB, over 1 GiB", copies, rss>>20)
		} else {
			t.Logf("%d at once: the server process peaked at %d MiB", copies, rss>>20)
		}
	}
}

// TestAPIv1WorstRequestProcess is the server process of
// TestAPIv1WorstRequest; it runs only with PIPEPLAN_WORST_REQUESTS set.
func TestAPIv1WorstRequestProcess(t *testing.T) {
	copies, err := strconv.Atoi(os.Getenv(worstEnv))
	if err != nil {
		t.Skip("runs as the sub-process of TestAPIv1WorstRequest")
	}
	opt := DefaultAPIOptions()
	srv := httptest.NewServer(NewAPIHandler(opt))
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 16
	documented := map[int]bool{200: true, 422: true, 503: true, 504: true}
	var wg sync.WaitGroup
	for _, body := range worstPlans {
		for range copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				code, h, data := send(t, client, srv.URL, "/api/v1/plan", body)
				t.Logf("%.60s: %d in %v: %.160s", body, code, time.Since(start).Round(time.Millisecond), data)
				if !documented[code] || code == 503 && h.Get("Retry-After") == "" {
					t.Errorf("%s: status %d (Retry-After %q): %.300s", body, code, h.Get("Retry-After"), data)
				}
			}()
		}
		if copies == 1 {
			wg.Wait()
		}
	}
	if copies > 1 {
		// The catalogs are never limited; a plan is answered, at worst a
		// 503 with Retry-After while the worst requests hold every slot.
		if code, _, data := send(t, client, srv.URL, "/api/v1/gpus", ""); code != 200 {
			t.Errorf("GET /api/v1/gpus under load: %d %.200s", code, data)
		}
		code, h, data := send(t, client, srv.URL, "/api/v1/plan", gpt3Plan)
		t.Logf("GPT-3 plan under load: %d", code)
		if code != 200 && (code != 503 || h.Get("Retry-After") == "") {
			t.Errorf("GPT-3 plan under load: %d %.200s", code, data)
		}
	}
	wg.Wait()
	if code, _, data := send(t, client, srv.URL, "/api/v1/plan", gpt3Plan); code != 200 {
		t.Errorf("GPT-3 plan after the worst requests: %d %.200s", code, data)
	}
}
