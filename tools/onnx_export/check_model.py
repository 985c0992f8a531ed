#!/usr/bin/python3
"""Runs onnx.checker (full check, with shape inference) on each .onnx file given; exits 1 on the first
model it refuses. Debian's python3-onnx; external data is read from beside each model."""
import sys

import onnx


def main(paths):
    for path in paths:
        try:
            onnx.checker.check_model(path, full_check=True)
        except Exception as e:  # the checker raises ValidationError, shape inference InferenceError
            print(f"{path}: refused by onnx.checker: {e}")
            return 1
        model = onnx.load(path, load_external_data=False)
        opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
        print(f"{path}: ok ({len(model.graph.node)} nodes, opset {opsets}, onnx {onnx.__version__})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: check_model.py MODEL.onnx ...")
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
