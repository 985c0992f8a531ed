#!/usr/bin/python3
"""ResNet-18 and MobileNetV2 inference: Tessera's CPU backend against ONNX Runtime, in the same run.

    /usr/bin/python3 bench/onnx/compare_onnxruntime.py [--build build] [--models resnet18,mobilenet_v2]
        [--batches 1,16] [--threads 2] [--repeat 10] [--rounds 3] [--json OUT]

Exports the models once (scripts/onnx_models/export_models.py, random weights, dynamic batch) into
${TESSERA_BENCH_MODELS:-~/.cache/tessera/models}/onnx, then for each model and batch alternates, for
--rounds rounds, `build/bench_onnx_model` (Tessera, TESSERA_NUM_THREADS=threads) and
`node bench/onnx/ort_bench.mjs` (onnxruntime-node, intra-op threads = threads, inter-op 1) on the same
file and input; each prints the median of --repeat timed runs after warm-up, and the table shows the
median over rounds of both and the ratio (ONNX Runtime ms / Tessera ms: > 1 means Tessera is faster).
The first round also checks that both sides compute the same output (max error relative to the
output's scale).

onnxruntime-node is installed on first use, without its GPU download, into
${TESSERA_PEER_DIR:-~/.cache/tessera/peers}/onnxruntime:
    ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT_VERSION = "1.30.0"


def peer_dir():
    base = os.environ.get("TESSERA_PEER_DIR", os.path.expanduser("~/.cache/tessera/peers"))
    folder = os.path.join(base, "onnxruntime")
    if not os.path.isdir(os.path.join(folder, "node_modules", "onnxruntime-node")):
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "package.json"), "w") as f:
            f.write('{"name": "tessera-onnxruntime-peer", "private": true}\n')
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", f"onnxruntime-node@{ORT_VERSION}"], cwd=folder,
                       env=env, check=True)
    return folder


def models_dir(names):
    folder = os.path.join(os.environ.get("TESSERA_BENCH_MODELS", os.path.expanduser("~/.cache/tessera/models")), "onnx")
    missing = [n for n in names if not os.path.exists(os.path.join(folder, n, "model.onnx"))]
    if missing:
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "onnx_models", "export_models.py"), "--out",
                        folder, "--models", ",".join(missing)], check=True)
    return folder


def run_json(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--models", default="resnet18,mobilenet_v2")
    p.add_argument("--batches", default="1,16")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", help="write the results here too")
    a = p.parse_args()
    import numpy as np

    names = a.models.split(",")
    folder = models_dir(names)
    ort_dir = peer_dir()
    tessera_bench = os.path.join(a.build, "bench_onnx_model")
    env_tessera = dict(os.environ, TESSERA_NUM_THREADS=str(a.threads))
    env_ort = dict(os.environ, TESSERA_ORT_DIR=os.path.join(ort_dir, "node_modules"), OMP_NUM_THREADS=str(a.threads))
    scratch = os.path.join(folder, "scratch")
    os.makedirs(scratch, exist_ok=True)
    results = []
    for name in names:
        model = os.path.join(folder, name, "model.onnx")
        shape = list(np.load(os.path.join(folder, name, "input_0.npy"), mmap_mode="r").shape[1:])
        for batch in [int(b) for b in a.batches.split(",")]:
            x = np.sin(np.arange(batch * int(np.prod(shape)), dtype=np.float32) * np.float32(0.001))
            x = x.reshape([batch] + shape).astype(np.float32)
            npy, raw = os.path.join(scratch, "x.npy"), os.path.join(scratch, "x.f32")
            np.save(npy, x)
            x.tofile(raw)
            tessera_ms, ort_ms = [], []
            error = None
            for r in range(a.rounds):
                out_t, out_o = os.path.join(scratch, "y.npy"), os.path.join(scratch, "y.f32")
                t = run_json([tessera_bench, "--model", model, "--input", npy, "--repeat", str(a.repeat), "--warmup",
                              "2"] + (["--output", out_t] if r == 0 else []), env_tessera)
                o = run_json(["node", os.path.join(ROOT, "bench", "onnx", "ort_bench.mjs"), "--model", model,
                              "--shape", ",".join(map(str, [batch] + shape)), "--input", raw, "--threads",
                              str(a.threads), "--repeat", str(a.repeat), "--warmup", "2"]
                             + (["--output", out_o] if r == 0 else []), env_ort)
                tessera_ms.append(t["median_ms"])
                ort_ms.append(o["median_ms"])
                if r == 0:
                    yt, yo = np.load(out_t).ravel(), np.fromfile(out_o, dtype=np.float32)
                    error = float(np.max(np.abs(yt - yo)) / max(float(np.max(np.abs(yo))), 1e-30))
            row = {"model": name, "batch": batch, "tessera_ms": statistics.median(tessera_ms),
                   "onnxruntime_ms": statistics.median(ort_ms), "max_rel_error": error}
            row["ratio"] = row["onnxruntime_ms"] / row["tessera_ms"]
            results.append(row)
            print(f"{name:13s} batch {batch:3d}: Tessera {row['tessera_ms']:8.1f} ms  ONNX Runtime "
                  f"{row['onnxruntime_ms']:8.1f} ms  ratio {row['ratio']:.2f}x  (outputs agree to {error:.1e})",
                  flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "repeat": a.repeat, "rounds": a.rounds, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
