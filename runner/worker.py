#!/usr/bin/env python3
"""pipeplan runner worker: executes one rank of a plan with torch.distributed.

Modes (the protocol is documented in runner/README.md):
  worker.py --probe                     print {"torch_version", "cuda_device_count"} as JSON
  worker.py --config run.json           one rank under torchrun; writes result-rank<N>.json
  worker.py --config run.json --reference [--synchronous]
                                        the same model and data unsplit in one process,
                                        trained synchronously or, for an asynchronous
                                        schedule (unless --synchronous), by its paper's
                                        weight-update rule; writes reference.json

A rank holds one or more model chunks (virtual stages; interleaved schedules give a
device v of them) of one tensor-parallel shard of one context-parallel rank's
positions (model.py builds them), and executes its action list from core/schedule: F, B, I (input gradient), W (weight gradient), OPT_STEP; with weight
versions for the asynchronous schedules (2BW, PipeDream, 1F1B-RR).

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

from model import Chunk, ContextParallel, ExpertParallel, Parallel, Recompute, TensorParallel, activation_shape, microbatch

ACTION = re.compile(r"^(\d+)(F|B|I|W|OPT_STEP)(\d*)(?:v(\d+))?$")

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


def place(r):
    """place is a rank's (replica, stage, cp_rank, tp_rank)."""
    return r["replica"], r["stage"], r["cp_rank"], r["tp_rank"]


def virtual_stage(cfg, s, c):
    """virtual_stage is the virtual stage of chunk c on position s: the c-th
    that cfg["chunk_positions"] places there (the runner's placement:
    c·stages + s looped, s and 2·stages−1−s in a V)."""
    return [vs for vs, at in enumerate(cfg["chunk_positions"]) if at == s][c]


def position(cfg, vs):
    """position is the pipeline position running virtual stage vs
    (virtual_stage's inverse)."""
    return cfg["chunk_positions"][vs]


def make_groups(cfg, me):
    """make_groups creates every process group, on every rank in the same order
    (torch requires it), and returns this rank's Parallel (its tensor-parallel
    group; its context-parallel group and ring; its expert-parallel group and
    the group summing its experts' gradients), its data-parallel group (the
    same shard of the same stage on every replica and context-parallel rank,
    which sum their gradients; stage s has stage_replicas[s] replicas under
    1F1B-RR, which runs cp 1 and ep 1) and its tied-embedding group (first
    and last stage's positions, same replica and shards; none where one
    position holds both, as a V's first). Expert-parallel groups are
    drawn from the data × context-parallel ranks of a stage's tensor-parallel
    rank, listed replica-major, as consecutive runs of ep."""
    stages, tp, cp, ep = cfg["stages"], cfg["tp"], cfg["cp"], cfg["ep"]
    reps = cfg.get("stage_replicas") or [cfg["replicas"]] * stages
    at = {place(r): r["rank"] for r in cfg["ranks"]}
    mine = {}

    def make(name, ranks):
        g = dist.new_group(ranks)
        if me["rank"] in ranks:
            mine[name], mine[name + " ranks"] = g, ranks

    for s in range(stages):
        for r in range(reps[s]):
            for c in range(cp):
                if tp > 1:
                    make("tp", [at[(r, s, c, t)] for t in range(tp)])
            for t in range(tp):
                if cp > 1:
                    make("cp", [at[(r, s, c, t)] for c in range(cp)])
    for s in range(stages):
        for t in range(tp):
            wide = [at[(r, s, c, t)] for r in range(reps[s]) for c in range(cp)]
            if len(wide) > 1:
                make("dp", wide)
            if ep > 1:
                for i in range(0, len(wide), ep):
                    make("ep", wide[i:i + ep])
                if len(wide) > ep:
                    for j in range(ep):
                        make("expert grads", wide[j::ep])
    head = position(cfg, stages * cfg["chunks"] - 1)
    if cfg["model"]["tied"] and head != 0:  # in a V the head shares position 0 with the embedding
        for r in range(min(reps[0], reps[head])):
            for c in range(cp):
                for t in range(tp):
                    make("tied", [at[(r, 0, c, t)], at[(r, head, c, t)]])
    model = cfg["model"]
    par = Parallel(
        model,
        TensorParallel(tp, me["tp_rank"], mine.get("tp"), cfg["sequence_parallel"]),
        ContextParallel(model.get("seq", 1), cp, me["cp_rank"], mine.get("cp"), mine.get("cp ranks")),
        ExpertParallel(ep, mine["ep ranks"].index(me["rank"]) if ep > 1 else 0, mine.get("ep"), mine.get("expert grads")),
        Recompute(cfg["recompute"], cfg["recompute_layers"]))
    return par, mine.get("dp"), mine.get("tied")


