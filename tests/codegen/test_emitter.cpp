// Emitted text: small kernels in the C and CUDA dialects written out inline, literals, and the sharing
// of one compiled body between kernels that differ only in sizes (golden files of all three dialects:
// test_dialect_goldens.cpp).
#include "codegen_test_util.h"
#include "tessera/codegen/emitter.h"
#include "tessera/codegen/thread_mapping.h"

using namespace tessera;
using namespace tessera::test;

namespace {

lower::Kernel single_kernel(const MultiFn& fn, const std::vector<ir::TensorType>& types) {
  const auto clusters = cluster_all(trace(fn, types));
  EXPECT_EQ(clusters.size(), 1u);
  return lower::build_loop_kernel(clusters.at(0), "k");
}

lower::Kernel bias_relu() {
  return single_kernel(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] * 2.0 + in[1])}; },
      {{DType::f32, {4, 8}}, {DType::f32, {8}}});
}

lower::Kernel row_sum_of_squares() {
  return single_kernel(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::sum(ops::square(in[0]), {1})}; },
      {{DType::f32, {4, 8}}});
}

lower::Kernel column_max() {
  return single_kernel([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::max(in[0], {0})}; },
                       {{DType::f64, {4, 8}}});
}

const char* const kPreludeC =
    "typedef __INT8_TYPE__ int8_t;\n"
    "typedef __UINT8_TYPE__ uint8_t;\n"
    "typedef __INT32_TYPE__ int32_t;\n"
    "typedef __UINT32_TYPE__ uint32_t;\n"
    "typedef __INT64_TYPE__ int64_t;\n"
    "typedef __UINT64_TYPE__ uint64_t;\n";

}  // namespace

TEST(Emitter, LoopIrOfABiasRelu) {
  // The scalar 2.0 is a literal, the bias a stride-0 read along the rows, relu a select.
  EXPECT_EQ(lower::print_kernel(bias_relu()),
            "kernel k domain [4, 8] reduced [false, false]\n"
            "  in0: f32\n"
            "  in1: f32 (unused)\n"
            "  in2: f32\n"
            "  out0: f32\n"
            "body:\n"
            "  v0: f32 = load in0[0 + 8*i0 + 1*i1]\n"
            "  v1: f32 = lit 2\n"
            "  v2: f32 = mul v0 v1\n"
            "  v3: f32 = load in2[0 + 1*i1]\n"
            "  v4: f32 = add v2 v3\n"
            "  v5: f32 = lit 0\n"
            "  v6: bool = lt v4 v5\n"
            "  v7: f32 = select v6 v5 v4\n"
            "  out0[0 + 8*i0 + 1*i1] = v7\n");
}

TEST(Emitter, CGoldenElementwise) {
  EXPECT_EQ(codegen::emit_kernel(bias_relu(), "tsr_kernel_0", codegen::c_dialect()),
            std::string(kPreludeC) +
                "\n// k\n"
                "void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {\n"
                "  const float* in0 = (const float*)in_[0];\n"
                "  const float* in2 = (const float*)in_[2];\n"
                "  float* out0 = (float*)out_[0];\n"
                "  int64_t flat = begin;\n"
                "  while (flat < end) {\n"
                "    const int64_t row = flat / 8;\n"
                "    const int64_t j0 = flat - row * 8;\n"
                "    const int64_t j1 = end - flat < 8 - j0 ? j0 + (end - flat) : 8;\n"
                "    const int64_t i0 = row;\n"
                "#pragma omp simd\n"
                "    for (int64_t j = j0; j < j1; ++j) {\n"
                "      const float v0 = in0[i0 * 8 + j];\n"
                "      const float v2 = v0 * 2.0f;\n"
                "      const float v3 = in2[j];\n"
                "      const float v4 = v2 + v3;\n"
                "      const _Bool v6 = (v4 < 0.0f);\n"
                "      const float v7 = (v6 ? 0.0f : v4);\n"
                "      out0[i0 * 8 + j] = v7;\n"
                "    }\n"
                "    flat += j1 - j0;\n"
                "  }\n"
                "}\n");
}

