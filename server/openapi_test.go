package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pipeplan/app"
	"pipeplan/app/request"
)

// jsonFields lists the JSON names of a struct type's fields, the fields of
// embedded structs included, sorted.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			out = append(out, jsonFields(f.Type)...)
		case name != "-" && f.IsExported():
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// TestOpenAPIDescribesThePlanSchema: the OpenAPI document lists exactly
// the plan request's fields (request.Plan, its custom model) and the
// candidate's (app.Candidate), and no answer field app.Result lacks, so a
// field added to the schema must be documented.
func TestOpenAPIDescribesThePlanSchema(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Properties map[string]any `json:"properties"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]struct {
		Properties map[string]any `json:"properties"`
	}) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	s := doc.Components.Schemas
	inner := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	for _, c := range []struct {
		name      string
		doc, want []string
	}{
		{"PlanRequest", keys(s["PlanRequest"].Properties), jsonFields(reflect.TypeOf(request.Plan{}))},
		{"PlanRequest.custom", inner(s["PlanRequest"].Properties["custom"].Properties), jsonFields(reflect.TypeOf(request.CustomModel{}))},
		{"Candidate", keys(s["Candidate"].Properties), jsonFields(reflect.TypeOf(app.Candidate{}))},
	} {
		if !slices.Equal(c.doc, c.want) {
			t.Errorf("openapi.json %s lists %v, the schema has %v", c.name, c.doc, c.want)
		}
	}
	result := jsonFields(reflect.TypeOf(app.Result{}))
	for _, f := range keys(s["PlanResult"].Properties) {
		if !slices.Contains(result, f) {
			t.Errorf("openapi.json PlanResult lists %q, which app.Result does not have", f)
		}
	}
}
