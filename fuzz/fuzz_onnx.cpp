// libFuzzer target for the ONNX reader and importer: any input must load or throw tessera::Error with a
// short plain message; a model that loads must answer every summary accessor (as `tessera inspect`
// does), and one whose inputs are static and small must import or throw tessera::Error.
#include "fuzz/fuzz_target.h"
#include "tessera/core/error.h"
#include "tessera/io/onnx/onnx_import.h"
#include "tessera/io/onnx/onnx_model.h"

namespace {

// Imports only models whose declared inputs are small, so the fuzzer explores translations rather
// than allocating what a hostile shape asks for.
bool small_static_inputs(const tessera::io::onnx::OnnxModel& model) {
  for (const auto& in : model.inputs()) {
    if (!in.dims) return false;
    int64_t numel = 1;
    for (const auto& d : *in.dims) {
      if (!d.size || *d.size < 0 || *d.size > 4096) return false;
      numel *= *d.size;
      if (numel > (1 << 16)) return false;
    }
  }
  return true;
}

}  // namespace

TESSERA_FUZZ_TARGET(onnx) {
  using namespace tessera::io::onnx;
  try {
    const OnnxModel model = parse_onnx_model(data, size, "fuzz input");
    (void)model.opsets();
    (void)model.producer();
    (void)model.initializers();
    (void)model.op_histogram();
    if (small_static_inputs(model)) {
      const ImportedGraph g = import_onnx(model);
      FUZZ_CHECK(g.output_names.size() == model.outputs().size());
    }
  } catch (const tessera::Error& e) {
    FUZZ_CHECK(tessera::fuzz::is_short_plain_message(e.what()));
  }
  return 0;
}
