#pragma once
// The structural checks of an ONNX graph, done once when a model is loaded: single definitions, no
// read of an undefined value, no cycle (the nodes get a topological order, whatever their order in the
// file), outputs defined, initializers whose stored bytes fit their dtype and shape.
#include <vector>

#include "tessera/io/onnx/onnx_proto.h"

namespace tessera::io::onnx {

// Throws tessera::Error naming the node and the value at the first violation; returns the order in
// which the nodes can run.
std::vector<int> check_graph(const pb::GraphProto& graph, const std::string& source);

}  // namespace tessera::io::onnx
