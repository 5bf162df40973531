// Command vuguhelper prints the JavaScript helper of vugu's DOM renderer (the
// jsHelperScript constant of github.com/vugu/vugu/domrender), so build.sh can
// serve it as public/vugu-render.js. vugu evaluates that script with
// window.eval at start; loading it as a file instead lets the site's
// Content-Security-Policy forbid eval.
//
// It also makes the script skip DOM writes that change nothing (patches):
// vugu re-sends every text, attribute and vg-html of the page on each
// render, and a re-set innerHTML re-parses its SVG and lays the page out
// again, which made each render of the Plan page cost hundreds of
// milliseconds under load.
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
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: vuguhelper DOMRENDER_DIR")
		os.Exit(2)
	}
	script, err := helperScript(filepath.Join(os.Args[1], "renderer-js-script.go"))
	if err == nil {
		script, err = patch(script)
	}
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

// patches rewrite the minified helper script (vugu v0.4.0) so that a DOM
// write is skipped when it would change nothing:
//   - a text or comment node is written only when its data differs;
//   - an attribute is set only when its value differs;
//   - an element's innerHTML (vg-html) is set only when it differs from what
//     the script last set there, remembered on the element as __vuguHTML;
//     descending into an element's children (vugu rendering them itself)
//     forgets it, so a reused element is never left with stale content.
//
// And a short ASCII string (a tag, an attribute, a cell's text) is read from
// the render buffer in JavaScript: a TextDecoder call per string was a tenth
// of a render.
//
// Each pattern must occur exactly count times, so a changed vugu fails the
// build here instead of rendering wrongly.
var patches = []struct {
	old, new string
	count    int
}{
	{`else x.el.textContent=e;`, `else x.el.data!==e&&(x.el.textContent=e);`, 2},
	{`e.setAttribute(t,n),x.elAttrNames[t]=!0`, `e.getAttribute(t)!==n&&e.setAttribute(t,n),x.elAttrNames[t]=!0`, 1},
	{`x.el.innerHTML=(x.bufferedInnerHTML||"")+e,x.bufferedInnerHTML=null;`,
		`{const h=(x.bufferedInnerHTML||"")+e;x.el.__vuguHTML!==h&&(x.el.innerHTML=h,x.el.__vuguHTML=h)}x.bufferedInnerHTML=null;`, 1},
	{`x.nextElMove="first_child";break}`, `x.el.__vuguHTML=void 0,x.nextElMove="first_child";break}`, 1},
	{`readString(){var e=this.dataView.getUint32(this.offset),t=x.decode(new DataView(this.dataView.buffer,this.dataView.byteOffset+this.offset+4,e));return this.offset+=e+4,t}`,
		`readString(){var e=this.dataView.getUint32(this.offset),s=this.offset+4,t=e<=64?"":null;for(let i=0;t!==null&&i<e;i++){const c=this.dataView.getUint8(s+i);c>127?t=null:t+=String.fromCharCode(c)}t===null&&(t=x.decode(new DataView(this.dataView.buffer,this.dataView.byteOffset+s,e)));return this.offset+=e+4,t}`, 1},
}

// patch applies patches to the helper script.
func patch(script string) (string, error) {
	for _, p := range patches {
		if n := strings.Count(script, p.old); n != p.count {
			return "", fmt.Errorf("the helper script has %d of %q, want %d: a vugu version this patch does not know", n, p.old, p.count)
		}
		script = strings.ReplaceAll(script, p.old, p.new)
	}
	return script, nil
}
