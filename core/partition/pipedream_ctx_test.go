package partition

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"
)

// TestPipeDreamProgressAndCancel checks that progress counts up to the
// total, n + 1 on two levels (the last level's states, whose reads compute
// the level below's entries, then the end), never going back, and that a
// cancelled context stops the search with its error.
func TestPipeDreamProgressAndCancel(t *testing.T) {
	c := graphCuts(t, "resnet18")
	opt := PipeDreamOptions{Levels: levels(4, 16e9, 2, 1.25e9)}
	var done []int
	if _, err := PipeDream(context.Background(), c, opt, func(d, total int) {
		if total != c.Len()+1 {
			t.Errorf("progress total %d, want %d units", total, c.Len()+1)
		}
		done = append(done, d)
	}); err != nil {
		t.Fatal(err)
	}
	if len(done) != c.Len()+1 || done[len(done)-1] != c.Len()+1 {
		t.Fatalf("%d progress reports ending at %v, want %d ending at %d", len(done), done[len(done)-1], c.Len()+1, c.Len()+1)
	}
	for q := 1; q < len(done); q++ {
		if done[q] <= done[q-1] {
			t.Fatalf("progress went from %v to %v", done[q-1], done[q])
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

// countdownCtx is a context whose Err turns context.Canceled on its n-th call.
type countdownCtx struct {
	context.Context
	n, calls int
}

func (c *countdownCtx) Err() error {
	if c.calls++; c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// TestPipeDreamCancelsWithinARow checks that the search looks at its
// context inside a DP row, not only between rows: on one level (a single
// row), and on two, whose last row computes the level below's entries as
// it reads them, cancelled at its 5th look, it stops at once with the
// error instead of finishing the row.
func TestPipeDreamCancelsWithinARow(t *testing.T) {
	c := graphCuts(t, "resnet50")
	for _, lv := range [][]float64{{256, 25e9}, {8, 300e9, 32, 25e9}} {
		ctx := &countdownCtx{Context: context.Background(), n: 5}
		_, err := PipeDream(ctx, c, PipeDreamOptions{Levels: levels(lv...)}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%v: err = %v, want context.Canceled", lv, err)
		}
		if ctx.calls > ctx.n {
			t.Fatalf("%v: Err called %d times, want it to stop at the %d-th", lv, ctx.calls, ctx.n)
		}
	}
}
