package server

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"pipeplan/app"
	"pipeplan/app/request"
	"pipeplan/core/schedule"
)

// openAPI is the OpenAPI 3.1 description of /api/v1, served at
// /api/v1/openapi.json.
//
//go:embed openapi.json
var openAPI []byte

// APIOptions bound the work of the HTTP API.
type APIOptions struct {
	// MaxConcurrent is how many POST requests run at once; more are
	// answered 503 with Retry-After at once (no queue holds memory).
	MaxConcurrent int
	// Timeout is each POST request's deadline; the planners, the LP
	// solver and the simulators stop at it (504).
	Timeout time.Duration
}

// DefaultAPIOptions run one request per CPU, each for at most 30 s.
func DefaultAPIOptions() APIOptions {
	return APIOptions{MaxConcurrent: runtime.GOMAXPROCS(0), Timeout: 30 * time.Second}
}

// A request with a body over largeBody, or running over slowRequest, has
// its memory returned to the operating system once it is answered.
const (
	largeBody   = 1 << 20
	slowRequest = time.Second
)

// apiHandler serves /api/v1 (and the former /api/plan) over the
// application layer.
type apiHandler struct {
	opt   APIOptions
	slots chan struct{} // one token per running POST request
}

// NewAPIHandler returns the HTTP API: the catalogs and the services of
// the application layer, as the page and the CLI use them.
//
//	GET  /api/v1/gpus             the GPU profiles (app.GPUs)
//	GET  /api/v1/models           the model presets (app.Models)
//	GET  /api/v1/openapi.json     this API's OpenAPI document
//	POST /api/v1/plan             request.Plan → app.Result
//	POST /api/v1/schedule         request.Schedule → schedule.Report, or SVG (Accept: image/svg+xml)
//	POST /api/v1/gavel/allocate   request.Allocate → app.InstanceAllocation
//	POST /api/v1/gavel/simulate   request.Cluster → gavel.SimResult
//	POST /api/plan                the same as /api/v1/plan (kept for old scripts)
//
// Errors are JSON {"error": "...", "field": "..."}: 400 bad input (field
// names it), 404/405 unknown path or method, 413 body over the limit, 415
// not application/json, 422 a valid request that cannot be planned (the
// reason), 503 over the concurrency limit (Retry-After), 504 past the
// deadline.
func NewAPIHandler(opt APIOptions) http.Handler {
	if opt.MaxConcurrent < 1 {
		opt.MaxConcurrent = 1
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultAPIOptions().Timeout
	}
	return &apiHandler{opt: opt, slots: make(chan struct{}, opt.MaxConcurrent)}
}

// endpoint is one POST service: its body limit and its work, which
// returns a value to encode as JSON (or a ready body with its type).
type endpoint struct {
	limit int64
	serve func(ctx context.Context, body []byte, r *http.Request) (any, error)
}

// rawBody is an answer that is not JSON.
type rawBody struct {
	contentType string
	data        []byte
}

var endpoints = map[string]endpoint{
	"/api/v1/plan":           {request.MaxBodyBytes, servePlan},
	"/api/plan":              {request.MaxBodyBytes, servePlan},
	"/api/v1/schedule":       {request.MaxBodyBytes, serveSchedule},
	"/api/v1/gavel/allocate": {request.MaxAllocateBodyBytes, serveAllocate},
	"/api/v1/gavel/simulate": {request.MaxBodyBytes, serveSimulate},
}

