#!/usr/bin/python3
"""Runs the PyTorch-exported models of export_models.py in Tessera and compares with PyTorch's outputs.

    /usr/bin/python3 scripts/onnx_models/check_models.py --tessera build/tessera --work build/onnx_models
        [--models resnet18,...] [--backends reference,cpu] [--rtol 1e-4]

Exports the models into --work (export_models.py), runs each with `tessera run` on every backend and
requires max|tessera - torch| <= rtol * max|torch| (the error relative to the output's scale, so a
logit near zero is not held to a relative bound of its own). Prints one line per model and backend,
then 'N passed, N failed'. Exits 77 (ctest's skip code) when torch, torchvision or onnx is missing.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tessera", required=True, help="the tessera executable")
    p.add_argument("--work", required=True, help="folder for the exported models and Tessera's outputs")
    p.add_argument("--models", default="resnet18,mobilenet_v2,transformer,mlp,cnn")
    p.add_argument("--backends", default="reference,cpu")
    p.add_argument("--rtol", type=float, default=1e-4)
    a = p.parse_args()

    export = subprocess.run([sys.executable, os.path.join(HERE, "export_models.py"), "--out", a.work, "--models",
                             a.models], capture_output=True, text=True)
    if export.returncode == SKIP:
        print(export.stderr.strip())
        return SKIP
    if export.returncode != 0:
        print(export.stdout + export.stderr)
        print("export_models.py failed")
        return 1
    import numpy as np  # present whenever the export ran

    # A GPU backend this machine cannot run (no driver, no device) is skipped with the reason.
    devices = subprocess.run([a.tessera, "devices"], capture_output=True, text=True).stdout.splitlines()
    backends = []
    for backend in a.backends.split(","):
        status = next((line for line in devices if line.split()[:1] == [backend]), "")
        if "not available" in status:
            print(f"SKIP {backend}: {status.split(None, 1)[1]}")
        else:
            backends.append(backend)

    passed = failed = 0
    for model in a.models.split(","):
        folder = os.path.join(a.work, model)
        expected = np.load(os.path.join(folder, "output_0.npy"))
        for backend in backends:
            out = os.path.join(folder, "tessera_" + backend)
            start = time.monotonic()
            run = subprocess.run([a.tessera, "run", os.path.join(folder, "model.onnx"), "--inputs",
                                  os.path.join(folder, "input_0.npy"), "--out", out, "--backend", backend],
                                 capture_output=True, text=True)
            seconds = time.monotonic() - start
            if run.returncode != 0:
                failed += 1
                print(f"FAIL {model} on {backend}: tessera run exited {run.returncode}: {run.stderr.strip()}")
                continue
            got = np.load(os.path.join(out, "output.npy"))
            if got.shape != expected.shape:
                failed += 1
                print(f"FAIL {model} on {backend}: output shape {got.shape}, PyTorch's {expected.shape}")
                continue
            scale = float(np.max(np.abs(expected)))
            error = float(np.max(np.abs(got.astype(np.float64) - expected))) / max(scale, 1e-30)
            ok = error <= a.rtol
            passed += ok
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'} {model} on {backend}: max error {error:.2e} of max |output| "
                  f"{scale:.3g} (limit {a.rtol:g}), {seconds:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
