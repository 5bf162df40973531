package schedule

import (
	"strings"
	"testing"
)

func TestActionText(t *testing.T) {
	for _, c := range []struct {
		a    Action
		text string
	}{
		{Action{Stage: 2, Kind: Forward, Microbatch: 0, Version: -1}, "2F0"},
		{Action{Stage: 0, Kind: Backward, Microbatch: 13, Version: -1}, "0B13"},
		{Action{Stage: 3, Kind: BackwardInput, Microbatch: 1, Version: -1}, "3I1"},
		{Action{Stage: 3, Kind: BackwardWeight, Microbatch: 1, Version: 2}, "3W1v2"},
		{Action{Stage: 1, Kind: SendF, Microbatch: 4, Version: -1}, "1SEND_F4"},
		{Action{Stage: 1, Kind: RecvB, Microbatch: 4, Version: -1}, "1RECV_B4"},
		{Action{Stage: 5, Kind: AllReduce, Microbatch: -1, Version: -1}, "5REDUCE_GRAD"},
		{Action{Stage: 5, Kind: OptStep, Microbatch: -1, Version: -1}, "5OPT_STEP"},
	} {
		if got := c.a.String(); got != c.text {
			t.Errorf("%+v.String() = %q, want %q", c.a, got, c.text)
		}
		got, err := ParseAction(" " + c.text + " ")
		if err != nil || got != c.a {
			t.Errorf("ParseAction(%q) = %+v, %v; want %+v", c.text, got, err, c.a)
		}
	}
}

func TestParseActionErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":              "must start with a stage number",
		"F0":            "must start with a stage number",
		"1X0":           "unknown kind",
		"1F":            "needs a microbatch",
		"1OPT_STEP3":    "takes no microbatch",
		"1F0v":          "want digits after v",
		"1F0x":          "unexpected trailing",
		"99999999999F0": "stage",
		"1F99999999":    "microbatch",
	} {
		if _, err := ParseAction(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAction(%q): got %v, want an error containing %q", in, err, want)
		}
	}
}

// FuzzParseAction checks that any accepted text round-trips through String.
func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"2F0", "0B13", "3W1v2", "1SEND_F4", "5REDUCE_GRAD", "5OPT_STEP", "1RECV_B", "12I7v0", "0F"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAction(s)
		if err != nil {
			return
		}
		b, err := ParseAction(a.String())
		if err != nil || b != a {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, a, a.String(), b, err)
		}
	})
}
