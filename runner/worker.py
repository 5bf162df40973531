#!/usr/bin/env python3
"""pipeplan runner worker: executes one rank of a plan with torch.distributed.

Modes (the protocol is documented in runner/README.md):
  worker.py --probe                     print {"torch_version", "cuda_device_count"} as JSON
  worker.py --config run.json           one rank under torchrun; writes result-rank<N>.json
  worker.py --config run.json --reference
                                        the same model and data unsplit in one process;
                                        writes reference.json (the correctness check)

A rank holds one or more model chunks (virtual stages; interleaved schedules give a
device v of them) of one tensor-parallel shard, and executes its action list from
core/schedule: F, B, I (input gradient), W (weight gradient), OPT_STEP.

Works with torch >= 1.13 (Debian's python3-torch) and torch 2.x.
"""
import argparse
import json
import math
import os
import re
import resource
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

ACTION = re.compile(r"^(\d+)(F|B|I|W|OPT_STEP)(\d*)$")

# Seed offsets of the model's parts: block i is seeded with index i, the others
# with these (beyond any layer index a plan can have).
EMBEDDING_PART, HEAD_PART = 1 << 24, (1 << 24) + 1


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


class TensorParallel:
    """TensorParallel is one rank's place in its tensor-parallel group and
    Megatron-LM's operators over it (Shoeybi et al. 2019 §3; dissertation
    §4.2.3): copy is f (identity forward, all-reduce backward) before a
    column-parallel layer, reduce is g (all-reduce forward, identity backward)
    after a row-parallel one, cross_entropy the vocabulary-parallel loss.
    With one rank (size 1) they are plain torch."""

    def __init__(self, size=1, rank=0, group=None):
        self.size, self.rank, self.group = size, rank, group
        grp = group

        class Copy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                g = g.clone()
                dist.all_reduce(g, group=grp)
                return g

        class Reduce(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x = x.clone()
                dist.all_reduce(x, group=grp)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        class VocabCrossEntropy(torch.autograd.Function):
            """Cross-entropy over logits split by vocabulary rows: a max, the
            target logit and the sum of exponentials are all-reduced, never
            the logits (Megatron-LM's _VocabParallelCrossEntropy)."""

            @staticmethod
            def forward(ctx, logits, target, start):
                m = logits.max(dim=-1)[0]
                dist.all_reduce(m, op=dist.ReduceOp.MAX, group=grp)
                logits = logits - m.unsqueeze(-1)
                outside = (target < start) | (target >= start + logits.shape[-1])
                local = (target - start).masked_fill(outside, 0)
                rows = torch.arange(logits.shape[0], device=logits.device)
                picked = logits[rows, local].masked_fill(outside, 0.0)
                exp = logits.exp()
                total = exp.sum(dim=-1)
                dist.all_reduce(picked, group=grp)
                dist.all_reduce(total, group=grp)
                ctx.save_for_backward(exp / total.unsqueeze(-1), local, outside)
                return total.log() - picked

            @staticmethod
            def backward(ctx, g):
                softmax, local, outside = ctx.saved_tensors
                grad = softmax.clone()
                rows = torch.arange(grad.shape[0], device=grad.device)
                grad[rows, local] -= (~outside).to(grad.dtype)
                return grad * g.unsqueeze(-1), None, None

        self._copy, self._reduce, self._ce = Copy, Reduce, VocabCrossEntropy

    def copy(self, x):
        return x if self.size == 1 else self._copy.apply(x)

    def reduce(self, x):
        return x if self.size == 1 else self._reduce.apply(x)

    def cross_entropy(self, logits, target, start):
        """cross_entropy is the mean token loss of (N, V/size) logits whose
        vocabulary rows begin at start, against (N,) targets."""
        if self.size == 1:
            return F.cross_entropy(logits, target)
        return self._ce.apply(logits, target, start).mean()

    def rows(self, w, n):
        """rows is this rank's block of n output rows (a column-parallel shard)."""
        return w[self.rank * n:(self.rank + 1) * n].clone()

    def cols(self, w, n):
        """cols is this rank's block of n input columns (a row-parallel shard)."""
        return w[:, self.rank * n:(self.rank + 1) * n].clone()


def generator(model, part):
    return torch.Generator().manual_seed(model["seed"] * 1000003 + part)


def randn(g, *shape):
    return torch.randn(*shape, generator=g) * 0.02


class Norm(torch.nn.Module):
    """Norm is LayerNorm or RMSNorm (model.norm), replicated on every tensor-parallel rank."""

    def __init__(self, model):
        super().__init__()
        self.rms = model["norm"] == "rmsnorm"
        self.weight = torch.nn.Parameter(torch.ones(model["hidden"]))
        self.bias = None if self.rms else torch.nn.Parameter(torch.zeros(model["hidden"]))

    def forward(self, x):
        if self.rms:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight
        return F.layer_norm(x, x.shape[-1:], self.weight, self.bias, 1e-5)


def rotary(t):
    """rotary applies the rotary position embedding (Su et al. 2021) to (b, heads, s, d)."""
    s, d = t.shape[-2], t.shape[-1]
    inv = 1.0 / 10000.0 ** (torch.arange(0, d, 2, dtype=t.dtype, device=t.device) / d)
    angle = torch.arange(s, dtype=t.dtype, device=t.device)[:, None] * inv[None]
    cos, sin = angle.cos(), angle.sin()
    even, odd = t[..., 0::2], t[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class Block(torch.nn.Module):
    """Block is one pre-norm GPT decoder layer's tensor-parallel shard: causal
    self-attention (grouped-query when kv_heads < heads; rotary when the model
    has no learned positions) with column-parallel QKV and a row-parallel
    output projection, then an MLP (GeLU, or SwiGLU when gated) with
    column-parallel FC1 (and gate) and row-parallel FC2. Full weights are drawn
    from the layer's seed and sliced, so every split starts from the same model."""

    def __init__(self, model, index, tp):
        super().__init__()
        h, a, kv, d, f = model["hidden"], model["heads"], model["kv_heads"], model["head_dim"], model["ffn"]
        self.tp, self.rope, self.gated = tp, model["position"] == "rope", model["gated"]
        self.heads, self.kv_heads, self.head_dim = a // tp.size, kv // tp.size, d
        fl = f // tp.size
        g = generator(model, index)
        wq, wk, wv, wo = randn(g, a * d, h), randn(g, kv * d, h), randn(g, kv * d, h), randn(g, h, a * d)
        bq, bk, bv, bo = randn(g, a * d), randn(g, kv * d), randn(g, kv * d), randn(g, h)
        up, gate, down = randn(g, f, h), randn(g, f, h), randn(g, h, f)
        bup, bgate, bdown = randn(g, f), randn(g, f), randn(g, h)
        P = torch.nn.Parameter
        qkv_bias = model["bias"] in ("all", "qkv")
        bias = model["bias"] == "all"
        n, m = self.heads * d, self.kv_heads * d
        self.norm1, self.norm2 = Norm(model), Norm(model)
        self.qkv = P(torch.cat([tp.rows(wq, n), tp.rows(wk, m), tp.rows(wv, m)]))
        self.qkv_bias = P(torch.cat([tp.rows(bq, n), tp.rows(bk, m), tp.rows(bv, m)])) if qkv_bias else None
        self.proj = P(tp.cols(wo, n))
        self.proj_bias = P(bo) if bias else None
        self.fc1 = P(tp.rows(up, fl))
        self.fc1_bias = P(tp.rows(bup, fl)) if bias else None
        self.gate = P(tp.rows(gate, fl)) if self.gated else None
        self.gate_bias = P(tp.rows(bgate, fl)) if self.gated and bias else None
        self.fc2 = P(tp.cols(down, fl))
        self.fc2_bias = P(bdown) if bias else None

    def attention(self, x):
        b, s, _ = x.shape
        qkv = F.linear(self.tp.copy(self.norm1(x)), self.qkv, self.qkv_bias)
        n, m, d = self.heads * self.head_dim, self.kv_heads * self.head_dim, self.head_dim
        q, k, v = qkv.split([n, m, m], dim=-1)
        q = q.view(b, s, self.heads, d).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, d).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, d).transpose(1, 2)
        if self.rope:
            q, k = rotary(q), rotary(k)
        if self.kv_heads != self.heads:
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        causal = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
        o = (scores.masked_fill(causal, float("-inf")).softmax(-1) @ v).transpose(1, 2).reshape(b, s, n)
        o = self.tp.reduce(F.linear(o, self.proj))
        return o if self.proj_bias is None else o + self.proj_bias

    def mlp(self, x):
        y = self.tp.copy(self.norm2(x))
        u = F.linear(y, self.fc1, self.fc1_bias)
        u = F.silu(F.linear(y, self.gate, self.gate_bias)) * u if self.gated else F.gelu(u)
        o = self.tp.reduce(F.linear(u, self.fc2))
        return o if self.fc2_bias is None else o + self.fc2_bias

    def forward(self, x):
        x = x + self.attention(x)
        return x + self.mlp(x)


