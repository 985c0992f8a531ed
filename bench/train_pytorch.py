#!/usr/bin/python3
"""The recipe of `tessera train` in PyTorch, for an accuracy and speed comparison in the same run.

    /usr/bin/python3 bench/train_pytorch.py [--model mlp|cnn] [--epochs 3] [--seed 0] [--batch-size 64]

Fashion-MNIST from Debian's dataset-fashion-mnist (gzip IDX), pixels scaled to [0, 1], Adam lr 1e-3,
shuffled every epoch, PyTorch's default initialisation (which Tessera's nn::Linear/Conv2d also use).
Runs with torch.set_num_threads(2) and OPENBLAS_NUM_THREADS=1 (set before torch loads). Prints the
test accuracy after every epoch and ends with one JSON line like `tessera train --json`.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse, gzip, json, struct, sys, time

import numpy as np
import torch
import torch.nn as nn

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, = struct.unpack(">I", raw[:4])
    rank = magic & 0xFF
    dims = struct.unpack(">" + "I" * rank, raw[4:4 + 4 * rank])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(split):
    x = read_idx(f"{DATA}/{split}-images-idx3-ubyte.gz").astype(np.float32) / 255.0
    y = read_idx(f"{DATA}/{split}-labels-idx1-ubyte.gz").astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def model_of(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(),
                             nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=64)
    a = p.parse_args()
    if not os.path.exists(DATA):
        sys.exit(f"Fashion-MNIST not found under {DATA}: apt-get install dataset-fashion-mnist")
    torch.set_num_threads(2)
    torch.manual_seed(a.seed)
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    if a.model == "cnn":
        xtr, xte = xtr.unsqueeze(1), xte.unsqueeze(1)
    model = model_of(a.model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(a.seed)
    train_time, samples, acc = 0.0, 0, 0.0
    for epoch in range(1, a.epochs + 1):
        model.train()
        order = torch.randperm(len(xtr), generator=g)
        t0 = time.perf_counter()
        for i in range(0, len(xtr), a.batch_size):
            idx = order[i:i + a.batch_size]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
        train_time += time.perf_counter() - t0
        samples += len(xtr)
        model.eval()
        with torch.no_grad():
            correct = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                          for i in range(0, len(xte), 1000))
        acc = correct / len(xte)
        print(f"epoch {epoch}: test accuracy {100 * acc:.2f}%, {samples / train_time:.0f} samples/s", flush=True)
    print(json.dumps({"framework": "pytorch", "torch": torch.__version__, "model": a.model, "seed": a.seed,
                      "epochs": a.epochs, "test_accuracy": acc, "samples_per_s": samples / train_time}))


if __name__ == "__main__":
    main()
