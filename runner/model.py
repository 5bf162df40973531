"""pipeplan runner model: the transformer (or profile) layers one rank of a
plan builds, sharded over its tensor-, context- and expert-parallel groups,
and the synthetic data.

Imported by worker.py (the two files are written side by side in the run
directory); the classes and their parallel operators are described in
runner/README.md. Works with torch >= 1.13 (gloo there has all_to_all_single
but neither all_to_all nor reduce_scatter) and torch 2.x.
"""
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# Seed offsets of the model's parts: block i is seeded with index i, the others
# with these (beyond any layer index a plan can have).
EMBEDDING_PART, HEAD_PART = 1 << 24, (1 << 24) + 1
ROUTER_PART, SHARED_EXPERT_PART, EXPERT_PART = 1 << 25, 1 << 26, 1 << 27

# RING_TAG marks the context-parallel ring's messages (pipeline messages use
# small tags; the ring's peers are other pairs of ranks anyway).
RING_TAG = 1 << 30


def all_gather_seq(x, size, group):
    """all_gather_seq concatenates the group's (b, s, ...) tensors along s, in rank order."""
    parts = [torch.empty_like(x) for _ in range(size)]
    dist.all_gather(parts, x.contiguous(), group=group)
    return torch.cat(parts, dim=1)


