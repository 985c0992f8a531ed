// Compatibility with llama.cpp, on the tiny models of ../shared/testdata (written and quantized by
// llama.cpp, dequantized by gguf-py): every file reads, dequantization reproduces gguf-py's values bit
// for bit, and quantizing the f32 source reproduces llama-quantize's bytes for every type.
#include <cstring>

#include "gguf_test_util.h"
#include "tessera/io/npy.h"
#include "tessera/quant/quantize.h"

using namespace tessera;
using namespace tessera::test;
namespace gguf = tessera::io::gguf;
using quant::GgmlType;

namespace {

const char* kQuantizedTypes[] = {"f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1",
                                 "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"};

// Quantizes `source` (an f32 tensor of the f32 model) as `type` and counts differing bytes against
// the same tensor in `target`.
int64_t differing_bytes(const gguf::Reader& f32_model, const gguf::TensorInfo& target_info,
                        const gguf::Reader& target) {
  const gguf::TensorInfo& src = f32_model.tensor(target_info.name);
  const Array values = f32_model.dequantize(src);
  const std::vector<uint8_t> ours =
      quant::quantize(target_info.type, values.data<float>(), src.num_rows(), src.row_length());
  EXPECT_EQ(ours.size(), target_info.nbytes) << target_info.name;
  if (ours.size() != target_info.nbytes) return -1;
  const uint8_t* theirs = target.tensor_data(target_info);
  int64_t diff = 0;
  for (size_t i = 0; i < ours.size(); ++i) diff += ours[i] != theirs[i];
  return diff;
}

}  // namespace

TEST(LlamaCppCompat, DequantizationMatchesGgufPyBitForBit) {
  TESSERA_REQUIRE_TESTDATA(data);
  for (const char* type : kQuantizedTypes) {
    SCOPED_TRACE(type);
    const gguf::Reader model = gguf::Reader::open((data / "gguf" / ("tiny-llama-" + std::string(type) + ".gguf")).string());
    const Array ours = model.dequantize("blk.0.attn_k.weight");
    const Array ref = io::load_npy((data / "dequant" / (std::string(type) + ".blk.0.attn_k.weight.npy")).string());
    ASSERT_EQ(shape_str(ours.shape()), shape_str(ref.shape()));
    ASSERT_EQ(ref.dtype(), DType::f32);
    EXPECT_EQ(std::memcmp(ours.data<float>(), ref.contiguous().data<float>(), ours.nbytes()), 0)
        << "dequantized " << type << " differs from gguf-py";
  }
}

TEST(LlamaCppCompat, QuantizingTheF32SourceReproducesLlamaQuantize) {
  TESSERA_REQUIRE_TESTDATA(data);
  const gguf::Reader f32_model = gguf::Reader::open((data / "gguf" / "tiny-llama-f32.gguf").string());
  for (const char* type : kQuantizedTypes) {
    const gguf::Reader model = gguf::Reader::open((data / "gguf" / ("tiny-llama-" + std::string(type) + ".gguf")).string());
    int tensors = 0;
    for (const gguf::TensorInfo& t : model.tensors()) {
      if (t.type == GgmlType::f32) continue;  // norms stay f32
      ++tensors;
      const int64_t diff = differing_bytes(f32_model, t, model);
      EXPECT_EQ(diff, 0) << type << " tensor " << t.name << ": " << diff << " of " << t.nbytes << " bytes differ";
    }
    EXPECT_EQ(tensors, 16) << type;
  }
}
