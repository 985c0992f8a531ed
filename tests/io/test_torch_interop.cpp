// A file written by PyTorch 2.11 with the safetensors package (tools/interop/check_and_write.py, run on
// the GPU machine) must load in Tessera with exact values. The same script checked that Tessera's own
// files load in PyTorch and NumPy.
#include <filesystem>

#include "test_util.h"
#include "tessera/io/safetensors.h"

using namespace tessera;

namespace {
std::string fixture() {
  return (std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/io/fixtures/torch_written.safetensors").string();
}
}  // namespace

TEST(TorchInterop, LoadsEveryDtypeWrittenByTorch) {
  const io::SafetensorsFile f = io::load_safetensors_with_metadata(fixture());
  EXPECT_EQ(f.metadata.at("producer").rfind("torch ", 0), 0u);
  const std::pair<const char*, DType> dtypes[] = {{"f32", DType::f32}, {"f64", DType::f64}, {"f16", DType::f16},
                                                  {"bf16", DType::bf16}, {"i8", DType::i8},   {"i32", DType::i32},
                                                  {"i64", DType::i64}, {"u8", DType::u8},   {"bool", DType::boolean}};
  for (const auto& [name, dt] : dtypes) {
    const Array& a = f.tensors.at(std::string("w_") + name);
    EXPECT_EQ(a.dtype(), dt) << name;
    EXPECT_EQ(a.shape(), (Shape{3, 4})) << name;
    const std::vector<double> got = a.to_f64();
    for (size_t i = 0; i < got.size(); ++i) {
      double want = static_cast<double>(i) * 0.25 - 1.0 + (dt == DType::u8 ? 1.0 : 0.0);
      // torch's .to() truncates toward zero for integers and maps non-zero to true for bool.
      if (is_integral(dt)) want = std::trunc(want);
      if (dt == DType::boolean) want = want != 0.0;
      EXPECT_EQ(got[i], want) << name << " element " << i;
    }
  }
  const Array& m = f.tensors.at("matrix_t");  // a transposed [2, 3] arange made contiguous
  EXPECT_EQ(m.shape(), (Shape{3, 2}));
  EXPECT_EQ(m.to_f64(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(f.tensors.at("empty").shape(), (Shape{0, 3}));
}
