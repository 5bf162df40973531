package gpuprofiles

import (
	"reflect"
	"strings"
	"testing"
)

// TestServersEmbedded: every gpus.json part has a server size, and the
// ones the sources state come out as stated: Gavel's V100 on AWS
// p3.16xlarge (8, dissertation §2.5.1), its K80 on p2.16xlarge (16, §6.3),
// its P100 on GCP (4); HGX/DGX H100, H200, B200 and the MI300X platform 8.
func TestServersEmbedded(t *testing.T) {
	for _, g := range All() {
		if _, err := ServerOf(g.ID); err != nil {
			t.Errorf("%s: %v", g.ID, err)
		}
	}
	types := []string{"v100", "p100", "k80", "nvidia-h100-sxm5-80gb", "nvidia-h200-sxm-141gb", "nvidia-b200-sxm", "amd-mi300x", "nvidia-a100-sxm4-80gb"}
	got, err := GPUsPerServer(types)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{8, 4, 16, 8, 8, 8, 8, 8}; !reflect.DeepEqual(got, want) {
		t.Errorf("GPUs per server of %v = %v, want %v", types, got, want)
	}
	if s, _ := ServerOf("v100"); !strings.Contains(s.Source, "p3.16xlarge") {
		t.Errorf("v100's server source %q does not name p3.16xlarge", s.Source)
	}
	if _, err := GPUsPerServer([]string{"a100"}); err == nil || !strings.Contains(err.Error(), `"a100"`) {
		t.Errorf("unknown worker type: err = %v, want one naming it", err)
	}
}

// TestParseServersRejects: each defect of a servers.json names its field.
func TestParseServersRejects(t *testing.T) {
	all := `{"id":"nvidia-t4","gpus_per_server":8,"server":"s","source":"s"}`
	for _, c := range []struct{ in, want string }{
		{`{"servers":[{"id":"nope","gpus_per_server":8,"server":"s","source":"s"}]}`, `servers[0].id: no GPU "nope"`},
		{`{"servers":[` + all + `,` + all + `]}`, `servers[1].id: "nvidia-t4" is listed twice`},
		{`{"servers":[{"id":"nvidia-t4","gpus_per_server":0,"server":"s","source":"s"}]}`, "servers[0].gpus_per_server (nvidia-t4): must be in [1, 72], got 0"},
		{`{"servers":[{"id":"nvidia-t4","gpus_per_server":8,"server":"s"}]}`, "servers[0] (nvidia-t4): server and source are required"},
		{`{"servers":[` + all + `]}`, "servers: no entry for gpus.json's"},
		{`{"servers":`, "servers: unexpected end"},
	} {
		if _, err := parseServers([]byte(c.in), All()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.in, err, c.want)
		}
	}
}
