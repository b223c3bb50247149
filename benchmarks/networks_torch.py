#!/usr/bin/env python3
"""networks_torch.py - make-network's networks as PyTorch eager modules.

Owns: the PyTorch side of the networks comparison (docs/networks.md). It
rebuilds a make-network folder (network.json + weights/*.npy) as torch.nn
modules with the very same weights: NCHW for PyTorch, so CONV2D weights
[OC,KH,KW,IC] become [OC,IC,KH,KW], depthwise weights [KH,KW,C,1] become
[C,1,KH,KW] (groups=C), linear weights [IN,OUT] become nn.Linear's
[OUT,IN]; the input is permuted NHWC -> NCHW and nothing else changes.
Convolutions carry the folded BatchNorm as their bias, as the TOSA graph
does. It does not run vaccel and decides nothing about timing beyond the
plain loop below (the GPU benchmark runner is elsewhere).

Usage:
  networks_torch.py FOLDER [--device cpu|cuda] [--dtype fp32|fp16] [--repeat N]
                    [--output FILE.npy]
      runs the network (dtype: the folder's), prints the median time of N
      runs, writes the output (float32) to FILE.npy;
  networks_torch.py --check --make-network PATH NAME [make-network options...]
      writes NAME (FP32) into a scratch folder and checks the module's output
      against tests/networks/reference.py's float64 result:
      |got - want| <= 1e-4 (1 + |want|), the FP32 tolerance of the vaccel tests.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def load(folder):
    with open(os.path.join(folder, "network.json")) as f:
        desc = json.load(f)
    params = {p["name"]: torch.from_numpy(np.load(os.path.join(folder, p["file"])))
              for p in desc["parameters"]}
    return desc, params


class Conv(nn.Module):
    """CONV2D (+ folded BatchNorm) with PyTorch padding, optional activation."""

    def __init__(self, params, name, stride, pad, act=None, depthwise=False):
        super().__init__()
        w = params[name + ".weight"]
        if depthwise:  # [KH,KW,C,1] -> [C,1,KH,KW]
            w = w.permute(2, 3, 0, 1)
        else:  # [OC,KH,KW,IC] -> [OC,IC,KH,KW]
            w = w.permute(0, 3, 1, 2)
        self.conv = nn.Conv2d(w.shape[1] * (w.shape[0] if depthwise else 1), w.shape[0],
                              w.shape[2], stride=stride, padding=pad, bias=True,
                              groups=w.shape[0] if depthwise else 1)
        with torch.no_grad():
            self.conv.weight.copy_(w.contiguous())
            self.conv.bias.copy_(params[name + ".bias"])
        self.act = act

    def forward(self, x):
        y = self.conv(x)
        if self.act == "relu":
            return F.relu(y)
        if self.act == "relu6":
            return F.relu6(y)
        return y


def linear(params, name):
    w = params[name + ".weight"]  # [IN, OUT]
    layer = nn.Linear(w.shape[0], w.shape[1])
    with torch.no_grad():
        layer.weight.copy_(w.t().contiguous())
        layer.bias.copy_(params[name + ".bias"])
    return layer


def layer_norm(params, name, eps):
    g = params[name + ".gamma"]
    layer = nn.LayerNorm(g.shape[0], eps=eps)
    with torch.no_grad():
        layer.weight.copy_(g)
        layer.bias.copy_(params[name + ".beta"])
    return layer


class ResidualBlock(nn.Module):
    def __init__(self, params, name, stride, bottleneck):
        super().__init__()
        if bottleneck:
            self.branch = nn.Sequential(Conv(params, name + ".conv1", 1, 0, "relu"),
                                        Conv(params, name + ".conv2", stride, 1, "relu"),
                                        Conv(params, name + ".conv3", 1, 0))
        else:
            self.branch = nn.Sequential(Conv(params, name + ".conv1", stride, 1, "relu"),
                                        Conv(params, name + ".conv2", 1, 1))
        self.shortcut = (Conv(params, name + ".downsample", stride, 0)
                         if name + ".downsample.weight" in params else nn.Identity())

    def forward(self, x):
        return F.relu(self.branch(x) + self.shortcut(x))


class Classifier(nn.Module):
    def __init__(self, params):
        super().__init__()
        self.fc = linear(params, "fc")

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ConvNet(nn.Module):
    """ResNet or MobileNetV2: NHWC input as vaccel takes it, logits out."""

    def __init__(self, body, params):
        super().__init__()
        self.body = body
        self.head = Classifier(params)

    def forward(self, x):
        return self.head(self.body(x.permute(0, 3, 1, 2)))


def resnet(desc, params):
    a = desc["architecture"]
    s, mp = a["stem"], a["max_pool"]
    layers = [Conv(params, "conv1", s["stride"], s["pad"], "relu"),
              nn.MaxPool2d(mp["kernel"], mp["stride"], mp["pad"])]
    for stage, count in enumerate(a["blocks"]):
        for i in range(count):
            stride = 2 if (i == 0 and stage > 0) else 1
            layers.append(ResidualBlock(params, f"layer{stage + 1}.{i}", stride,
                                        a["block"] == "bottleneck"))
    return ConvNet(nn.Sequential(*layers), params)


class InvertedResidual(nn.Module):
    def __init__(self, params, blk):
        super().__init__()
        n = blk["name"]
        parts = []
        if blk["expand"] != 1:
            parts.append(Conv(params, n + ".expand", 1, 0, "relu6"))
        parts.append(Conv(params, n + ".depthwise", blk["stride"], 1, "relu6", depthwise=True))
        parts.append(Conv(params, n + ".project", 1, 0))
        self.branch = nn.Sequential(*parts)
        self.residual = blk["residual"]

    def forward(self, x):
        return x + self.branch(x) if self.residual else self.branch(x)


def mobilenetv2(desc, params):
    a = desc["architecture"]
    s = a["stem"]
    layers = [Conv(params, s["name"], s["stride"], s["pad"], "relu6")]
    layers += [InvertedResidual(params, blk) for blk in a["blocks"]]
    layers.append(Conv(params, a["head"]["name"], 1, 0, "relu6"))
    return ConvNet(nn.Sequential(*layers), params)


class Attention(nn.Module):
    def __init__(self, params, name, heads, causal, seq):
        super().__init__()
        self.q, self.k, self.v, self.out = (linear(params, f"{name}.{p}") for p in ("q", "k", "v", "out"))
        self.heads = heads
        if causal:
            self.register_buffer("mask", torch.ones(seq, seq, dtype=torch.bool).triu(1))
        else:
            self.mask = None

    def forward(self, x):
        b, s, d = x.shape
        h, dh = self.heads, d // self.heads

        def split(t):
            return t.view(b, s, h, dh).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(dh)
        if self.mask is not None:
            scores = scores.masked_fill(self.mask, float("-inf"))
        ctx = torch.softmax(scores, dim=-1) @ v
        return self.out(ctx.transpose(1, 2).reshape(b, s, d))


class BertLayer(nn.Module):
    def __init__(self, params, n, a):
        super().__init__()
        eps = a["layer_norm_eps"]
        self.attention = Attention(params, n + ".attention", a["heads"], False, a["seq"])
        self.ln1 = layer_norm(params, n + ".attention.ln", eps)
        self.ffn_in, self.ffn_out = linear(params, n + ".ffn.in"), linear(params, n + ".ffn.out")
        self.ln2 = layer_norm(params, n + ".ffn.ln", eps)

    def forward(self, x):
        x = self.ln1(x + self.attention(x))
        return self.ln2(x + self.ffn_out(F.gelu(self.ffn_in(x))))


class Gpt2Block(nn.Module):
    def __init__(self, params, n, a):
        super().__init__()
        eps = a["layer_norm_eps"]
        self.ln1 = layer_norm(params, n + ".ln1", eps)
        self.attn = Attention(params, n + ".attn", a["heads"], True, a["seq"])
        self.ln2 = layer_norm(params, n + ".ln2", eps)
        self.fc, self.proj = linear(params, n + ".mlp.fc"), linear(params, n + ".mlp.proj")

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


def transformer(desc, params):
    a = desc["architecture"]
    layer = Gpt2Block if a["norm"] == "pre" else BertLayer
    return nn.Sequential(*[layer(params, f"layer.{i}", a) for i in range(a["layers"])])


BUILDERS = {"resnet18": resnet, "resnet50": resnet, "mobilenetv2": mobilenetv2,
            "bert": transformer, "gpt2-block": transformer}


def build(folder):
    """(module in eval mode, FP32 weights; the input as a float32 tensor, network.json)."""
    desc, params = load(folder)
    module = BUILDERS[desc["name"]](desc, params).eval()
    spec = desc["inputs"][0]
    x = torch.from_numpy(np.load(os.path.join(folder, spec["file"])).astype(np.float32))
    return module, x, desc


def check(args):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "tests", "networks"))
    import reference  # noqa: E402

    scratch = tempfile.mkdtemp(prefix="vaccel-networks-torch.")
    try:
        folder = os.path.join(scratch, "net")
        gen = subprocess.run([args.make_network, args.network, folder, "--dtype", "fp32"] + args.options,
                             capture_output=True, text=True)
        if gen.returncode != 0:
            print(f"FAIL: make-network {args.network}: {gen.stderr}", file=sys.stderr)
            return 1
        module, x, _ = build(folder)
        with torch.no_grad():
            got = module(x).numpy().astype(np.float64)
        want, _ = reference.compute(folder)
        err = np.abs(got - want)
        rel = float((err / (1 + np.abs(want))).max())
        print(f"{args.network} in PyTorch {torch.__version__} (float32, CPU) against NumPy float64: "
              f"max |got-want| {err.max():.3g}, max |got-want|/(1+|want|) {rel:.3g} (tolerance 1e-4)")
        if not rel <= 1e-4:
            print(f"FAIL: the PyTorch {args.network} differs from the reference", file=sys.stderr)
            return 1
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description="make-network's networks in PyTorch eager")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--make-network")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", choices=["fp32", "fp16"])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--output")
    parser.add_argument("network", help="a make-network folder, or with --check a network name")
    if "--check" in sys.argv[1:]:  # make-network's options follow the name
        parser.add_argument("options", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.check:
        if not args.make_network:
            parser.error("--check needs --make-network PATH")
        return check(args)

    module, x, desc = build(args.network)
    dtype = torch.float16 if (args.dtype or desc["dtype"]) == "fp16" else torch.float32
    module = module.to(args.device, dtype)
    x = x.to(args.device, dtype)
    times = []
    with torch.no_grad():
        for _ in range(max(1, args.repeat)):
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            out = module(x)
            if args.device.startswith("cuda"):
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
    times.sort()
    print(f"{desc['name']} {desc['dtype']} in PyTorch {torch.__version__} on {args.device} "
          f"({dtype}): median {times[len(times) // 2] * 1e3:.3f} ms over {len(times)} runs")
    if args.output:
        np.save(args.output, out.float().cpu().numpy())
    return 0


if __name__ == "__main__":
    sys.exit(main())
