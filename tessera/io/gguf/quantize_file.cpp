#include "tessera/io/gguf/quantize_file.h"

#include <fnmatch.h>
#include <regex.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "tessera/core/error.h"
#include "tessera/io/atomic_file.h"
#include "tessera/io/gguf/gguf_reader.h"
#include "tessera/io/gguf/gguf_writer.h"
#include "tessera/io/safetensors.h"
#include "tessera/quant/quantize.h"
#include "tessera/runtime/thread_pool.h"

namespace tessera::io::gguf {

namespace {

using quant::GgmlType;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// llama-quantize's tensor_allows_quantization, minus the architecture-specific names Tessera does not
// know; returns the reason when the tensor must keep its type.
const char* keep_reason(const std::string& name, size_t n_dims) {
  if (n_dims < 2) return "1-D tensor (norms, biases) kept";
  if (!ends_with(name, "weight")) return "name does not end in 'weight'";
  static const char* const kNeverQuantized[] = {"_norm.weight",
                                                "ffn_gate_inp.weight",
                                                "position_embd",
                                                "token_types.weight",
                                                "ssm_conv1d",
                                                "shortconv.conv.weight",
                                                "attn_rel_b.weight",
                                                ".rel_pos",
                                                ".patch_embd",
                                                ".patch_merger",
                                                "altup",
                                                "laurel",
                                                "per_layer_model_proj",
                                                "time_mix_first.weight"};
  for (const char* part : kNeverQuantized) {
    if (contains(name, part)) return "kept by llama-quantize's rules";
  }
  return nullptr;
}

GgmlType fallback_type(GgmlType type) {
  switch (type) {
    case GgmlType::q2_k:
    case GgmlType::q3_k:
      return GgmlType::q4_0;
    case GgmlType::q4_k:
      return GgmlType::q5_0;
    case GgmlType::q5_k:
      return GgmlType::q5_1;
    case GgmlType::q6_k:
      return GgmlType::q8_0;
    default:
      return GgmlType::f16;
  }
}

// Rows of a tensor: the product of ne[1..] (ne[0] is the row length).
int64_t rows_of(const std::vector<int64_t>& ne) {
  int64_t rows = 1;
  for (size_t d = 1; d < ne.size(); ++d) rows *= ne[d];
  return rows;
}

bool fits(GgmlType type, int64_t row_length) {
  return row_length % quant::type_traits(type).block_size == 0;
}

// llama.cpp's loader orders tensors by layer ("blk.N." prefix, none first), then by name; writing in
// that order reproduces llama-quantize's files byte for byte.
bool llama_tensor_order(const std::string& a, const std::string& b) {
  const auto layer = [](const std::string& s) {
    int n = -1;
    if (std::sscanf(s.c_str(), "blk.%d.", &n) != 1) n = -1;
    return n;
  };
  const int la = layer(a), lb = layer(b);
  return la != lb ? la < lb : a < b;
}

struct Source {
  std::string name;
  GgmlType type;
  std::vector<int64_t> ne;
  const uint8_t* data;
  uint64_t nbytes;
};

bool is_gguf(const std::string& path) {
  MappedFile file(path);
  return file.size() >= 4 && std::memcmp(file.data(), "GGUF", 4) == 0;
}

GgmlType ggml_type_of(DType dt, const std::string& name) {
  switch (dt) {
    case DType::f32:
      return GgmlType::f32;
    case DType::f16:
      return GgmlType::f16;
    case DType::bf16:
      return GgmlType::bf16;
    case DType::f64:
      return GgmlType::f64;
    case DType::i8:
      return GgmlType::i8;
    case DType::i32:
      return GgmlType::i32;
    case DType::i64:
      return GgmlType::i64;
    default:
      fail("tensor '{}' has dtype {}, which GGUF cannot hold", name, dtype_name(dt));
  }
}

// Encodes rows of f32 values in parallel.
std::vector<uint8_t> encode(GgmlType type, const float* values, int64_t rows, int64_t n) {
  const int64_t rb = quant::row_bytes(type, n, "quantize");
  std::vector<uint8_t> out(static_cast<size_t>(rows * rb));
  runtime::default_pool().parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      try {
        quant::quantize_row(type, values + r * n, out.data() + r * rb, n);
      } catch (const Error& e) {
        fail("row {}: {}", r, e.what());
      }
    }
  });
  return out;
}

}  // namespace

TypeOverride TypeOverride::parse(const std::string& spec) {
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    fail("--keep '{}': expected PATTERN=TYPE, e.g. 'output.weight=f16' or 'blk.*.attn_v.weight=q8_0'", spec);
  }
  TypeOverride o{spec.substr(0, eq), quant::parse_type(spec.substr(eq + 1))};
  TESSERA_CHECK(quant::type_traits(o.type).can_quantize && o.type != GgmlType::q8_k && o.type != GgmlType::q8_1,
                "--keep '{}': {} is not a weight type Tessera can write", spec, quant::type_name(o.type));
  return o;
}

