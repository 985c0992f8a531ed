// libFuzzer target for the GGUF reader: any input must load or throw tessera::Error; anything else (a
// crash, a sanitizer report, another exception type) is a bug. Inputs that load are decoded tensor by
// tensor, summarised as `tessera inspect` does (one plain line per entry, linear in the input), then
// written back with the GGUF writer and re-read: metadata and tensor bytes must survive, and a second
// write must give the same bytes as the first.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_summary.h"
#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/quant/ggml_type.h"

namespace {

namespace gguf = tessera::io::gguf;

std::string rewrite(const gguf::Reader& r) {
  gguf::Writer w(r.alignment());
  w.copy_metadata(r);
  for (const gguf::TensorInfo& t : r.tensors()) {
    w.add_tensor(t.name, t.type, t.ne, std::span<const uint8_t>(r.tensor_data(t), t.nbytes));
  }
  return w.serialize();
}

// describe_file prints 2 header lines, one per key, a tensor header line, two more when there are
// tensors and one per tensor: no name or value may add lines, control characters or unbounded width.
bool summary_is_plain(const gguf::Reader& r, const std::string& text, size_t input_size) {
  const size_t lines = 3 + r.metadata().size() + (r.tensors().empty() ? 0 : 2) + r.tensors().size();
  size_t newlines = 0;
  for (const char c : text) {
    if (c == '\n') {
      ++newlines;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return false;
    }
  }
  return newlines == lines && text.size() <= 32 * input_size + 4096;
}

// Keys, types and printed values in order (printed, so that NaN compares equal to itself; the byte
// comparison of two rewrites covers the rest). The writer manages general.alignment itself and leaves
// out the default 32, so it is left out here and the alignment compared on its own.
std::vector<std::string> metadata_without_alignment(const gguf::Reader& r) {
  std::vector<std::string> out;
  for (const auto& [key, value] : r.metadata()) {
    if (key != "general.alignment") out.push_back(key + " " + gguf::value_type_name(value.type()) + " " + value.to_string());
  }
  return out;
}

// Reader::view widens i16 to i32 (Tessera has no i16 dtype); every other type keeps its bytes.
uint64_t view_bytes(const gguf::TensorInfo& t) {
  return t.type == tessera::quant::GgmlType::i16 ? 2 * t.nbytes : t.nbytes;
}

}  // namespace

TESSERA_FUZZ_TARGET(gguf) {
  std::optional<gguf::Reader> r;
  try {
    r.emplace(gguf::Reader::from_memory(data, size, "fuzz input"));
  } catch (const tessera::Error& e) {
    FUZZ_CHECK(tessera::fuzz::is_short_plain_message(e.what()));
    return 0;
  }
  for (const gguf::TensorInfo& t : r->tensors()) {
    if (tessera::quant::type_traits(t.type).can_dequantize) FUZZ_CHECK(r->dequantize(t).numel() == t.numel());
    FUZZ_CHECK(r->view(t).nbytes() == view_bytes(t));
  }
  FUZZ_CHECK(summary_is_plain(*r, gguf::describe_file(*r), size));
  std::string first;
  try {
    first = rewrite(*r);
  } catch (const tessera::Error&) {
    return 0;  // the writer is stricter than the reader (e.g. names over llama.cpp's 63 bytes)
  }
  const gguf::Reader again =
      gguf::Reader::from_memory(reinterpret_cast<const uint8_t*>(first.data()), first.size(), "round trip");
  FUZZ_CHECK(again.alignment() == r->alignment() && again.tensors().size() == r->tensors().size());
  FUZZ_CHECK(metadata_without_alignment(again) == metadata_without_alignment(*r));
  for (const gguf::TensorInfo& t : r->tensors()) {
    const gguf::TensorInfo& u = again.tensor(t.name);
    FUZZ_CHECK(u.type == t.type && u.ne == t.ne && u.nbytes == t.nbytes);
    FUZZ_CHECK(t.nbytes == 0 || std::memcmp(r->tensor_data(t), again.tensor_data(u), t.nbytes) == 0);
  }
  FUZZ_CHECK(rewrite(again) == first);
  return 0;
}
