package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// listedPackage is what `go list -json` says of one package.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
	Module     *struct{ Path string }
}

// goListDeps lists every package of the module and everything they depend
// on, each with its direct imports (tests' aside) and its transitive
// dependencies.
func goListDeps(t *testing.T) map[string]listedPackage {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard,Imports,Deps,Module", "./...").Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]listedPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// within reports whether import path p is the package dir or lies under it.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// TestLayers checks the architecture's import rules (ARCHITECTURE.md):
// core/ is pure, deterministic Go that depends on nothing of the project
// outside core/ and on no module but gonum; only the playground (wasm/)
// builds on the vugu components in ui/; the application layer (app/) knows
// nothing of its shells (cli/, server/, wasm/, ui/); the CLI (cli/)
// reaches the engines and the profiles only through app/.
func TestLayers(t *testing.T) {
	pkgs := goListDeps(t)
	const module = "pipeplan"
	// core/ must be able to run anywhere, the browser included, and be deterministic.
	forbiddenInCore := []string{"syscall/js", "net", "net/http", "os/exec"}
	checked := 0
	for path, p := range pkgs {
		if !within(path, module) || p.Standard {
			continue
		}
		checked++
		for _, dep := range p.Deps {
			d := pkgs[dep]
			switch {
			case within(path, module+"/core"):
				switch {
				case d.Standard && slices.Contains(forbiddenInCore, dep):
					t.Errorf("%s depends on %s: core/ must stay pure Go (no %v)", path, dep, forbiddenInCore)
				case d.Standard, within(dep, module+"/core"):
				case d.Module != nil && d.Module.Path == "gonum.org/v1/gonum":
				default:
					t.Errorf("%s depends on %s: core/ may use only core/, the standard library and gonum", path, dep)
				}
			case within(dep, module+"/ui") && !within(path, module+"/ui") && !within(path, module+"/wasm"):
				t.Errorf("%s depends on %s: only wasm/ builds on the UI components", path, dep)
			}
			if within(path, module+"/app") {
				for _, shell := range []string{"cli", "server", "wasm", "ui", "runner"} {
					if within(dep, module+"/"+shell) {
						t.Errorf("%s depends on %s: the application layer must not know its shells", path, dep)
					}
				}
			}
		}
	}
	// The CLI's own imports: of core/ only the types it parses flags into or
	// prints (cliCoreTypes); the engines and the profiles through app/.
	cliCoreTypes := []string{"core/hw", "core/model", "core/plan"}
	for path, p := range pkgs {
		if !within(path, module+"/cli") {
			continue
		}
		for _, dep := range p.Imports {
			for _, room := range []string{"core", "gpuprofiles", "modelprofiles"} {
				if within(dep, module+"/"+room) && !slices.ContainsFunc(cliCoreTypes, func(t string) bool { return dep == module+"/"+t }) {
					t.Errorf("%s imports %s: the CLI goes through app/ (of core/ it may import only %v, for their types)", path, dep, cliCoreTypes)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("go list found only %d packages of %s; the check did not run", checked, module)
	}
}
