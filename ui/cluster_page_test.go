package ui

import (
	"slices"
	"strings"
	"testing"
)

// TestClusterTypesInWholeServers: a GPU type added on the Cluster page
// gets whole servers of its real size with room for an 8-GPU job (HGX H100:
// one server of 8; GB200 NVL72 trays of 4: two), a type kept keeps its
// count, and each count's label names the server size and its source.
func TestClusterTypesInWholeServers(t *testing.T) {
	a := NewApp(&fakeBrowser{}, "")
	a.Start()
	a.SetTab("cluster")
	if got := a.State.Cluster.GPUs; !slices.Equal(got, []int{8, 8, 16}) {
		t.Fatalf("default GPUs %v, want a V100 server, two P100 servers and a K80 server", got)
	}
	a.SetClusterWorkerTypes("k80, nvidia-h100-sxm5-80gb, nvidia-gb200-gpu")
	if a.Err != "" {
		t.Fatal(a.Err)
	}
	if got := a.State.Cluster.GPUs; !slices.Equal(got, []int{16, 8, 8}) {
		t.Errorf("GPUs %v, want the K80's 16 kept, one H100 server of 8, two GB200 trays of 4", got)
	}
	c := &ClusterPage{App: a}
	if got := c.gpusLabel("nvidia-gb200-gpu"); got != "nvidia-gb200-gpu GPUs (servers of 4)" {
		t.Errorf("label %q", got)
	}
	if got := c.gpusTitle("k80"); !strings.Contains(got, "16 GPUs per server (AWS p2.16xlarge)") || !strings.Contains(got, "Source: dissertation §6.3") {
		t.Errorf("title %q", got)
	}
	before := slices.Clone(a.State.Cluster.GPUs)
	a.SetClusterWorkerTypes("k80, a100")
	if !strings.Contains(a.Err, `"a100"`) || !slices.Equal(a.State.Cluster.GPUs, before) {
		t.Errorf("unknown type: err %q, GPUs %v (were %v)", a.Err, a.State.Cluster.GPUs, before)
	}
	a.SetClusterWorkload("paper-3job")
	if got := a.State.Cluster.GPUs; a.Err != "" || !slices.Equal(got, []int{1, 1}) {
		t.Errorf("paper workload: GPUs %v, err %q", got, a.Err)
	}
}
