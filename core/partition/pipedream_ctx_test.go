package partition

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"
)

// TestPipeDreamProgressAndCancel checks that progress rises to 1 and that a
// cancelled context stops the search with its error.
func TestPipeDreamProgressAndCancel(t *testing.T) {
	c := graphCuts(t, "resnet18")
	opt := PipeDreamOptions{Levels: levels(4, 16e9, 2, 1.25e9)}
	var fractions []float64
	if _, err := PipeDream(context.Background(), c, opt, func(f float64) { fractions = append(fractions, f) }); err != nil {
		t.Fatal(err)
	}
	if len(fractions) != c.Len()+1 || fractions[len(fractions)-1] != 1 {
		t.Fatalf("%d progress reports ending at %v, want %d ending at 1", len(fractions), fractions[len(fractions)-1], c.Len()+1)
	}
	for q := 1; q < len(fractions); q++ {
		if fractions[q] <= fractions[q-1] {
			t.Fatalf("progress went from %v to %v", fractions[q-1], fractions[q])
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := PipeDream(ctx, c, opt, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: err = %v", err)
	}
}

// TestPipeDreamDeterministic checks that the parallel rows give the same
// result, stages included, on one thread and on several.
func TestPipeDreamDeterministic(t *testing.T) {
	c := graphCuts(t, "gnmt")
	opt := PipeDreamOptions{Levels: levels(4, 16e9, 3, 1.25e9), CostModel: CostPipeDream}
	var results []*PipeDreamResult
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		res, err := PipeDream(context.Background(), c, opt, nil)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if !reflect.DeepEqual(results[0], results[1]) {
		t.Fatalf("GOMAXPROCS 1 and 4 differ:\n%+v\n%+v", results[0], results[1])
	}
}
