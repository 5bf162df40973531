#!/usr/bin/env python3
"""pipeplan runner profile: measure a transformer's layers and the device's GEMMs.

  profile.py --config profile.json    writes the file named by its "out" key

The model is the runner's own (model.py's Embedding, Block and Head, unsplit),
profiled as a chain: the token embedding, each decoder block, then the head
(final norm, vocabulary projection and cross-entropy). Each layer runs
forward and backward on one microbatch; after `warmup` unmeasured runs, the
median of `repeats` timed ones is kept (CUDA: synchronized around each).
GEMMs: n×n by n×n matmuls for each n of `gemm_sizes`, `repeats` timed runs
each, at the profile's dtype (bf16 on CUDA, fp32 on CPU).

Works with torch >= 1.13 (Debian's python3-torch) and torch 2.x.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Block, Embedding, Head, Parallel  # noqa: E402
from worker import write_json  # noqa: E402


def timed(device, fn):
    """timed returns fn's result and its wall time, the device synchronized around it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return out, time.perf_counter() - start


def autocast(device):
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return torch.autocast(device_type="cpu", enabled=False)


def tensor_bytes(t):
    return t.numel() * t.element_size()


def profile_layer(cfg, device, name, layer, make_input, target=None):
    """profile_layer times one layer's forward and backward on fresh inputs."""
    layer.to(device)
    fwd, bwd, out_bytes = [], [], 0
    for i in range(cfg["warmup"] + cfg["repeats"]):
        x = make_input()
        layer.zero_grad(set_to_none=True)
        with autocast(device):
            out, f = timed(device, lambda: layer(x) if target is None else layer(x, target))
        grad = torch.ones_like(out) if out.dim() > 0 else None
        _, b = timed(device, lambda: out.backward(grad))
        out_bytes = tensor_bytes(out)
        if i >= cfg["warmup"]:
            fwd.append(f)
            bwd.append(b)
    params = sum(tensor_bytes(p) for p in layer.parameters())
    layer.to("cpu")
    return {"name": name, "fwd_seconds": statistics.median(fwd), "bwd_seconds": statistics.median(bwd),
            "output_activation_bytes": out_bytes, "parameter_bytes": params}


def profile_model(cfg, device):
    model = cfg["model"]
    par = Parallel(model)
    b, s, h = cfg["microbatch_size"], model["seq"], model["hidden"]
    g = torch.Generator().manual_seed(model["seed"])
    ids = torch.randint(0, model["vocab"], (b, s + 1), generator=g)
    tokens, targets = ids[:, :-1].to(device), ids[:, 1:].to(device)

    def hidden_input():
        return torch.randn(b, s, h, device=device, requires_grad=True)

    layers = [profile_layer(cfg, device, "embedding", Embedding(model, par), lambda: tokens)]
    for i in range(model["layers"]):
        layers.append(profile_layer(cfg, device, "block%d" % i, Block(model, i, par), hidden_input))
    layers.append(profile_layer(cfg, device, "head", Head(model, par), hidden_input, targets))
    return layers


def profile_gemms(cfg, device, dtype):
    out = []
    for n in cfg["gemm_sizes"]:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        for i in range(cfg["warmup"] + cfg["repeats"]):
            _, sec = timed(device, lambda: torch.mm(a, b))
            if i >= cfg["warmup"]:
                out.append({"n": n, "flops": 2.0 * n ** 3, "seconds": sec})
        del a, b
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", required=True)
    args = ap.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    if cfg["device"] == "cuda":
        device, dtype = torch.device("cuda", 0), torch.bfloat16
        name = torch.cuda.get_device_name(0)
    else:
        device, dtype = torch.device("cpu"), torch.float32
        torch.set_num_threads(cfg["threads"])
        name = "cpu"
    result = {"torch_version": torch.__version__, "device_name": name, "dtype": str(dtype).replace("torch.", "")}
    result["layers"] = profile_model(cfg, device) if cfg["model"] else []
    result["gemms"] = profile_gemms(cfg, device, dtype)
    write_json(cfg["out"], result)


if __name__ == "__main__":
    main()
