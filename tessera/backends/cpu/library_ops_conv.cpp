// 2-D f32 convolutions and their gradients as kernel library calls (tessera/kernels/cpu/conv.h),
// with the workspace planned in the arena, an activation/residual/activation tail fused into the
// forward pass, and constant forward weights packed once for its register tiles. Other ranks and
// dtypes run on the reference kernels.
#include <fmt/format.h>

#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/conv.h"

namespace tessera::backends::cpu {
namespace {

bool all_f32_rank4(const ir::Node& node) {
  for (const ir::Value& v : node.inputs()) {
    if (v.dtype() != DType::f32) return false;
  }
  return node.input(0).rank() == 4 && node.input(1).rank() == 4 && node.output_types()[0].dtype == DType::f32;
}

// The geometry shared by the three ops: input/kernel/output extents come from different operands.
kernels::Conv2dGeometry geometry(const ir::Node& node, const Shape& x, const Shape& w, const Shape& y) {
  const ir::Attrs& a = node.attrs();
  kernels::Conv2dGeometry g;
  g.batch = x[0];
  g.in_channels = x[1];
  g.in_h = x[2];
  g.in_w = x[3];
  g.out_channels = w[0];
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  g.out_h = y[2];
  g.out_w = y[3];
  g.stride_h = a.get_ints("stride")[0];
  g.stride_w = a.get_ints("stride")[1];
  g.pad_h = a.get_ints("padding")[0];
  g.pad_w = a.get_ints("padding")[1];
  g.dilation_h = a.get_ints("dilation")[0];
  g.dilation_w = a.get_ints("dilation")[1];
  g.groups = a.get_int("groups");
  return g;
}

bool valid(const kernels::Conv2dGeometry& g) {
  try {
    kernels::check_conv2d_geometry(g, "conv");
    return true;
  } catch (const Error&) {
    return false;
  }
}

enum class ConvKind { forward, input_grad, weight_grad };

class ConvStep final : public Step {
 public:
  ConvStep(ConvKind kind, kernels::Conv2dGeometry g, Operand a, Operand b, Operand bias, Operand out, Operand workspace,
           kernels::Activation act, Operand residual, kernels::Activation post, Operand packed_weights)
      : kind_(kind),
        g_(g),
        a_(a),
        b_(b),
        bias_(bias),
        out_(out),
        ws_(workspace),
        act_(act),
        residual_(residual),
        post_(post),
        packed_(packed_weights) {}

  void run(const RunContext& ctx) const override {
    void* ws = ws_.buffer >= 0 ? ctx.ptr<void>(ws_) : nullptr;
    switch (kind_) {
      case ConvKind::forward: {
        kernels::ConvEpilogue e;
        e.activation = act_;
        e.residual = residual_.buffer >= 0 ? ctx.ptr<const float>(residual_) : nullptr;
        e.post_activation = post_;
        kernels::conv2d_forward(g_, ctx.ptr<const float>(a_), ctx.ptr<const float>(b_),
                                bias_.buffer >= 0 ? ctx.ptr<const float>(bias_) : nullptr, ctx.ptr<float>(out_), ws, e,
                                ctx.pool, kernels::ConvAlgorithm::automatic,
                                packed_.buffer >= 0 ? ctx.ptr<const float>(packed_) : nullptr);
        break;
      }
      case ConvKind::input_grad:
        kernels::conv2d_input_grad(g_, ctx.ptr<const float>(a_), ctx.ptr<const float>(b_), ctx.ptr<float>(out_), ws,
                                   ctx.pool);
        break;
      case ConvKind::weight_grad:
        kernels::conv2d_weight_grad(g_, ctx.ptr<const float>(a_), ctx.ptr<const float>(b_), ctx.ptr<float>(out_), ws,
                                    ctx.pool);
        break;
    }
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    static constexpr const char* kNames[] = {"conv2d", "conv2d_input_grad", "conv2d_weight_grad"};
    return fmt::format("{} n{} {}->{} {}x{} k{}x{} s{}x{} p{}x{} g{}{}{}{}{}{}", kNames[static_cast<int>(kind_)],
                       g_.batch, g_.in_channels, g_.out_channels, g_.in_h, g_.in_w, g_.kernel_h, g_.kernel_w,
                       g_.stride_h, g_.stride_w, g_.pad_h, g_.pad_w, g_.groups, bias_.buffer >= 0 ? " +bias" : "",
                       act_ != kernels::Activation::none ? " +act" : "", residual_.buffer >= 0 ? " +residual" : "",
                       post_ != kernels::Activation::none ? " +act" : "", packed_.buffer >= 0 ? " (packed weights)" : "");
  }

