package ui

import (
	"sync"

	"pipeplan/app/request"
)

// intro is what a page says to a newcomer: what it answers, where to
// start, and an example that loads with one click.
type intro struct {
	// Question is the page's question; Text says how to use it.
	Question, Text string
	// Examples are links restoring a worked example's state.
	Examples []example
}

// example is a link to a state, named.
type example struct{ Name, Href string }

// source is a paper the page cites (§, Table, eq.), with its link.
type source struct{ Cite, Href string }

// sources are the papers behind the numbers; the dissertation's chapters
// are the papers linked (ch. 2 PipeDream, ch. 3 PipeDream-2BW, ch. 4 PTD-P,
// ch. 5 Gavel), so its §, Table and eq. numbers are found there.
var sources = []source{
	{"D. Narayanan, Resource-Efficient Execution of Deep Learning Computations, PhD dissertation, Stanford University, 2021: the § / Table / eq. numbers cited on these pages", "https://purl.stanford.edu/qx792hd7022"},
	{"PipeDream (SOSP '19, ch. 2)", "https://doi.org/10.1145/3341301.3359646"},
	{"PipeDream-2BW (ICML '21, ch. 3)", "https://arxiv.org/abs/2006.09503"},
	{"PTD-P, Megatron-LM (SC '21, ch. 4)", "https://arxiv.org/abs/2104.04473"},
	{"Gavel (OSDI '20, ch. 5)", "https://www.usenix.org/conference/osdi20/presentation/narayanan-deepak"},
	{"MadPipe (2020)", "https://hal.science/hal-03025305"},
}

// intro is the open page's introduction.
func (c *Root) intro() intro {
	if in, ok := intros[c.App.State.Tab]; ok {
		return in()
	}
	return intros["plan"]()
}

// intros are the pages' introductions by tab, each made once, when its page
// is first shown: their example links are fixed states, and encoding one
// (a deflate at its best compression) costs ~40 ms in wasm, which every
// render paid before.
var intros = map[string]func() intro{
	"cluster": sync.OnceValue(func() intro {
		return intro{
			Question: "Who gets which GPUs?",
			Text: "Gavel shares a cluster of different GPUs between jobs: list the jobs and the GPUs on the left, pick a policy, and the heatmap shows the share of time each job gets on each GPU type. " +
				"Simulate a trace to see job completion times; add the Plan page's model as a job to use the planner's predicted throughputs.",
			Examples: []example{
				{"twelve of Gavel's jobs on a V100 server, two P100 servers and a K80 server", href(request.Default(), "cluster")},
				{"§5.4.1's three jobs on one V100 and one K80", href(paperExample(), "cluster")},
			},
		}
	}),
	"cost": sync.OnceValue(func() intro {
		return intro{
			Question: "What should I rent?",
			Text: "Prices per GPU-hour turn the Cluster page's jobs into dollars: the table compares cost-normalized throughput per GPU type, and the min-cost policy allocates under deadlines. " +
				"Edit the prices or pick a sourced price list on the left.",
			Examples: []example{{"the Cluster page's twelve jobs at GCP prices", href(request.Default(), "cost")}},
		}
	}),
	"plan": sync.OnceValue(func() intro {
		return intro{
			Question: "How do I split this model over these GPUs?",
			Text: "Pick a model and a cluster on the left: pipeplan searches tensor, pipeline and data parallelism for transformers (PTD-P), or partitions measured per-layer profiles (PipeDream, 2BW, MadPipe), and ranks what fits by throughput. " +
				"Select a row to see its memory and timeline, pin one to compare two, and export the plan for the runner.",
			Examples: []example{
				{"GPT-3 175B on 1024 A100s (Table 4.1)", href(request.Default(), "plan")},
				{"VGG-16 on 16 V100s (Table 2.2)", href(vgg16Example(), "plan")},
			},
		}
	}),
}

// href is the link to state s with page tab open, or "" if it cannot be encoded.
func href(s request.State, tab string) string {
	s.Tab = tab
	f, err := request.Encode(s)
	if err != nil {
		return ""
	}
	return "#" + f
}

// paperExample is the Cluster page on the example of §5.4.1.
func paperExample() request.State {
	s := request.Default()
	s.Cluster = request.PaperCluster()
	return s
}

// vgg16Example is the dissertation's Table 2.2 setting: VGG-16 on 16 V100s
// over 10 Gb/s, one minibatch of 128 per replica of PipeDream's 15-1.
func vgg16Example() request.State {
	s := request.Default()
	p := &s.Plan
	p.Model, p.GPU, p.Nodes, p.GPUsPerNode, p.InterNodeGBps, p.GlobalBatch = "pd-vgg16", "nvidia-v100-sxm2-32gb", 16, 1, 1.25, 1920
	return s
}