TEST(Emitter, CGoldenRowReduction) {
  // The innermost axis is reduced: one output per range unit, a SIMD reduction in double.
  EXPECT_EQ(codegen::emit_kernel(row_sum_of_squares(), "tsr_kernel_0", codegen::c_dialect()),
            std::string(kPreludeC) +
                "\n// k\n"
                "void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {\n"
                "  const float* in0 = (const float*)in_[0];\n"
                "  float* out0 = (float*)out_[0];\n"
                "  for (int64_t o = begin; o < end; ++o) {\n"
                "    const int64_t i0 = o;\n"
                "    double a0 = 0.0;\n"
                "#pragma omp simd reduction(+:a0)\n"
                "    for (int64_t j = 0; j < 8; ++j) {\n"
                "      const float v0 = in0[i0 * 8 + j];\n"
                "      const float v1 = v0 * v0;\n"
                "      const double v2 = (double)v1;\n"
                "      a0 += v2;\n"
                "    }\n"
                "    const double e0 = a0;\n"
                "    const float e1 = (float)e0;\n"
                "    out0[i0] = e1;\n"
                "  }\n"
                "}\n");
}

TEST(Emitter, CGoldenColumnReductionWithNan) {
  // The innermost axis is kept: a tile of neighbouring outputs accumulates row by row; max tracks NaN.
  EXPECT_EQ(codegen::emit_kernel(column_max(), "tsr_kernel_0", codegen::c_dialect()),
            std::string(kPreludeC) +
                "\n// k\n"
                "void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t begin, int64_t end) {\n"
                "  const double* in0 = (const double*)in_[0];\n"
                "  double* out0 = (double*)out_[0];\n"
                "  int64_t flat = begin;\n"
                "  while (flat < end) {\n"
                "    const int64_t row = flat / 8;\n"
                "    const int64_t j0 = flat - row * 8;\n"
                "    const int64_t j1 = end - flat < 8 - j0 ? j0 + (end - flat) : 8;\n"
                "    for (int64_t jb = j0; jb < j1; jb += 1024) {\n"
                "      const int64_t je = j1 - jb < 1024 ? j1 : jb + 1024;\n"
                "      double a0[1024];\n"
                "      unsigned char n0[1024];\n"
                "      for (int64_t j = jb; j < je; ++j) {\n"
                "        a0[j - jb] = (-__builtin_inf());\n"
                "        n0[j - jb] = 0;\n"
                "      }\n"
                "      for (int64_t i0 = 0; i0 < 4; ++i0) {\n"
                "#pragma omp simd\n"
                "        for (int64_t j = jb; j < je; ++j) {\n"
                "          const double v0 = in0[i0 * 8 + j];\n"
                "          a0[j - jb] = v0 > a0[j - jb] ? v0 : a0[j - jb];\n"
                "          n0[j - jb] |= v0 != v0;\n"
                "        }\n"
                "      }\n"
                "#pragma omp simd\n"
                "      for (int64_t j = jb; j < je; ++j) {\n"
                "        const double e0 = (n0[j - jb] ? __builtin_nan(\"\") : a0[j - jb]);\n"
                "        out0[j] = e0;\n"
                "      }\n"
                "    }\n"
                "    flat += j1 - j0;\n"
                "  }\n"
                "}\n");
}

