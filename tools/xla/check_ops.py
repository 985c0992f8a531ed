#!/usr/bin/env python3
"""Run every op-case bundle through XLA in one process and compare with Tessera's outputs.

    TESSERA_STABLEHLO_DUMP=DIR ./build/test_stablehlo --gtest_filter='*DumpBundlesForXla*'
    python3 tools/xla/check_ops.py --dir DIR [--platforms cpu,gpu] [--json results.json]

Each bundle (NAME.json + NAME.mlir + .npy files) is one small instance of a registered op. The module
is parsed and verified in jax's MLIR context, compiled and run with the same PJRT calls as
shared/tools/stablehlo_run.py, on every platform asked for. Float outputs pass when
max|xla - tessera| / max|tessera| is within the dtype's tolerance (f64 1e-12, f32 1e-5, f16/bf16 1e-2);
integer and boolean outputs must be equal. Prints a summary and a markdown table of the failures.
"""
import argparse
import glob
import json
import os
import sys

import numpy as np

TOLERANCE = {"f64": 1e-12, "f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}


def numpy_dtype(name):
    if name == "bf16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "i32": np.int32,
            "i64": np.int64, "u8": np.uint8, "bool": np.bool_}[name]


def relative_error(expected, actual):
    e = np.asarray(expected, dtype=np.float64)
    a = np.asarray(actual).astype(np.float64)
    if e.shape != a.shape:
        return float("inf")
    if np.any(np.isnan(e) != np.isnan(a)):
        return float("inf")
    keep = ~np.isnan(e)
    if not np.any(keep):
        return 0.0
    inf_e = np.isinf(e) & keep
    if np.any(e[inf_e] != a[inf_e]):
        return float("inf")
    keep &= ~inf_e
    if not np.any(keep):
        return 0.0
    diff = float(np.max(np.abs(e[keep] - a[keep])))
    scale = float(np.max(np.abs(e[keep])))
    return diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--platforms", default="cpu,gpu")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    import jax
    # 64-bit arguments (i64 indices, f64 scalars) must reach XLA as they are; without x64 jax would
    # narrow them to 32 bits on device_put.
    jax.config.update("jax_enable_x64", True)
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc
    from jaxlib.mlir import ir

    manifests = sorted(glob.glob(os.path.join(args.dir, "*.json")))
    if not manifests:
        sys.exit(f"check_ops: no bundles in {args.dir}")
    devices = {}
    for platform in args.platforms.split(","):
        try:
            devices[platform] = jax.devices(platform)[0]
        except Exception as ex:
            print(f"check_ops: platform {platform} unavailable: {ex}", file=sys.stderr)
    rows = []
    for path in manifests:
        with open(path) as f:
            m = json.load(f)
        name = m["name"]
        text = open(os.path.join(args.dir, m["module"])).read()
        row = {"name": name, "op": m.get("op", ""), "parse": "", "verify": None, "results": {}}
        try:
            with mlir.make_ir_context():
                module = ir.Module.parse(text)
                row["parse"] = "ok"
                row["verify"] = bool(module.operation.verify())
        except Exception as ex:
            row["parse"] = "error: " + str(ex).replace("\n", " ")[:600]
            rows.append(row)
            continue
        inputs = [np.asarray(np.load(os.path.join(args.dir, a["file"])), dtype=numpy_dtype(a["dtype"]))
                  for a in m["arguments"]]
        expected = [np.load(os.path.join(args.dir, r["file"])) for r in m["results"]]
        for platform, dev in devices.items():
            try:
                exe = dev.client.compile_and_load(text, xc.DeviceList((dev,)), xc.CompileOptions())
                outs = exe.execute([jax.device_put(x, dev) for x in inputs])
                worst, ok = 0.0, True
                for r, e, o in zip(m["results"], expected, outs):
                    a = np.asarray(o)
                    if r["dtype"] in TOLERANCE:
                        err = relative_error(e, a)
                        ok = ok and err <= TOLERANCE[r["dtype"]]
                    else:
                        err = 0.0 if (a.shape == e.shape and np.array_equal(a.astype(e.dtype), e)) else float("inf")
                        ok = ok and err == 0.0
                    worst = max(worst, err)
                row["results"][platform] = {"ok": ok, "rel_error": worst}
            except Exception as ex:
                row["results"][platform] = {"ok": False, "error": str(ex).replace("\n", " ")[:600]}
        rows.append(row)

    failures = [r for r in rows if r["parse"] != "ok" or not r["verify"] or
                any(not v["ok"] for v in r["results"].values())]
    print(f"{len(rows)} op cases, {len(rows) - len(failures)} pass on {', '.join(devices)}; "
          f"{len(failures)} fail")
    worst = {}
    for r in rows:
        for platform, v in r["results"].items():
            if "rel_error" in v:
                worst[platform] = max(worst.get(platform, 0.0), v["rel_error"])
    print("largest relative error per platform: " + ", ".join(f"{p} {e:.2e}" for p, e in worst.items()))
    if failures:
        print("| case | op | parse | verify | " + " | ".join(devices) + " |")
        print("|---|---|---|---|" + "---|" * len(devices))
        for r in failures:
            cells = []
            for platform in devices:
                v = r["results"].get(platform, {})
                cells.append(("ok" if v.get("ok") else "FAIL") + (f" {v['rel_error']:.2e}" if "rel_error" in v else "")
                             + (f" {v['error']}" if "error" in v else ""))
            print(f"| {r['name']} | {r['op']} | {r['parse']} | {r['verify']} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