func (h *apiHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch r.URL.Path {
	case "/api/v1/gpus":
		h.get(w, r, func() any { return app.GPUs() })
		return
	case "/api/v1/models":
		h.get(w, r, func() any { return app.Models() })
		return
	case "/api/v1/openapi.json":
		h.get(w, r, func() any { return json.RawMessage(openAPI) })
		return
	}
	ep, ok := endpoints[r.URL.Path]
	if !ok {
		writeError(w, http.StatusNotFound, "", "no API endpoint "+strconv.Quote(clipPath(r.URL.Path))+"; see /api/v1/openapi.json")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "", r.URL.Path+" takes POST, got "+clipPath(r.Method))
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, "", "the body must be JSON sent as Content-Type: application/json")
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "", "the server is busy: "+strconv.Itoa(h.opt.MaxConcurrent)+" requests are running; retry in a second")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, ep.limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "", "the body is over the limit of "+formatBytes(ep.limit)+" for "+r.URL.Path)
			return
		}
		writeError(w, http.StatusBadRequest, "", "reading the body: "+err.Error())
		return
	}
	start := time.Now()
	defer func() {
		if len(body) > largeBody || time.Since(start) > slowRequest {
			debug.FreeOSMemory()
		}
	}()
	ctx, cancel := context.WithTimeout(r.Context(), h.opt.Timeout)
	defer cancel()
	out, err := ep.serve(ctx, body, r)
	if err == nil {
		if raw, ok := out.(rawBody); ok {
			w.Header().Set("Content-Type", raw.contentType)
			w.Write(raw.data)
			return
		}
		var data []byte
		if data, err = json.Marshal(out); err == nil {
			w.Header().Set("Content-Type", "application/json")
			w.Write(data)
			return
		}
		err = errors.New("the answer has a number JSON cannot hold (" + err.Error() + "): the inputs are outside what the model covers")
	}
	h.fail(w, ctx, err)
}

// get serves a catalog.
func (h *apiHandler) get(w http.ResponseWriter, r *http.Request, v func() any) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "", r.URL.Path+" takes GET, got "+clipPath(r.Method))
		return
	}
	data, _ := json.Marshal(v())
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// fail answers err: 504 past the deadline, 503 when the client left (it
// sees nothing), 400 for a request field, 422 for the rest (a valid
// request the planners cannot satisfy, with their reason).
func (h *apiHandler) fail(w http.ResponseWriter, ctx context.Context, err error) {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "", "the request took longer than the limit of "+h.opt.Timeout.String()+": ask for less (fewer GPUs, a fixed degree, a smaller trace)")
	case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
		writeError(w, http.StatusServiceUnavailable, "", "the request was cancelled")
	case isRequestError(err):
		writeError(w, http.StatusBadRequest, request.Field(err), err.Error())
	default:
		writeError(w, http.StatusUnprocessableEntity, "", err.Error())
	}
}

// isRequestError reports a bad request: a *request.FieldError, naming a
// field or (with none) the body as a whole.
func isRequestError(err error) bool {
	var fe *request.FieldError
	return errors.As(err, &fe)
}

func servePlan(ctx context.Context, body []byte, _ *http.Request) (any, error) {
	in, err := request.DecodePlan(body)
	if err != nil {
		return nil, err
	}
	res, err := app.Plan(ctx, in)
	if err != nil {
		return nil, err
	}
	if res.Problem != "" && len(res.Candidates) == 0 {
		return nil, errors.New(res.Problem) // 422, with the reason
	}
	return res, nil
}

func serveSchedule(ctx context.Context, body []byte, r *http.Request) (any, error) {
	in, err := request.DecodeSchedule(body)
	if err != nil {
		return nil, err
	}
	tl, err := app.Schedule(ctx, in)
	if err != nil {
		return nil, err
	}
	if acceptsSVG(r.Header.Get("Accept")) {
		return rawBody{"image/svg+xml", schedule.RenderSVG(tl, schedule.SVGOptions{WidthPx: 900})}, nil
	}
	return tl.Report(), nil
}

// acceptsSVG reports whether an Accept header prefers SVG to JSON: it
// names image/svg+xml and not application/json before it.
func acceptsSVG(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "image/svg+xml":
			return true
		case "application/json":
			return false
		}
	}
	return false
}

func serveAllocate(ctx context.Context, body []byte, _ *http.Request) (any, error) {
	in, err := request.DecodeAllocate(body)
	if err != nil {
		return nil, err
	}
	return app.AllocateInstance(ctx, in)
}

func serveSimulate(ctx context.Context, body []byte, _ *http.Request) (any, error) {
	in, err := request.DecodeCluster(body)
	if err != nil {
		return nil, err
	}
	return app.SimulateTrace(ctx, in, nil, nil)
}

// apiError is the JSON of every error answer.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

func writeError(w http.ResponseWriter, status int, field, msg string) {
	data, _ := json.Marshal(apiError{Error: msg, Field: field})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// clipPath shortens a client-chosen string echoed in an error.
func clipPath(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}

// formatBytes writes a byte limit in KiB or MiB.
func formatBytes(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}
