//go:build js && wasm

package main

import (
	"context"
	"encoding/json"

	"github.com/hack-pad/safejs"

	"pipeplan/ui/engine"
)

// exposeAPI defines window.pipeplan.plan(jsonString): it runs the planner on
// a request (engine.Request's JSON) and returns the result as a JSON string,
// or {"error": "..."}; for scripting and tests.
func exposeAPI() error {
	planFn, err := safejs.FuncOf(func(_ safejs.Value, args []safejs.Value) any {
		if len(args) != 1 {
			return errorJSON("pipeplan.plan takes one argument, a JSON string")
		}
		in, err := args[0].String()
		if err != nil {
			return errorJSON("pipeplan.plan: the argument must be a JSON string")
		}
		out, err := engine.PlanJSON(context.Background(), []byte(in))
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
	return safejs.Global().Set("pipeplan", obj)
}

func errorJSON(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}