TEST(Emitter, CudaGoldenElementwise) {
  const std::string src = codegen::emit_kernel(bias_relu(), "tsr_kernel_0", codegen::cuda_dialect());
  // Rows of 8 floats divide into 16-byte vectors: the vector loop runs when every buffer is aligned,
  // and this scalar loop otherwise.
  const std::string vector_loop =
      "  if (tsr_vectors) {\n"
      "    for (int64_t u0 = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) * 4; u0 < end; u0 += "
      "((int64_t)gridDim.x * blockDim.x) * 8) {\n";
  const std::string scalar_loop =
      "  else {\n"
      "    for (int64_t u = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); u < end; u += "
      "((int64_t)gridDim.x * blockDim.x)) {\n"
      "      uint32_t rem = (uint32_t)u;\n"
      "      const int64_t j = rem % (uint32_t)8;\n"
      "      rem /= (uint32_t)8;\n"
      "      const int64_t i0 = rem;\n"
      "      const float v0 = in0[i0 * 8 + j];\n"
      "      const float v2 = v0 * 2.0f;\n"
      "      const float v3 = in2[j];\n"
      "      const float v4 = v2 + v3;\n"
      "      const bool v6 = (v4 < 0.0f);\n"
      "      const float v7 = (v6 ? 0.0f : v4);\n"
      "      out0[i0 * 8 + j] = v7;\n"
      "    }\n"
      "  }\n"
      "}\n";
  EXPECT_EQ(src.substr(0, 31), "typedef signed char int8_t;\ntyp");
  EXPECT_NE(src.find("extern \"C\" __global__ void tsr_kernel_0(const void* const* in_, void* const* out_, int64_t "
                     "begin, int64_t end) {\n"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find(vector_loop), std::string::npos) << src;
  EXPECT_NE(src.find("L0[q] = *(const tsr_vec<float, 4>*)(in0 + (i0 * 8 + j));"), std::string::npos) << src;
  EXPECT_NE(src.find("*(tsr_vec<float, 4>*)(out0 + (i0 * 8 + j)) = S0;"), std::string::npos) << src;
  EXPECT_NE(src.find(scalar_loop), std::string::npos) << src;
}

TEST(Emitter, CudaLargeKernelsWithoutVectorsTakeFourElementsPerThread) {
  // Rows of two (RoPE's pairs) leave no vector access; with 80,000 elements each thread loads four of
  // them, a grid stride apart, before computing any (more loads in flight); the grid is range / 4.
  const auto pairs = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * ops::flip(in[0], {1})}; };
  const lower::Kernel k = single_kernel(pairs, {{DType::f32, {40000, 2}}});
  const codegen::ThreadMapping m = codegen::thread_mapping(k, codegen::cuda_dialect());
  EXPECT_EQ(m.vector, 1);
  EXPECT_EQ(m.unroll, 4);
  const std::string src = codegen::emit_kernel(k, "tsr_kernel_0", codegen::cuda_dialect());
  EXPECT_NE(src.find("u0 += ((int64_t)gridDim.x * blockDim.x) * 4) {\n"), std::string::npos) << src;
  EXPECT_NE(src.find("float L0[4];"), std::string::npos) << src;
  EXPECT_NE(src.find("const int64_t u = u0 + q * ((int64_t)gridDim.x * blockDim.x);"), std::string::npos) << src;
  EXPECT_NE(src.find("const float v0 = L0[q];"), std::string::npos) << src;
  // A small kernel keeps one element per thread (nothing to gain, compile time to lose).
  const lower::Kernel small = single_kernel(pairs, {{DType::f32, {16, 2}}});
  EXPECT_EQ(codegen::thread_mapping(small, codegen::cuda_dialect()).unroll, 1);
  EXPECT_EQ(codegen::emit_kernel(small, "tsr_kernel_0", codegen::cuda_dialect()).find("L0[q]"), std::string::npos);
}

TEST(Emitter, CudaGoldenReductionAndMath) {
  const lower::Kernel k = single_kernel(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::cast(ops::mean(ops::exp(in[0]), {0}), DType::i32)};
      },
      {{DType::f32, {3, 5}}});
  const std::string src = codegen::emit_kernel(k, "tsr_kernel_0", codegen::cuda_dialect());
  // One thread per output, a sequential loop over the reduced axis, C99 math names, and the
  // saturating float -> int conversion as a device helper.
  EXPECT_NE(src.find("__device__ __forceinline__ int32_t tsr_f32_to_i32(float v) {\n"
                     "  if (isnan(v)) return 0;\n"
                     "  if (v <= (-2147483600.0f)) return (-2147483647 - 1);\n"
                     "  if (v >= 2147483600.0f) return 2147483647;\n"
                     "  return (int32_t)v;\n"
                     "}\n"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("  for (int64_t o = begin + ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); o < end; o += "
                     "((int64_t)gridDim.x * blockDim.x)) {\n"
                     "    const int64_t j = o;\n"
                     "    double a0 = 0.0;\n"
                     "    for (int64_t i0 = 0; i0 < 3; ++i0) {\n"
                     "      const float v0 = in0[i0 * 5 + j];\n"
                     "      const float v1 = expf(v0);\n"
                     "      const double v2 = (double)v1;\n"
                     "      a0 += v2;\n"
                     "    }\n"
                     "    const double e0 = a0;\n"
                     "    const double e2 = e0 / 3.0;\n"
                     "    const float e3 = (float)e2;\n"
                     "    const int32_t e4 = tsr_f32_to_i32(e3);\n"
                     "    out0[j] = e4;\n"),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("#pragma"), std::string::npos) << "no host pragmas in CUDA";
}

