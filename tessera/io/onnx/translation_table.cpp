#include "tessera/io/onnx/translation_table.h"

#include <algorithm>

#include "tessera/core/error.h"

namespace tessera::io::onnx {

void TranslationTable::add(std::string op, std::vector<int64_t> versions, int64_t oldest_supported, TranslateFn fn) {
  TESSERA_CHECK(!versions.empty() && std::is_sorted(versions.begin(), versions.end()),
                "ONNX translation {}: versions must be listed in ascending order", op);
  entries_.add(op, OpTranslation{op, std::move(versions), oldest_supported, std::move(fn)});
}

void TranslationTable::add(std::string op, std::vector<int64_t> versions, TranslateFn fn) {
  const int64_t first = versions.empty() ? 1 : versions.front();
  add(std::move(op), std::move(versions), first, std::move(fn));
}

const OpTranslation* TranslationTable::find(const std::string& op) const { return entries_.find(op); }

std::vector<std::string> TranslationTable::names() const { return entries_.names(); }

const TranslationTable& translations() {
  static const TranslationTable table = [] {
    TranslationTable t;
    add_elementwise_translations(t);
    add_trig_translations(t);
    add_activation_translations(t);
    add_logic_translations(t);
    add_linalg_translations(t);
    add_einsum_translations(t);
    add_conv_translations(t);
    add_pool_translations(t);
    add_resize_translations(t);
    add_grid_sample_translations(t);
    add_reduce_translations(t);
    add_shape_translations(t);
    add_slice_translations(t);
    add_index_translations(t);
    add_nn_translations(t);
    add_rnn_translations(t);
    add_creation_translations(t);
    add_signal_translations(t);
    add_quant_translations(t);
    return t;
  }();
  return table;
}

}  // namespace tessera::io::onnx
