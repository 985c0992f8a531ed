#pragma once
// The protobuf classes that Debian's libonnx-dev generates from onnx.proto (ONNX_ML flavour), for the
// importer's own files only: public headers of io/onnx never include this, so nothing above io sees
// protobuf. Inside namespace tessera::io::onnx, `pb::` names ONNX's classes.
#include <onnx/onnx_pb.h>

namespace tessera::io::onnx {
namespace pb = ::onnx;
}  // namespace tessera::io::onnx
