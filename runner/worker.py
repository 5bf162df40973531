#!/usr/bin/env python3
"""pipeplan runner worker: executes one rank of a plan with torch.distributed.

Modes (the protocol is documented in runner/README.md):
  worker.py --probe                     print {"torch_version", "cuda_device_count"} as JSON
  worker.py --config run.json           one rank under torchrun; writes result-rank<N>.json
  worker.py --config run.json --reference
                                        the same model and data unsplit in one process;
                                        writes reference.json (the correctness check)

A rank holds one or more model chunks (virtual stages; interleaved schedules give a
device v of them) of one tensor-parallel shard of one context-parallel rank's
positions (model.py builds them), and executes its action list from
core/schedule: F, B, I (input gradient), W (weight gradient), OPT_STEP.

Works with torch >= 1.13 (Debian's python3-torch) and torch 2.x.
"""
import argparse
import json
import os
import re
import resource
import sys
import time

import torch
import torch.distributed as dist

from model import Chunk, ContextParallel, ExpertParallel, Parallel, TensorParallel, activation_shape, microbatch

ACTION = re.compile(r"^(\d+)(F|B|I|W|OPT_STEP)(\d*)$")


class Prefixed:
    """Prefixed writes every complete line to stream as '[rank N] line'."""

    def __init__(self, stream, prefix):
        self.stream, self.prefix, self.pending = stream, prefix, ""

    def write(self, s):
        self.pending += s
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            self.stream.write(self.prefix + line + "\n")
        self.stream.flush()
        return len(s)

    def flush(self):
        if self.pending:
            self.stream.write(self.prefix + self.pending + "\n")
            self.pending = ""
        self.stream.flush()


def probe():
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    print(json.dumps({"torch_version": torch.__version__, "cuda_device_count": n}))


def peak_memory_bytes(device):
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # KiB on Linux


def parse_actions(strings):
    out = []
    for s in strings:
        m = ACTION.match(s)
        if not m:
            raise ValueError("action %r: the runner executes only F, B, I, W and OPT_STEP" % s)
        out.append((int(m.group(1)), m.group(2), int(m.group(3)) if m.group(3) else -1))
    return out


def place(r):
    """place is a rank's (replica, stage, cp_rank, tp_rank)."""
    return r["replica"], r["stage"], r["cp_rank"], r["tp_rank"]


def make_groups(cfg, me):
    """make_groups creates every process group, on every rank in the same order
    (torch requires it), and returns this rank's Parallel (its tensor-parallel
    group; its context-parallel group and ring; its expert-parallel group and
    the group summing its experts' gradients), its data-parallel group (the
    same shard of the same stage on every replica and context-parallel rank,
    which sum their gradients) and its tied-embedding group (first and last
    stage, same replica and shards). Expert-parallel groups are drawn from the
    data × context-parallel ranks of a stage's tensor-parallel rank, listed
    replica-major, as consecutive runs of ep."""
    stages, replicas, tp, cp, ep = cfg["stages"], cfg["replicas"], cfg["tp"], cfg["cp"], cfg["ep"]
    at = {place(r): r["rank"] for r in cfg["ranks"]}
    mine = {}

    def make(name, ranks):
        g = dist.new_group(ranks)
        if me["rank"] in ranks:
            mine[name], mine[name + " ranks"] = g, ranks

    for r in range(replicas):
        for s in range(stages):
            for c in range(cp):
                if tp > 1:
                    make("tp", [at[(r, s, c, t)] for t in range(tp)])
            for t in range(tp):
                if cp > 1:
                    make("cp", [at[(r, s, c, t)] for c in range(cp)])
    for s in range(stages):
        for t in range(tp):
            wide = [at[(r, s, c, t)] for r in range(replicas) for c in range(cp)]
            if len(wide) > 1:
                make("dp", wide)
            if ep > 1:
                for i in range(0, len(wide), ep):
                    make("ep", wide[i:i + ep])
                if len(wide) > ep:
                    for j in range(ep):
                        make("expert grads", wide[j::ep])
    if cfg["model"]["tied"] and stages > 1:
        for r in range(replicas):
            for c in range(cp):
                for t in range(tp):
                    make("tied", [at[(r, 0, c, t)], at[(r, stages - 1, c, t)]])
    model = cfg["model"]
    par = Parallel(
        model,
        TensorParallel(tp, me["tp_rank"], mine.get("tp"), cfg["sequence_parallel"]),
        ContextParallel(model.get("seq", 1), cp, me["cp_rank"], mine.get("cp"), mine.get("cp ranks")),
        ExpertParallel(ep, mine["ep ranks"].index(me["rank"]) if ep > 1 else 0, mine.get("ep"), mine.get("expert grads")))
    return par, mine.get("dp"), mine.get("tied")


