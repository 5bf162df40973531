package model

import (
	"strings"
	"testing"
)

const validProfileJSON = `{"name":"toy","microbatch_size":8,"device":"nvidia-v100-sxm2-16gb","layers":[
 {"name":"a","fwd_seconds":0.001,"bwd_seconds":0.002,"output_activation_bytes":1024,"parameter_bytes":4096},
 {"fwd_seconds":0.5,"bwd_seconds":1,"output_activation_bytes":0,"parameter_bytes":0}]}`

func TestParseProfileValid(t *testing.T) {
	p, err := ParseProfile([]byte(validProfileJSON))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "toy" || p.MicrobatchSize != 8 || len(p.Layers) != 2 {
		t.Fatalf("got %+v", p)
	}
	if l := p.Layers[0]; l.Name != "a" || l.FwdSeconds != 0.001 || l.BwdSeconds != 0.002 ||
		l.OutputActivationBytes != 1024 || l.ParameterBytes != 4096 {
		t.Fatalf("layer 0 = %+v", l)
	}
}

func TestParseProfileErrorsNameFieldAndValue(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"microbatch_size":0,"layers":[{}]}`, "profile.microbatch_size: must be >= 1, got 0"},
		{`{"microbatch_size":1,"layers":[]}`, "profile.layers: must have at least one layer"},
		{`{"microbatch_size":1,"layers":[{},{"bwd_seconds":-1}]}`, "profile.layers[1].bwd_seconds: must be a finite number >= 0, got -1"},
		{`{"microbatch_size":1,"layers":[{"parameter_bytes":-2e3}]}`, "profile.layers[0].parameter_bytes"},
		{`{"microbatch_size":1,"layers":[{"fwd_second":1}]}`, `unknown field "fwd_second"`},
		{`{"microbatch_size":1,"layers":[{}]} {}`, "trailing data"},
		{`{"microbatch_size":1,"layers":[{"fwd_seconds":1e999}]}`, "profile:"},
		{`[1,2]`, "profile:"},
	} {
		_, err := ParseProfile([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseProfile(%s) error = %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

// FuzzParseProfile checks that ParseProfile never panics and that whatever
// it accepts validates.
func FuzzParseProfile(f *testing.F) {
	f.Add([]byte(validProfileJSON))
	f.Add([]byte(`{"microbatch_size":1,"layers":[{}]}`))
	f.Add([]byte(`{"microbatch_size":-1,"layers":null}`))
	f.Add([]byte(`{"layers":[{"fwd_seconds":1e308,"bwd_seconds":1e308}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted a profile that does not validate: %v", err)
		}
	})
}
