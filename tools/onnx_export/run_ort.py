#!/usr/bin/env python3
"""Runs `tessera export onnx` bundles in Python's onnxruntime and compares with Tessera's outputs.

    python3 tools/onnx_export/run_ort.py BUNDLE.json ... [--providers cuda,cpu] [--rtol 1e-4] [--atol 1e-6]

The Python twin of run_ort.js (which uses onnxruntime-node here) for the GPU machine, where onnxruntime
has the CUDA execution provider: each manifest's model runs on its example inputs under each provider
asked for (one that this onnxruntime lacks is reported and skipped), and every output must lie within
atol + rtol * |expected| of Tessera's (expected_*.npy). CUDA runs with TF32 off, as f32 is what Tessera
computed. Prints one line per model, provider and output, then 'N passed, N failed'; exits 1 on any
failure and 77 (ctest's skip code) when numpy or onnxruntime is missing.
"""
import argparse
import json
import os
import sys

SKIP = 77

try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    print(f"SKIP: {e}; run_ort.py needs numpy and onnxruntime", file=sys.stderr)
    sys.exit(SKIP)

PROVIDERS = {
    "cpu": ("CPUExecutionProvider", {}),
    "cuda": ("CUDAExecutionProvider", {"use_tf32": "0"}),
}


def compare(name, got, want, rtol, atol):
    """(ok, line) for one output against Tessera's."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False, f"{name}: {got.dtype}{list(got.shape)} but Tessera gave {want.dtype}{list(want.shape)}"
    a, b = got.astype(np.float64), want.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    diff = np.where(both_nan, 0.0, np.abs(a - b))
    bad = int(np.count_nonzero(~(diff <= atol + rtol * np.abs(b))))
    scale = np.abs(b)
    rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), 0.0)
    line = f"{name}: {got.dtype}{list(got.shape)} max abs err {diff.max(initial=0.0):.2e}, max rel err {rel.max(initial=0.0):.2e}"
    if bad:
        line += f", {bad} of {a.size} elements outside atol {atol} + rtol {rtol}"
    return bad == 0, line


def run_bundle(path, provider, rtol, atol):
    """True when every output of the bundle's model under `provider` matches Tessera's."""
    folder = os.path.dirname(path)
    with open(path) as f:
        manifest = json.load(f)
    name, options = PROVIDERS[provider]
    session = ort.InferenceSession(os.path.join(folder, manifest["model"]), providers=[(name, options)])
    if name not in session.get_providers():
        raise RuntimeError(f"onnxruntime did not take {name} (it has {', '.join(ort.get_available_providers())})")
    inputs = session.get_inputs()
    if len(inputs) != len(manifest["inputs"]):
        raise RuntimeError(f"the model takes {len(inputs)} inputs, the manifest lists {len(manifest['inputs'])}")
    feeds = {}
    for spec, declared in zip(manifest["inputs"], inputs):
        if spec["name"] != declared.name:
            raise RuntimeError(f"input '{declared.name}', the manifest says '{spec['name']}'")
        feeds[declared.name] = np.load(os.path.join(folder, spec["file"]))
    outputs = session.run(None, feeds)
    ok = True
    for spec, declared, got in zip(manifest["outputs"], session.get_outputs(), outputs):
        if spec["name"] != declared.name:
            raise RuntimeError(f"output '{declared.name}', the manifest says '{spec['name']}'")
        if not spec.get("file"):
            continue
        good, line = compare(declared.name, np.asarray(got), np.load(os.path.join(folder, spec["file"])), rtol, atol)
        print(f"  {'ok  ' if good else 'FAIL'} {line}")
        ok = ok and good
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bundles", nargs="+", help="manifests written by `tessera export onnx` (*.json)")
    p.add_argument("--providers", default="cuda,cpu", help="comma list of cpu, cuda")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=1e-6)
    a = p.parse_args()
    wanted = [x for x in a.providers.split(",") if x]
    for x in wanted:
        if x not in PROVIDERS:
            p.error(f"unknown provider '{x}' (cpu, cuda)")
    available = set(ort.get_available_providers())
    passed = failed = 0
    for provider in wanted:
        if PROVIDERS[provider][0] not in available:
            print(f"skipped {provider}: this onnxruntime {ort.__version__} has {', '.join(sorted(available))}")
            continue
        for bundle in a.bundles:
            print(f"{os.path.basename(bundle)} on {provider} (onnxruntime {ort.__version__}):")
            try:
                ok = run_bundle(bundle, provider, a.rtol, a.atol)
            except Exception as e:  # a model onnxruntime refuses is a failure with its message
                print(f"  FAIL {e}")
                ok = False
            passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
