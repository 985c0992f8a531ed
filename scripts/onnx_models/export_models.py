#!/usr/bin/python3
"""Writes real PyTorch-exported ONNX models with random weights, their inputs and PyTorch's outputs.

    /usr/bin/python3 scripts/onnx_models/export_models.py --out DIR [--models resnet18,mobilenet_v2,...]
        [--batch N] [--opset 17]

For each model it writes DIR/<model>/model.onnx (batch dimension dynamic, named 'batch'),
DIR/<model>/input_0.npy and DIR/<model>/output_0.npy (PyTorch's f32 outputs on that input), all from
fixed seeds, so two runs write the same files. The models: ResNet-18 and MobileNetV2 from
torchvision, a small transformer encoder (self-attention + LayerNorm, nn.TransformerEncoder), and the
MLP and CNN classifiers of tessera/models/vision.cpp rebuilt layer for layer in PyTorch.
Exits 77 (the ctest skip code) with a message when torch, torchvision or onnx is not installed.
"""
import argparse
import os
import sys

SKIP = 77

try:
    import numpy as np
    import torch
    from torch import nn
    import torchvision
    import onnx  # noqa: F401  (torch.onnx.export needs it)
except ImportError as e:  # a machine without Debian's python3-torch / -torchvision / -onnx
    print(f"SKIP: {e}; install python3-torch python3-torchvision python3-onnx", file=sys.stderr)
    sys.exit(SKIP)


class Classifier(nn.Module):
    """Tessera's built-in MLP (784-1024-512-256-10) or CNN, as in tessera/models/vision.cpp."""

    def __init__(self, kind):
        super().__init__()
        if kind == "mlp":
            self.body = nn.Sequential(nn.Flatten(1), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 512),
                                      nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
        else:
            self.body = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
                                      nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(1), nn.Linear(1600, 128), nn.ReLU(),
                                      nn.Linear(128, 10))

    def forward(self, x):
        return self.body(x)


class Encoder(nn.Module):
    """A small transformer encoder over token embeddings: 2 layers of multi-head self-attention and a
    feed-forward block, each with LayerNorm, then a final LayerNorm and a linear head."""

    def __init__(self, d_model=64, heads=4, layers=2, classes=10):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=128, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, classes)

    def forward(self, x):
        return self.head(self.encoder(x))


def build(name):
    """The model (eval mode) and the shape of one input sample (without the batch dimension)."""
    if name == "resnet18":
        return torchvision.models.resnet18(), (3, 224, 224)
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(), (3, 224, 224)
    if name == "transformer":
        return Encoder(), (16, 64)
    if name == "mlp":
        return Classifier("mlp"), (784,)
    if name == "cnn":
        return Classifier("cnn"), (1, 28, 28)
    raise SystemExit(f"unknown model '{name}': expected one of {', '.join(MODELS)}")


MODELS = ["resnet18", "mobilenet_v2", "transformer", "mlp", "cnn"]


def randomize_batchnorm(model, gen):
    # Fresh BatchNorm layers hold mean 0 / variance 1, which would hide a wrong use of the statistics.
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


def export(name, out_dir, batch, opset, seed):
    torch.manual_seed(seed)
    model, sample_shape = build(name)
    gen = torch.Generator().manual_seed(seed + 1)
    randomize_batchnorm(model, gen)
    model.eval()
    x = torch.randn((batch,) + sample_shape, generator=gen)
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    with torch.no_grad():
        y = model(x)
    # Exported with gradients enabled: under no_grad, nn.TransformerEncoder takes its fused fast path
    # (aten::_transformer_encoder_layer_fwd), which has no ONNX form.
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"], opset_version=opset,
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, do_constant_folding=True)
    np.save(os.path.join(folder, "input_0.npy"), x.numpy().astype(np.float32))
    np.save(os.path.join(folder, "output_0.npy"), y.numpy().astype(np.float32))
    print(f"{name}: {path} input {list(x.shape)} output {list(y.shape)}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="folder to write <model>/model.onnx, input_0.npy, output_0.npy")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    p.add_argument("--batch", type=int, default=2, help="batch size of the written input (the model's is dynamic)")
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.set_num_threads(2)
    for name in a.models.split(","):
        export(name, a.out, a.batch, a.opset, a.seed)


if __name__ == "__main__":
    main()
