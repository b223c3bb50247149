#!/usr/bin/env python3
"""reference.py - the networks of make-network, in NumPy float64.

Owns: an oracle for examples/networks/make_network.cpp that never reads
model.tosa. It rebuilds each network from OUT_DIR/network.json (name,
architecture, input and output) and OUT_DIR/weights/*.npy, and computes the
output in float64 with plain NumPy: a convolution is a sliding-window view
and a tensordot, padding is PyTorch's (p zeros on every side, output
floor((H + 2p - K) / s) + 1), the causal mask is a boolean mask (masked
scores are -inf), GELU and LayerNorm are written from their definitions.

Decides: for an fp16 network the weights and the input are the FP16 values
the model holds (float32 files rounded to float16, the input file is
float16), widened to float64; everything after that is float64, so the
difference from vaccel is what FP16 arithmetic costs, not different data.

Usage: reference.py OUT_DIR [--output FILE.npy] [--stats]
  --output writes the result (float64); --stats prints the RMS of each
  block's output (to check that activations stay O(1)).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)


class Network:
    def __init__(self, folder):
        with open(os.path.join(folder, "network.json")) as f:
            self.desc = json.load(f)
        self.folder = folder
        self.fp16 = self.desc["dtype"] == "fp16"
        self.arch = self.desc["architecture"]
        self.params = {}
        for p in self.desc["parameters"]:
            values = np.load(os.path.join(folder, p["file"]))
            if values.dtype != np.float32 or list(values.shape) != p["shape"]:
                raise SystemExit(f"{p['file']}: {values.dtype} {values.shape}, network.json says "
                                 f"float32 {p['shape']}: regenerate the folder with make-network")
            if self.fp16:
                values = values.astype(np.float16)
            self.params[p["name"]] = values.astype(np.float64)
        self.used = set()
        self.stats = []

    def w(self, name):
        self.used.add(name)
        return self.params[name]

    def input(self):
        spec = self.desc["inputs"][0]
        x = np.load(os.path.join(self.folder, spec["file"]))
        want = np.float16 if self.fp16 else np.float32
        if x.dtype != want:
            raise SystemExit(f"{spec['file']}: dtype {x.dtype}, expected {np.dtype(want)}")
        return x.astype(np.float64)

    def note(self, name, x):
        self.stats.append((name, float(np.sqrt(np.mean(x * x)))))
        return x


# ---------------------------------------------------------------- operators


def conv2d(x, w, b, stride, pad):
    """x [N,H,W,C], w [OC,KH,KW,C] -> [N,OH,OW,OC], PyTorch padding."""
    kh, kw = w.shape[1], w.shape[2]
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    # win [N,OH,OW,C,KH,KW]
    return np.tensordot(win, w, axes=([3, 4, 5], [3, 1, 2])) + b


def depthwise(x, w, b, stride, pad):
    """x [N,H,W,C], w [KH,KW,C,1] -> [N,OH,OW,C]."""
    kh, kw = w.shape[0], w.shape[1]
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]
    return np.einsum("nhwcij,ijc->nhwc", win, w[:, :, :, 0]) + b


def max_pool(x, kernel, stride, pad):
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)), constant_values=-np.inf)
    win = np.lib.stride_tricks.sliding_window_view(xp, (kernel, kernel), axis=(1, 2))
    return win[:, ::stride, ::stride].max(axis=(-2, -1))


def relu(x):
    return np.maximum(x, 0.0)


def relu6(x):
    return np.clip(x, 0.0, 6.0)


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu_erf(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------- networks


def conv_bn(net, x, name, stride, pad, act=None):
    w = net.w(name + ".weight")
    y = conv2d(x, w, net.w(name + ".bias"), stride, pad)
    return act(y) if act else y


def classifier(net, x):
    pooled = x.mean(axis=(1, 2))  # [N, C]
    return pooled @ net.w("fc.weight") + net.w("fc.bias")


def resnet(net, x):
    a = net.arch
    stem = a["stem"]
    x = conv_bn(net, x, "conv1", stem["stride"], stem["pad"], relu)
    mp = a["max_pool"]
    x = net.note("maxpool", max_pool(x, mp["kernel"], mp["stride"], mp["pad"]))
    bottleneck = a["block"] == "bottleneck"
    for stage, count in enumerate(a["blocks"]):
        for i in range(count):
            n = f"layer{stage + 1}.{i}"
            stride = 2 if (i == 0 and stage > 0) else 1
            if bottleneck:
                y = conv_bn(net, x, n + ".conv1", 1, 0, relu)
                y = conv_bn(net, y, n + ".conv2", stride, 1, relu)
                y = conv_bn(net, y, n + ".conv3", 1, 0)
            else:
                y = conv_bn(net, x, n + ".conv1", stride, 1, relu)
                y = conv_bn(net, y, n + ".conv2", 1, 1)
            shortcut = x
            if n + ".downsample.weight" in net.params:
                shortcut = conv_bn(net, x, n + ".downsample", stride, 0)
            x = net.note(n, relu(y + shortcut))
    return classifier(net, x)


def mobilenetv2(net, x):
    a = net.arch
    stem = a["stem"]
    x = conv_bn(net, x, stem["name"], stem["stride"], stem["pad"], relu6)
    for blk in a["blocks"]:
        n = blk["name"]
        y = x
        if blk["expand"] != 1:
            y = conv_bn(net, y, n + ".expand", 1, 0, relu6)
        y = relu6(depthwise(y, net.w(n + ".depthwise.weight"), net.w(n + ".depthwise.bias"),
                            blk["stride"], 1))
        y = conv_bn(net, y, n + ".project", 1, 0)
        x = net.note(n, x + y if blk["residual"] else y)
    x = conv_bn(net, x, a["head"]["name"], 1, 0, relu6)
    return classifier(net, x)


def attention(net, x, name, heads, causal):
    b, s, d = x.shape
    dh = d // heads

    def proj(part):
        return x @ net.w(f"{name}.{part}.weight") + net.w(f"{name}.{part}.bias")

    def split(t):  # [B,S,D] -> [B,H,S,dh]
        return t.reshape(b, s, heads, dh).transpose(0, 2, 1, 3)

    q, k, v = split(proj("q")), split(proj("k")), split(proj("v"))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)
    if causal:
        allowed = np.tril(np.ones((s, s), dtype=bool))
        scores = np.where(allowed, scores, -np.inf)
    ctx = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
    return ctx @ net.w(f"{name}.out.weight") + net.w(f"{name}.out.bias")


def linear(net, x, name):
    return x @ net.w(name + ".weight") + net.w(name + ".bias")


def ln(net, x, name):
    return layer_norm(x, net.w(name + ".gamma"), net.w(name + ".beta"), net.arch["layer_norm_eps"])


def bert(net, x):
    a = net.arch
    for layer in range(a["layers"]):
        n = f"layer.{layer}"
        x = ln(net, x + attention(net, x, n + ".attention", a["heads"], False), n + ".attention.ln")
        f = linear(net, gelu_erf(linear(net, x, n + ".ffn.in")), n + ".ffn.out")
        x = net.note(n, ln(net, x + f, n + ".ffn.ln"))
    return x


def gpt2_block(net, x):
    a = net.arch
    for layer in range(a["layers"]):
        n = f"layer.{layer}"
        x = x + attention(net, ln(net, x, n + ".ln1"), n + ".attn", a["heads"], True)
        m = linear(net, gelu_tanh(linear(net, ln(net, x, n + ".ln2"), n + ".mlp.fc")), n + ".mlp.proj")
        x = net.note(n, x + m)
    return x


NETWORKS = {
    "resnet18": resnet,
    "resnet50": resnet,
    "mobilenetv2": mobilenetv2,
    "bert": bert,
    "gpt2-block": gpt2_block,
}


def compute(folder, stats=False):
    """The float64 output of the network in FOLDER (and the Network)."""
    net = Network(folder)
    name = net.desc["name"]
    if name not in NETWORKS:
        raise SystemExit(f"{folder}/network.json: unknown network {name!r}")
    out = NETWORKS[name](net, net.input())
    unused = set(net.params) - net.used
    if unused:
        raise SystemExit(f"{folder}: parameters the reference never read: {sorted(unused)[:5]} "
                         f"(network.json and reference.py disagree about {name})")
    want = net.desc["outputs"][0]["shape"]
    if list(out.shape) != want:
        raise SystemExit(f"{folder}: reference output shape {out.shape}, network.json says {want}")
    return out, net


def main():
    parser = argparse.ArgumentParser(description="NumPy float64 reference of a make-network folder")
    parser.add_argument("folder")
    parser.add_argument("--output")
    parser.add_argument("--stats", action="store_true")
    args = parser.parse_args()
    out, net = compute(args.folder)
    if args.stats:
        for name, rms in net.stats:
            print(f"{name:24s} rms {rms:.4g}")
        print(f"{'output':24s} rms {float(np.sqrt(np.mean(out * out))):.4g}")
    if args.output:
        np.save(args.output, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
