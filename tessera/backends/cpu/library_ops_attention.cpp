// kv_cache_attention as a library step (kernels/cpu/kv_attention.h): f32 queries over f32 or f16 keys and values,
// i32/i64 positions checked against the cache's rows before anything runs.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "tessera/backends/cpu/library_ops.h"
#include "tessera/kernels/cpu/kv_attention.h"

namespace tessera::backends::cpu {
namespace {

class KvAttentionStep final : public Step {
 public:
  KvAttentionStep(kernels::KvAttentionShape shape, int64_t rows, bool i64, std::vector<ir::TensorType> types, Operand q,
                  Operand k, Operand v, Operand positions, Operand out)
      : shape_(shape),
        rows_(rows),
        i64_(i64),
        types_(std::move(types)),
        q_(q),
        k_(k),
        v_(v),
        positions_(positions),
        out_(out),
        scratch_(static_cast<size_t>(shape.m)) {}
  void run(const RunContext& ctx) const override {
    for (int64_t i = 0; i < shape_.m; ++i) {
      const int64_t p = i64_ ? ctx.ptr<const int64_t>(positions_)[i] : ctx.ptr<const int32_t>(positions_)[i];
      if (p < 0 || p >= rows_) {
        ir::op_fail("kv_cache_attention", types_, "position {} of query {} is outside the cache's {} rows", p, i, rows_);
      }
      scratch_[static_cast<size_t>(i)] = p;
    }
    kernels::kv_attention(shape_, ctx.ptr<const float>(q_), ctx.ptr<const void>(k_), ctx.ptr<const void>(v_),
                          types_[1].dtype == DType::f16, scratch_.data(), ctx.ptr<float>(out_), *ctx.pool);
  }
  StepKind kind() const override { return StepKind::library; }
  std::string describe() const override {
    return fmt::format("kv_cache_attention {} queries x {} heads over {} rows x {} kv heads, dim {}", shape_.m,
                       shape_.q_heads, rows_, shape_.kv_heads, shape_.head_dim);
  }

 private:
  kernels::KvAttentionShape shape_;
  int64_t rows_;
  bool i64_;
  std::vector<ir::TensorType> types_;
  Operand q_, k_, v_, positions_, out_;
  mutable std::vector<int64_t> scratch_;  // positions as int64; sized once, so runs allocate nothing
};

bool claim_kv_attention(const ir::Node& node) {
  const DType kv = node.input(1).dtype();  // f32 queries over an f32 or f16 cache
  if (node.input(0).dtype() != DType::f32 || (kv != DType::f32 && kv != DType::f16)) return false;
  const DType p = node.input(3).dtype();
  return p == DType::i32 || p == DType::i64;
}

bool lower_kv_attention(Lowering& L, const ir::NodePtr& node) {
  if (!claim_kv_attention(*node)) return false;
  const Shape &qs = node->input(0).shape(), &ks = node->input(1).shape(), &vs = node->input(2).shape();
  kernels::KvAttentionShape s;
  s.m = qs[0];
  s.q_heads = qs[1];
  s.head_dim = qs[2];
  s.kv_heads = ks[1];
  s.value_dim = vs[2];
  const double scale = node->attrs().get_float("scale");
  s.scale = static_cast<float>(scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  const int32_t q = L.packed(L.value(node->input(0))), k = L.packed(L.value(node->input(1)));
  const int32_t v = L.packed(L.value(node->input(2))), pos = L.packed(L.value(node->input(3)));
  const int32_t out = L.produce(ir::Value(node, 0));
  std::vector<ir::TensorType> types;
  for (const ir::Value& in : node->inputs()) types.push_back(in.type());
  L.emit(std::make_unique<KvAttentionStep>(s, ks[0], node->input(3).dtype() == DType::i64, std::move(types),
                                           L.operand(q), L.operand(k), L.operand(v), L.operand(pos), L.operand(out)),
         {q, k, v, pos}, {out});
  return true;
}

}  // namespace

void register_attention_lowerings(LoweringTable& table) {
  table["kv_cache_attention"] = {lower_kv_attention, claim_kv_attention, true};
}

}  // namespace tessera::backends::cpu
