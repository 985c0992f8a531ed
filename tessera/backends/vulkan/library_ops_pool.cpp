// 2-D max pooling and its gradient on the Vulkan backend, one invocation per output (pool), per input
// element (gradient) or per window (the gradient of windows that tile the input), the window geometry
// compiled in as constants. The decomposition (ops/pool_decompose.cpp) gathered every tap of every
// window, reduced them, and scattered the gradient back through a mask (eight dispatches for a pool
// and its gradient); the gradient here is a gather instead: each input element visits the few windows
// that can read it and adds the output gradient of those whose first maximum it is (window order:
// deterministic, no atomics). f32 over any leading axes; other dtypes and spatial ranks still decompose.
#include <fmt/format.h>

#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/vulkan/context.h"
#include "tessera/backends/vulkan/library_ops.h"
#include "tessera/backends/vulkan/shader_step.h"
#include "tessera/backends/vulkan/steps.h"

namespace tessera::backends::vulkan {

namespace {

using common::Lowering;

// window_argmax(p0, oh, ow): the window's first maximum in tap order (NaN wins, as in max) as an index
// into the plane that starts at x[p0], or -1 when no tap lies inside the input (the CPU's kernels pick
// the same one).
constexpr const char* kWindowArgmax = R"(
int window_argmax(int p0, int oh, int ow) {
  int best_at = -1;
  float best = 0.0;
  for (int kh = 0; kh < PL_KH; ++kh) {
    const int ih = oh * PL_SH - PL_PH + kh * PL_DH;
    if (ih < 0 || ih >= PL_H) continue;
    for (int kw = 0; kw < PL_KW; ++kw) {
      const int iw = ow * PL_SW - PL_PW + kw * PL_DW;
      if (iw < 0 || iw >= PL_W) continue;
      const float v = x[p0 + ih * PL_W + iw];
      if (best_at < 0 || v > best || (isnan(v) && !isnan(best))) {
        best = v;
        best_at = ih * PL_W + iw;
      }
    }
  }
  return best_at;
}
)";

enum class PoolShader { forward, gradient, gradient_cells };

std::string pool_glsl(const kernels::Pool2dGeometry& g, PoolShader which) {
  const bool grad = which != PoolShader::forward;
  std::string body;
  switch (which) {
    case PoolShader::forward:
      body = R"(  const int total = planes * (PL_OH * PL_OW);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += int(gl_NumWorkGroups.x) * 256) {
    const int plane = i / (PL_OH * PL_OW), o = i - plane * (PL_OH * PL_OW), oh = o / PL_OW, ow = o - oh * PL_OW;
    const int p0 = shift[0] + plane * (PL_H * PL_W);
    const int at = window_argmax(p0, oh, ow);
    y[shift[1] + i] = at < 0 ? uintBitsToFloat(0xff800000u) : x[p0 + at];
  }
)";
      break;
    case PoolShader::gradient:
      body = R"(  const int total = planes * (PL_H * PL_W);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += int(gl_NumWorkGroups.x) * 256) {
    const int plane = i / (PL_H * PL_W), q = i - plane * (PL_H * PL_W), ih = q / PL_W, iw = q - ih * PL_W;
    const int p0 = shift[0] + plane * (PL_H * PL_W), g0 = shift[1] + plane * (PL_OH * PL_OW);
    float acc = 0.0;
    for (int kh = 0; kh < PL_KH; ++kh) {
      const int th = ih + PL_PH - kh * PL_DH;
      if (th < 0 || th % PL_SH != 0 || th / PL_SH >= PL_OH) continue;
      for (int kw = 0; kw < PL_KW; ++kw) {
        const int tw = iw + PL_PW - kw * PL_DW;
        if (tw < 0 || tw % PL_SW != 0 || tw / PL_SW >= PL_OW) continue;
        const int oh = th / PL_SH, ow = tw / PL_SW;
        if (window_argmax(p0, oh, ow) == q) acc += gy[g0 + oh * PL_OW + ow];
      }
    }
    dx[shift[2] + i] = acc;
  }
)";
      break;
    case PoolShader::gradient_cells:
      // One invocation per window writes its whole cell: the output gradient at the first maximum,
      // zeros elsewhere (the last row and column of cells also zero what no window covers).
      body = R"(  const int total = planes * (PL_OH * PL_OW);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += int(gl_NumWorkGroups.x) * 256) {
    const int plane = i / (PL_OH * PL_OW), o = i - plane * (PL_OH * PL_OW), oh = o / PL_OW, ow = o - oh * PL_OW;
    const int p0 = shift[0] + plane * (PL_H * PL_W), d0 = shift[2] + plane * (PL_H * PL_W);
    const int at = window_argmax(p0, oh, ow);
    const float gv = gy[shift[1] + i];
    const int h1 = oh == PL_OH - 1 ? PL_H : (oh + 1) * PL_SH, w1 = ow == PL_OW - 1 ? PL_W : (ow + 1) * PL_SW;
    for (int ih = oh * PL_SH; ih < h1; ++ih) {
      for (int iw = ow * PL_SW; iw < w1; ++iw) dx[d0 + ih * PL_W + iw] = ih * PL_W + iw == at ? gv : 0.0;
    }
  }
)";
      break;
  }
  const std::string buffers = grad ? "layout(std430, binding = 1) readonly buffer TsrG { float gy[]; };\n"
                                     "layout(std430, binding = 2) writeonly buffer TsrD { float dx[]; };\n"
                                   : "layout(std430, binding = 1) writeonly buffer TsrY { float y[]; };\n";
  return fmt::format(R"(#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer TsrX {{ float x[]; }};
{buffers}layout(push_constant) uniform TsrPool {{ int planes; int shift[{bindings}]; }};
{defines}{argmax}void main() {{
{body}}}
)",
                     fmt::arg("buffers", buffers), fmt::arg("bindings", grad ? 3 : 2),
                     fmt::arg("defines", common::pool_geometry_defines(g)), fmt::arg("argmax", kWindowArgmax),
                     fmt::arg("body", body));
}

