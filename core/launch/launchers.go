package launch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// flagArg is one command-line flag and its value ("" for a switch).
type flagArg struct{ name, value string }

// listFlag is a flag that takes several values (argparse's nargs='*'):
// the flag with the first value, then each other value as an argument of
// its own, which every renderer writes where a flag would go (a continued
// line of its own, an element of a pod's args).
func listFlag(name string, values ...string) []flagArg {
	args := []flagArg{{name, values[0]}}
	for _, v := range values[1:] {
		args = append(args, flagArg{v, ""})
	}
	return args
}

// shellArgs renders args one per continued line.
func shellArgs(args []flagArg, indent string) string {
	var b strings.Builder
	for i, a := range args {
		b.WriteString(indent + a.name)
		if a.value != "" {
			b.WriteString(" " + shellQuote(a.value))
		}
		if i < len(args)-1 {
			b.WriteString(" \\")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// shellQuote single-quotes s for a POSIX shell unless it is only letters,
// digits and characters the shell takes literally.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:/=+-@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// header is the comment every artifact starts with: what the plan is.
func header(in input, prefix string) string {
	e := in.Exec
	return fmt.Sprintf("%s %s: tp %d, pp %d, dp %d, interleave %d, cp %d, ep %d; microbatch %d × %d per step, global batch %d; schedule %s, recompute %s, zero %d (exported by pipeplan)\n",
		prefix, modelLabel(in), e.TP, e.PP, e.DP*in.Stages[0].Replicas, e.Interleave, e.CP, e.EP,
		in.Microbatches, e.MicrobatchSize, e.GlobalBatch, e.Schedule, e.RecomputeText(), e.ZeRO)
}

// modelLabel names the model on one line (control characters removed).
func modelLabel(in input) string {
	name := in.Model.Name
	if name == "" {
		name = "(unnamed model)"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, name)
}

// megatronCommand is the Megatron-LM training command of one rank.
func megatronCommand(in input, args []flagArg) string {
	return header(in, "#") + megatronNote(in) + exportEnv(in) + megatronEntry + " \\\n" + shellArgs(args, "  ")
}

// exportEnv is the shell lines that set megatronEnv's variables.
func exportEnv(in input) string {
	var b strings.Builder
	for _, v := range megatronEnv(in.Exec) {
		b.WriteString("export " + v.name + "=" + shellQuote(v.value) + "\n")
	}
	return b.String()
}

// torchrunArgs launches nodes × GPUs-per-node ranks through a c10d rendezvous at endpoint.
func torchrunArgs(in input, id, endpoint string) []flagArg {
	return []flagArg{
		{"--nnodes", strconv.Itoa(in.Cluster.Nodes)}, {"--nproc_per_node", strconv.Itoa(in.Cluster.GPUsPerNode)},
		{"--rdzv_id", id}, {"--rdzv_backend", "c10d"}, {"--rdzv_endpoint", endpoint},
	}
}

// eqArgs renders flags as --name=value.
func eqArgs(args []flagArg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.name + "=" + a.value
	}
	return out
}

// torchrunCommand is the command to run on every node (each with the same
// rendezvous endpoint, MASTER_ADDR:MASTER_PORT of the first node).
func torchrunCommand(in input, args []flagArg) string {
	launcher := eqArgs(torchrunArgs(in, "pipeplan", "${MASTER_ADDR}:${MASTER_PORT:-29500}"))
	return header(in, "#") + megatronNote(in) + "# run on each of the nodes, with MASTER_ADDR set to the first node's address\n" + exportEnv(in) +
		"torchrun " + strings.Join(launcher, " ") + " " + megatronEntry + " \\\n" + shellArgs(args, "  ")
}

// jobName is a lowercase [a-z0-9-] name for the plan's job.
func jobName(in input) string {
	var b strings.Builder
	for _, r := range strings.ToLower(in.Model.Name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	name := strings.Trim("pipeplan-"+b.String(), "-")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	return name
}

// sbatchScript is a Slurm batch script: one task per node running torchrun.
func sbatchScript(in input, args []flagArg) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	for _, o := range []flagArg{{"--job-name", jobName(in)}, {"--nodes", strconv.Itoa(in.Cluster.Nodes)},
		{"--ntasks-per-node", "1"}, {"--gpus-per-node", strconv.Itoa(in.Cluster.GPUsPerNode)}, {"--exclusive", ""}} {
		b.WriteString("#SBATCH " + o.name)
		if o.value != "" {
			b.WriteString("=" + o.value)
		}
		b.WriteString("\n")
	}
	b.WriteString(header(in, "#") + megatronNote(in) + exportEnv(in))
	b.WriteString("MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n")
	launcher := eqArgs(torchrunArgs(in, "$SLURM_JOB_ID", "$MASTER_ADDR:29500"))
	b.WriteString("srun torchrun " + strings.Join(launcher, " ") + " " + megatronEntry + " \\\n")
	b.WriteString(shellArgs(args, "  "))
	return b.String()
}

// pytorchJobYAML is a Kubeflow PyTorchJob (kubeflow.org/v1): a Master and
// nodes−1 Workers, each a pod with the node's GPUs running torchrun.
func pytorchJobYAML(in input, args []flagArg) (string, error) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	cmdArgs := eqArgs(torchrunArgs(in, "pipeplan", "$(MASTER_ADDR):$(MASTER_PORT)"))
	cmdArgs = append(cmdArgs, megatronEntry)
	for _, a := range args {
		cmdArgs = append(cmdArgs, a.name)
		if a.value != "" {
			cmdArgs = append(cmdArgs, a.value)
		}
	}
	var b strings.Builder
	b.WriteString(header(in, "#") + megatronNote(in))
	fmt.Fprintf(&b, "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: %s\nspec:\n  nprocPerNode: %s\n  pytorchReplicaSpecs:\n",
		q(jobName(in)), q(strconv.Itoa(in.Cluster.GPUsPerNode)))
	replica := func(kind string, n int) {
		fmt.Fprintf(&b, "    %s:\n      replicas: %d\n      restartPolicy: OnFailure\n      template:\n        spec:\n          containers:\n", kind, n)
		fmt.Fprintf(&b, "            - name: pytorch\n              image: %s\n              command: [\"torchrun\"]\n              args:\n", q(in.Image))
		for _, a := range cmdArgs {
			fmt.Fprintf(&b, "                - %s\n", q(a))
		}
		if env := megatronEnv(in.Exec); len(env) > 0 {
			b.WriteString("              env:\n")
			for _, v := range env {
				fmt.Fprintf(&b, "                - name: %s\n                  value: %s\n", q(v.name), q(v.value))
			}
		}
		fmt.Fprintf(&b, "              resources:\n                limits:\n                  nvidia.com/gpu: %d\n", in.Cluster.GPUsPerNode)
	}
	replica("Master", 1)
	if in.Cluster.Nodes > 1 {
		replica("Worker", in.Cluster.Nodes-1)
	}
	return b.String(), nil
}