def reduce_scatter_seq(x, size, group):
    """reduce_scatter_seq sums the group's (b, s, ...) tensors and returns this
    rank's s/size slice. It is written as all_to_all_single (each rank sends
    slice j to rank j, then sums what it receives), which gloo has in torch 1.13
    where reduce_scatter is missing; the traffic is a reduce-scatter's."""
    t = x.transpose(0, 1).contiguous()
    out = torch.empty_like(t)
    dist.all_to_all_single(out, t, group=group)
    return out.view(size, t.shape[0] // size, *t.shape[1:]).sum(0).transpose(0, 1).contiguous()


def operator(forward, backward):
    """operator is an autograd function of one tensor: forward(x) forward,
    backward(g) for its gradient (communication on both ways)."""

    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return forward(x)

        @staticmethod
        def backward(ctx, g):
            return backward(g)

    return Op


def all_reduced(group, scale=1.0):
    """all_reduced returns a function: the group's sum of a copy of x, times scale."""
    def f(x):
        x = x.clone()
        dist.all_reduce(x, group=group)
        return x if scale == 1.0 else x * scale
    return f


class TensorParallel:
    """TensorParallel is one rank's place in its tensor-parallel group and
    Megatron-LM's operators over it (Shoeybi et al. 2019 §3; dissertation
    §4.2.3; Korthikanti et al. 2022 for sequence parallelism): enter comes
    before a column-parallel layer (f: identity forward, all-reduce backward;
    with sequence parallelism an all-gather of the sequence shards, a
    reduce-scatter backward), exit after a row-parallel one (g: all-reduce
    forward; with sequence parallelism a reduce-scatter to the shards, an
    all-gather backward), shared wraps a replicated parameter that acts on
    sequence shards (its gradient is all-reduced over the group),
    cross_entropy is the vocabulary-parallel loss. With one rank (size 1)
    they are plain torch."""

    def __init__(self, size=1, rank=0, group=None, sequence_parallel=False):
        self.size, self.rank, self.group = size, rank, group
        self.sequence_parallel = sequence_parallel and size > 1
        grp = group

        def gather(x):
            return all_gather_seq(x, size, grp)

        def scatter(x):
            return reduce_scatter_seq(x, size, grp)

        def identity(x):
            return x.view_as(x)

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

        self._copy, self._reduce = operator(identity, all_reduced(grp)), operator(all_reduced(grp), identity)
        self._gather, self._scatter = operator(gather, scatter), operator(scatter, gather)
        self._ce = VocabCrossEntropy

    def enter(self, x):
        """enter makes x (b, s, h) whole for a column-parallel layer."""
        if self.size == 1:
            return x
        return (self._gather if self.sequence_parallel else self._copy).apply(x)

    def exit(self, x):
        """exit sums a row-parallel layer's partial outputs (b, s, h), to this
        rank's sequence shard under sequence parallelism."""
        if self.size == 1:
            return x
        return (self._scatter if self.sequence_parallel else self._reduce).apply(x)

    def shared(self, w):
        """shared is w, whose gradient is all-reduced over the group when it
        acts on sequence shards (norms, biases after exit, the router)."""
        return self._copy.apply(w) if self.sequence_parallel and w is not None else w

    def shard(self, t, dim=1):
        """shard is this rank's sequence shard of t under sequence parallelism, else t."""
        if not self.sequence_parallel:
            return t
        n = t.shape[dim] // self.size
        return t.narrow(dim, self.rank * n, n)

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


class ContextParallel:
    """ContextParallel is one rank's place in its context-parallel group
    (Megatron-LM's context parallelism): the sequence is cut into 2·size
    chunks and rank r holds chunks r and 2·size−1−r, so that every rank has
    as much of the causal mask's work as the others; attention is ring
    attention, the keys and values passed round the group (send/recv) one
    step per rank, each step's block combined by its log-sum-exp, blocks
    wholly above the causal diagonal skipped. mean averages the ranks'
    losses. With one rank it is plain causal attention."""

    def __init__(self, seq, size=1, rank=0, group=None, ring=None):
        self.seq, self.size, self.rank, self.group = seq, size, rank, group
        self.positions = self.chunk_positions(rank)
        if size == 1:
            return
        prev, nxt = ring[(rank - 1) % size], ring[(rank + 1) % size]

        def exchange(t, to, frm):
            t = t.contiguous()
            out = torch.empty_like(t)
            req = dist.isend(t, dst=to, tag=RING_TAG)
            dist.recv(out, src=frm, tag=RING_TAG)
            req.wait()
            return out

        # shift sends to the next rank of the ring and receives from the
        # previous one; the gradient goes back the other way. mean is the
        # group's mean of a loss each rank holds, the same on every rank;
        # each rank's share of the gradient is 1/size.
        self._shift = operator(lambda t: exchange(t, nxt, prev), lambda g: exchange(g, prev, nxt))
        self._mean = operator(all_reduced(group, 1.0 / size), lambda g: g / size)

    def chunk_positions(self, rank):
        """chunk_positions are the sequence positions rank holds, in order."""
        if self.size == 1:
            return torch.arange(self.seq)
        n = self.seq // (2 * self.size)
        first, second = rank, 2 * self.size - 1 - rank
        return torch.cat([torch.arange(first * n, (first + 1) * n), torch.arange(second * n, (second + 1) * n)])

    def local(self, t):
        """local is this rank's positions of t (b, s, ...)."""
        return t if self.size == 1 else t.index_select(1, self.positions.to(t.device))

    def mean(self, loss):
        """mean is the loss averaged over the group (each rank's loss covers
        as many tokens)."""
        return loss if self.size == 1 else self._mean.apply(loss)

    def attention(self, q, k, v):
        """attention is causal softmax attention of this rank's queries
        (b, heads, s_local, d) over the whole sequence's keys and values,
        whose local parts k, v (b, kv_heads, s_local, d) travel the ring."""
        d, rep = q.shape[-1], q.shape[1] // k.shape[1]
        qpos = self.positions.to(q.device)
        kv = torch.stack([k, v])
        out = lse = None
        for step in range(self.size):
            if step > 0:
                kv = self._shift.apply(kv)
            kpos = self.chunk_positions((self.rank - step) % self.size).to(q.device)
            mask = kpos.unsqueeze(0) > qpos.unsqueeze(1)
            rows = (~mask).any(1).nonzero().squeeze(1)
            if len(rows) == 0:
                continue  # a block wholly above the diagonal
            kk, vv = kv[0], kv[1]
            if rep > 1:
                kk, vv = kk.repeat_interleave(rep, dim=1), vv.repeat_interleave(rep, dim=1)
            qs = q if len(rows) == len(qpos) else q.index_select(2, rows)
            scores = (qs @ kk.transpose(-1, -2) / math.sqrt(d)).masked_fill(mask[rows], float("-inf"))
            block_lse = scores.logsumexp(-1)
            block = (scores - block_lse.unsqueeze(-1)).exp() @ vv
            if out is None:  # step 0, the diagonal block: every row sees itself
                out, lse = block.float(), block_lse.float()  # combined in fp32 (under autocast too)
                continue
            old, old_lse = out.index_select(2, rows), lse.index_select(2, rows)
            new_lse = torch.logaddexp(old_lse, block_lse)
            merged = old * (old_lse - new_lse).exp().unsqueeze(-1) + block * (block_lse - new_lse).exp().unsqueeze(-1)
            out, lse = out.index_copy(2, rows, merged.float()), lse.index_copy(2, rows, new_lse.float())
        return out.to(q.dtype)


class ExpertParallel:
    """ExpertParallel is one rank's place in its expert-parallel group: the
    rank holds experts [rank·E/size, (rank+1)·E/size) of every MoE layer and
    exchanges tokens with the group by all_to_all_single (dispatch, and the
    combine back; each the other's gradient). grad_group is the group that
    sums its experts' gradients (the ranks holding the same experts), None
    when no other rank holds them."""

    def __init__(self, size=1, rank=0, group=None, grad_group=None):
        self.size, self.rank, self.group, self.grad_group = size, rank, group, grad_group
        grp = group

        class AllToAll(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, send, recv):
                ctx.send, ctx.recv = send, recv
                out = x.new_empty((sum(recv),) + tuple(x.shape[1:]))
                dist.all_to_all_single(out, x.contiguous(), recv, send, group=grp)
                return out

            @staticmethod
            def backward(ctx, g):
                out = g.new_empty((sum(ctx.send),) + tuple(g.shape[1:]))
                dist.all_to_all_single(out, g.contiguous(), ctx.send, ctx.recv, group=grp)
                return out, None, None

        self._a2a = AllToAll

    def exchange(self, x, send, recv):
        """exchange sends send[j] rows of x to rank j and returns the recv[j]
        rows each rank j sent here, in rank order."""
        return self._a2a.apply(x, send, recv)

    def counts(self, counts):
        """counts sends each rank the per-expert token counts (E,) of its
        experts and returns (size, E/size): row j is what rank j sends."""
        out = torch.empty_like(counts)
        dist.all_to_all_single(out, counts.contiguous(), group=self.group)
        return out.view(self.size, -1)


class Parallel:
    """Parallel is a rank's tensor-, context- and expert-parallel places,
    each defaulting to one rank (the unsplit reference), and its activation
    recomputation (Recompute; none by default)."""

    def __init__(self, model, tp=None, cp=None, ep=None, recompute=None):
        self.tp = tp or TensorParallel()
        self.cp = cp or ContextParallel(model.get("seq", 1))
        self.ep = ep or ExpertParallel()
        self.recompute = recompute or Recompute()


class Recompute:
    """Recompute is the plan's activation recomputation, as Megatron-LM
    runs it: "selective" reruns the attention core in the backward pass
    instead of keeping its activations; "full" reruns whole layers, each
    keeping only its input — every layer, or with layers > 0 the first
    layers of each model chunk (--recompute-method block). Both through
    torch.utils.checkpoint (non-reentrant), which reruns a function's
    forward, collectives included, when the backward needs what it did not
    keep. FORWARDS counts the forward passes run (chunks, layers, attention
    cores), recomputation included, for the rank's result."""

    FORWARDS = {"chunk": 0, "layer": 0, "attention_core": 0}

    def __init__(self, mode="none", layers=0):
        if mode not in ("none", "selective", "full"):
            raise ValueError("recompute: %r is not none, selective or full" % mode)
        self.mode, self.layers = mode, layers

    def core(self, fn, *args):
        """core runs the attention core fn, recomputed when selective."""
        if self.mode == "selective" and torch.is_grad_enabled():
            return checkpoint(fn, *args, use_reentrant=False)
        return fn(*args)

    def layer(self, layer, index, x):
        """layer runs the chunk's index-th layer on x, recomputed when full
        covers it."""
        if self.mode == "full" and (self.layers == 0 or index < self.layers) and torch.is_grad_enabled():
            return checkpoint(layer, x, use_reentrant=False)
        return layer(x)


def generator(model, part):
    return torch.Generator().manual_seed(model["seed"] * 1000003 + part)


def randn(g, *shape):
    return torch.randn(*shape, generator=g) * 0.02


# MAX_EXPERTS spaces the seeds of one layer's experts (layout.go refuses more).
MAX_EXPERTS = 4096


class Norm(torch.nn.Module):
    """Norm is LayerNorm or RMSNorm (model.norm), replicated on every
    tensor-parallel rank (acting on sequence shards under sequence parallelism)."""

    def __init__(self, model, tp):
        super().__init__()
        self.tp, self.rms = tp, model["norm"] == "rmsnorm"
        self.weight = torch.nn.Parameter(torch.ones(model["hidden"]))
        self.bias = None if self.rms else torch.nn.Parameter(torch.zeros(model["hidden"]))

    def forward(self, x):
        w, b = self.tp.shared(self.weight), self.tp.shared(self.bias)
        if self.rms:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w
        return F.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def rotary(t, positions):
    """rotary applies the rotary position embedding (Su et al. 2021) to (b, heads, s, d)
    whose s rows are at the given sequence positions; the angles in fp32."""
    d = t.shape[-1]
    inv = 1.0 / 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32, device=t.device) / d)
    angle = positions.to(device=t.device, dtype=torch.float32)[:, None] * inv[None]
    cos, sin = angle.cos(), angle.sin()
    even, odd = t[..., 0::2].float(), t[..., 1::2].float()
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2).to(t.dtype)


