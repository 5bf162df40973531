//go:build !(js && wasm)

// Command wasm is the playground's WebAssembly entry; on other platforms it
// only explains how to build it (the host build exists so that go vet and
// go test ./... cover the module).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "wasm: build with GOOS=js GOARCH=wasm (./build.sh does)")
	os.Exit(2)
}
