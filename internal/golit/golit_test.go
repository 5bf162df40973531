package golit

import (
	"math"
	"testing"
)

type link struct {
	Type string
	Gen  int
}

type rec struct {
	Name  string
	Size  float64
	Peaks map[string]float64
	Empty map[string]float64
	Links []*link
	On    bool
	Zero  int
}

func TestExpr(t *testing.T) {
	tenth := 0.1
	got, err := Expr([]rec{{Name: "a\"b", Size: tenth + 0.2, Peaks: map[string]float64{"z": 1e12, "a": 2.5}, Empty: map[string]float64{}, Links: []*link{{"nv", 4}, nil}, On: true}}, "golit")
	if err != nil {
		t.Fatal(err)
	}
	want := "[]rec{\n{Name: \"a\\\"b\", Size: 0.30000000000000004, Peaks: map[string]float64{\n\"a\": 2.5,\n\"z\": 1e+12,\n}, Empty: map[string]float64{\n}, Links: []*link{\n{Type: \"nv\", Gen: 4},\nnil,\n}, On: true},\n}"
	if got != want {
		t.Errorf("Expr:\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []any{struct{ x int }{1}, map[int]int{1: 2}, func() {}, math.Copysign(0, -1), math.NaN(), math.Inf(1), &[]int{}} {
		if _, err := Expr(bad, "golit"); err == nil {
			t.Errorf("Expr(%#v): no error", bad)
		}
	}
}
