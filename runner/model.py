"""pipeplan runner model: the transformer (or profile) layers one rank of a
plan builds, sharded over its tensor-parallel group, and the synthetic data.

Imported by worker.py (the two files are written side by side in the run
directory); the classes and their parallel operators are described in
runner/README.md. Works with torch >= 1.13 and torch 2.x.
"""
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F

# Seed offsets of the model's parts: block i is seeded with index i, the others
# with these (beyond any layer index a plan can have).
EMBEDDING_PART, HEAD_PART = 1 << 24, (1 << 24) + 1


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
