package app

import (
	"encoding/json"
	"strings"
	"testing"

	"pipeplan/app/request"
)

func TestParseRequest(t *testing.T) {
	good, _ := json.Marshal(request.Default().Plan)
	if _, err := ParseRequest(good); err != nil {
		t.Fatalf("default inputs: %v", err)
	}
	for _, c := range []struct{ body, want string }{
		{`{"model":"gpt3-175b","bogus":1}`, "bogus"},
		{string(good) + `{}`, "trailing"},
		{strings.Replace(string(good), `"nodes":128`, `"nodes":-1`, 1), "plan.nodes"},
		{`[]`, "request"},
		{strings.Repeat(" ", MaxRequestBytes+1), "limit"},
	} {
		if _, err := ParseRequest([]byte(c.body)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseRequest(%.40q) = %v, want an error containing %q", c.body, err, c.want)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	good, _ := json.Marshal(request.Default().Plan)
	f.Add(string(good))
	f.Add(`{"nodes":1e400}`)
	f.Add(`{"inter_node_gbps":NaN}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, body string) {
		p, err := ParseRequest([]byte(body))
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("accepted an invalid request: %v", err)
		}
	})
}