class Embedding(torch.nn.Module):
    """Embedding is the vocabulary-parallel token embedding (this rank's rows
    of the padded vocabulary, an all-reduce of the lookups) plus learned
    positions when the model has them."""

    def __init__(self, model, tp):
        super().__init__()
        self.tp, self.rows = tp, model["padded_vocab"] // tp.size
        self.start = tp.rank * self.rows
        g = generator(model, EMBEDDING_PART)
        self.weight = torch.nn.Parameter(tp.rows(randn(g, model["padded_vocab"], model["hidden"]), self.rows))
        pos = randn(g, model["seq"], model["hidden"])
        self.pos = torch.nn.Parameter(pos) if model["position"] == "learned" else None

    def forward(self, ids):
        outside = (ids < self.start) | (ids >= self.start + self.rows)
        e = F.embedding((ids - self.start).masked_fill(outside, 0), self.weight)
        e = self.tp.reduce(e.masked_fill(outside.unsqueeze(-1), 0.0))
        return e if self.pos is None else e + self.pos


class Head(torch.nn.Module):
    """Head is the final norm, the vocabulary-parallel output projection and
    cross-entropy; with tied embeddings its weight starts as the embedding's
    (and is the same parameter when both are on one rank)."""

    def __init__(self, model, tp):
        super().__init__()
        self.tp, self.rows = tp, model["padded_vocab"] // tp.size
        self.start = tp.rank * self.rows
        self.norm = Norm(model)
        part = EMBEDDING_PART if model["tied"] else HEAD_PART
        w = randn(generator(model, part), model["padded_vocab"], model["hidden"])
        self.weight = torch.nn.Parameter(tp.rows(w, self.rows))

    def forward(self, x, target):
        logits = F.linear(self.tp.copy(self.norm(x)), self.weight)
        return self.tp.cross_entropy(logits.reshape(-1, self.rows), target.reshape(-1), self.start)


