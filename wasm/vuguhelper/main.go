// Command vuguhelper prints the JavaScript helper of vugu's DOM renderer (the
// jsHelperScript constant of github.com/vugu/vugu/domrender), so build.sh can
// serve it as public/vugu-render.js. vugu evaluates that script with
// window.eval at start; loading it as a file instead lets the site's
// Content-Security-Policy forbid eval.
//
// Usage: go run ./wasm/vuguhelper DOMRENDER_DIR > public/vugu-render.js
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: vuguhelper DOMRENDER_DIR")
		os.Exit(2)
	}
	script, err := helperScript(filepath.Join(os.Args[1], "renderer-js-script.go"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "vuguhelper:", err)
		os.Exit(1)
	}
	fmt.Println(script)
}

// helperScript returns the value of the jsHelperScript string constant in file.
func helperScript(file string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		return "", err
	}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if name.Name != "jsHelperScript" || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return "", fmt.Errorf("%s: jsHelperScript is not a string literal", file)
				}
				return strconv.Unquote(lit.Value)
			}
		}
	}
	return "", fmt.Errorf("%s: no jsHelperScript constant", file)
}
