package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"pipeplan/app"
	"pipeplan/app/request"
)

// apiTimeout bounds the work of one /api request.
const apiTimeout = 30 * time.Second

// newAPIHandler serves the playground's HTTP API:
//
//	POST /api/plan   body: the Plan page's inputs as JSON (app.ParseRequest)
//	                 reply: the planner's result as JSON, or {"error": "..."}
func newAPIHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/plan", servePlanAPI)
	return mux
}

func servePlanAPI(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, request.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeAPIError(w, http.StatusRequestEntityTooLarge, err)
			return
		}
		writeAPIError(w, http.StatusBadRequest, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
	defer cancel()
	out, err := app.PlanJSON(ctx, body)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(out)
}

func writeAPIError(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}