class Rank:
    """Rank is one process: its chunks (virtual stage stage + c·stages for
    chunk c), its neighbours and groups, and an executor of action lists."""

    def __init__(self, cfg, me, device):
        self.cfg, self.me, self.device = cfg, me, device
        model = cfg["model"]
        par, self.dp_group, self.tied_group = make_groups(cfg, me)
        self.virtual = cfg["stages"] * cfg["chunks"]
        self.chunks = {}
        for c, (first, last) in enumerate(me["chunks"]):
            vs = me["stage"] + c * cfg["stages"]
            self.chunks[vs] = Chunk(model, first, last, vs == 0, vs == self.virtual - 1, par).to(device)
        emb = self.chunks.get(0)
        head = self.chunks.get(self.virtual - 1)
        if model["tied"] and emb is not None and head is not None:
            head.head.weight = emb.embedding.weight
        self.tied = None
        if self.tied_group is not None:
            self.tied = emb.embedding.weight if emb is not None else head.head.weight
        params = torch.nn.ModuleList(list(self.chunks.values())).parameters()
        self.opt = torch.optim.SGD(params, lr=cfg["lr"])
        self.at = {place(r): r["rank"] for r in cfg["ranks"]}
        self.shape = activation_shape(cfg)
        self.scale = 1.0 / (cfg["microbatches"] * cfg["replicas"])
        self.synced = set()

    def peer(self, vs):
        """peer is the rank of virtual stage vs with this rank's replica and shard."""
        return self.at[(self.me["replica"], vs % self.cfg["stages"], self.me["cp_rank"], self.me["tp_rank"])]

    def tag(self, grad, vs, mb):
        """tag names a message by what it carries, so that messages between the
        same two ranks (interleaving) match whatever their order."""
        return ((1 if grad else 0) * self.virtual + vs) * self.cfg["microbatches"] + mb

    def recv(self, vs_from, grad, vs, mb):
        t = torch.empty(self.shape, device=self.device)
        dist.recv(t, src=self.peer(vs_from), tag=self.tag(grad, vs, mb))
        return t

    def run_step(self, step, actions):
        """run_step executes one step's action list exactly; returns the losses
        of the microbatches whose loss this rank computed."""
        saved, deferred, pending, losses = {}, {}, [], []

        def send(t, vs_to, grad, mb):
            pending.append((dist.isend(t, dst=self.peer(vs_to), tag=self.tag(grad, vs_to, mb)), t))

        last = self.virtual - 1
        for vs, kind, mb in actions:
            chunk = self.chunks.get(vs)
            if chunk is None:
                raise ValueError("action %d%s%s for a stage rank %d does not hold (it holds %s)" % (
                    vs, kind, mb if mb >= 0 else "", self.me["rank"], sorted(self.chunks)))
            if kind == "F":
                x, y = microbatch(self.cfg, self.me["replica"], mb)
                if vs == 0:
                    x = x.to(self.device)
                else:
                    x = self.recv(vs - 1, False, vs, mb).requires_grad_()
                out = chunk(x, y.to(self.device) if vs == last else None)
                if vs == last:
                    losses.append(out.item())
                    out = out * self.scale
                else:
                    send(out.detach(), vs + 1, False, mb)
                saved[(vs, mb)] = (x, out)
            elif kind in ("B", "I"):
                x, out = saved.pop((vs, mb))
                grad = None if vs == last else self.recv(vs + 1, True, vs, mb)
                if kind == "B":
                    torch.autograd.backward(out, grad)
                    gx = x.grad if vs > 0 else None
                else:
                    # The input gradient only; W computes the weight gradients later.
                    gx = torch.autograd.grad(out, [x], grad, retain_graph=True)[0] if vs > 0 else None
                    deferred[(vs, mb)] = (out, grad)
                if vs > 0:
                    send(gx, vs - 1, True, mb)
            elif kind == "W":
                out, grad = deferred.pop((vs, mb))
                params = [p for p in chunk.parameters() if p.requires_grad]
                for p, g in zip(params, torch.autograd.grad(out, params, grad, allow_unused=True)):
                    if g is not None:
                        p.grad = g if p.grad is None else p.grad + g
            else:
                self.opt_step(vs, chunk, pending)
                pending = []
        if saved or deferred or pending:
            raise ValueError("step %d: the action list left microbatches unfinished" % step)
        return losses

    def opt_step(self, vs, chunk, pending):
        """opt_step ends the flush for chunk vs: outstanding sends complete and its
        replicas sum their gradients; once every chunk of the rank has, the two
        copies of a tied embedding sum theirs and SGD steps."""
        for handle, _ in pending:
            handle.wait()
        if self.dp_group is not None:
            for p in chunk.parameters():
                # An expert's gradient is summed over the ranks holding that expert only.
                group = getattr(p, "grad_group", self.dp_group)
                if group is not None:
                    dist.all_reduce(p.grad, group=group)
        self.synced.add(vs)
        if len(self.synced) < len(self.chunks):
            return
        if self.tied is not None:
            dist.all_reduce(self.tied.grad, group=self.tied_group)
        self.opt.step()
        self.opt.zero_grad()
        self.synced.clear()