class MLP(torch.nn.Module):
    """MLP is a GeLU (or SwiGLU when gated) MLP of inner size ffn, split tp
    ways: column-parallel FC1 (and gate), row-parallel FC2. forward takes the
    entered input and returns the partial output, before the exit; fc2_bias
    is added after it."""

    def __init__(self, model, g, ffn, tp, bias):
        super().__init__()
        h, fl, self.gated = model["hidden"], ffn // tp.size, model["gated"]
        up, gate, down = randn(g, ffn, h), randn(g, ffn, h), randn(g, h, ffn)
        bup, bgate, bdown = randn(g, ffn), randn(g, ffn), randn(g, h)
        P = torch.nn.Parameter
        self.fc1 = P(tp.rows(up, fl))
        self.fc1_bias = P(tp.rows(bup, fl)) if bias else None
        self.gate = P(tp.rows(gate, fl)) if self.gated else None
        self.gate_bias = P(tp.rows(bgate, fl)) if self.gated and bias else None
        self.fc2 = P(tp.cols(down, fl))
        self.fc2_bias = P(bdown) if bias else None

    def forward(self, y, _=None):
        u = F.linear(y, self.fc1, self.fc1_bias)
        u = F.silu(F.linear(y, self.gate, self.gate_bias)) * u if self.gated else F.gelu(u)
        return F.linear(u, self.fc2)