bool TypeOverride::matches(const std::string& name) const {
  if (::fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
  // Anchored, so that "output.weight" does not also catch "blk.0.attn_output.weight".
  regex_t re;
  const std::string anchored = "^(" + pattern + ")$";
  if (::regcomp(&re, anchored.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return false;  // not a valid regex
  const bool hit = ::regexec(&re, name.c_str(), 0, nullptr, 0) == 0;
  ::regfree(&re);
  return hit;
}

TensorPlan plan_tensor(const std::string& name, const std::vector<int64_t>& ne, GgmlType from,
                       const QuantizeOptions& options) {
  TensorPlan p{name, ne, from, from, "", 0, 0};
  const int64_t row = ne.empty() ? 1 : ne[0];
  for (const TypeOverride& o : options.overrides) {
    if (!o.matches(name)) continue;
    if (!fits(o.type, row)) {
      fail("tensor '{}': override '{}' asks for {}, but its rows of {} values are not whole {} blocks", name, o.pattern,
           quant::type_name(o.type), row, quant::type_name(o.type));
    }
    p.to = o.type;
    p.reason = "override '" + o.pattern + "'";
    return p;
  }
  if (const char* why = keep_reason(name, ne.size())) {
    p.reason = why;
    return p;
  }
  const bool float_source = from == GgmlType::f32 || from == GgmlType::f16 || from == GgmlType::bf16;
  if (!float_source && !options.allow_requantize) {
    p.reason = "already quantized (pass --allow-requantize to re-encode)";
    return p;
  }
  p.to = options.type;
  p.reason = "quantized";
  if (!fits(p.to, row)) {
    GgmlType alt = fallback_type(p.to);
    if (!fits(alt, row)) alt = GgmlType::f16;
    p.reason = fmt::format("row length {} is not a multiple of {}'s block of {}: {} instead", row,
                           quant::type_name(p.to), quant::type_traits(p.to).block_size, quant::type_name(alt));
    p.to = alt;
  }
  return p;
}

uint32_t llama_file_type(GgmlType type) {
  switch (type) {
    case GgmlType::f32:
      return 0;
    case GgmlType::f16:
      return 1;
    case GgmlType::q4_0:
      return 2;
    case GgmlType::q4_1:
      return 3;
    case GgmlType::q8_0:
      return 7;
    case GgmlType::q5_0:
      return 8;
    case GgmlType::q5_1:
      return 9;
    case GgmlType::q2_k:
      return 10;
    case GgmlType::q3_k:
      return 12;  // Q3_K_M, which llama-quantize --pure writes for "Q3_K"
    case GgmlType::q4_k:
      return 15;  // Q4_K_M
    case GgmlType::q5_k:
      return 17;  // Q5_K_M
    case GgmlType::q6_k:
      return 18;
    case GgmlType::bf16:
      return 32;
    default:
      fail("{} is not a model file type llama.cpp knows", quant::type_name(type));
  }
}

std::vector<TensorPlan> quantize_file(const std::string& in, const std::string& out, const QuantizeOptions& options,
                                      const std::function<void(const TensorPlan&, size_t, size_t)>& on_tensor) {
  const uint32_t file_type = llama_file_type(options.type);
  Writer writer;
  std::vector<Source> sources;
  // Keep whichever input representation alive until the file is written.
  std::shared_ptr<const void> keep_alive;
  if (is_gguf(in)) {
    auto reader = std::make_shared<Reader>(Reader::open(in));
    writer = Writer(reader->alignment());
    writer.copy_metadata(*reader);
    for (const TensorInfo& t : reader->tensors()) {
      sources.push_back({t.name, t.type, t.ne, reader->tensor_data(t), t.nbytes});
    }
    keep_alive = reader;
  } else {
    auto st = std::make_shared<SafetensorsFile>(load_safetensors(in));
    for (const auto& [key, value] : st->metadata) writer.set(key, Value::string(value));
    for (const auto& [name, array] : st->tensors) {
      const Array& c = array;  // load_safetensors returns packed arrays
      sources.push_back({name, ggml_type_of(c.dtype(), name),
                         std::vector<int64_t>(c.shape().rbegin(), c.shape().rend()),
                         static_cast<const uint8_t*>(c.raw_data()), c.nbytes()});
    }
    keep_alive = st;
  }
  // As llama-quantize: the quantization version, then the file type, at the end of the metadata.
  writer.append("general.quantization_version", Value::u32(2));
  writer.append("general.file_type", Value::u32(file_type));

  std::stable_sort(sources.begin(), sources.end(),
                   [](const Source& a, const Source& b) { return llama_tensor_order(a.name, b.name); });
  std::vector<TensorPlan> plans;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& s = sources[i];
    TensorPlan p = plan_tensor(s.name, s.ne, s.type, options);
    const int64_t n = s.ne.empty() ? 1 : s.ne[0];
    const int64_t rows = rows_of(s.ne);
    p.bytes_in = s.nbytes;
    p.bytes_out = static_cast<uint64_t>(quant::row_bytes(p.to, n) * rows);
    if (p.to == s.type) {
      writer.add_tensor(s.name, s.type, s.ne, std::span<const uint8_t>(s.data, s.nbytes), keep_alive);
    } else {
      const std::vector<float> values = quant::dequantize(s.type, s.data, s.nbytes, rows, n);
      std::vector<uint8_t> bytes;
      try {
        bytes = encode(p.to, values.data(), rows, n);
      } catch (const Error& e) {
        fail("{}: tensor '{}': {}", in, s.name, e.what());
      }
      writer.add_tensor(s.name, p.to, s.ne, std::move(bytes));
    }
    if (on_tensor) on_tensor(p, i, sources.size());
    plans.push_back(std::move(p));
  }
  writer.write(out);
  return plans;
}

}  // namespace tessera::io::gguf
