// libFuzzer target for the GGUF reader: any input must load or throw tessera::Error; anything else (a
// crash, a sanitizer report, another exception type) is a bug. Inputs that load are decoded tensor by
// tensor, then written back with the GGUF writer and re-read: metadata and tensor bytes must survive,
// and a second write must give the same bytes as the first.
#include <cstring>
#include <optional>

#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/quant/ggml_type.h"

namespace gguf = tessera::io::gguf;

namespace {

std::string rewrite(const gguf::Reader& r) {
  gguf::Writer w(r.alignment());
  w.copy_metadata(r);
  for (const gguf::TensorInfo& t : r.tensors()) {
    w.add_tensor(t.name, t.type, t.ne, std::span<const uint8_t>(r.tensor_data(t), t.nbytes));
  }
  return w.serialize();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<gguf::Reader> r;
  try {
    r.emplace(gguf::Reader::from_memory(data, size, "fuzz input"));
  } catch (const tessera::Error&) {
    return 0;
  }
  for (const gguf::TensorInfo& t : r->tensors()) {
    if (tessera::quant::type_traits(t.type).can_dequantize) {
      if (r->dequantize(t).numel() != t.numel()) __builtin_trap();
    }
    if (r->view(t).nbytes() != t.nbytes) __builtin_trap();
  }
  std::string first;
  try {
    first = rewrite(*r);
  } catch (const tessera::Error&) {
    return 0;  // the writer is stricter than the reader (e.g. names over llama.cpp's 63 bytes)
  }
  const gguf::Reader again =
      gguf::Reader::from_memory(reinterpret_cast<const uint8_t*>(first.data()), first.size(), "round trip");
  if (again.metadata().size() != r->metadata().size() || again.tensors().size() != r->tensors().size()) {
    __builtin_trap();
  }
  for (const gguf::TensorInfo& t : r->tensors()) {
    const gguf::TensorInfo& u = again.tensor(t.name);
    if (u.type != t.type || u.ne != t.ne || u.nbytes != t.nbytes) __builtin_trap();
    if (t.nbytes > 0 && std::memcmp(r->tensor_data(t), again.tensor_data(u), t.nbytes) != 0) __builtin_trap();
  }
  if (rewrite(again) != first) __builtin_trap();
  return 0;
}
