#pragma once
// The per-op translation table: one entry per ONNX operator (default domain), with the versions the
// spec defines for it and the oldest of them the translation implements. The model's opset selects a
// version (the newest one not above it); the translation reads that version's attributes with the
// spec's defaults and builds Tessera ops. Each op family adds its entries in its own file.
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/io/onnx/node_context.h"
#include "tessera/io/op_table.h"

namespace tessera::io::onnx {

// The newest default-domain opset whose operator versions the table lists (ONNX 1.13: PyTorch's
// dynamo exporter writes opset 18 by default).
inline constexpr int64_t kNewestOpset = 18;

using TranslateFn = std::function<std::vector<Tensor>(NodeContext& c)>;

struct OpTranslation {
  std::string op;
  std::vector<int64_t> versions;  // every since_version of the op up to kNewestOpset, ascending
  int64_t oldest_supported = 1;   // versions before this one are refused
  TranslateFn translate;
};

class TranslationTable {
 public:
  void add(std::string op, std::vector<int64_t> versions, int64_t oldest_supported, TranslateFn fn);
  // The same translation, every version supported.
  void add(std::string op, std::vector<int64_t> versions, TranslateFn fn);
  const OpTranslation* find(const std::string& op) const;
  std::vector<std::string> names() const;

 private:
  OpTable<OpTranslation> entries_{"onnx import"};
};

const TranslationTable& translations();

void add_elementwise_translations(TranslationTable& t);  // translate_elementwise.cpp: unary and binary maths
void add_trig_translations(TranslationTable& t);         // translate_trig.cpp: Acos, Asin, Atan
void add_activation_translations(TranslationTable& t);   // translate_activation.cpp: Relu ... HardSwish
void add_logic_translations(TranslationTable& t);        // translate_logic.cpp: comparisons, And/Or, Where
void add_linalg_translations(TranslationTable& t);       // translate_linalg.cpp: MatMul, Gemm
void add_einsum_translations(TranslationTable& t);       // translate_einsum.cpp: Einsum
void add_conv_translations(TranslationTable& t);         // translate_conv.cpp: Conv, ConvTranspose
void add_pool_translations(TranslationTable& t);         // translate_pool.cpp: MaxPool, AveragePool, global pools
void add_resize_translations(TranslationTable& t);       // translate_resize.cpp: Resize, Upsample
void add_grid_sample_translations(TranslationTable& t);  // translate_grid_sample.cpp: GridSample
void add_reduce_translations(TranslationTable& t);       // translate_reduce.cpp: Reduce*, ArgMax, CumSum
void add_shape_translations(TranslationTable& t);        // translate_shape.cpp: Reshape ... Transpose
void add_slice_translations(TranslationTable& t);        // translate_slice.cpp: Slice, Split, Concat, Pad
void add_index_translations(TranslationTable& t);        // translate_index.cpp: Gather*, Scatter*, OneHot
void add_nn_translations(TranslationTable& t);           // translate_nn.cpp: Softmax, norms, losses
void add_rnn_translations(TranslationTable& t);          // translate_rnn.cpp: RNN, GRU, LSTM
void add_creation_translations(TranslationTable& t);     // translate_creation.cpp: Constant, Range, windows, ...
void add_signal_translations(TranslationTable& t);       // translate_signal.cpp: DFT
void add_quant_translations(TranslationTable& t);        // translate_quant.cpp: (De)QuantizeLinear

}  // namespace tessera::io::onnx
