#!/usr/bin/env python3
"""Writes the ONNX fuzzer's seed corpus (fuzz/corpus/onnx): small valid models covering the importer's
op families, and broken ones, each refused for one named reason. Needs python3-onnx.
  /usr/bin/python3 fuzz/make_onnx_corpus.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "onnx")


def model(nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def write(name, m):
    data = m if isinstance(m, bytes) else m.SerializeToString()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    w = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(2, 4), "w")
    b = numpy_helper.from_array(np.ones(2, dtype=np.float32), "b")
    gemm = model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1), helper.make_node("Relu", ["y"], ["z"])],
                 [f32("x", [3, 4])], [f32("z", [3, 2])], [w, b])
    write("valid_gemm_relu.onnx", gemm)
    k = numpy_helper.from_array(np.ones((2, 1, 3, 3), dtype=np.float32), "k")
    conv = model([helper.make_node("Conv", ["x", "k"], ["c"], pads=[1, 1, 1, 1]),
                  helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                  helper.make_node("Softmax", ["p"], ["y"], axis=1)],
                 [f32("x", [1, 1, 4, 4])], [f32("y", [1, 2, 2, 2])], [k])
    write("valid_conv_pool_softmax.onnx", conv)
    shape = model([helper.make_node("Shape", ["x"], ["s"]),
                   helper.make_node("ReduceProd", ["s"], ["n"], keepdims=1),
                   helper.make_node("Reshape", ["x", "n"], ["y"])],
                  [f32("x", [2, 3])], [f32("y", [6])])
    write("valid_shape_reshape.onnx", shape)
    dynamic = model([helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)],
                    [f32("x", ["batch", 5])], [f32("y", ["batch"])])
    write("valid_dynamic_reduce.onnx", dynamic)

    write("broken_truncated.onnx", gemm.SerializeToString()[:40])
    write("broken_not_protobuf.onnx", b"\xff\xff\xff\xff not an onnx model")
    undefined = model([helper.make_node("Add", ["x", "ghost"], ["y"])], [f32("x", [2])], [f32("y", [2])])
    write("broken_undefined_value.onnx", undefined)
    cycle = model([helper.make_node("Add", ["x", "b2"], ["a"]), helper.make_node("Relu", ["a"], ["b2"]),
                   helper.make_node("Relu", ["a"], ["y"])], [f32("x", [2])], [f32("y", [2])])
    write("broken_cycle.onnx", cycle)
    bad = TensorProto()
    bad.name, bad.data_type = "w", TensorProto.FLOAT
    bad.dims.extend([4])
    bad.raw_data = b"\0" * 12
    mismatch = model([helper.make_node("Add", ["x", "w"], ["y"])], [f32("x", [4])], [f32("y", [4])], [bad])
    write("broken_initializer_size.onnx", mismatch)
    ext = numpy_helper.from_array(np.ones(4, dtype=np.float32), "w")
    ext.ClearField("raw_data")
    ext.data_location = TensorProto.EXTERNAL
    entry = ext.external_data.add()
    entry.key, entry.value = "location", "../../etc/passwd"
    escape = model([helper.make_node("Add", ["x", "w"], ["y"])], [f32("x", [4])], [f32("y", [4])], [ext])
    write("valid_external_escape.onnx", escape)  # parses; import refuses the path
    no_opset = model([helper.make_node("Relu", ["x"], ["y"])], [f32("x", [2])], [f32("y", [2])])
    del no_opset.opset_import[:]
    write("broken_no_default_opset.onnx", no_opset)


if __name__ == "__main__":
    main()
