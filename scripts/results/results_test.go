package results

import (
	"bytes"
	"flag"
	"os"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated tables of RESULTS.md")

// resultsPath is RESULTS.md at the repository root.
const resultsPath = "../../RESULTS.md"

// TestResultsUpToDate regenerates every table of RESULTS.md from the code
// and fails when the document differs; with -update it rewrites it.
func TestResultsUpToDate(t *testing.T) {
	doc, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Rewrite(doc)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, doc) {
		return
	}
	if *update {
		if err := os.WriteFile(resultsPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("RESULTS.md is out of date with the code; run scripts/update-results.sh (go test ./scripts/results -run TestResultsUpToDate -update)\n%s", firstDiff(doc, got))
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := 0; i < len(la) && i < len(lb); i++ {
		if !bytes.Equal(la[i], lb[i]) {
			return "line " + strconv.Itoa(i+1) + ":\n  RESULTS.md: " + string(la[i]) + "\n  the code:   " + string(lb[i])
		}
	}
	return "the documents differ in length"
}
