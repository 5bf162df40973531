package plan

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

type uiState struct {
	Page  string  `json:"page"`
	GPU   string  `json:"gpu"`
	Nodes int     `json:"nodes"`
	LR    float64 `json:"lr"`
}

func TestFragmentRoundTrip(t *testing.T) {
	in := uiState{Page: "plan", GPU: "nvidia-h100-sxm5-80gb", Nodes: 128, LR: 1.5e-4}
	s, err := EncodeFragment(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, "v1.") || strings.ContainsAny(s, "+/=#&? ") {
		t.Fatalf("fragment %q is not a URL-safe v1 fragment", s)
	}
	var out uiState
	if err := DecodeFragment("#"+s, &out); err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip: got %+v, want %+v", out, in)
	}
}

func TestFragmentPlanRoundTrip(t *testing.T) {
	in := examplePlan()
	s, err := EncodeFragment(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Plan
	if err := DecodeFragment(s, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, &out) {
		t.Errorf("plan changed in the fragment round trip")
	}
}

func deflate(t testing.TB, raw []byte) string {
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	zw.Write(raw)
	zw.Close()
	return "v1." + base64.RawURLEncoding.EncodeToString(buf.Bytes())
}

func TestFragmentErrors(t *testing.T) {
	good, err := EncodeFragment(uiState{Page: "cluster", GPU: "x", Nodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	bomb := deflate(t, bytes.Repeat([]byte(" "), MaxFragmentStateBytes+10))
	cases := []struct {
		name, fragment, want string
	}{
		{"empty", "", "unknown format"},
		{"garbage", "hello-world", `unknown format "hello-world"`},
		{"future version", "v9.abc", "unknown format"},
		{"not base64", "v1.!!!", "not base64url"},
		{"truncated", good[:len(good)-6], "fragment:"},
		{"oversized", "v1." + strings.Repeat("A", MaxFragmentChars), "over the"},
		{"inflation bomb", bomb, "inflates past"},
		{"unknown field", deflate(t, []byte(`{"page":"plan","zzz":1}`)), "zzz"},
		{"wrong type", deflate(t, []byte(`{"nodes":"many"}`)), "nodes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st uiState
			err := DecodeFragment(c.fragment, &st)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("DecodeFragment = %v, want error containing %q", err, c.want)
			}
		})
	}
}

func FuzzDecodeFragment(f *testing.F) {
	good, _ := EncodeFragment(uiState{Page: "plan", GPU: "a100", Nodes: 4})
	f.Add(good)
	f.Add("")
	f.Add("v1.")
	f.Add("#v1.AAAA")
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, s string) {
		var st uiState
		if err := DecodeFragment(s, &st); err != nil {
			return
		}
		again, err := EncodeFragment(st)
		if err != nil {
			t.Fatalf("decoded state does not re-encode: %v", err)
		}
		var st2 uiState
		if err := DecodeFragment(again, &st2); err != nil || st2 != st {
			t.Fatalf("re-encoded state differs: %+v vs %+v (%v)", st2, st, err)
		}
	})
}