class Chunk(torch.nn.Module):
    """Chunk is a virtual stage: (the embedding,) layers first..last (and the
    head with the loss); a profile model's layers are Linear bottlenecks with
    an MSE loss."""

    def __init__(self, model, first, last, has_input, has_loss, tp):
        super().__init__()
        self.has_loss, self.transformer = has_loss, model["kind"] == "transformer"
        self.embedding = Embedding(model, tp) if self.transformer and has_input else None
        self.layers = torch.nn.ModuleList([self.make_layer(model, i, tp) for i in range(first, last + 1)])
        self.head = Head(model, tp) if self.transformer and has_loss else None
        if self.embedding is not None and self.head is not None and model["tied"]:
            self.head.weight = self.embedding.weight

    @staticmethod
    def make_layer(model, index, tp):
        if model["kind"] == "transformer":
            return Block(model, index, tp)
        torch.manual_seed(model["seed"] * 1000003 + index)
        k = model["bottleneck"][index]
        return torch.nn.Sequential(
            torch.nn.Linear(model["width"], k), torch.nn.ReLU(), torch.nn.Linear(k, model["width"]))

    def forward(self, x, target=None):
        if self.embedding is not None:
            x = self.embedding(x)
        for layer in self.layers:
            x = layer(x)
        if not self.has_loss:
            return x
        if self.head is not None:
            return self.head(x, target)
        return F.mse_loss(x, target)


