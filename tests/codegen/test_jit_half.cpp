// f16 and bf16 kernels through the C JIT against the reference backend: loads widen to f32, every
// op rounds its result to the storage type as the reference does, stores are the bits. The CPU
// backend does not fuse these dtypes yet, so the clusters here are formed with half_types.
#include <cstring>
#include <limits>

#include "codegen_test_util.h"
#include "tessera/codegen/emitter.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// Outputs bit for bit (the JIT and the reference call the same libm functions).
void expect_same_bits(const std::vector<Array>& got, const std::vector<Array>& expected, const std::string& what) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].dtype(), expected[k].dtype()) << what;
    ASSERT_EQ(got[k].nbytes(), expected[k].nbytes()) << what;
    const auto* g = static_cast<const uint8_t*>(got[k].contiguous().raw_data());
    const auto* e = static_cast<const uint8_t*>(expected[k].contiguous().raw_data());
    const size_t width = dtype_size(got[k].dtype());
    int reported = 0;
    for (size_t i = 0; i < got[k].nbytes() && reported < 5; i += width) {
      if (std::memcmp(g + i, e + i, width) != 0) {
        ++reported;
        ADD_FAILURE() << what << " output " << k << " element " << i / width << ": got " << got[k].to_f64()[i / width]
                      << ", expected " << expected[k].to_f64()[i / width];
      }
    }
  }
}

void check_half(const MultiFn& fn, const std::vector<Array>& inputs, const std::string& what) {
  std::vector<ir::TensorType> types;
  for (const Array& a : inputs) types.push_back({a.dtype(), a.shape()});
  const ir::Graph g = trace(fn, types);
  const JitRun jit = run_with_jit(g, inputs, 2, /*half_types=*/true);
  EXPECT_FALSE(jit.clusters.empty()) << what;
  expect_same_bits(jit.outputs, run_reference(g, inputs), what);
}

// Every f16 (or bf16) bit pattern: normals, subnormals, both zeros, infinities, NaNs.
Array all_halves(DType dt) {
  Array a = Array::empty(dt, {65536});
  auto* p = static_cast<uint16_t*>(a.raw_data());
  for (uint32_t i = 0; i < 65536; ++i) p[i] = static_cast<uint16_t>(i);
  return a;
}

// f32 values around every rounding boundary of f16 and bf16 (ties, overflow, subnormal edges).
Array awkward_f32() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          65504.0f,
                          65519.99f,
                          65520.0f,
                          65536.0f,
                          -65520.0f,
                          1e-8f,
                          2.98e-8f,
                          2.9802322e-8f,
                          5.9604645e-8f,
                          6.1035156e-5f,
                          6.1e-5f,
                          1.0009765625f,
                          1.00048828125f,
                          1.00146484375f,
                          3.3895314e38f,
                          std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min()};
  Array r = random_of(DType::f32, {4000}, 11, -70000, 70000);
  for (double x : r.to_f64()) v.push_back(static_cast<float>(x));
  Array s = random_of(DType::f32, {4000}, 12, -1e-4, 1e-4);
  for (double x : s.to_f64()) v.push_back(static_cast<float>(x));
  std::vector<double> d(v.begin(), v.end());
  return Array::from_vector(d, {static_cast<int64_t>(d.size())}).astype(DType::f32);
}

}  // namespace

TEST(JitHalf, EveryBitPatternWidensExactly) {
  for (DType dt : {DType::f16, DType::bf16}) {
    check_half([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::cast(in[0], DType::f32)}; },
               {all_halves(dt)}, std::string("widen ") + dtype_name(dt));
  }
}

TEST(JitHalf, NarrowingRoundsToNearestEven) {
  for (DType dt : {DType::f16, DType::bf16}) {
    check_half([dt](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::cast(in[0], dt)}; },
               {awkward_f32()}, std::string("narrow to ") + dtype_name(dt));
  }
}

TEST(JitHalf, ElementwiseChainsRoundPerOp) {
  for (DType dt : {DType::f16, DType::bf16}) {
    const Array x = random_of(dt, {37, 65}, 3, -4, 4), b = random_of(dt, {65}, 4, -2, 2);
    check_half(
        [](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{ops::relu(in[0] * 1.5 + in[1]), ops::exp(in[0]) - ops::sigmoid(in[1]),
                                     ops::gelu(in[0], false),
                                     ops::gt(ops::maximum(in[0], in[1]), ops::scalar_like(in[0], 0.25))};
        },
        {x, b}, std::string("chains in ") + dtype_name(dt));
  }
}

TEST(JitHalf, MixedDtypesAndReductions) {
  const Array h = random_of(DType::f16, {9, 33}, 5, -3, 3), bf = random_of(DType::bf16, {33}, 6, -3, 3);
  const Array i = random_of(DType::i32, {9, 33}, 7, -100, 100);
  check_half(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{in[0] * in[1],                         // f16 x bf16 -> f32
                                   in[0] + in[2],                         // f16 with i32: f16
                                   ops::cast(in[0] * 1000.0, DType::i8),  // saturating through f32
                                   ops::sum(in[0], {1}),
                                   ops::max(in[1] * in[0], {0}),
                                   ops::mean(ops::cast(in[2], DType::bf16), {0})};
      },
      {h, bf, i}, "mixed");
}

TEST(JitHalf, EmittedCUsesBitHelpersNotFloat16) {
  const auto clusters = cluster_all(
      trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0 + 1.0}; }, {{DType::f16, {8}}}),
      true);
  ASSERT_EQ(clusters.size(), 1u);
  const std::string src =
      codegen::emit_kernel(lower::build_loop_kernel(clusters[0], "k"), "tsr_kernel_0", codegen::c_dialect());
  EXPECT_NE(src.find("typedef __UINT16_TYPE__ uint16_t;"), std::string::npos) << src;
  EXPECT_NE(src.find("const uint16_t v0 = in0[j];\n"), std::string::npos) << src;
  EXPECT_NE(src.find("tsr_f32_to_f16("), std::string::npos) << src;
  EXPECT_EQ(src.find("_Float16"), std::string::npos) << src;
  EXPECT_EQ(src.find("tsr_bf16"), std::string::npos) << "only the helpers of the types used";
}

TEST(JitHalf, CpuBackendEligibilityIsUnchanged) {
  const ir::Graph g =
      trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; }, {{DType::f16, {8}}});
  EXPECT_TRUE(cluster_all(g).empty());
  EXPECT_EQ(cluster_all(g, true).size(), 1u);
}
