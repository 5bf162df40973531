package gavel

import (
	"compress/gzip"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

// bigInstance returns the first n jobs of the committed 2048-job instance on
// a cluster of the given worker counts (Gavel's smaller instances are its
// prefixes; the 256/256/256 one has the same jobs).
func bigInstance(t testing.TB, n int, workers ...int) *Instance {
	t.Helper()
	inst := gzippedInstance(t, "testdata/instances/sim_k80-36_p100-36_v100-36_N2048_seed0.json.gz")
	inst.Jobs, inst.Throughputs = inst.Jobs[:n], inst.Throughputs[:n]
	if len(workers) > 0 {
		inst.NumWorkers = workers
	}
	return inst
}

// gzippedInstance parses the gzipped instance file at path.
func gzippedInstance(t testing.TB, path string) *Instance {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := ParseInstance(data)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestBigInstancePrefixMatchesN64(t *testing.T) {
	small := loadInstance(t, "sim_k80-36_p100-36_v100-36_N64_seed0")
	big := bigInstance(t, 64)
	if !reflect.DeepEqual(small.Jobs, big.Jobs) || !reflect.DeepEqual(small.Throughputs, big.Throughputs) {
		t.Fatal("the first 64 jobs of the 2048-job instance differ from the 64-job instance")
	}
}

func TestPairsFromTableMatchesPairsFile(t *testing.T) {
	inst := loadInstance(t, "sim_k80-36_p100-36_v100-36_N64_seed0")
	data, err := os.ReadFile("testdata/instances/sim_k80-36_p100-36_v100-36_N64_seed0.pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := ParsePairs(data, inst); err != nil {
		t.Fatal(err)
	}
	if len(inst.Pairs) != 1973 { // num_pairs_with_nonzero_throughput in the file
		t.Fatalf("%d pairs, file says 1973", len(inst.Pairs))
	}
	fromFile := inst.Pairs
	if err := PairsFromTable(inst, DefaultThroughputs()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFile, inst.Pairs) {
		t.Fatal("pairs built from the throughput table differ from the pairs file")
	}
}

func TestParseInstanceErrors(t *testing.T) {
	base := `{"worker_types":["k80","v100"],"num_workers":[1,2],"jobs":[{"id":0,"scale_factor":1}],"throughputs":[[1,2]]}`
	if inst, err := ParseInstance([]byte(base)); err != nil || inst.Jobs[0].PriorityWeight != 1 {
		t.Fatalf("valid instance: %v %+v", err, inst)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"num_workers":[1,2]`, `"num_workers":[1,-1]`, "instance.num_workers[1]: must be >= 0, got -1"},
		{`"num_workers":[1,2]`, `"num_workers":[0,0]`, "instance.num_workers: the cluster needs at least one worker"},
		{`[[1,2]]`, `[[1,-2]]`, "instance.throughputs[0][1]: must be >= 0 and finite, got -2"},
		{`[[1,2]]`, `[[0,0]]`, "instance.jobs[0]: cannot run on any worker type"},
		{`[[1,2]]`, `[[1]]`, "instance.throughputs[0]: must have 2 entries"},
		{`"scale_factor":1`, `"scale_factor":0`, "instance.jobs[0].scale_factor: must be >= 1, got 0"},
		{`"scale_factor":1`, `"scale_factor":3`, "cannot run on any worker type"},
		{`"scale_factor":1`, `"scale_factor":1,"priority_weight":-1`, "priority_weight: must be > 0"},
		{`["k80","v100"]`, `["k80","k80"]`, `instance.worker_types[1]: duplicate "k80"`},
		{`["k80","v100"]`, `[]`, "instance.worker_types: must not be empty"},
		{`[{"id":0,"scale_factor":1}]`, `[]`, "instance.throughputs: must have 0 rows"},
		{`"throughputs":`, `"unconsolidated_throughputs":[[1,2],[3,4]],"throughputs":`, "instance.unconsolidated_throughputs: must have 1 rows"},
		{`"throughputs":`, `"unconsolidated_throughputs":[[1]],"throughputs":`, "instance.unconsolidated_throughputs[0]: must have 2 entries"},
		{`"throughputs":`, `"unconsolidated_throughputs":[[1,-3]],"throughputs":`, "instance.unconsolidated_throughputs[0][1]: must be >= 0 and finite, got -3"},
	} {
		_, err := ParseInstance([]byte(strings.Replace(base, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
}

func TestParsePairsErrors(t *testing.T) {
	inst, err := ParseInstance([]byte(`{"worker_types":["k80"],"num_workers":[1],"jobs":[{"id":7,"scale_factor":1},{"id":9,"scale_factor":1}],"throughputs":[[1],[2]]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"worker_types":["v100"],"pairs":[]}`, `pairs.worker_types[0]: must be "k80"`},
		{`{"worker_types":["k80"],"pairs":[[7,8,[[1,1]]]]}`, "unknown job id"},
		{`{"worker_types":["k80"],"pairs":[[7,9,[[1,-1]]]]}`, "must be >= 0 and finite, got -1"},
		{`{"worker_types":["k80"],"pairs":[[7,7,[[1,1]]]]}`, "other than a=0"},
		{`{"worker_types":["k80"],"pairs":[[7,9]]}`, "must be [a, b, throughputs]"},
	} {
		if err := ParsePairs([]byte(c.in), inst); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
	if err := ParsePairs([]byte(`{"worker_types":["k80"],"pairs":[[9,7,[[1.5,2]]]]}`), inst); err != nil || inst.Pairs[0].A != 1 || inst.Pairs[0].B != 0 {
		t.Fatalf("valid pairs: %v %+v", err, inst.Pairs)
	}
}

func FuzzParseInstance(f *testing.F) {
	for _, name := range []string{"paper_example_3job", "sim_k80-36_p100-36_v100-36_N64_seed0"} {
		data, err := os.ReadFile("testdata/instances/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte(`{"worker_types":["v100","k80"],"pairs":[[0,1,[[1,2],[0,0]]]]}`))
	}
	f.Add([]byte(`{"worker_types":["v100"],"num_workers":[4],"jobs":[{"id":0,"scale_factor":2}],"throughputs":[[10]],"unconsolidated_throughputs":[[2]]}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, inst, pairs []byte) {
		in, err := ParseInstance(inst)
		if err != nil {
			return
		}
		if err := in.Validate(); err != nil {
			t.Fatalf("parsed instance fails validation: %v", err)
		}
		if ParsePairs(pairs, in) == nil {
			if err := in.Validate(); err != nil {
				t.Fatalf("instance with parsed pairs fails validation: %v", err)
			}
		}
	})
}
