// 2-D f32 convolutions and their gradients as kernel library calls (tessera/kernels/cpu/conv.h),
// with the workspace planned in the arena, an activation/residual/activation tail fused into the
// forward pass, and constant forward weights packed once for its register tiles. Other ranks and
// dtypes run on the reference kernels.
#include <fmt/format.h>

#include "tessera/backends/common/conv_geometry.h"
#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/conv.h"

namespace tessera::backends::cpu {
namespace {

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

// All three ops: f32 and 4-D, with a geometry the kernels accept.
bool claim_conv(const ir::Node& node) { return common::f32_conv2d_geometry(node).has_value(); }

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

// A depthwise convolution and the pointwise one that alone reads it, and optionally the pointwise
// expansion before it, as one step (kernels::conv2d_depthwise_pointwise_forward): the intermediate
// results never go to memory.
class DepthwisePointwiseStep final : public Step {
 public:
  struct Operands {
    Operand x, dw_w, dw_bias, pw_w, pw_bias, out, workspace, residual, packed;
    Operand expand_w, expand_bias, expand_packed;  // with an expansion (x is then its input)
  };
  DepthwisePointwiseStep(const kernels::Conv2dGeometry* expand, kernels::Activation expand_act,
                         kernels::Conv2dGeometry dw, kernels::Activation dw_act, kernels::Conv2dGeometry pw,
                         kernels::Activation act, kernels::Activation post, Operands o)
      : expanded_(expand != nullptr),
        expand_(expand != nullptr ? *expand : kernels::Conv2dGeometry{}),
        dw_(dw),
        pw_(pw),
        expand_act_(expand_act),
        dw_act_(dw_act),
        act_(act),
        post_(post),
        o_(o) {}

  void run(const RunContext& ctx) const override {
    auto optional = [&](const Operand& op) { return op.buffer >= 0 ? ctx.ptr<const float>(op) : nullptr; };
    kernels::ConvEpilogue e;
    e.activation = act_;
    e.residual = optional(o_.residual);
    e.post_activation = post_;
    kernels::ConvExpansion expansion;
    if (expanded_) {
      expansion.g = expand_;
      expansion.w = ctx.ptr<const float>(o_.expand_w);
      expansion.bias = optional(o_.expand_bias);
      expansion.activation = expand_act_;
      expansion.packed = optional(o_.expand_packed);
    }
    kernels::conv2d_depthwise_pointwise_forward(
        dw_, ctx.ptr<const float>(o_.x), ctx.ptr<const float>(o_.dw_w), optional(o_.dw_bias), dw_act_, pw_,
        ctx.ptr<const float>(o_.pw_w), optional(o_.pw_bias), ctx.ptr<float>(o_.out),
        o_.workspace.buffer >= 0 ? ctx.ptr<void>(o_.workspace) : nullptr, e, ctx.pool, optional(o_.packed),
        expanded_ ? &expansion : nullptr);
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    const std::string expansion =
        expanded_ ? fmt::format("conv2d n{} {}->{} {}x{} k1x1{}{} then ", expand_.batch, expand_.in_channels,
                                expand_.out_channels, expand_.in_h, expand_.in_w,
                                o_.expand_bias.buffer >= 0 ? " +bias" : "",
                                expand_act_ != kernels::Activation::none ? " +act" : "")
                  : "";
    return expansion +
           fmt::format("conv2d n{} {}->{} {}x{} k{}x{} s{}x{} p{}x{} g{}{}{} then 1x1 ->{}{}{}{}{}{}", dw_.batch,
                       dw_.in_channels, dw_.out_channels, dw_.in_h, dw_.in_w, dw_.kernel_h, dw_.kernel_w, dw_.stride_h,
                       dw_.stride_w, dw_.pad_h, dw_.pad_w, dw_.groups, o_.dw_bias.buffer >= 0 ? " +bias" : "",
                       dw_act_ != kernels::Activation::none ? " +act" : "", pw_.out_channels,
                       o_.pw_bias.buffer >= 0 ? " +bias" : "", act_ != kernels::Activation::none ? " +act" : "",
                       o_.residual.buffer >= 0 ? " +residual" : "", post_ != kernels::Activation::none ? " +act" : "",
                       o_.packed.buffer >= 0 ? " (packed weights)" : "");
  }