def activation_shape(model, microbatch_size):
    if model["kind"] == "transformer":
        return (microbatch_size, model["seq"], model["hidden"])
    return (microbatch_size, model["width"])


def microbatch(cfg, replica, mb):
    """microbatch returns the (input, target) of one microbatch, the same in every
    mode and every step (a fixed batch, so the loss falls as the model trains):
    synthetic tokens and their next tokens, or a profile model's random vectors."""
    model = cfg["model"]
    g = torch.Generator().manual_seed((model["seed"] * 7919 + replica) * 7919 + mb)
    b = cfg["microbatch_size"]
    if model["kind"] == "transformer":
        tokens = torch.randint(0, model["vocab"], (b, model["seq"] + 1), generator=g)
        return tokens[:, :-1], tokens[:, 1:]
    shape = activation_shape(model, b)
    return torch.randn(shape, generator=g), torch.randn(shape, generator=g)


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


def make_groups(cfg, me):
    """make_groups creates every process group, on every rank in the same order
    (torch requires it), and returns this rank's tensor-parallel group, its
    data-parallel group (the same shard of the same stage on every replica) and
    its tied-embedding group (first and last stage, same replica and shard)."""
    stages, replicas, tp = cfg["stages"], cfg["replicas"], cfg["tp"]
    at = {(r["replica"], r["stage"], r["tp_rank"]): r["rank"] for r in cfg["ranks"]}
    mine = {}

    def make(name, ranks):
        g = dist.new_group(ranks)
        if me["rank"] in ranks:
            mine[name] = g

    if tp > 1:
        for r in range(replicas):
            for s in range(stages):
                make("tp", [at[(r, s, t)] for t in range(tp)])
    if replicas > 1:
        for s in range(stages):
            for t in range(tp):
                make("dp", [at[(r, s, t)] for r in range(replicas)])
    if cfg["model"]["tied"] and stages > 1:
        for r in range(replicas):
            for t in range(tp):
                make("tied", [at[(r, 0, t)], at[(r, stages - 1, t)]])
    return mine.get("tp"), mine.get("dp"), mine.get("tied")


class Rank:
    """Rank is one process: its chunks (virtual stage stage + c·stages for
    chunk c), its neighbours and groups, and an executor of action lists."""

    def __init__(self, cfg, me, device):
        self.cfg, self.me, self.device = cfg, me, device
        model = cfg["model"]
        tp_group, self.dp_group, self.tied_group = make_groups(cfg, me)
        tp = TensorParallel(cfg["tp"], me["tp_rank"], tp_group)
        self.virtual = cfg["stages"] * cfg["chunks"]
        self.chunks = {}
        for c, (first, last) in enumerate(me["chunks"]):
            vs = me["stage"] + c * cfg["stages"]
            self.chunks[vs] = Chunk(model, first, last, vs == 0, vs == self.virtual - 1, tp).to(device)
        emb = self.chunks.get(0)
        head = self.chunks.get(self.virtual - 1)
        if model["tied"] and emb is not None and head is not None:
            head.head.weight = emb.embedding.weight
        self.tied = None
        if self.tied_group is not None:
            self.tied = emb.embedding.weight if emb is not None else head.head.weight
        params = torch.nn.ModuleList(list(self.chunks.values())).parameters()
        self.opt = torch.optim.SGD(params, lr=cfg["lr"])
        self.at = {(r["replica"], r["stage"], r["tp_rank"]): r["rank"] for r in cfg["ranks"]}
        self.shape = activation_shape(model, cfg["microbatch_size"])
        self.scale = 1.0 / (cfg["microbatches"] * cfg["replicas"])
        self.synced = set()

    def peer(self, vs):
        """peer is the rank of virtual stage vs with this rank's replica and shard."""
        return self.at[(self.me["replica"], vs % self.cfg["stages"], self.me["tp_rank"])]

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
                dist.all_reduce(p.grad, group=self.dp_group)
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
    reports_loss = me["stage"] == cfg["stages"] - 1 and me["tp_rank"] == 0
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
    net = Chunk(model, 0, model["layers"] - 1, True, True, TensorParallel())
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
