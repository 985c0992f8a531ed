#pragma once
// What an OnnxModel holds, for the importer's files: the parsed protobuf and the checked facts about it.
#include <string>
#include <vector>

#include "tessera/io/onnx/onnx_model.h"
#include "tessera/io/onnx/onnx_proto.h"

namespace tessera::io::onnx {

struct OnnxModel::Impl {
  pb::ModelProto proto;
  std::string source;
  std::string folder;
  std::vector<OnnxValueInfo> inputs;   // without initializers
  std::vector<OnnxValueInfo> outputs;
  std::vector<int> node_order;         // a topological order of graph().node()
};

// "node 3 'conv1' (Conv)": how errors name a node (the index is the node's place in the file).
std::string describe_node(const pb::NodeProto& node, int index);

}  // namespace tessera::io::onnx