def run_rank(cfg):
    rank = int(os.environ["RANK"])
    sys.stderr = Prefixed(sys.__stderr__, "[rank %d] " % rank)
    torch.set_num_threads(1)
    if cfg["device"] == "cuda":
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend=cfg["backend"])
    me = cfg["ranks"][rank]
    worker = Rank(cfg, me, device)
    actions = parse_actions(cfg["actions"][me["stage"]])
    reports_loss = me["stage"] == cfg["stages"] - 1 and me["tp_rank"] == 0 and me["cp_rank"] == 0
    seconds, losses = [], []
    for step in range(cfg["warmup"] + cfg["steps"]):
        dist.barrier()
        start = time.perf_counter()
        step_losses = worker.run_step(step, actions)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - start
        if step >= cfg["warmup"]:
            seconds.append(elapsed)
        if step_losses and reports_loss:
            losses.append(sum(step_losses) / len(step_losses))
    result = {
        "rank": rank, "stage": me["stage"], "replica": me["replica"], "tp_rank": me["tp_rank"],
        "step_seconds": seconds, "losses": losses,
        "peak_memory_bytes": peak_memory_bytes(device),
        "torch_version": torch.__version__,
    }
    write_json(os.path.join(cfg["out_dir"], "result-rank%d.json" % rank), result)
    dist.barrier()
    dist.destroy_process_group()


def run_reference(cfg):
    """run_reference trains the whole model unsplit (no pipeline, no tensor
    parallelism, torch's own cross-entropy) in one process on the same data and
    microbatching; a synchronous schedule must give the same losses."""
    torch.set_num_threads(1)
    model = cfg["model"]
    net = Chunk(model, 0, model["layers"] - 1, True, True, Parallel(model))
    opt = torch.optim.SGD(net.parameters(), lr=cfg["lr"])
    scale = 1.0 / (cfg["microbatches"] * cfg["replicas"])
    losses = []
    for step in range(cfg["warmup"] + cfg["steps"]):
        total = 0.0
        for replica in range(cfg["replicas"]):
            for mb in range(cfg["microbatches"]):
                x, y = microbatch(cfg, replica, mb)
                loss = net(x, y)
                total += loss.item()
                (loss * scale).backward()
        opt.step()
        opt.zero_grad()
        losses.append(total * scale)
    write_json(os.path.join(cfg["out_dir"], "reference.json"), {"losses": losses})


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--config")
    ap.add_argument("--reference", action="store_true")
    args = ap.parse_args()
    if args.probe:
        probe()
        return
    if not args.config:
        ap.error("--config is required unless --probe")
    with open(args.config) as f:
        cfg = json.load(f)
    if args.reference:
        run_reference(cfg)
    else:
        run_rank(cfg)


if __name__ == "__main__":
    main()
