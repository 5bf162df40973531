// Package golit writes Go values as Go source: the generators of the
// embedded data (gpuprofiles' and modelprofiles' data_gen.go) turn what the
// JSON files parse to into package-level values, so the page pays no
// parsing at its first render.
package golit

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Expr returns v as a Go expression that evaluates to an equal value
// (reflect.DeepEqual, nil and empty maps and slices kept apart). Types are
// named as reflect names them (e.g. hw.GPU), with the qualifier of package
// local dropped, and left out where Go lets a composite literal's elements
// leave them out (as gofmt -s does). Struct fields at their zero value are
// left out; map keys are sorted; slices and maps take a line per element. v may hold structs with exported fields, pointers to them,
// maps, slices, strings, booleans, integers and finite floats.
func Expr(v any, local string) (string, error) {
	var b strings.Builder
	w := writer{b: &b, local: local + "."}
	if err := w.value(reflect.ValueOf(v), false); err != nil {
		return "", err
	}
	return b.String(), nil
}

type writer struct {
	b     *strings.Builder
	local string
}

// typ is t's name in the generated file.
func (w writer) typ(t reflect.Type) string {
	return strings.ReplaceAll(t.String(), w.local, "")
}

// value writes v; elide leaves out its type where v is a composite
// literal's element or key.
func (w writer) value(v reflect.Value, elide bool) error {
	switch v.Kind() {
	case reflect.Bool:
		w.b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		w.b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		s := strconv.FormatFloat(f, 'g', -1, v.Type().Bits())
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Signbit(f) && f == 0 {
			return fmt.Errorf("golit: float %v has no constant literal", f)
		}
		w.b.WriteString(s)
	case reflect.String:
		w.b.WriteString(strconv.Quote(v.String()))
	case reflect.Pointer:
		if v.IsNil() {
			w.b.WriteString("nil")
			return nil
		}
		if v.Elem().Kind() != reflect.Struct {
			return fmt.Errorf("golit: pointer to %s", v.Elem().Type())
		}
		if !elide {
			w.b.WriteString("&")
		}
		return w.value(v.Elem(), elide)
	case reflect.Struct:
		t := v.Type()
		if !elide {
			w.b.WriteString(w.typ(t))
		}
		w.b.WriteString("{")
		sep := ""
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				return fmt.Errorf("golit: %s.%s is unexported", t, t.Field(i).Name)
			}
			if v.Field(i).IsZero() {
				continue
			}
			w.b.WriteString(sep + t.Field(i).Name + ": ")
			if err := w.value(v.Field(i), false); err != nil {
				return err
			}
			sep = ", "
		}
		w.b.WriteString("}")
	case reflect.Slice:
		if v.IsNil() {
			w.b.WriteString("nil")
			return nil
		}
		w.b.WriteString(w.typ(v.Type()) + "{\n")
		for i := range v.Len() {
			if err := w.value(v.Index(i), true); err != nil {
				return err
			}
			w.b.WriteString(",\n")
		}
		w.b.WriteString("}")
	case reflect.Map:
		if v.IsNil() {
			w.b.WriteString("nil")
			return nil
		}
		if v.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("golit: map key of kind %s", v.Type().Key().Kind())
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		w.b.WriteString(w.typ(v.Type()) + "{\n")
		for _, k := range keys {
			if err := w.value(k, true); err != nil {
				return err
			}
			w.b.WriteString(": ")
			if err := w.value(v.MapIndex(k), true); err != nil {
				return err
			}
			w.b.WriteString(",\n")
		}
		w.b.WriteString("}")
	default:
		return fmt.Errorf("golit: value of kind %s", v.Kind())
	}
	return nil
}

// UpdateOrCompare writes src to path when update is set (the generator's
// -update); otherwise it reports, as an error naming the file and how to
// regenerate it, whether path's contents differ from src.
func UpdateOrCompare(path string, src []byte, update bool, regenerate string) error {
	if update {
		return os.WriteFile(path, src, 0o644)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(old, src) {
		return fmt.Errorf("%s is stale: run %s", path, regenerate)
	}
	return nil
}
