package cli

import (
	"encoding/json"
	"flag"
	"io"
	"os"
	"text/tabwriter"
)

// newFlagSet returns a flag set for a command that reports errors instead of
// exiting, and writes its usage to stderr.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("pipeplan "+name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

// writeJSON writes v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newTable returns a tabwriter for aligned plain-text tables; call Flush when done.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}
