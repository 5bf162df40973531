#!/usr/bin/env python3
"""pipeplan runner worker: executes one rank of a pipeline plan with torch.distributed.

Modes (the protocol is documented in runner/README.md):
  worker.py --probe                     print {"torch_version", "cuda_device_count"} as JSON
  worker.py --config run.json           one rank under torchrun; writes result-rank<N>.json
  worker.py --config run.json --reference
                                        the same model and data unpipelined in one process;
                                        writes reference.json (the correctness check)

Works with torch >= 1.13 (Debian's python3-torch) and torch 2.x.
"""
import argparse
import json
import os
import re
import resource
import sys
import time

ACTION = re.compile(r"^(\d+)(F|B|OPT_STEP)(\d*)$")


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
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    print(json.dumps({"torch_version": torch.__version__, "cuda_device_count": n}))


def make_layer(torch, model, index):
    """make_layer builds model layer `index` with weights seeded by its global index,
    so every split of the model into stages starts from the same weights."""
    torch.manual_seed(model["seed"] * 1000003 + index)
    if model["kind"] == "transformer":
        return torch.nn.TransformerEncoderLayer(
            model["hidden"], model["heads"], model["ffn"], dropout=0.0, batch_first=True)
    k = model["bottleneck"][index]
    return torch.nn.Sequential(
        torch.nn.Linear(model["width"], k), torch.nn.ReLU(), torch.nn.Linear(k, model["width"]))


def sample_shape(model, microbatch_size):
    if model["kind"] == "transformer":
        return (microbatch_size, model["seq"], model["hidden"])
    return (microbatch_size, model["width"])


def microbatch(torch, cfg, replica, mb):
    """microbatch returns the (input, target) of one microbatch, the same in every mode
    and every step (a fixed batch, so the loss falls as the model trains)."""
    g = torch.Generator().manual_seed((cfg["model"]["seed"] * 7919 + replica) * 7919 + mb)
    shape = sample_shape(cfg["model"], cfg["microbatch_size"])
    return torch.randn(shape, generator=g), torch.randn(shape, generator=g)


def peak_memory_bytes(torch, device):
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # KiB on Linux


def parse_actions(strings):
    out = []
    for s in strings:
        m = ACTION.match(s)
        if not m:
            raise ValueError("action %r: the runner executes only F, B and OPT_STEP" % s)
        out.append((int(m.group(1)), m.group(2), int(m.group(3)) if m.group(3) else -1))
    return out


class Stage:
    """Stage is one rank's part of the pipeline: its layers, neighbours and replica group."""

    def __init__(self, torch, dist, cfg, me, device):
        self.torch, self.dist, self.cfg, self.device = torch, dist, cfg, device
        model = cfg["model"]
        self.me = me
        self.first = me["stage"] == 0
        self.last = me["stage"] == cfg["stages"] - 1
        self.layers = torch.nn.Sequential(
            *[make_layer(torch, model, i) for i in range(me["first_layer"], me["last_layer"] + 1)]).to(device)
        self.opt = torch.optim.SGD(self.layers.parameters(), lr=cfg["lr"])
        self.shape = sample_shape(model, cfg["microbatch_size"])
        # Every rank creates every stage's replica group, in the same order (torch requires it).
        self.group = None
        for s in range(cfg["stages"]):
            ranks = [r["rank"] for r in cfg["ranks"] if r["stage"] == s]
            g = dist.new_group(ranks) if cfg["replicas"] > 1 else None
            if s == me["stage"]:
                self.group = g
        self.scale = 1.0 / (cfg["microbatches"] * cfg["replicas"])

    def run_step(self, step, actions):
        """run_step executes one step's action list exactly; returns the microbatch losses."""
        torch, dist, me = self.torch, self.dist, self.me
        inputs, outputs, pending, losses = {}, {}, [], []
        for stage, kind, mb in actions:
            if stage != me["stage"]:
                raise ValueError("action for stage %d on the rank of stage %d" % (stage, me["stage"]))
            if kind == "F":
                x, y = microbatch(torch, self.cfg, me["replica"], mb)
                if self.first:
                    x = x.to(self.device)
                else:
                    x = torch.empty(self.shape, device=self.device)
                    dist.recv(x, src=me["rank"] - 1)
                    x.requires_grad_()
                out = self.layers(x)
                if self.last:
                    loss = torch.nn.functional.mse_loss(out, y.to(self.device))
                    losses.append(loss.item())
                    out = loss * self.scale
                else:
                    sent = out.detach()
                    pending.append((dist.isend(sent, dst=me["rank"] + 1), sent))
                inputs[mb], outputs[mb] = x, out
            elif kind == "B":
                out, x = outputs.pop(mb), inputs.pop(mb)
                if self.last:
                    out.backward()
                else:
                    grad = torch.empty(self.shape, device=self.device)
                    dist.recv(grad, src=me["rank"] + 1)
                    out.backward(grad)
                if not self.first:
                    pending.append((dist.isend(x.grad, dst=me["rank"] - 1), x.grad))
            else:  # OPT_STEP: the flush ends; replicas sum their gradients, then step.
                for handle, _ in pending:
                    handle.wait()
                pending = []
                if self.group is not None:
                    for p in self.layers.parameters():
                        dist.all_reduce(p.grad, group=self.group)
                self.opt.step()
                self.opt.zero_grad()
        if inputs or outputs or pending:
            raise ValueError("step %d: the action list left microbatches unfinished" % step)
        return losses


def run_rank(cfg):
    import torch
    import torch.distributed as dist

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
    stage = Stage(torch, dist, cfg, me, device)
    actions = parse_actions(cfg["actions"][me["stage"]])
    seconds, losses = [], []
    for step in range(cfg["warmup"] + cfg["steps"]):
        dist.barrier()
        start = time.perf_counter()
        step_losses = stage.run_step(step, actions)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - start
        if step >= cfg["warmup"]:
            seconds.append(elapsed)
        if step_losses:
            losses.append(sum(step_losses) / len(step_losses))
    result = {
        "rank": rank, "stage": me["stage"], "replica": me["replica"],
        "step_seconds": seconds, "losses": losses,
        "peak_memory_bytes": peak_memory_bytes(torch, device),
        "torch_version": torch.__version__,
    }
    write_json(os.path.join(cfg["out_dir"], "result-rank%d.json" % rank), result)
    dist.barrier()
    dist.destroy_process_group()


def run_reference(cfg):
    """run_reference trains the whole model in one process on the same data and
    microbatching; a synchronous pipeline (flush) must give the same losses."""
    import torch

    torch.set_num_threads(1)
    model = cfg["model"]
    layers = torch.nn.Sequential(*[make_layer(torch, model, i) for i in range(model["layers"])])
    opt = torch.optim.SGD(layers.parameters(), lr=cfg["lr"])
    scale = 1.0 / (cfg["microbatches"] * cfg["replicas"])
    losses = []
    for step in range(cfg["warmup"] + cfg["steps"]):
        total = 0.0
        for replica in range(cfg["replicas"]):
            for mb in range(cfg["microbatches"]):
                x, y = microbatch(torch, cfg, replica, mb)
                loss = torch.nn.functional.mse_loss(layers(x), y)
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