 private:
  bool expanded_;
  kernels::Conv2dGeometry expand_, dw_, pw_;
  kernels::Activation expand_act_, dw_act_, act_, post_;
  Operands o_;
};

kernels::Conv2dGeometry forward_geometry(const ir::Node& node) {
  return common::conv2d_geometry(node, node.input(0).shape(), node.input(1).shape(), node.output_types()[0].shape);
}

// What a convolution node produces for its readers: its fused tail's result, or its own output.
ir::Value conv_result(const Lowering& L, const ir::NodePtr& node) {
  const Epilogue* epi = L.epilogue(*node);
  return epi != nullptr ? epi->result : ir::Value(node, 0);
}

// The convolution producing `v` (through its fused tail) when nothing else reads v and that tail is at
// most an activation applied in registers (the kernels' bands apply no more), else null.
const ir::Node* sole_conv_producer(const Lowering& L, const ir::Value& v) {
  if (L.uses(v) != 1) return nullptr;
  const ir::Node* producer = nullptr;
  for (const ir::NodePtr& n : L.graph().nodes()) {
    if (n->op_name() == "conv" && claim_conv(*n) && conv_result(L, n) == v) producer = n.get();
  }
  if (producer == nullptr) return nullptr;
  if (const Epilogue* epi = L.epilogue(*producer)) {
    const bool in_registers = epi->activation == kernels::Activation::none ||
                              epi->activation == kernels::Activation::relu ||
                              epi->activation == kernels::Activation::relu6;
    if (epi->transposed || epi->bias.defined() || epi->residual.defined() ||
        epi->post_activation != kernels::Activation::none || !in_registers)
      return nullptr;
  }
  return producer;
}

// The depthwise convolution whose step `pw` takes over: the sole producer of pw's input, where
// conv2d_depthwise_pointwise_fuses says the pair runs faster as one.
const ir::Node* fused_depthwise_of(const Lowering& L, const ir::Node& pw) {
  if (!L.fusion().has(common::Fusion::depthwise_pointwise) || !claim_conv(pw)) return nullptr;
  const ir::Node* dw = sole_conv_producer(L, pw.input(0));
  return dw != nullptr && kernels::conv2d_depthwise_pointwise_fuses(forward_geometry(*dw), forward_geometry(pw)) ? dw
                                                                                                                 : nullptr;
}

// The pointwise expansion that the step of `pw` (which takes over `dw`) takes over too; not one that
// takes over a depthwise convolution itself (its step holds that one).
const ir::Node* fused_expansion_of(const Lowering& L, const ir::Node& dw, const ir::Node& pw) {
  const ir::Node* e = sole_conv_producer(L, dw.input(0));
  return e != nullptr && fused_depthwise_of(L, *e) == nullptr &&
                 kernels::conv2d_expand_depthwise_pointwise_fuses(forward_geometry(*e), forward_geometry(dw),
                                                                  forward_geometry(pw))
             ? e
             : nullptr;
}

// The convolution reading `node`'s result as its input, when it is the only reader.
ir::NodePtr sole_conv_reader(const Lowering& L, const ir::NodePtr& node) {
  const ir::Value result = conv_result(L, node);
  if (L.uses(result) != 1) return nullptr;
  for (const ir::NodePtr& n : L.graph().nodes()) {
    if (n->op_name() == "conv" && !n->inputs().empty() && n->input(0) == result) return n;
  }
  return nullptr;
}

// Whether a convolution is lowered within the step of a later pointwise one (and emits nothing itself):
// a depthwise one that its reader takes over, or an expansion that its reader's reader takes over.
bool lowered_later(const Lowering& L, const ir::NodePtr& node) {
  const ir::NodePtr reader = sole_conv_reader(L, node);
  if (reader == nullptr) return false;
  if (fused_depthwise_of(L, *reader) == node.get()) return true;
  const ir::NodePtr second = sole_conv_reader(L, reader);
  return second != nullptr && fused_depthwise_of(L, *second) == reader.get() &&
         fused_expansion_of(L, *reader, *second) == node.get();
}

void emit_depthwise_pointwise(Lowering& L, const ir::Node* expand, const ir::Node& dw, const ir::NodePtr& pw_node,
                              const Epilogue* epi) {
  const ir::Node& pw = *pw_node;
  const kernels::Conv2dGeometry dwg = forward_geometry(dw), pwg = forward_geometry(pw);
  const kernels::Conv2dGeometry eg = expand != nullptr ? forward_geometry(*expand) : kernels::Conv2dGeometry{};
  DepthwisePointwiseStep::Operands o;
  std::vector<int32_t> reads;
  auto read = [&](const ir::Value& v) {
    reads.push_back(L.packed(L.value(v)));
    return L.operand(reads.back());
  };
  // Weights packed for the pixel-vector tiles once, when constant.
  auto pack = [&](int32_t weights, const kernels::Conv2dGeometry& g) {
    const int32_t packed = L.derived_constant(
        weights, "conv_pointwise_rows", DType::f32, {kernels::conv2d_packed_weights_floats(g)}, [g](const Array& w) {
          Array p = Array::empty(DType::f32, {kernels::conv2d_packed_weights_floats(g)});
          kernels::conv2d_pack_weights(g, w.data<const float>(), p.data<float>(), nullptr,
                                       kernels::ConvAlgorithm::pointwise_rows);
          return p;
        });
    if (packed < 0) return Operand{};
    reads.push_back(packed);
    return L.operand(packed);
  };
  kernels::Activation expand_act = kernels::Activation::none;
  if (expand != nullptr) {
    o.x = read(expand->input(0));
    o.expand_w = read(expand->input(1));
    o.expand_packed = pack(reads.back(), eg);
    if (expand->inputs().size() == 3) o.expand_bias = read(expand->input(2));
    if (const Epilogue* e = L.epilogue(*expand)) expand_act = e->activation;
  } else {
    o.x = read(dw.input(0));
  }
  o.dw_w = read(dw.input(1));
  if (dw.inputs().size() == 3) o.dw_bias = read(dw.input(2));
  o.pw_w = read(pw.input(1));
  o.packed = pack(reads.back(), pwg);
  if (pw.inputs().size() == 3) o.pw_bias = read(pw.input(2));
  const Epilogue* dw_epi = L.epilogue(dw);
  const kernels::Activation dw_act = dw_epi != nullptr ? dw_epi->activation : kernels::Activation::none;
  kernels::Activation act = kernels::Activation::none, post = kernels::Activation::none;
  if (epi != nullptr) {
    act = epi->activation;
    post = epi->post_activation;
    if (epi->residual.defined()) o.residual = read(epi->residual);
  }
  const int32_t out = L.produce(epi != nullptr ? epi->result : ir::Value(pw_node, 0));
  o.out = L.operand(out);
  const bool packed = o.packed.buffer >= 0 && (expand == nullptr || o.expand_packed.buffer >= 0);
  std::vector<int32_t> scratch;
  if (const int64_t bytes = kernels::conv2d_depthwise_pointwise_workspace_bytes(dwg, pwg, packed,
                                                                              expand != nullptr ? &eg : nullptr);
      bytes > 0) {
    scratch.push_back(L.scratch(bytes));
    o.workspace = Operand{scratch.back(), 0};
  }
  L.emit(std::make_unique<DepthwisePointwiseStep>(expand != nullptr ? &eg : nullptr, expand_act, dwg, dw_act, pwg, act,
                                                  post, o),
         reads, {out}, scratch);
}

bool lower_conv(Lowering& L, const ir::NodePtr& node) {
  const std::optional<kernels::Conv2dGeometry> g = common::f32_conv2d_geometry(*node);
  if (!g) return false;
  if (lowered_later(L, node)) return true;  // its step is a later pointwise convolution's
  if (const ir::Node* dw = fused_depthwise_of(L, *node)) {
    emit_depthwise_pointwise(L, fused_expansion_of(L, *dw, *node), *dw, node, L.epilogue(*node));
    return true;
  }
  const Epilogue* epi = L.epilogue(*node);
  const ir::Value result = epi ? epi->result : ir::Value(node, 0);
  emit_conv(L, ConvKind::forward, *g, result, node->input(0), node->input(1),
            node->inputs().size() == 3 ? &node->input(2) : nullptr, epi);
  return true;
}

bool lower_input_grad(Lowering& L, const ir::NodePtr& node) {
  const std::optional<kernels::Conv2dGeometry> g = common::f32_conv2d_geometry(*node);
  if (!g) return false;
  emit_conv(L, ConvKind::input_grad, *g, ir::Value(node, 0), node->input(0), node->input(1), nullptr, nullptr);
  return true;
}

bool lower_weight_grad(Lowering& L, const ir::NodePtr& node) {
  const std::optional<kernels::Conv2dGeometry> g = common::f32_conv2d_geometry(*node);
  if (!g) return false;
  emit_conv(L, ConvKind::weight_grad, *g, ir::Value(node, 0), node->input(0), node->input(1), nullptr, nullptr);
  return true;
}

}  // namespace

void register_conv_lowerings(LoweringTable& table) {
  table["conv"] = {lower_conv, claim_conv, true};
  table["conv_input_grad"] = {lower_input_grad, claim_conv, true};
  table["conv_weight_grad"] = {lower_weight_grad, claim_conv, true};
}

}  // namespace tessera::backends::cpu
