#!/usr/bin/env python3
"""Proof on XLA: run Tessera's StableHLO exports with XLA and compare with Tessera's own outputs.

    python3 tools/xla/run_proof.py --runner PATH/stablehlo_run.py --dir EXPORT_DIR \
        [--programs mlp,cnn,mlp_train_step,transformer] [--platforms gpu,cpu] [--repeat 50] \
        [--tolerance 1e-5] [--json results.json]

EXPORT_DIR holds bundles written by `tessera export stablehlo` (tools/xla/make_exports.sh makes the
four of the proof): NAME.mlir, NAME.input_<i>.npy, NAME.expected_<i>.npy and the manifest NAME.json.
For every program and platform the script runs the runner (shared/tools/stablehlo_run.py: parse,
verify, compile, run, --repeat timings) in its own process, loads XLA's outputs, compares each with
Tessera's reference-backend output, and prints one markdown table.

Relative error of an output = max|xla - tessera| / max|tessera| (norm-wise, so that outputs near zero do
not dominate); a program's error is the worst over its outputs. Integer and boolean outputs must be
equal. Needs only numpy and jax (the runner's own needs). Every failure is reported in the table and
the script carries on; the exit code is 0 only if every run parsed, verified, ran and matched. The
runner runs with JAX_ENABLE_X64=1 so that 64-bit arguments stay 64-bit (--no-x64 to turn that off).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

DEFAULT_PROGRAMS = ["mlp", "cnn", "mlp_train_step", "transformer"]


def load_manifest(directory, name):
    path = os.path.join(directory, name + ".json")
    with open(path) as f:
        manifest = json.load(f)
    for key in ("module", "arguments", "results"):
        if key not in manifest:
            raise ValueError(f"{path}: the manifest has no '{key}'")
    return manifest


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def compare(expected, actual):
    """(relative error, note) of one output; relative error is None when it cannot be computed."""
    if expected.shape != actual.shape:
        return None, f"shape {list(actual.shape)} != expected {list(expected.shape)}"
    if expected.dtype.kind in "biu":
        mismatches = int(np.count_nonzero(expected != actual.astype(expected.dtype)))
        return (0.0 if mismatches == 0 else float("inf")), (f"{mismatches} elements differ" if mismatches else "")
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    nan_e, nan_a = np.isnan(e), np.isnan(a)
    if np.any(nan_e != nan_a):
        return float("inf"), f"NaN in {int(np.count_nonzero(nan_e != nan_a))} different places"
    finite = ~nan_e
    if not np.any(finite):
        return 0.0, ""
    diff = float(np.max(np.abs(e[finite] - a[finite]))) if e.size else 0.0
    scale = float(np.max(np.abs(e[finite]))) if e.size else 0.0
    if scale == 0.0:
        return (0.0 if diff == 0.0 else float("inf")), ("" if diff == 0.0 else f"max abs error {diff:.3g} on zeros")
    return diff / scale, ""


def run_one(args, directory, name, manifest, platform, workdir):
    row = {"program": name, "platform": platform, "parse": "-", "verify": "-", "rel_error": None,
           "worst_output": "", "median_ms": None, "min_ms": None, "status": "", "seconds": None}
    module = os.path.join(directory, manifest["module"])
    inputs = [os.path.join(directory, a["file"]) for a in manifest["arguments"]]
    missing = [p for p in [module] + inputs if not os.path.exists(p)]
    if missing:
        row["status"] = "missing files: " + ", ".join(os.path.basename(p) for p in missing[:3])
        return row
    out_dir = os.path.join(workdir, f"{name}.{platform}")
    os.makedirs(out_dir, exist_ok=True)
    command = [sys.executable, args.runner, module, "--inputs", *inputs, "--out-dir", out_dir,
               "--repeat", str(args.repeat), "--platform", platform]
    started = time.time()
    try:
        # JAX_ENABLE_X64 keeps 64-bit arguments (i64 class targets, f64 scalars) 64-bit on device_put.
        env = dict(os.environ, JAX_ENABLE_X64="0" if args.no_x64 else "1")
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        row["status"] = f"timed out after {args.timeout} s"
        return row
    row["seconds"] = round(time.time() - started, 1)
    report = last_json_line(done.stdout)
    if report is None:
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        row["status"] = f"runner exit {done.returncode}: " + " | ".join(tail)[-400:]
        return row
    row["parse"] = str(report.get("parse", "-"))
    row["verify"] = str(report.get("verify", "-"))
    if report.get("median_ms") is not None:
        row["median_ms"] = report["median_ms"]
        row["min_ms"] = report.get("min_ms")
    if done.returncode != 0 or report.get("parse") != "ok":
        tail = (done.stderr or "").strip().splitlines()[-2:]
        row["status"] = f"runner exit {done.returncode}: {row['parse']} " + " | ".join(tail)[-400:]
        return row
    worst, notes = 0.0, []
    for i, result in enumerate(manifest["results"]):
        out_path = os.path.join(out_dir, f"output_{i}.npy")
        if not result.get("file"):
            notes.append(f"no expected value for output {i}")
            worst = None
            break
        if not os.path.exists(out_path):
            notes.append(f"XLA wrote no output {i}")
            worst = None
            break
        rel, note = compare(np.load(os.path.join(directory, result["file"])), np.load(out_path))
        if note:
            notes.append(f"{result.get('name', i)}: {note}")
        if rel is None:
            worst = None
            break
        if rel >= worst:
            worst = rel
            row["worst_output"] = str(result.get("name", i))
    row["rel_error"] = worst
    ok = worst is not None and worst <= args.tolerance and report.get("verify") is True
    row["status"] = ("ok" if ok else "MISMATCH" if worst is not None else "error") + (
        "; " + "; ".join(notes[:3]) if notes else "")
    return row


def fmt_error(value):
    if value is None:
        return "-"
    if value == float("inf"):
        return "inf"
    return f"{value:.2e}"


def fmt_ms(value):
    return "-" if value is None else f"{value:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runner", required=True, help="path of stablehlo_run.py")
    ap.add_argument("--dir", required=True, help="folder of export bundles")
    ap.add_argument("--programs", default=",".join(DEFAULT_PROGRAMS), help="bundle names, comma-separated")
    ap.add_argument("--platforms", default="gpu,cpu", help="XLA platforms, comma-separated")
    ap.add_argument("--repeat", type=int, default=50, help="timed runs after the runner's warm-ups")
    ap.add_argument("--tolerance", type=float, default=1e-5, help="largest relative error that passes")
    ap.add_argument("--timeout", type=int, default=900, help="seconds allowed per run")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument("--no-x64", action="store_true", help="run the runner without JAX_ENABLE_X64=1")
    args = ap.parse_args()

    if not os.path.isfile(args.runner):
        sys.exit(f"run_proof: runner not found: {args.runner}")
    programs = [p for p in args.programs.split(",") if p]
    platforms = [p for p in args.platforms.split(",") if p]
    rows = []
    with tempfile.TemporaryDirectory(prefix="tessera_xla_") as workdir:
        for name in programs:
            try:
                manifest = load_manifest(args.dir, name)
            except Exception as ex:  # a missing or broken bundle is one row, not the end of the run
                for platform in platforms:
                    rows.append({"program": name, "platform": platform, "parse": "-", "verify": "-",
                                 "rel_error": None, "worst_output": "", "median_ms": None, "min_ms": None,
                                 "status": f"bundle: {ex}", "seconds": None})
                continue
            for platform in platforms:
                try:
                    row = run_one(args, args.dir, name, manifest, platform, workdir)
                except Exception as ex:
                    row = {"program": name, "platform": platform, "parse": "-", "verify": "-", "rel_error": None,
                           "worst_output": "", "median_ms": None, "min_ms": None, "status": f"error: {ex}",
                           "seconds": None}
                row["batch_size"] = manifest.get("batch_size")
                row["precision"] = manifest.get("precision")
                rows.append(row)
                print(f"[run_proof] {name} on {platform}: {row['status']} "
                      f"(rel error {fmt_error(row['rel_error'])}, median {fmt_ms(row['median_ms'])} ms)",
                      file=sys.stderr, flush=True)

    print(f"| program | batch | platform | parse | verify | max rel error | worst output | within {args.tolerance:g} "
          f"| median ms | min ms | status |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        within = "yes" if (r["rel_error"] is not None and r["rel_error"] <= args.tolerance) else "no"
        status = r["status"].replace("|", "/")
        print(f"| {r['program']} | {r.get('batch_size', '-')} | {r['platform']} | {r['parse']} | {r['verify']} "
              f"| {fmt_error(r['rel_error'])} | {r['worst_output']} | {within} | {fmt_ms(r['median_ms'])} "
              f"| {fmt_ms(r['min_ms'])} | {status} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    all_ok = bool(rows) and all(r["status"].startswith("ok") for r in rows)
    sys.exit(0 if all_ok else 1)


if __name__ == "__main__":
    main()