bool claim_pool(const ir::Node& node) {
  return common::f32_max_pool2d_geometry(node).has_value() && fits_int_indexing(node);
}

bool lower_pool(Lowering& L, const ir::NodePtr& node) {
  const std::optional<kernels::Pool2dGeometry> g = common::f32_max_pool2d_geometry(*node);
  if (!g || !fits_int_indexing(*node)) return false;
  const bool grad = node->op_name() == "max_pool_grad";
  const PoolShader which = !grad ? PoolShader::forward
                           : common::pool_windows_tile(*g) ? PoolShader::gradient_cells
                                                           : PoolShader::gradient;
  std::vector<int32_t> reads;
  ShaderDispatch d;
  for (const ir::Value& v : node->inputs()) {
    reads.push_back(L.packed(L.value(v)));
    d.bindings.push_back({L.operand(reads.back()), static_cast<uint64_t>(v.type().numel()) * 4, false, 4});
  }
  const int32_t out = L.produce(ir::Value(node, 0));
  d.bindings.push_back({L.operand(out), static_cast<uint64_t>(node->output_types()[0].numel()) * 4, true, 4});
  Context& ctx = lowering_context();
  const char* names[] = {"max_pool", "max_pool_grad", "max_pool_grad_cells"};
  d.pipeline = ctx.pipelines().pipeline(pool_glsl(*g, which), static_cast<int>(d.bindings.size()),
                                        names[static_cast<int>(which)]);
  d.push = {static_cast<uint32_t>(g->planes)};
  d.shift_word = 1;
  const int64_t per_plane = which == PoolShader::gradient ? g->in_h * g->in_w : g->out_h * g->out_w;
  d.groups = {library_groups(g->planes * per_plane), 1, 1};
  const std::string what =
      fmt::format("{} f32 {} planes {}x{} -> {}x{} k{}x{} s{}x{}{}", node->op_name(), g->planes, g->in_h, g->in_w,
                  g->out_h, g->out_w, g->kernel_h, g->kernel_w, g->stride_h, g->stride_w,
                  which == PoolShader::gradient_cells ? " (cells)" : "");
  L.emit(std::make_unique<ShaderStep>(std::vector<ShaderDispatch>{std::move(d)}, what), reads, {out});
  return true;
}

}  // namespace

void register_pool_lowerings(common::LoweringTable& table) {
  table["max_pool"] = {lower_pool, claim_pool, true};
  table["max_pool_grad"] = {lower_pool, claim_pool, true};
}

}  // namespace tessera::backends::vulkan