 private:
  ConvKind kind_;
  kernels::Conv2dGeometry g_;
  Operand a_, b_, bias_, out_, ws_;
  kernels::Activation act_;
  Operand residual_;
  kernels::Activation post_;
  Operand packed_;
};

bool claim_conv(const ir::Node& node) {
  if (!all_f32_rank4(node)) return false;
  return valid(geometry(node, node.input(0).shape(), node.input(1).shape(), node.output_types()[0].shape));
}

bool claim_input_grad(const ir::Node& node) {
  if (!all_f32_rank4(node)) return false;
  const Shape& gy = node.input(0).shape();
  const Shape& w = node.input(1).shape();
  const Shape& dx = node.output_types()[0].shape;
  return valid(geometry(node, dx, w, gy));
}

bool claim_weight_grad(const ir::Node& node) {
  if (!all_f32_rank4(node)) return false;
  return valid(geometry(node, node.input(0).shape(), node.output_types()[0].shape, node.input(1).shape()));
}

// Emits one convolution step; `a`/`b` are the kernel's two array operands in its own order.
void emit_conv(Lowering& L, ConvKind kind, const kernels::Conv2dGeometry& g, const ir::Value& result,
               const ir::Value& a_value, const ir::Value& b_value, const ir::Value* bias_value, const Epilogue* epi) {
  const int32_t a = L.packed(L.value(a_value)), b = L.packed(L.value(b_value));
  std::vector<int32_t> reads = {a, b};
  Operand bias_op, residual_op;
  if (bias_value != nullptr) {
    reads.push_back(L.packed(L.value(*bias_value)));
    bias_op = L.operand(reads.back());
  }
  kernels::Activation act = kernels::Activation::none, post = kernels::Activation::none;
  if (epi != nullptr) {
    act = epi->activation;
    post = epi->post_activation;
    if (epi->residual.defined()) {
      reads.push_back(L.packed(L.value(epi->residual)));
      residual_op = L.operand(reads.back());
    }
  }
  // Constant weights of a forward pass are packed for the register tiles once, when an executable
  // binds its constants (inference graphs; a training step's weights are inputs and packed per call).
  Operand packed_op;
  if (kind == ConvKind::forward && kernels::conv2d_takes_packed_weights(g)) {
    const int32_t packed = L.derived_constant(
        b, "conv_tiles", DType::f32, {kernels::conv2d_packed_weights_floats(g)}, [g](const Array& w) {
          Array p = Array::empty(DType::f32, {kernels::conv2d_packed_weights_floats(g)});
          kernels::conv2d_pack_weights(g, w.data<const float>(), p.data<float>());
          return p;
        });
    if (packed >= 0) {
      reads.push_back(packed);
      packed_op = L.operand(packed);
    }
  }
  const int32_t out = L.produce(result);
  runtime::ThreadPool* pool = &runtime::default_pool();
  const int64_t ws_bytes = kind == ConvKind::forward
                               ? kernels::conv2d_forward_workspace_bytes(g, pool, packed_op.buffer >= 0)
                           : kind == ConvKind::input_grad ? kernels::conv2d_input_grad_workspace_bytes(g, pool)
                                                          : kernels::conv2d_weight_grad_workspace_bytes(g, pool);
  std::vector<int32_t> scratch;
  Operand ws_op;
  if (ws_bytes > 0) {
    scratch.push_back(L.scratch(ws_bytes));
    ws_op = Operand{scratch.back(), 0};
  }
  L.emit(std::make_unique<ConvStep>(kind, g, L.operand(a), L.operand(b), bias_op, L.operand(out), ws_op, act,
                                    residual_op, post, packed_op),
         reads, {out}, scratch);
}

bool lower_conv(Lowering& L, const ir::NodePtr& node) {
  if (!claim_conv(*node)) return false;
  const Epilogue* epi = L.epilogue(*node);
  const kernels::Conv2dGeometry g =
      geometry(*node, node->input(0).shape(), node->input(1).shape(), node->output_types()[0].shape);
  const ir::Value result = epi ? epi->result : ir::Value(node, 0);
  emit_conv(L, ConvKind::forward, g, result, node->input(0), node->input(1),
            node->inputs().size() == 3 ? &node->input(2) : nullptr, epi);
  return true;
}

bool lower_input_grad(Lowering& L, const ir::NodePtr& node) {
  if (!claim_input_grad(*node)) return false;
  const kernels::Conv2dGeometry g =
      geometry(*node, node->output_types()[0].shape, node->input(1).shape(), node->input(0).shape());
  emit_conv(L, ConvKind::input_grad, g, ir::Value(node, 0), node->input(0), node->input(1), nullptr, nullptr);
  return true;
}

bool lower_weight_grad(Lowering& L, const ir::NodePtr& node) {
  if (!claim_weight_grad(*node)) return false;
  const kernels::Conv2dGeometry g =
      geometry(*node, node->input(0).shape(), node->output_types()[0].shape, node->input(1).shape());
  emit_conv(L, ConvKind::weight_grad, g, ir::Value(node, 0), node->input(0), node->input(1), nullptr, nullptr);
  return true;
}

}  // namespace

void register_conv_lowerings(LoweringTable& table) {
  table["conv"] = {lower_conv, claim_conv, true};
  table["conv_input_grad"] = {lower_input_grad, claim_input_grad, true};
  table["conv_weight_grad"] = {lower_weight_grad, claim_weight_grad, true};
}

}  // namespace tessera::backends::cpu