def parse_actions(strings):
    """parse_actions reads compact actions ("0F1", "1B3", "0F5v1", "0OPT_STEP")
    as (virtual stage, kind, microbatch or -1, weight version or -1)."""
    out = []
    for s in strings:
        m = ACTION.match(s)
        if not m:
            raise ValueError("action %r: the runner executes only F, B, I, W and OPT_STEP" % s)
        out.append((int(m.group(1)), m.group(2), int(m.group(3)) if m.group(3) else -1,
                    int(m.group(4)) if m.group(4) else -1))
    return out


def make_optimizer(params, cfg):
    """make_optimizer is the runner's optimizer, the same in every mode:
    SGD with momentum (one buffer per weight: the state ZeRO-1 shards)."""
    return torch.optim.SGD(params, lr=cfg["lr"], momentum=cfg["momentum"])


def snapshot(params):
    """snapshot is a weight version: detached copies of params, each a leaf
    that collects its own gradient."""
    return [torch.nn.Parameter(p.detach().clone()) for p in params]


def swap_parameters(module, mapping):
    """swap_parameters replaces, in every submodule, each parameter whose id
    is a key of mapping by its value (tied parameters follow together)."""
    for m in module.modules():
        for name, p in list(m._parameters.items()):
            if p is not None and id(p) in mapping:
                m._parameters[name] = mapping[id(p)]


class Timeline:
    """Timeline records the executed actions with their start and end, in
    seconds from its origin (a step's start, or the run's)."""

    def __init__(self, stages):
        self.stages, self.origin, self.step, self.actions = stages, time.perf_counter(), 0, []
        self.logged = -1  # the last step a progress line was printed for

    def start(self, step):
        self.origin, self.step = time.perf_counter(), step

    def now(self):
        return time.perf_counter() - self.origin

    def add(self, kind, vs, mb, start, step=None):
        step = self.step if step is None else step
        self.actions.append({"kind": kind, "stage": vs, "chunk": vs // self.stages, "microbatch": mb,
                             "step": step, "start": start, "end": self.now()})
        if step > self.logged:
            # One progress line per step on stderr: the runner shows each
            # rank's last line when a run is stopped, so a hung rank is the
            # one whose last step is behind the others'.
            self.logged = step
            print("step %d: %s of microbatch %d done" % (step, kind, mb), file=sys.stderr, flush=True)