class MoE(torch.nn.Module):
    """MoE is a mixture-of-experts MLP (no biases, as in Mixtral and
    DeepSeek-MoE): a router (replicated) scores the experts, each token goes
    to its topk highest-scoring experts weighted by the softmax over those k
    scores (Megatron-LM's default router, Mixtral's), experts are MLPs of
    inner size expert_ffn split tp ways, this rank holding E/ep of them; no
    capacity limit (no token dropped) and no auxiliary balancing loss.
    With expert_groups, a token's experts come from its group_topk
    highest-scoring of that many contiguous groups, a group scored by the
    sum of its topk/group_topk best experts (Megatron-Core's
    group_limited_topk; DeepSeek-V3's node-limited routing). Shared experts
    (DeepSeek-MoE) are one MLP of shared_experts·expert_ffn that every
    token goes through."""

    def __init__(self, model, index, par):
        super().__init__()
        tp, ep = par.tp, par.ep
        self.tp, self.ep, self.gated = tp, ep, model["gated"]
        self.experts, self.topk = model["experts"], model["topk"]
        self.groups, self.group_topk = model.get("expert_groups", 0), model.get("group_topk", 0)
        self.local = self.experts // ep.size
        h, f = model["hidden"], model["expert_ffn"]
        fl = f // tp.size
        P = torch.nn.Parameter
        self.router = P(randn(generator(model, ROUTER_PART + index), self.experts, h))
        ups, gates, downs = [], [], []
        for e in range(ep.rank * self.local, (ep.rank + 1) * self.local):
            g = generator(model, EXPERT_PART + index * MAX_EXPERTS + e)
            up, gate, down = randn(g, f, h), randn(g, f, h), randn(g, h, f)
            ups.append(tp.rows(up, fl))
            gates.append(tp.rows(gate, fl))
            downs.append(tp.cols(down, fl))
        self.up, self.down = P(torch.stack(ups)), P(torch.stack(downs))
        self.gate = P(torch.stack(gates)) if self.gated else None
        if ep.size > 1:
            for p in (self.up, self.gate, self.down):
                if p is not None:
                    p.grad_group = ep.grad_group  # summed over the ranks holding these experts only
        shared = model.get("shared_experts", 0)
        g = generator(model, SHARED_EXPERT_PART + index)
        self.shared = MLP(model, g, shared * f, tp, False) if shared else None
        self.fc2_bias = None

    def run_experts(self, x, counts):
        """run_experts applies local expert e to the next counts[e] rows of x."""
        outs, start = [], 0
        for e, c in enumerate(counts):
            seg = x[start:start + c]
            start += c
            u = F.linear(seg, self.up[e])
            u = F.silu(F.linear(seg, self.gate[e])) * u if self.gated else F.gelu(u)
            outs.append(F.linear(u, self.down[e]))
        return torch.cat(outs)

    def forward(self, ye, y):
        """forward takes the entered input ye (b, s, h) and the input before
        enter y (the router's: its gradient must not be summed over the
        tensor-parallel ranks twice); returns the partial output."""
        b, s, h = ye.shape
        k, dev = self.topk, ye.device
        logits = self.tp.enter(F.linear(y, self.tp.shared(self.router))).reshape(-1, self.experts)
        if self.groups:
            per = logits.view(-1, self.groups, self.experts // self.groups)
            score = per.topk(max(1, k // self.group_topk), dim=-1)[0].sum(-1)
            chosen = torch.zeros_like(score, dtype=torch.bool).scatter_(1, score.topk(self.group_topk, dim=-1)[1], True)
            logits = logits.masked_fill(~chosen.repeat_interleave(self.experts // self.groups, dim=1), float("-inf"))
        top, idx = logits.topk(k, dim=-1)
        weight = top.softmax(-1)
        x = ye.reshape(-1, h)
        flat = idx.reshape(-1)  # slot j is token j // k's (j % k)-th expert
        order = torch.sort(flat, stable=True)[1]
        xs = x.index_select(0, order // k)  # slots grouped by expert
        counts = torch.bincount(flat, minlength=self.experts)
        if self.ep.size == 1:
            ys = self.run_experts(xs, counts.tolist())
        else:
            got = self.ep.counts(counts)  # got[j, e]: rows rank j sends to local expert e
            send = counts.view(self.ep.size, self.local).sum(1).tolist()
            recv = got.sum(1).tolist()
            xr = self.ep.exchange(xs, send, recv)
            expert = torch.arange(self.local, device=dev).repeat(self.ep.size).repeat_interleave(got.reshape(-1))
            by_expert = torch.sort(expert, stable=True)[1]
            yr = self.run_experts(xr.index_select(0, by_expert), torch.bincount(expert, minlength=self.local).tolist())
            yr = torch.zeros_like(yr).index_copy(0, by_expert, yr)
            ys = self.ep.exchange(yr, recv, send)
        slots = torch.zeros_like(ys).index_copy(0, order, ys).view(-1, k, h)
        out = (slots * weight.unsqueeze(-1).to(slots.dtype)).sum(1).view(b, s, h)
        return out if self.shared is None else out + self.shared(ye)


class Block(torch.nn.Module):
    """Block is one pre-norm GPT decoder layer's shard: causal self-attention
    (grouped-query when kv_heads < heads; rotary when the model has no learned
    positions; ring attention over the context-parallel group) with
    column-parallel QKV and a row-parallel output projection, then an MLP
    (GeLU, or SwiGLU when gated; a mixture of experts from layer first_dense
    on, in every moe_every-th layer, when the model has experts) with
    column-parallel FC1 (and gate) and row-parallel FC2. Full weights are
    drawn from the layer's seed and sliced, so every split starts from the
    same model."""

    def __init__(self, model, index, par):
        super().__init__()
        tp = par.tp
        h, a, kv, d = model["hidden"], model["heads"], model["kv_heads"], model["head_dim"]
        self.tp, self.cp, self.rope, self.recompute = tp, par.cp, model["position"] == "rope", par.recompute
        self.heads, self.kv_heads, self.head_dim = a // tp.size, kv // tp.size, d
        g = generator(model, index)
        wq, wk, wv, wo = randn(g, a * d, h), randn(g, kv * d, h), randn(g, kv * d, h), randn(g, h, a * d)
        bq, bk, bv, bo = randn(g, a * d), randn(g, kv * d), randn(g, kv * d), randn(g, h)
        P = torch.nn.Parameter
        qkv_bias = model["bias"] in ("all", "qkv")
        bias = model["bias"] == "all"
        n, m = self.heads * d, self.kv_heads * d
        self.norm1, self.norm2 = Norm(model, tp), Norm(model, tp)
        self.qkv = P(torch.cat([tp.rows(wq, n), tp.rows(wk, m), tp.rows(wv, m)]))
        self.qkv_bias = P(torch.cat([tp.rows(bq, n), tp.rows(bk, m), tp.rows(bv, m)])) if qkv_bias else None
        self.proj = P(tp.cols(wo, n))
        self.proj_bias = P(bo) if bias else None
        every = max(1, model.get("moe_every", 0))
        if model.get("experts", 0) > 0 and index >= model.get("first_dense", 0) and (index + 1) % every == 0:
            self.mlp = MoE(model, index, par)
        else:
            self.mlp = MLP(model, g, model["ffn"], tp, bias)

    def attention(self, x):
        y = self.tp.enter(self.norm1(x))
        b, s, _ = y.shape
        qkv = F.linear(y, self.qkv, self.qkv_bias)
        n, m, d = self.heads * self.head_dim, self.kv_heads * self.head_dim, self.head_dim
        q, k, v = qkv.split([n, m, m], dim=-1)
        q = q.view(b, s, self.heads, d).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, d).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, d).transpose(1, 2)
        if self.rope:
            q, k = rotary(q, self.cp.positions), rotary(k, self.cp.positions)
        o = self.recompute.core(self.core, q, k, v).transpose(1, 2).reshape(b, s, n)
        return self.exit(F.linear(o, self.proj), self.proj_bias)

    def core(self, q, k, v):
        """core is the attention core: softmax attention, over the ring."""
        Recompute.FORWARDS["attention_core"] += 1
        return self.cp.attention(q, k, v)

    def exit(self, o, bias):
        o = self.tp.exit(o)
        return o if bias is None else o + self.tp.shared(bias)

    def forward(self, x):
        Recompute.FORWARDS["layer"] += 1
        x = x + self.attention(x)
        y = self.norm2(x)
        return x + self.exit(self.mlp(self.tp.enter(y), y), self.mlp.fc2_bias)


class Embedding(torch.nn.Module):
    """Embedding is the vocabulary-parallel token embedding (this rank's rows
    of the padded vocabulary, its lookups summed over the tensor-parallel
    group: all-reduced, or reduce-scattered to the sequence shards) of this
    rank's context-parallel positions, plus learned positions when the model
    has them."""

    def __init__(self, model, par):
        super().__init__()
        tp = par.tp
        self.tp, self.cp, self.rows = tp, par.cp, model["padded_vocab"] // tp.size
        self.start = tp.rank * self.rows
        g = generator(model, EMBEDDING_PART)
        self.weight = torch.nn.Parameter(tp.rows(randn(g, model["padded_vocab"], model["hidden"]), self.rows))
        pos = randn(g, model["seq"], model["hidden"])
        self.pos = torch.nn.Parameter(pos) if model["position"] == "learned" else None

    def forward(self, ids):
        ids = self.cp.local(ids)
        outside = (ids < self.start) | (ids >= self.start + self.rows)
        e = F.embedding((ids - self.start).masked_fill(outside, 0), self.weight)
        e = self.tp.exit(e.masked_fill(outside.unsqueeze(-1), 0.0))
        if self.pos is None:
            return e
        pos = self.tp.shared(self.pos).index_select(0, self.cp.positions.to(ids.device))
        return e + self.tp.shard(pos, dim=0)


class Head(torch.nn.Module):
    """Head is the final norm, the vocabulary-parallel output projection and
    cross-entropy of this rank's context-parallel positions, averaged over
    the context-parallel group; with tied embeddings its weight starts as
    the embedding's (and is the same parameter when both are on one rank)."""

    def __init__(self, model, par):
        super().__init__()
        tp = par.tp
        self.tp, self.cp, self.rows = tp, par.cp, model["padded_vocab"] // tp.size
        self.start = tp.rank * self.rows
        self.norm = Norm(model, tp)
        part = EMBEDDING_PART if model["tied"] else HEAD_PART
        w = randn(generator(model, part), model["padded_vocab"], model["hidden"])
        self.weight = torch.nn.Parameter(tp.rows(w, self.rows))

    def forward(self, x, target):
        target = self.cp.local(target)
        logits = F.linear(self.tp.enter(self.norm(x)), self.weight).float()
        loss = self.tp.cross_entropy(logits.reshape(-1, self.rows), target.reshape(-1), self.start)
        return self.cp.mean(loss)


class Chunk(torch.nn.Module):
    """Chunk is a virtual stage: (the embedding,) layers first..last (and the
    head with the loss); a profile model's layers are Linear bottlenecks with
    an MSE loss. A transformer in bf16 (model.precision) runs under
    torch.autocast on CUDA; on CPU, and in every other precision, in fp32."""

    def __init__(self, model, first, last, has_input, has_loss, par):
        super().__init__()
        self.has_loss, self.transformer, self.recompute = has_loss, model["kind"] == "transformer", par.recompute
        self.bf16 = self.transformer and model.get("precision") == "bf16"
        self.embedding = Embedding(model, par) if self.transformer and has_input else None
        self.layers = torch.nn.ModuleList([self.make_layer(model, i, par) for i in range(first, last + 1)])
        self.head = Head(model, par) if self.transformer and has_loss else None
        if self.embedding is not None and self.head is not None and model["tied"]:
            self.head.weight = self.embedding.weight

    @staticmethod
    def make_layer(model, index, par):
        if model["kind"] == "transformer":
            return Block(model, index, par)
        torch.manual_seed(model["seed"] * 1000003 + index)
        k = model["bottleneck"][index]
        return torch.nn.Sequential(
            torch.nn.Linear(model["width"], k), torch.nn.ReLU(), torch.nn.Linear(k, model["width"]))

    def forward(self, x, target=None):
        if self.bf16 and x.device.type == "cuda":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return self.run(x, target)
        return self.run(x, target)

    def run(self, x, target):
        Recompute.FORWARDS["chunk"] += 1
        if self.embedding is not None:
            x = self.embedding(x)
        for i, layer in enumerate(self.layers):
            x = self.recompute.layer(layer, i, x)
        if not self.has_loss:
            return x
        if self.head is not None:
            return self.head(x, target)
        return F.mse_loss(x, target)


def activation_shape(cfg):
    """activation_shape is the shape of the activations a rank sends to the
    next stage: (b, s, h) of its context-parallel positions (its sequence
    shard of them under sequence parallelism), or (b, width)."""
    model, b = cfg["model"], cfg["microbatch_size"]
    if model["kind"] != "transformer":
        return (b, model["width"])
    s = model["seq"] // cfg["cp"]
    if cfg["sequence_parallel"] and cfg["tp"] > 1:
        s //= cfg["tp"]
    return (b, s, model["hidden"])


def microbatch(cfg, replica, mb):
    """microbatch returns the (input, target) of one microbatch, the same in every
    mode and every step (a fixed batch, so the loss falls as the model trains):
    synthetic tokens and their next tokens (whole sequences: the chunks take
    their context-parallel positions), or a profile model's random vectors."""
    model = cfg["model"]
    g = torch.Generator().manual_seed((model["seed"] * 7919 + replica) * 7919 + mb)
    b = cfg["microbatch_size"]
    if model["kind"] == "transformer":
        tokens = torch.randint(0, model["vocab"], (b, model["seq"] + 1), generator=g)
        return tokens[:, :-1], tokens[:, 1:]
    shape = (b, model["width"])
    return torch.randn(shape, generator=g), torch.randn(shape, generator=g)