TEST(Emitter, LiteralsAreExact) {
  const auto& c = codegen::c_dialect();
  using lower::ScalarType;
  EXPECT_EQ(codegen::format_literal(ScalarType::f32, 0.1f, 0, c), "0.1f");
  EXPECT_EQ(codegen::format_literal(ScalarType::f64, 0.1, 0, c), "0.1");
  EXPECT_EQ(codegen::format_literal(ScalarType::f64, 1e300, 0, c), "1e+300");
  EXPECT_EQ(codegen::format_literal(ScalarType::f32, -2.0, 0, c), "(-2.0f)");
  EXPECT_EQ(codegen::format_literal(ScalarType::f32, -0.0, 0, c), "(-0.0f)");
  EXPECT_EQ(codegen::format_literal(ScalarType::f64, -INFINITY, 0, c), "(-__builtin_inf())");
  EXPECT_EQ(codegen::format_literal(ScalarType::f32, NAN, 0, c), "__builtin_nanf(\"\")");
  EXPECT_EQ(codegen::format_literal(ScalarType::i64, 0, INT64_MIN, c), "(-9223372036854775807ll - 1)");
  EXPECT_EQ(codegen::format_literal(ScalarType::i32, 0, INT32_MIN, c), "(-2147483647 - 1)");
  EXPECT_EQ(codegen::format_literal(ScalarType::u64, 0, -1, c), "18446744073709551615ull");
  EXPECT_EQ(codegen::format_literal(ScalarType::boolean, 0, 1, c), "1");
  EXPECT_EQ(codegen::format_literal(ScalarType::boolean, 0, 1, codegen::cuda_dialect()), "true");
  const auto& glsl = codegen::glsl_dialect();
  EXPECT_EQ(codegen::format_literal(ScalarType::f64, 0.5, 0, glsl), "0.5lf");
  EXPECT_EQ(codegen::format_literal(ScalarType::f32, -2.0, 0, glsl), "(-2.0)");
  EXPECT_EQ(codegen::format_literal(ScalarType::i64, 0, INT64_MIN, glsl), "(-9223372036854775807l - 1)");
  EXPECT_EQ(codegen::format_literal(ScalarType::u64, 0, 7, glsl), "7ul");
  EXPECT_EQ(codegen::format_literal(ScalarType::i8, 0, -3, glsl), "(int8_t(-3))");
  EXPECT_EQ(codegen::format_literal(ScalarType::f16, 1.5, 0, c), "tsr_f32_to_f16(1.5f)");
  EXPECT_EQ(codegen::format_literal(ScalarType::bf16, 1.5, 0, codegen::cuda_dialect()), "__float2bfloat16_rn(1.5f)");
  // Every float prints back to itself.
  for (float f : {1.0f / 3.0f, 3.4028235e38f, 1.17549435e-38f, 16777217.0f, 0.044715f}) {
    const std::string s = codegen::format_literal(ScalarType::f32, f, 0, c);
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), f) << s;
  }
}

