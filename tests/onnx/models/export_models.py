#!/usr/bin/python3
"""export_models.py OUT_DIR [NAME...] - the real models of docs/onnx.md
("Real models"), with random weights (seeded; nothing is downloaded),
exported by torch.onnx.export: for each NAME, OUT_DIR/NAME/model.onnx, the
input(s) as <input name>.npy and torch's own output as expected.npy.

Run from outside the repository (its onnx/ folder would shadow the onnx
module): run-models.sh does.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision

OPSET = 17  # LayerNormalization is one node from 17 on


class GPT2Block(nn.Module):
    """One pre-norm decoder block of the GPT-2 shape: causal self-attention
    written out (no fused kernel), a GELU MLP, residuals."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.out = nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (z.reshape(shape).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x))))


class GPT2(nn.Module):
    """A small GPT-2-style decoder: token and position embeddings (Gather on
    the token ids), blocks, a final LayerNorm and the tied LM head."""

    def __init__(self, vocab=512, width=128, heads=4, layers=2, context=64):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(GPT2Block(width, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(width)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tokens(ids) + self.positions(torch.arange(t))
        for block in self.blocks:
            x = block(x)
        return self.ln(x) @ self.tokens.weight.t()


def encoder():
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024,
                                       batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)


# name: (the model, its inputs {name: array})
def models():
    rng = np.random.default_rng(0)
    image = {"input": rng.standard_normal((1, 3, 224, 224), dtype=np.float32)}
    return {
        "resnet50": (lambda: torchvision.models.resnet50(), image),
        "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), image),
        "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(), image),
        "vit_b_16": (lambda: torchvision.models.vit_b_16(), image),
        "transformer_encoder": (encoder,
                                {"input": rng.standard_normal((1, 64, 256), dtype=np.float32)}),
        "gpt2": (GPT2, {"input": rng.integers(0, 512, (1, 64), dtype=np.int64)}),
    }


def randomize(model, inputs):
    """Weights that give the outputs some size: torchvision zeroes some heads
    (ViT's), and with its fresh BatchNorm statistics the activations of a
    deep network vanish. Zero weights get N(0, 0.02); BatchNorm statistics
    are measured on a batch of 8 random inputs (train mode, cumulative)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)) and not m.weight.any():
                nn.init.normal_(m.weight, std=0.02)
        norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
        if norms:
            for m in norms:
                m.reset_running_stats()
                m.momentum = None
            first = next(iter(inputs.values()))
            model.train()
            model(torch.randn(8, *first.shape[1:]))
    return model.eval()


def export(name, make, inputs, out):
    torch.manual_seed(0)
    model = randomize(make(), inputs)
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    args = tuple(torch.from_numpy(a) for a in inputs.values())
    with torch.no_grad():
        expected = model(*args).numpy()
    # Outside no_grad: there torch's TransformerEncoder takes a fused
    # kernel that has no ONNX export.
    torch.onnx.export(model, args, os.path.join(folder, "model.onnx"), opset_version=OPSET,
                      input_names=list(inputs), output_names=["output"],
                      do_constant_folding=True)
    for input_name, array in inputs.items():
        np.save(os.path.join(folder, input_name + ".npy"), array)
    np.save(os.path.join(folder, "expected.npy"), expected)
    print(f"{name}: exported, output {expected.shape}")


def main():
    out = sys.argv[1]
    chosen = sys.argv[2:]
    for name, (make, inputs) in models().items():
        if not chosen or name in chosen:
            export(name, make, inputs, out)


if __name__ == "__main__":
    main()
