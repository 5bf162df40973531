//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hack-pad/safejs"

	"pipeplan/app"
	"pipeplan/app/request"
)

// exposeAPI defines window.pipeplan, for scripting and tests:
//
//	pipeplan.plan(requestJSON)                runs the planner on the Plan page's inputs
//	pipeplan.allocate(requestJSON)            solves a Gavel policy (request.Allocate)
//	pipeplan.allocate(instanceJSON, policy)   the same for just an instance and a policy
//
// They give the same JSON as the HTTP API (/api/v1/plan,
// /api/v1/gavel/allocate) and the CLI's --json, or {"error", "field"}.
func exposeAPI() error {
	planFn, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		if len(args) != 1 {
			return errorJSON(errors.New("pipeplan.plan takes one argument, a JSON string"))
		}
		in, err := args[0].String()
		if err != nil {
			return errorJSON(errors.New("pipeplan.plan: the argument must be a JSON string"))
		}
		out, err := app.PlanJSON(context.Background(), []byte(in))
		if err != nil {
			return errorJSON(err)
		}
		return string(out)
	})
	if err != nil {
		return err
	}
	allocFn, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		var req request.Allocate
		switch len(args) {
		case 1:
			in, err := args[0].String()
			if err != nil {
				return errorJSON(errors.New("pipeplan.allocate: the argument must be a JSON string"))
			}
			if req, err = request.DecodeAllocate([]byte(in)); err != nil {
				return errorJSON(err)
			}
		case 2:
			inst, err1 := args[0].String()
			policy, err2 := args[1].String()
			if err1 != nil || err2 != nil {
				return errorJSON(errors.New("pipeplan.allocate: both arguments must be strings"))
			}
			req = request.Allocate{Instance: []byte(inst), Policy: policy}
		default:
			return errorJSON(errors.New("pipeplan.allocate takes a request JSON string, or an instance JSON string and a policy name"))
		}
		al, err := app.AllocateInstance(context.Background(), req)
		if err != nil {
			return errorJSON(err)
		}
		out, err := json.Marshal(al)
		if err != nil {
			return errorJSON(err)
		}
		return string(out)
	})
	if err != nil {
		return err
	}
	obj, err := safejs.ValueOf(map[string]any{})
	if err != nil {
		return err
	}
	if err := obj.Set("plan", planFn.Value()); err != nil {
		return err
	}
	if err := obj.Set("allocate", allocFn.Value()); err != nil {
		return err
	}
	return safejs.Global().Set("pipeplan", obj)
}

// errorJSON is {"error": "...", "field": "..."} for err, as the HTTP API
// answers; field names the request field a validation error names.
func errorJSON(err error) string {
	b, _ := json.Marshal(map[string]string{"error": err.Error(), "field": request.Field(err)})
	return string(b)
}
