//go:build js && wasm

package main

import (
	"context"
	"encoding/json"

	"github.com/hack-pad/safejs"

	"pipeplan/app"
)

// exposeAPI defines window.pipeplan, for scripting and tests:
//
//	pipeplan.plan(requestJSON)                runs the planner on the Plan page's inputs
//	pipeplan.allocate(instanceJSON, policy)   solves a Gavel policy on an LP instance
//
// Both return JSON strings, or {"error": "..."}.
func exposeAPI() error {
	planFn, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		if len(args) != 1 {
			return errorJSON("pipeplan.plan takes one argument, a JSON string")
		}
		in, err := args[0].String()
		if err != nil {
			return errorJSON("pipeplan.plan: the argument must be a JSON string")
		}
		out, err := app.PlanJSON(context.Background(), []byte(in))
		if err != nil {
			return errorJSON(err.Error())
		}
		return string(out)
	})
	if err != nil {
		return err
	}
	allocFn, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		if len(args) != 2 {
			return errorJSON("pipeplan.allocate takes two arguments: an instance JSON string and a policy name")
		}
		inst, err1 := args[0].String()
		policy, err2 := args[1].String()
		if err1 != nil || err2 != nil {
			return errorJSON("pipeplan.allocate: both arguments must be strings")
		}
		out, err := app.AllocateJSON(context.Background(), []byte(inst), policy)
		if err != nil {
			return errorJSON(err.Error())
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

func errorJSON(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}