class GradBuckets:
    """GradBuckets reduces one chunk's gradients over its data-parallel group
    bucket by bucket, as PyTorch DDP does: the parameters in reverse order
    (about the order the backward produces their gradients) packed into flat
    buffers of at most first_bucket_bytes (the first) and bucket_bytes, each
    parameter's .grad a view of its bucket, so that the backward accumulates
    in place. While armed (the step's last backward of the chunk), a hook on
    each parameter's gradient accumulator launches a bucket's asynchronous
    reduction as soon as all its gradients are final, overlapping it with
    the rest of the backward; finish() launches the others and waits for
    all. The late parameters (a tied embedding, summed with its other copy
    first) get a bucket of their own, launched by finish(late=True).

    With zero (ZeRO-1, Megatron-LM's distributed optimizer) each rank owns
    1/dp of every bucket: the gradients are reduce-scattered (gloo has no
    reduce_scatter: there the bucket is all-reduced and the rank keeps its
    shard), the optimizer and its momentum hold only the rank's shards
    (opt_params), and gather() all-gathers the updated shards into the
    parameters."""

    def __init__(self, params, late, group, cfg, timeline, vs, hooks):
        self.group, self.size, self.me = group, dist.get_world_size(group), dist.get_rank(group)
        self.zero, self.scatter = cfg["zero"] >= 1, cfg["backend"] == "nccl"
        self.timeline, self.vs, self.armed = timeline, vs, False
        self.buckets, self.owner, self.accumulators = [], {}, []
        early = [p for p in reversed(params) if id(p) not in late]
        cap, group_, size = cfg["first_bucket_bytes"], [], 0
        for p in early:
            if group_ and size + p.numel() * p.element_size() > cap:
                self.add_bucket(group_, False)
                cap, group_, size = cfg["bucket_bytes"], [], 0
            group_.append(p)
            size += p.numel() * p.element_size()
        if group_:
            self.add_bucket(group_, False)
        lates = [p for p in params if id(p) in late]
        if lates:
            self.add_bucket(lates, True)
        if hooks:
            for p in early:
                acc = p.expand_as(p).grad_fn.next_functions[0][0]
                acc.register_hook(self.hook(p))
                self.accumulators.append(acc)  # the hook lives as long as its accumulator

    def add_bucket(self, params, late):
        n = sum(p.numel() for p in params)
        padded = -(-n // self.size) * self.size
        flat = torch.zeros(padded, dtype=params[0].dtype, device=params[0].device)
        b = {"params": params, "flat": flat, "late": late, "work": None, "start": 0.0,
             "pending": set(), "views": []}
        off = 0
        for p in params:
            p.grad = flat[off:off + p.numel()].view_as(p)
            b["views"].append((p, off, p.numel()))
            self.owner[id(p)] = b
            off += p.numel()
        if self.zero:
            shard = padded // self.size
            values = torch.zeros_like(flat)
            for p, off, k in b["views"]:
                values[off:off + k] = p.detach().reshape(-1)
            b["lo"], b["len"] = self.me * shard, shard
            b["shard"] = torch.nn.Parameter(values[self.me * shard:(self.me + 1) * shard].clone())
        self.reset(b)
        self.buckets.append(b)

    def reset(self, b):
        b["pending"] = {id(p) for p in b["params"]}
        b["work"] = None

    def opt_params(self, params):
        """opt_params are what the optimizer steps: the rank's shards under
        ZeRO-1, else the parameters themselves."""
        return [b["shard"] for b in self.buckets] if self.zero else params

    def hook(self, p):
        def ready(*_):
            self.ready(p)
        return ready

    def ready(self, p):
        """ready marks p's gradient final (while armed); a late bucket waits for finish(late=True)."""
        b = self.owner.get(id(p))
        if not self.armed or b is None or b["late"]:
            return
        b["pending"].discard(id(p))
        if not b["pending"] and b["work"] is None:
            self.launch(b)

    def launch(self, b):
        b["start"] = self.timeline.now()
        if self.zero and self.scatter:
            b["out"] = torch.empty(b["len"], dtype=b["flat"].dtype, device=b["flat"].device)
            b["work"] = dist.reduce_scatter(b["out"], list(b["flat"].chunk(self.size)), group=self.group, async_op=True)
        else:
            b["work"] = dist.all_reduce(b["flat"], group=self.group, async_op=True)

    def finish(self, late):
        """finish launches the buckets not launched yet (late ones only with
        late) and waits for them; each reduction is timed as REDUCE_GRAD."""
        for b in self.buckets:
            if b["late"] != late:
                continue
            if b["work"] is None:
                self.launch(b)
            b["work"].wait()
            self.timeline.add("REDUCE_GRAD", self.vs, -1, b["start"])
            if self.zero:
                lo = b["lo"]
                b["shard"].grad = b["out"] if self.scatter else b["flat"][lo:lo + b["len"]]
            self.reset(b)

    def gather(self):
        """gather all-gathers the updated shards into the parameters (ZeRO-1)."""
        if not self.zero:
            return
        with torch.no_grad():
            for b in self.buckets:
                parts = [torch.empty_like(b["shard"]) for _ in range(self.size)]
                dist.all_gather(parts, b["shard"].detach(), group=self.group)
                values = torch.cat(parts)
                for p, off, k in b["views"]:
                    p.copy_(values[off:off + k].view_as(p))

    def zero_grad(self):
        for b in self.buckets:
            b["flat"].zero_()


class ChunkReduction:
    """ChunkReduction reduces one chunk's gradients, one GradBuckets per
    reduction group: a parameter with a grad_group (an expert's: the ranks
    holding the same experts) over that group, the others over the
    data-parallel group (replicas × context-parallel ranks), so that no
    bucket mixes gradients summed over different ranks; an expert no other
    rank holds (grad_group None) is not reduced. Every rank finishes its
    reductions in the same order: the data-parallel group's first."""

    def __init__(self, params, late, dp_group, cfg, timeline, vs, hooks):
        groups, members, self.unreduced = [dp_group], {id(dp_group): []}, []
        for p in params:
            g = getattr(p, "grad_group", dp_group)
            if g is None:
                self.unreduced.append(p)
                continue
            if id(g) not in members:
                groups.append(g)
                members[id(g)] = []
            members[id(g)].append(p)
        self.parts = [(GradBuckets(members[id(g)], late, g, cfg, timeline, vs, hooks), members[id(g)])
                      for g in groups if members[id(g)]]

    def arm(self, armed):
        for b, _ in self.parts:
            b.armed = armed

    def ready(self, p):
        for b, _ in self.parts:
            b.ready(p)

    def opt_params(self):
        """opt_params are what the optimizer steps (ZeRO-1's shards of the reduced parameters)."""
        out = list(self.unreduced)
        for b, params in self.parts:
            out += b.opt_params(params)
        return out

    def finish(self, late):
        for b, _ in self.parts:
            b.finish(late)

    def gather(self):
        for b, _ in self.parts:
            b.gather()

    def zero_grad(self):
        for b, _ in self.parts:
            b.zero_grad()


# Message kinds of the pipeline's point-to-point traffic (see Rank.tag).
ACTIVATION, GRADIENT, VERSION = 0, 1, 2


class Rank:
    """Rank is one process: its chunks (virtual stage stage + c·stages for
    chunk c), its neighbours and groups, and an executor of action lists.

    Synchronous schedules run their list once per step and end it with
    OPT_STEP. The others run one list for the whole run and keep weight
    versions (snapshots of the chunk's weights; a forward runs on one, its
    backward on the same): double-buffered (2BW) forwards use the version
    their action names and every m backwards make a new version from the
    accumulated gradient; stashed (PipeDream, 1F1B-RR) forwards use the
    newest version and every backward ends a round whose gradient, averaged
    over the stage's replicas, makes a new one; vertical sync forwards use
    the version the input stage used, sent along with the activation. The
    optimizer always steps the newest weights."""

    def __init__(self, cfg, me, device):
        self.cfg, self.me, self.device = cfg, me, device
        model = cfg["model"]
        par, self.dp_group, self.tied_group = make_groups(cfg, me)
        self.stages = cfg["stages"]
        self.virtual = cfg["stages"] * cfg["chunks"]
        self.chunks = {}
        self.local = {}  # tensors between two stages of this rank, by tag
        for c, (first, last) in enumerate(me["chunks"]):
            vs = virtual_stage(cfg, me["stage"], c)
            self.chunks[vs] = Chunk(model, first, last, vs == 0, vs == self.virtual - 1, par).to(device)
        emb = self.chunks.get(0)
        head = self.chunks.get(self.virtual - 1)
        if model["tied"] and emb is not None and head is not None:
            head.head.weight = emb.embedding.weight
        self.tied = None
        if self.tied_group is not None:
            self.tied = emb.embedding.weight if emb is not None else head.head.weight
        self.at = {place(r): r["rank"] for r in cfg["ranks"]}
        self.shape = activation_shape(cfg)
        self.versioning = cfg["versioning"]
        self.versioned = self.versioning != "synchronous"
        self.recomputes = cfg["recompute"] != "none"
        self.m = cfg["microbatches"]
        self.total = self.m * cfg["batches"]
        self.reps = cfg.get("stage_replicas")
        # Losses are scaled so that summed gradients are the batch's mean; a
        # stashed schedule's microbatch is a minibatch of its own (its
        # rounds average over the stage's replicas instead).
        self.scale = 1.0 if self.versioning in ("stashed", "vertical-sync") else 1.0 / (self.m * cfg["replicas"])
        self.timeline = Timeline(self.stages)
        self.params, owned = {}, set()
        for vs, chunk in self.chunks.items():
            self.params[vs] = [p for p in chunk.parameters() if id(p) not in owned]
            owned.update(id(p) for p in self.params[vs])
        shared = set()
        for vs, ch in self.chunks.items():
            mine = {id(p) for p in self.params[vs]}
            shared.update(id(p) for p in ch.parameters() if id(p) not in mine)
        late = shared | ({id(self.tied)} if self.tied is not None else set())
        self.reducers = {}
        if self.dp_group is not None:
            for vs in sorted(self.chunks):
                self.reducers[vs] = ChunkReduction(self.params[vs], late, self.dp_group, cfg, self.timeline, vs,
                                                   hooks=not self.versioned)
        opt_params = []
        for vs in sorted(self.chunks):
            for p in self.params[vs]:
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
            r = self.reducers.get(vs)
            opt_params += r.opt_params() if r else self.params[vs]
        self.opt = make_optimizer(opt_params, cfg)
        self.synced = set()
        # Weight versions (asynchronous schedules; one chunk per rank).
        self.versions = {vs: {0: snapshot(self.params[vs])} for vs in self.chunks} if self.versioned else {}
        self.newest = {vs: 0 for vs in self.chunks}
        self.backwards = {vs: 0 for vs in self.chunks}
        self.floor = {vs: 0 for vs in self.chunks}
        self.weight_versions = 1

    def replica_of(self, vs, mb):
        """replica_of is the replica of virtual stage vs that runs microbatch
        mb: this rank's (parallel pipelines), or mb mod the stage's replicas
        (1F1B-RR's round-robin)."""
        s = position(self.cfg, vs)
        return mb % self.reps[s] if self.reps else self.me["replica"]

    def peer(self, vs, mb):
        """peer is the rank running virtual stage vs on microbatch mb, with this rank's shard."""
        return self.at[(self.replica_of(vs, mb), position(self.cfg, vs), self.me["cp_rank"], self.me["tp_rank"])]

    def tag(self, kind, vs, mb):
        """tag names a message by what it carries (kind, receiving stage,
        microbatch), so that messages between the same two ranks
        (interleaving, 1F1B warm-up) match whatever their order."""
        return (kind * self.virtual + vs) * self.total + mb

    def recv(self, vs_from, kind, vs, mb, shape=None, dtype=torch.float32):
        src = self.peer(vs_from, mb)
        if src == self.me["rank"]:
            # A V's turn: both stages on this rank (torch sends to no self).
            return self.local.pop(self.tag(kind, vs, mb))
        t = torch.empty(shape or self.shape, dtype=dtype, device=self.device)
        dist.recv(t, src=src, tag=self.tag(kind, vs, mb))
        return t

    def data(self, mb):
        """data is microbatch mb's (input, target): each step has the same m
        microbatches (a fixed batch), per replica for parallel pipelines."""
        return microbatch(self.cfg, 0 if self.reps else self.me["replica"], mb % self.m)

    def step_of(self, mb, step):
        return mb // self.m if self.versioned and mb >= 0 else step

    def execute(self, actions, step):
        """execute runs an action list exactly; returns {microbatch: loss}
        of the microbatches whose loss this rank computed."""
        saved, deferred, pending, losses = {}, {}, [], {}

        def send(t, vs_to, kind, mb):
            dst = self.peer(vs_to, mb)
            if dst == self.me["rank"]:
                self.local[self.tag(kind, vs_to, mb)] = t.clone()  # recv takes it
                return
            pending.append((dist.isend(t, dst=dst, tag=self.tag(kind, vs_to, mb)), t))

        last = self.virtual - 1
        final = {}  # the step's last weight-gradient action of each chunk
        if self.cfg["overlap_grad_reduce"] and not self.versioned:
            for i, (vs, kind, mb, _) in enumerate(actions):
                if kind in ("B", "W"):
                    final[vs] = i
        for i, (vs, kind, mb, version) in enumerate(actions):
            chunk = self.chunks.get(vs)
            if chunk is None:
                raise ValueError("action %d%s%s for a stage rank %d does not hold (it holds %s)" % (
                    vs, kind, mb if mb >= 0 else "", self.me["rank"], sorted(self.chunks)))
            self.timeline.step = self.step_of(mb, step)
            reducer = self.reducers.get(vs) if final.get(vs) == i else None
            start = self.timeline.now()
            if kind == "F":
                x, y = self.data(mb)
                if vs == 0:
                    x = x.to(self.device)
                else:
                    x = self.recv(vs - 1, ACTIVATION, vs, mb).requires_grad_()
                    self.timeline.add("RECV_F", vs, mb, start)
                    start = self.timeline.now()
                if self.versioned:
                    version = self.forward_version(vs, mb, version)
                    mapping = {id(p): s for p, s in zip(self.params[vs], self.versions[vs][version])}
                    swap_parameters(chunk, mapping)
                try:
                    out = chunk(x, y.to(self.device) if vs == last else None)
                finally:
                    if self.versioned:
                        swap_parameters(chunk, {id(s): p for p, s in zip(self.params[vs], self.versions[vs][version])})
                if vs == last:
                    losses[mb] = out.item()
                    out = out * self.scale
                else:
                    send(out.detach(), vs + 1, ACTIVATION, mb)
                    if self.versioning == "vertical-sync":
                        send(torch.tensor([version], dtype=torch.int64), vs + 1, VERSION, mb)
                saved[(vs, mb)] = (x, out, version)
            elif kind in ("B", "I"):
                x, out, version = saved.pop((vs, mb))
                grad = None
                if vs != last:
                    grad = self.recv(vs + 1, GRADIENT, vs, mb)
                    self.timeline.add("RECV_B", vs, mb, start)
                    start = self.timeline.now()
                # A recomputed forward reads the chunk's weights again: the
                # version its forward ran with.
                rerun = self.versioned and self.recomputes
                if rerun:
                    swap_parameters(chunk, {id(p): s for p, s in zip(self.params[vs], self.versions[vs][version])})
                try:
                    if kind == "B":
                        if reducer is not None:
                            reducer.arm(True)
                        torch.autograd.backward(out, grad)
                        if reducer is not None:
                            reducer.arm(False)
                        gx = x.grad if vs > 0 else None
                    else:
                        # The input gradient only; W computes the weight gradients later.
                        gx = torch.autograd.grad(out, [x], grad, retain_graph=True)[0] if vs > 0 else None
                        deferred[(vs, mb)] = (out, grad)
                finally:
                    if rerun:
                        swap_parameters(chunk, {id(s): p for p, s in zip(self.params[vs], self.versions[vs][version])})
                if vs > 0:
                    send(gx, vs - 1, GRADIENT, mb)
                if self.versioned:
                    self.timeline.add(kind, vs, mb, start)
                    start = self.after_backward(vs, version, saved)
                    if start is None:
                        continue
                    kind, mb = "OPT_STEP", -1
            elif kind == "W":
                out, grad = deferred.pop((vs, mb))
                params = [p for p in chunk.parameters() if p.requires_grad]
                for p, g in zip(params, torch.autograd.grad(out, params, grad, allow_unused=True)):
                    if g is not None:
                        p.grad.add_(g)
                if reducer is not None:
                    reducer.arm(True)
                    for p in params:
                        reducer.ready(p)
                    reducer.arm(False)
            else:
                for handle, _ in pending:
                    handle.wait()
                pending = []
                self.opt_step(vs)
            self.timeline.add(kind, vs, mb, start)
        if self.versioned:
            for vs in self.chunks:
                self.finish_rounds(vs)
        for handle, _ in pending:
            handle.wait()
        if saved or deferred:
            raise ValueError("step %d: the action list left microbatches unfinished" % step)
        return losses

    def forward_version(self, vs, mb, named):
        """forward_version is the weight version a forward uses."""
        if self.versioning == "double-buffered":
            v = named
        elif self.versioning == "vertical-sync" and vs > 0:
            v = int(self.recv(vs - 1, VERSION, vs, mb, (1,), torch.int64)[0])
            self.floor[vs] = v  # later microbatches use this version or newer ones
        else:
            v = self.newest[vs]
        if v not in self.versions[vs]:
            raise ValueError("stage %d microbatch %d: weight version %d does not exist (held: %s)" % (
                vs, mb, v, sorted(self.versions[vs])))
        return v

    def after_backward(self, vs, version, saved):
        """after_backward moves a backward's gradient from its weight version
        to the accumulated gradient and, at the end of a batch (2BW) or a
        round (stashed), updates the weights; returns the update's start
        time, or None when there was none."""
        for p, s in zip(self.params[vs], self.versions[vs][version]):
            if s.grad is not None:
                p.grad.add_(s.grad)
                s.grad = None
        self.backwards[vs] += 1
        if self.versioning == "double-buffered" and self.backwards[vs] % self.m:
            return None
        start = self.timeline.now()
        self.update(vs, saved)
        return start

    def round_size(self, vs, q):
        """round_size is the number of microbatches in update round q of
        virtual stage vs: one per replica (fewer in a last partial round)."""
        r = self.reps[position(self.cfg, vs)] if self.reps else 1
        return min(r, self.total - q * r)

    def finish_rounds(self, vs):
        """finish_rounds makes a replica with no microbatch in the last
        round(s) join its replicas' updates with a zero gradient."""
        if self.versioning not in ("stashed", "vertical-sync"):
            return
        r = self.reps[position(self.cfg, vs)] if self.reps else 1
        while self.backwards[vs] < -(-self.total // r):
            self.backwards[vs] += 1
            start = self.timeline.now()
            self.update(vs, {})
            self.timeline.add("OPT_STEP", vs, -1, start)

    def update(self, vs, saved):
        """update reduces the accumulated gradient (replicas, tied copies),
        steps the optimizer on the newest weights, makes them a new version
        and drops the versions no forward or backward will use."""
        divisor = 1
        if self.versioning in ("stashed", "vertical-sync"):
            divisor = self.round_size(vs, self.backwards[vs] - 1)
        if vs in self.reducers:
            self.reducers[vs].finish(late=False)
        self.reduce_and_step(divisor)
        new = self.newest[vs] + 1
        self.versions[vs][new] = snapshot(self.params[vs])
        self.newest[vs] = new
        floor = new - 1 if self.versioning == "double-buffered" else new
        if self.versioning == "vertical-sync" and vs > 0:
            floor = self.floor[vs]
        keep = {v for (s, _), (_, _, v) in saved.items() if s == vs}
        for v in list(self.versions[vs]):
            if v < floor and v not in keep:
                del self.versions[vs][v]
        self.weight_versions = max(self.weight_versions, len(self.versions[vs]))

    def opt_step(self, vs):
        """opt_step ends the flush for chunk vs: its gradient buckets finish
        their reduction over the replicas; once every chunk of the rank has,
        the optimizer steps."""
        r = self.reducers.get(vs)
        if r is not None:
            r.finish(late=False)
        self.synced.add(vs)
        if len(self.synced) < len(self.chunks):
            return
        self.synced.clear()
        self.reduce_and_step(1)

    def reduce_and_step(self, divisor):
        """reduce_and_step, once the replicas' reductions of the early buckets
        are done, sums a tied embedding's two copies' gradients, reduces the
        late buckets, divides the gradient by divisor, steps the optimizer
        (all-gathering ZeRO-1's shards) and zeroes the gradients."""
        if self.tied is not None:
            dist.all_reduce(self.tied.grad, group=self.tied_group)
        for r in self.reducers.values():
            r.finish(late=True)
        if divisor != 1:
            for group in self.opt.param_groups:
                for q in group["params"]:
                    q.grad.div_(divisor)
        self.opt.step()
        for r in self.reducers.values():
            r.gather()
            r.zero_grad()
        for vs in self.chunks:
            for p in self.params[vs]:
                p.grad.zero_()


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
    actions = parse_actions(cfg["actions"][me["device"]])
    reports_loss = me["stage"] == position(cfg, cfg["stages"] * cfg["chunks"] - 1) and me["tp_rank"] == 0 and me["cp_rank"] == 0
    steps = cfg["warmup"] + cfg["steps"]
    if worker.versioned:
        seconds, losses = run_versioned(cfg, worker, actions, device, steps)
        reports_loss = reports_loss and (not worker.reps or me["replica"] == 0)
    else:
        seconds, losses = [], []
        for step in range(steps):
            dist.barrier()
            worker.timeline.start(step)
            mark = len(worker.timeline.actions)
            step_losses = worker.execute(actions, step)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            elapsed = worker.timeline.now()
            if step >= cfg["warmup"]:
                seconds.append(elapsed)
            else:
                del worker.timeline.actions[mark:]
            if step_losses:
                losses.append(sum(step_losses.values()) / len(step_losses))
    result = {
        "rank": rank, "stage": me["stage"], "replica": me["replica"], "tp_rank": me["tp_rank"],
        "step_seconds": seconds, "losses": losses if reports_loss else [],
        "peak_memory_bytes": peak_memory_bytes(device),
        "torch_version": torch.__version__,
        "actions": measured_actions(worker.timeline.actions, cfg["warmup"]),
        "weight_versions": worker.weight_versions,
        "parameter_bytes": sum(p.numel() * p.element_size() for ps in worker.params.values() for p in ps),
        "optimizer_state_bytes": sum(t.numel() * t.element_size() for st in worker.opt.state.values()
                                     for t in st.values() if torch.is_tensor(t)),
        "forwards": dict(Recompute.FORWARDS),
    }
    write_json(os.path.join(cfg["out_dir"], "result-rank%d.json" % rank), result)
    dist.barrier()
    dist.destroy_process_group()


# MAX_ACTIONS bounds the timed actions a result carries (about 120 bytes
# each, within the runner's 16 MiB limit on a result file).
MAX_ACTIONS = 100000


def measured_actions(actions, warmup):
    """measured_actions are the measured steps' actions, times rounded to
    microseconds, whole steps only, the first ones up to MAX_ACTIONS."""
    out, by_step = [], {}
    for a in actions:
        if a["step"] >= warmup:
            by_step.setdefault(a["step"], []).append(dict(a, start=round(a["start"], 6), end=round(a["end"], 6)))
    for step in sorted(by_step):
        if len(out) + len(by_step[step]) > MAX_ACTIONS:
            break
        out += by_step[step]
    return out


def run_versioned(cfg, worker, actions, device, steps):
    """run_versioned runs an asynchronous schedule's one list for the whole
    run (no barrier between steps): a step ends on a rank with its last
    action on the step's microbatches; returns the measured steps' seconds
    and each step's mean loss (gathered from a replicated last stage)."""
    dist.barrier()
    worker.timeline.start(0)
    mb_losses = worker.execute(actions, 0)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    ends = [0.0] * steps
    for a in worker.timeline.actions:
        ends[a["step"]] = max(ends[a["step"]], a["end"])
    seconds = [ends[t] - (ends[t - 1] if t else 0.0) for t in range(cfg["warmup"], steps)]
    vec = torch.zeros(worker.total, dtype=torch.float64)
    for mb, loss in mb_losses.items():
        vec[mb] = loss
    if worker.me["stage"] == cfg["stages"] - 1 and worker.dp_group is not None and worker.reps:
        dist.all_reduce(vec, group=worker.dp_group)
    losses = []
    if mb_losses or worker.me["stage"] == cfg["stages"] - 1:
        losses = [float(vec[t * worker.m:(t + 1) * worker.m].mean()) for t in range(steps)]
    return seconds, losses


def run_reference(cfg, synchronous):
    """run_reference trains the same model in one process (no pipeline, no
    tensor parallelism, torch's own cross-entropy) on the same data and
    microbatching: synchronous training, or, for an asynchronous schedule
    (unless synchronous), the weight-update rule of its paper."""
    torch.set_num_threads(1)
    if synchronous or cfg["versioning"] == "synchronous":
        losses = synchronous_reference(cfg)
    else:
        losses = versioned_reference(cfg)
    write_json(os.path.join(cfg["out_dir"], "reference.json"), {"losses": losses})


def synchronous_reference(cfg):
    """synchronous_reference trains the whole model unsplit: one optimizer
    step per batch of every replica's microbatches; a synchronous schedule
    must give the same losses."""
    model = cfg["model"]
    net = Chunk(model, 0, model["layers"] - 1, True, True, Parallel(model))
    opt = make_optimizer(net.parameters(), cfg)
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
    return losses


def versioned_reference(cfg):
    """versioned_reference computes an asynchronous schedule's training in
    one process, stage by stage, from the update rules of the papers (not
    from the action lists), with every weight version kept:
      - 2BW (PipeDream-2BW §3.2.1): W(t+1) = W(t) − ν·∇f(W(t−1)), batch t's
        gradient taken at version max(t−1, 0) on every stage;
      - weight stashing (dissertation §2.4.2–2.4.3): microbatch k is a
        minibatch of its own; stage s with r_s replicas admits
        NOAM_s = ⌈workers from s on / r_s⌉ inputs per replica, so that k's
        forward on s sees the version after max(0, ⌊k/r_s⌋ − NOAM_s + 1)
        updates (p − 1 − s behind for a straight pipeline: W1 of t−p+1, …);
        each update averages one round of r_s microbatches;
      - vertical sync: every stage uses the input stage's version of k."""
    model, stages, m = cfg["model"], cfg["stages"], cfg["microbatches"]
    total, batches = m * cfg["batches"], cfg["batches"]
    ranges = {r["stage"]: r["chunks"][0] for r in cfg["ranks"]}

    def build():
        return [Chunk(model, *ranges[s], s == 0, s == stages - 1, Parallel(model)) for s in range(stages)]

    mods, work = build(), build()
    params = [list(mod.parameters()) for mod in mods]
    wparams = [list(mod.parameters()) for mod in work]
    for ps in params:
        for p in ps:
            p.grad = torch.zeros_like(p)
    opts = [make_optimizer(ps, cfg) for ps in params]
    versions = [[[p.detach().clone() for p in ps]] for ps in params]
    tied = model["tied"] and stages > 1

    def gradient(vers, replica, k, scale):
        with torch.no_grad():
            for s in range(stages):
                for w, v in zip(wparams[s], versions[s][vers[s]]):
                    w.copy_(v)
        x, y = microbatch(cfg, replica, k % m)
        for s in range(stages):
            x = work[s](x, y if s == stages - 1 else None)
        (x * scale).backward()
        for s in range(stages):
            for p, w in zip(params[s], wparams[s]):
                p.grad.add_(w.grad)
                w.grad = None
        return x.item()

    def update(divisors):
        if tied and (0 in divisors) != (stages - 1 in divisors):
            raise ValueError("a tied embedding's copies must update together")
        if tied and 0 in divisors:
            a, b = mods[0].embedding.weight.grad, mods[-1].head.weight.grad
            both = a + b
            a.copy_(both)
            b.copy_(both)
        for s, d in divisors.items():
            for p in params[s]:
                p.grad.div_(d)
            opts[s].step()
            for p in params[s]:
                p.grad.zero_()
            versions[s].append([p.detach().clone() for p in params[s]])

    losses = []
    if cfg["versioning"] == "double-buffered":
        scale = 1.0 / (m * cfg["replicas"])
        for t in range(batches):
            v = max(t - 1, 0)
            loss = sum(gradient([v] * stages, r, t * m + j, scale) for r in range(cfg["replicas"]) for j in range(m))
            update({s: 1 for s in range(stages)})
            losses.append(loss * scale)
        return losses
    reps = cfg.get("stage_replicas") or [1] * stages
    noam = [-(-sum(reps[s:]) // reps[s]) for s in range(stages)]
    sums = [0.0] * batches
    for k in range(total):
        vers = [max(0, k // reps[s] - noam[s] + 1) for s in range(stages)]
        if cfg["versioning"] == "vertical-sync":
            vers = [vers[0]] * stages
        sums[k // m] += gradient(vers, 0, k, 1.0)
        update({s: k % reps[s] + 1 for s in range(stages) if (k + 1) % reps[s] == 0 or k == total - 1})
    return [x / m for x in sums]


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
    ap.add_argument("--synchronous", action="store_true",
                    help="with --reference: train synchronously whatever the schedule (the negative control of an asynchronous one)")
    args = ap.parse_args()
    if args.probe:
        probe()
        return
    if not args.config:
        ap.error("--config is required unless --probe")
    with open(args.config) as f:
        cfg = json.load(f)
    if args.reference:
        run_reference(cfg, args.synchronous)
    else:
        run_rank(cfg)


if __name__ == "__main__":
    main()