TEST(Emitter, KernelsOfEqualSizesShareABodyWithLiteralSizes) {
  // The same kernel repeated (a layer's, across layers): one body whose sizes are constants the
  // compiler folds (no P[] to read, divisions by literals), called with no parameters.
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::relu(ops::transpose(in[0], 0, 1) + in[1]),
                                   ops::relu(ops::transpose(in[2], 0, 1) + in[3]), ops::exp(in[0])};
      },
      {{DType::f32, {5, 6}}, {DType::f32, {5}}, {DType::f32, {5, 6}}, {DType::f32, {5}}});
  const auto clusters = cluster_all(g);
  ASSERT_EQ(clusters.size(), 3u);
  const std::string src = backends::cpu::generate_source(clusters);
  EXPECT_NE(src.find("// shared by 2 kernels\nstatic __attribute__((noinline)) void tsr_shared_"), std::string::npos)
      << src;
  EXPECT_EQ(src.find("P[0]"), std::string::npos) << src;
  EXPECT_EQ(src.find("static const int64_t P[]"), std::string::npos) << src;
  EXPECT_NE(src.find("(in_, out_, begin, end, 0);"), std::string::npos) << src;
  const std::vector<Array> in = {random_of(DType::f32, {5, 6}, 5), random_of(DType::f32, {5}, 6),
                                 random_of(DType::f32, {5, 6}, 7), random_of(DType::f32, {5}, 8)};
  expect_arrays_match(run_with_jit(g, in).outputs, run_reference(g, in));
}

TEST(Emitter, KernelsDifferingOnlyInSizesShareOneBody) {
  // Five size variants of one kernel (more than get literal bodies): one body reads its sizes from P[].
  const std::vector<int64_t> widths = {8, 16, 24, 32, 40};
  std::vector<ir::TensorType> types;
  for (int64_t w : widths) {
    types.push_back({DType::f32, {4, w}});
    types.push_back({DType::f32, {w}});
  }
  const ir::Graph g = trace(
      [&](const std::vector<Tensor>& in) {
        std::vector<Tensor> out;
        for (size_t i = 0; i < widths.size(); ++i) out.push_back(ops::relu(in[2 * i] + in[2 * i + 1]));
        out.push_back(ops::exp(in[0]));
        return out;
      },
      types);
  const auto clusters = cluster_all(g);
  ASSERT_EQ(clusters.size(), 6u);
  const std::string src = backends::cpu::generate_source(clusters);
  EXPECT_NE(src.find("// shared by 5 kernels\nstatic __attribute__((noinline)) void tsr_shared_"), std::string::npos)
      << src;
  EXPECT_NE(src.find("  static const int64_t P[] = {8, 8, 8};\n"), std::string::npos) << src;
  EXPECT_NE(src.find("  static const int64_t P[] = {40, 40, 40};\n"), std::string::npos) << src;
  // The shared body computes every size correctly.
  std::vector<Array> in;
  for (size_t i = 0; i < types.size(); ++i) in.push_back(random_of(DType::f32, types[i].shape, 1 + i));
  expect_arrays_match(run_with_jit(g, in).outputs, run_reference(g, in));
}

TEST(Emitter, AFewSizeVariantsGetLiteralBodies) {
  // Two sizes of one kernel: each is written with literal sizes (no P[]).
  const ir::Graph g = trace(
      [](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{ops::relu(in[0] + in[1]), ops::relu(in[2] + in[3]), ops::exp(in[0])};
      },
      {{DType::f32, {4, 8}}, {DType::f32, {8}}, {DType::f32, {6, 16}}, {DType::f32, {16}}});
  const auto clusters = cluster_all(g);
  ASSERT_EQ(clusters.size(), 3u);
  const std::string src = backends::cpu::generate_source(clusters);
  EXPECT_EQ(src.find("P["), std::string::npos) << src;
  EXPECT_NE(src.find("void tsr_kernel_2("), std::string::npos);
  const std::vector<Array> in = {random_of(DType::f32, {4, 8}, 1), random_of(DType::f32, {8}, 2),
                                 random_of(DType::f32, {6, 16}, 3), random_of(DType::f32, {16}, 4)};
  expect_arrays_match(run_with_jit(g, in).outputs, run_reference(g, in));
}
