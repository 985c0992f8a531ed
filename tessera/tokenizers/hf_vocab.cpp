#include "tessera/tokenizers/hf_vocab.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/core/atomic_file.h"
#include "tessera/core/error.h"
#include "tessera/core/printable.h"

namespace tessera::tokenizers {

namespace {

using nlohmann::json;


// The two pre-tokenizer patterns llama.cpp (and Tessera) run, as tokenizer.json spells them.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::string text_of(const std::string& path) {
  const MappedFile file(path);
  return std::string(reinterpret_cast<const char*>(file.data()), file.size());
}

json read_json(const std::string& path) {
  const std::string text = text_of(path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", path, printable(e.what()));
  }
}

// A short form of a JSON value for messages.
std::string shown(const json& j) {
  return printable(j.dump(), 160);
}

// A token id: a non-negative integer below 2^31 - 1.
int64_t token_id(const json& j, const std::string& where) {
  if (j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0)) {
    const auto id = j.get<uint64_t>();
    if (id < static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) return static_cast<int64_t>(id);
  }
  fail("{}: {} is not a token id (expected a non-negative integer below 2147483647)", where, shown(j));
}

// The content of a special-token entry of tokenizer_config.json: "text" or {"content": "text", ...}.
std::optional<std::string> token_text(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) return j["content"].get<std::string>();
  return std::nullopt;
}

bool is_byte_token(std::string_view t) {
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f'); };
  return t.size() == 6 && t.substr(0, 3) == "<0x" && hex(t[3]) && hex(t[4]) && t[5] == '>';
}

// Every node of a normalizer / pre-tokenizer / post-processor tree: the node and what a Sequence holds.
void collect_nodes(const json& node, std::vector<const json*>& out) {
  if (!node.is_object()) return;
  out.push_back(&node);
  for (const char* list : {"normalizers", "pretokenizers", "processors", "decoders"}) {
    if (node.contains(list) && node[list].is_array()) {
      for (const json& child : node[list]) collect_nodes(child, out);
    }
  }
}

// Members of untrusted objects: a missing member or one of another JSON type reads as the fallback.
std::string string_member(const json& node, const char* key) {
  return node.is_object() && node.contains(key) && node[key].is_string() ? node[key].get<std::string>() : std::string();
}
bool bool_member(const json& node, const char* key, bool fallback) {
  return node.is_object() && node.contains(key) && node[key].is_boolean() ? node[key].get<bool>() : fallback;
}

std::string type_of(const json& node) {
  return string_member(node, "type");
}

// The vocabulary being assembled: tokens by id, with gaps until the end.
struct Draft {
  std::vector<std::string> tokens;
  std::vector<bool> present;
  std::vector<TokenType> types;
  std::unordered_map<std::string, TokenId> ids;
  int64_t limit = int64_t{1} << 24;  // ids must stay below: the model's rows when known
  std::string limit_why = "the largest vocabulary tessera convert reads";

  void set(int64_t id, const std::string& text, TokenType type, const std::string& where) {
    TESSERA_CHECK(id < limit, "{}: token id {} is past {} ({})", where, id, limit - 1, limit_why);
    const auto i = static_cast<size_t>(id);
    if (i >= tokens.size()) {
      tokens.resize(i + 1);
      present.resize(i + 1, false);
      types.resize(i + 1, TokenType::unused);
    }
    tokens[i] = text;
    present[i] = true;
    types[i] = type;
    ids[text] = static_cast<TokenId>(id);
  }
  TokenId find(const std::string& text) const {
    const auto it = ids.find(text);
    return it == ids.end() ? kNoToken : it->second;
  }
};

// vocab: {"text": id, ...}; two texts with one id is an error.
void read_vocab_object(const json& vocab, const std::string& where, Draft& d) {
  TESSERA_CHECK(vocab.is_object(), "{}: expected an object of token -> id, got {}", where, vocab.type_name());
  for (const auto& [text, value] : vocab.items()) {
    const int64_t id = token_id(value, fmt::format("{} entry {}", where, printable_quoted(text, 48)));
    if (static_cast<size_t>(id) < d.present.size() && d.present[static_cast<size_t>(id)]) {
      fail("{}: id {} is given to both {} and {}", where, id, printable_quoted(d.tokens[static_cast<size_t>(id)], 48),
           printable_quoted(text, 48));
    }
    d.set(id, text, TokenType::normal, fmt::format("{} entry {}", where, printable_quoted(text, 48)));
  }
  TESSERA_CHECK(!d.tokens.empty(), "{}: the vocabulary is empty", where);
}

// One merge: "left right" (the classic form) or ["left", "right"] (tokenizers >= 0.20).
std::pair<std::string, std::string> parse_merge(const json& m, const std::string& where) {
  if (m.is_string()) {
    const std::string s = m.get<std::string>();
    const size_t at = s.find(' ');
    if (at != std::string::npos && at > 0 && at + 1 < s.size() && s.find(' ', at + 1) == std::string::npos) {
      return {s.substr(0, at), s.substr(at + 1)};
    }
  } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
    return {m[0].get<std::string>(), m[1].get<std::string>()};
  }
  fail("{} is {}: expected \"left right\" or [\"left\", \"right\"]", where, shown(m));
}

struct Merges {
  std::vector<std::pair<std::string, std::string>> list;  // in rank order, duplicates dropped
};

Merges read_merges(const json& merges, const std::string& where, const Draft& d, bool for_gguf_text) {
  TESSERA_CHECK(merges.is_array(), "{}: expected an array, got {}", where, merges.type_name());
  Merges out;
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", where, i);
    auto [left, right] = parse_merge(merges[i], at);
    if (for_gguf_text) {
      // GGUF spells a merge "left right": a space or newline inside a symbol could not be read back.
      TESSERA_CHECK(left.find_first_of(" \n") == std::string::npos && right.find_first_of(" \n") == std::string::npos,
                    "{}: {} {}: a symbol holds a space or newline, which GGUF's merge list cannot spell", at,
                    printable_quoted(left, 48), printable_quoted(right, 48));
    }
    for (const std::string* part : {&left, &right}) {
      TESSERA_CHECK(d.find(*part) != kNoToken, "{}: {} is not in the vocabulary", at, printable_quoted(*part, 48));
    }
    TESSERA_CHECK(d.find(left + right) != kNoToken, "{}: the merged token {} is not in the vocabulary", at,
                  printable_quoted(left + right, 48));
    if (!seen.insert(merge_key(left, right)).second) continue;
    out.list.emplace_back(std::move(left), std::move(right));
  }
  return out;
}

// Which of the two regex pre-tokenizers a byte-level tokenizer.json uses.
std::string byte_level_pre(const json& root, const std::string& path) {
  const json pre = root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json();
  TESSERA_CHECK(!pre.is_null(), "{}: a byte-level BPE tokenizer without a pre_tokenizer is not supported", path);
  std::vector<const json*> nodes;
  collect_nodes(pre, nodes);
  std::vector<std::string> splits;
  bool byte_level_regex = false;
  for (const json* n : nodes) {
    const std::string t = type_of(*n);
    if (t == "Split") {
      const json& p = n->contains("pattern") ? (*n)["pattern"] : json();
      if (p.is_object() && p.contains("Regex") && p["Regex"].is_string()) {
        splits.push_back(p["Regex"].get<std::string>());
      } else {
        splits.push_back("<not a regex: " + shown(p) + ">");
      }
    } else if (t == "ByteLevel") {
      byte_level_regex = byte_level_regex || bool_member(*n, "use_regex", true);
    } else if (t != "Sequence") {
      fail(
          "{}: pre_tokenizer {} is not supported: expected GPT-2's (ByteLevel with its regex) or Llama 3's (Split on "
          "its pattern, then ByteLevel without one)",
          path, printable_quoted(t, 32));
    }
  }
  if (splits.empty() && byte_level_regex) return "gpt-2";
  if (splits.size() == 1 && !byte_level_regex) {
    if (splits[0] == kLlama3Pattern) return "llama-bpe";
    if (splits[0] == kGpt2Pattern) return "gpt-2";
  }
  fail(
      "{}: pre_tokenizer {} is not one Tessera runs: expected GPT-2's (ByteLevel with use_regex) or Llama 3's (a "
      "Split on its pattern, then ByteLevel without one)",
      path, shown(pre));
}

// Whether a SentencePiece-style tokenizer.json puts "▁" before the text (llama.cpp's add_space_prefix).
bool spm_space_prefix(const json& root) {
  std::vector<const json*> nodes;
  for (const char* part : {"normalizer", "pre_tokenizer"}) {
    if (root.contains(part)) collect_nodes(root[part], nodes);
  }
  bool replaces_spaces = false;
  for (const json* n : nodes) {
    const std::string t = type_of(*n);
    if (t == "Prepend" && string_member(*n, "prepend") == kSpmSpace) return true;
    if (t == "Metaspace") {
      const std::string scheme = string_member(*n, "prepend_scheme");
      return scheme.empty() ? bool_member(*n, "add_prefix_space", true) : scheme != "never";
    }
    if (t == "Replace" && string_member(*n, "content") == kSpmSpace) replaces_spaces = true;
  }
  return !replaces_spaces;  // spaces made "▁" without a prefix: none; nothing said: llama.cpp's default
}

// add_bos / add_eos from a TemplateProcessing post-processor ("single": [SpecialToken, Sequence, ...]).
struct TemplateFlags {
  bool found = false;
  std::string first_special, last_special;  // the special tokens before and after the text ("" none)
};
TemplateFlags template_flags(const json& root) {
  TemplateFlags f;
  if (!root.contains("post_processor")) return f;
  std::vector<const json*> nodes;
  collect_nodes(root["post_processor"], nodes);
  for (const json* n : nodes) {
    if (type_of(*n) != "TemplateProcessing" || !n->contains("single") || !(*n)["single"].is_array()) continue;
    const json& single = (*n)["single"];
    const auto special = [](const json& piece) -> std::string {
      return piece.is_object() && piece.contains("SpecialToken") ? string_member(piece["SpecialToken"], "id")
                                                                 : std::string();
    };
    f.found = true;
    if (!single.empty()) {
      f.first_special = special(single.front());
      if (single.size() > 1) f.last_special = special(single.back());
    }
    return f;
  }
  return f;
}

// Tokens of tokenizer.json's added_tokens and tokenizer_config.json's added_tokens_decoder.
void add_added_tokens(const json& list, const std::string& where, Draft& d) {
  TESSERA_CHECK(list.is_array(), "{}: expected an array, got {}", where, list.type_name());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& t = list[i];
    const std::string at = fmt::format("{}[{}]", where, i);
    TESSERA_CHECK(t.is_object() && t.contains("id") && t.contains("content") && t["content"].is_string(),
                  "{}: expected an object with id and content, got {}", at, shown(t));
    const bool special = bool_member(t, "special", false);
    d.set(token_id(t["id"], at + ".id"), t["content"].get<std::string>(),
          special ? TokenType::control : TokenType::user_defined, at);
  }
}

void add_decoder_tokens(const json& decoder, const std::string& where, Draft& d) {
  TESSERA_CHECK(decoder.is_object(), "{}: expected an object of id -> token, got {}", where, decoder.type_name());
  for (const auto& [key, t] : decoder.items()) {
    const std::string at = fmt::format("{}[{}]", where, printable_quoted(key, 24));
    size_t used = 0;
    int64_t id = -1;
    try {
      id = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    TESSERA_CHECK(used == key.size() && id >= 0 && id < std::numeric_limits<int32_t>::max(),
                  "{}: the key is not a token id", at);
    const std::optional<std::string> text = token_text(t);
    TESSERA_CHECK(text.has_value(), "{}: expected an object with content, got {}", at, shown(t));
    // tokenizer.json's entry, when there is one, already says the same; this adds what only the config has.
    if (static_cast<size_t>(id) < d.present.size() && d.present[static_cast<size_t>(id)] &&
        d.tokens[static_cast<size_t>(id)] == *text && d.types[static_cast<size_t>(id)] != TokenType::normal) {
      continue;
    }
    d.set(id, *text, bool_member(t, "special", false) ? TokenType::control : TokenType::user_defined, at);
  }
}

struct Parsed {
  Draft draft;
  Model model = Model::bpe;
  std::string pre;  // BPE
  Merges merges;
  std::string unk_text;      // tokenizer.json model.unk_token (SentencePiece)
  bool space_prefix = true;  // SentencePiece
  TemplateFlags post;
  std::string source;
};

void limit_ids(Draft& d, int64_t n_vocab) {
  if (n_vocab <= 0) return;
  d.limit = n_vocab;
  d.limit_why = fmt::format("the model's embedding has {} rows", n_vocab);
}

Parsed parse_tokenizer_json(const std::string& path, int64_t n_vocab) {
  const json root = read_json(path);
  TESSERA_CHECK(root.is_object() && root.contains("model") && root["model"].is_object(),
                "{}: expected an object with a \"model\" object (a tokenizers library file)", path);
  const json& model = root["model"];
  std::string type = type_of(model);
  if (type.empty() && model.contains("merges")) type = "BPE";
  if (type != "BPE") {
    fail(
        "{}: model.type {} is not supported: tessera convert reads BPE tokenizers, byte-level (as GPT-2 and Llama 3 "
        "save them) or SentencePiece-style with byte_fallback (as LlamaTokenizerFast saves them)",
        path, printable_quoted(type.empty() ? "(none)" : type, 32));
  }
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.contains(affix) && model[affix].is_string() && !model[affix].get<std::string>().empty()) {
      fail("{}: model.{} = {} is not supported (GGUF BPE has no subword affixes)", path, affix, shown(model[affix]));
    }
  }
  TESSERA_CHECK(model.contains("vocab"), "{}: model.vocab is missing", path);
  TESSERA_CHECK(model.contains("merges"), "{}: model.merges is missing", path);
  Parsed p;
  limit_ids(p.draft, n_vocab);
  read_vocab_object(model["vocab"], path + ": model.vocab", p.draft);

  std::vector<const json*> pre_nodes;
  if (root.contains("pre_tokenizer")) collect_nodes(root["pre_tokenizer"], pre_nodes);
  bool byte_level = false, metaspace = false;
  for (const json* n : pre_nodes) {
    byte_level = byte_level || type_of(*n) == "ByteLevel";
    metaspace = metaspace || type_of(*n) == "Metaspace";
  }
  const bool byte_fallback = bool_member(model, "byte_fallback", false);
  if (byte_fallback || (!byte_level && (metaspace || p.draft.find(std::string(kSpmSpace)) != kNoToken))) {
    p.model = Model::spm;
  } else if (byte_level) {
    p.model = Model::bpe;
  } else {
    fail(
        "{}: a BPE tokenizer that is neither byte-level (a ByteLevel pre_tokenizer) nor SentencePiece-style "
        "(byte_fallback, U+2581 for spaces) is not supported",
        path);
  }
  p.merges = read_merges(model["merges"], path + ": model.merges", p.draft, p.model == Model::bpe);
  if (root.contains("added_tokens") && !root["added_tokens"].is_null()) {
    add_added_tokens(root["added_tokens"], path + ": added_tokens", p.draft);
  }
  p.post = template_flags(root);
  if (p.model == Model::bpe) {
    p.pre = byte_level_pre(root, path);
    p.source = fmt::format("tokenizer.json (byte-level BPE, pre-tokenizer {})", p.pre);
  } else {
    p.unk_text = string_member(model, "unk_token");
    p.space_prefix = spm_space_prefix(root);
    p.source = "tokenizer.json (SentencePiece-style BPE)";
  }
  return p;
}

Parsed parse_vocab_and_merges(const std::string& vocab_path, const std::string& merges_path, const std::string& family,
                              int64_t n_vocab) {
  Parsed p;
  limit_ids(p.draft, n_vocab);
  read_vocab_object(read_json(vocab_path), vocab_path, p.draft);
  const std::string text = text_of(merges_path);
  json merges = json::array();
  size_t line_no = 0;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    merges.push_back(line);
  }
  p.merges = read_merges(merges, merges_path + ": merge", p.draft, true);
  p.model = Model::bpe;
  p.pre = family == "llama" ? "llama-bpe" : "gpt-2";
  p.source = fmt::format("vocab.json + merges.txt (byte-level BPE, pre-tokenizer {})", p.pre);
  return p;
}

}  // namespace

HfVocab vocab_from_hf(const std::string& folder, const HfVocabOptions& options) {
  const auto in = [&](const char* name) { return (std::filesystem::path(folder) / name).string(); };
  const std::string tokenizer_json = in("tokenizer.json"), vocab_json = in("vocab.json"), merges_txt = in("merges.txt");
  Parsed p;
  if (is_file(tokenizer_json)) {
    p = parse_tokenizer_json(tokenizer_json, options.n_vocab);
  } else if (is_file(vocab_json) && is_file(merges_txt)) {
    p = parse_vocab_and_merges(vocab_json, merges_txt, options.family, options.n_vocab);
  } else if (is_file(vocab_json) || is_file(merges_txt)) {
    fail(
        "{}: {} is missing (a byte-level BPE tokenizer needs both vocab.json and merges.txt; tokenizer.json also "
        "serves)",
        folder, is_file(vocab_json) ? "merges.txt" : "vocab.json");
  } else if (is_file(in("tokenizer.model"))) {
    fail(
        "{}: the only tokenizer file is tokenizer.model (a SentencePiece protobuf), which tessera convert does not "
        "read; it reads tokenizer.json (transformers writes one with "
        "AutoTokenizer.from_pretrained(folder).save_pretrained(folder)) or vocab.json + merges.txt",
        folder);
  } else {
    fail("{}: no tokenizer: expected tokenizer.json, or vocab.json + merges.txt", folder);
  }
  Draft& d = p.draft;

  // Special tokens named by tokenizer_config.json (or special_tokens_map.json): their ids, and tokens
  // that only the config lists.
  json config = json::object(), special_map = json::object();
  if (is_file(in("tokenizer_config.json"))) {
    config = read_json(in("tokenizer_config.json"));
    TESSERA_CHECK(config.is_object(), "{}: expected a JSON object", in("tokenizer_config.json"));
    if (config.contains("added_tokens_decoder") && !config["added_tokens_decoder"].is_null()) {
      add_decoder_tokens(config["added_tokens_decoder"], in("tokenizer_config.json") + ": added_tokens_decoder", d);
    }
  }
  if (is_file(in("special_tokens_map.json"))) {
    special_map = read_json(in("special_tokens_map.json"));
    if (!special_map.is_object()) special_map = json::object();
  }
  const auto named = [&](const char* key) -> TokenId {
    for (const json* source : {&config, &special_map}) {
      if (!source->contains(key)) continue;
      if (const auto text = token_text((*source)[key])) {
        if (const TokenId id = d.find(*text); id != kNoToken) return id;
      }
    }
    return kNoToken;
  };
  const auto by_id = [&](const std::optional<int64_t>& id) -> TokenId {
    return id && *id >= 0 && *id < static_cast<int64_t>(d.tokens.size()) && d.present[static_cast<size_t>(*id)]
               ? static_cast<TokenId>(*id)
               : kNoToken;
  };
  const auto first_of = [&](std::initializer_list<const char*> texts) -> TokenId {
    for (const char* t : texts) {
      if (const TokenId id = d.find(t); id != kNoToken) return id;
    }
    return kNoToken;
  };

  Vocab v;
  v.model = p.model;
  v.bos = named("bos_token");
  if (v.bos == kNoToken) v.bos = by_id(options.bos_id);
  v.eos = named("eos_token");
  if (v.eos == kNoToken) v.eos = by_id(options.eos_id);
  v.unk = named("unk_token");
  if (p.model == Model::spm) {
    if (v.unk == kNoToken && !p.unk_text.empty()) v.unk = d.find(p.unk_text);
    if (v.unk == kNoToken) v.unk = first_of({"<unk>"});
    if (v.bos == kNoToken) v.bos = first_of({"<s>"});
    if (v.eos == kNoToken) v.eos = first_of({"</s>"});
  } else {
    if (v.bos == kNoToken) v.bos = first_of({"<|begin_of_text|>", "<|endoftext|>"});
    if (v.eos == kNoToken) v.eos = first_of({"<|end_of_text|>", "<|endoftext|>"});
  }
  // The special tokens are control tokens (the unknown one unknown, for SentencePiece) even where only
  // vocab.json lists them.
  for (const TokenId id : {v.bos, v.eos}) {
    if (id != kNoToken && d.types[static_cast<size_t>(id)] == TokenType::normal) {
      d.types[static_cast<size_t>(id)] = TokenType::control;
    }
  }
  if (v.unk != kNoToken) {
    TokenType& t = d.types[static_cast<size_t>(v.unk)];
    if (p.model == Model::spm) {
      t = TokenType::unknown;
    } else if (t == TokenType::normal) {
      t = TokenType::control;
    }
  }
  if (p.model == Model::spm) {
    for (size_t i = 0; i < d.tokens.size(); ++i) {
      if (d.present[i] && d.types[i] == TokenType::normal && is_byte_token(d.tokens[i])) d.types[i] = TokenType::byte;
    }
  }

  // Padding up to the embedding rows.
  const auto n_tokens = static_cast<int64_t>(d.tokens.size());
  if (options.n_vocab > 0) {
    TESSERA_CHECK(n_tokens <= options.n_vocab,
                  "{}: the tokenizer has {} tokens (ids up to {}) but the model's embedding has only {} rows", folder,
                  n_tokens, n_tokens - 1, options.n_vocab);
  }
  const int64_t n = std::max(n_tokens, options.n_vocab);
  v.tokens.resize(static_cast<size_t>(n));
  v.types.assign(static_cast<size_t>(n), TokenType::unused);
  for (int64_t i = 0; i < n; ++i) {
    const auto u = static_cast<size_t>(i);
    if (i < n_tokens && d.present[u]) {
      v.tokens[u] = d.tokens[u];
      v.types[u] = d.types[u];
    } else {
      v.tokens[u] = fmt::format("[PAD{}]", i);
    }
  }

  if (p.model == Model::bpe) {
    v.pre_name = p.pre;
    v.pre = p.pre == "gpt-2" ? PreTokenizer::gpt2 : PreTokenizer::llama3;
    for (size_t r = 0; r < p.merges.list.size(); ++r) {
      v.merge_ranks.emplace(merge_key(p.merges.list[r].first, p.merges.list[r].second), static_cast<int32_t>(r));
    }
    v.clean_spaces = true;
    v.ignore_merges = v.pre == PreTokenizer::llama3;
  } else {
    // SentencePiece joins the best-scored adjacent pair first; HF's BPE the lowest-ranked merge. Scoring
    // each token -rank of the first merge that makes it gives both the same order. Normal tokens that no
    // merge makes (single characters, or pieces HF never builds) score below every merge.
    const auto n_merges = static_cast<float>(p.merges.list.size());
    v.scores.assign(static_cast<size_t>(n), 0.0f);
    std::vector<bool> scored(static_cast<size_t>(n), false);
    for (size_t r = 0; r < p.merges.list.size(); ++r) {
      const auto id = static_cast<size_t>(d.find(p.merges.list[r].first + p.merges.list[r].second));
      if (!scored[id]) {
        v.scores[id] = -static_cast<float>(r);
        scored[id] = true;
      }
    }
    for (size_t i = 0; i < v.scores.size(); ++i) {
      if (!scored[i] && v.types[i] == TokenType::normal) v.scores[i] = -n_merges - static_cast<float>(i);
    }
    v.add_space_prefix = p.space_prefix;
  }

  // add_bos / add_eos: the config's flags, else the post-processor's template, else llama.cpp's default.
  const auto text_of_id = [&](TokenId id) {
    return id == kNoToken ? std::string() : v.tokens[static_cast<size_t>(id)];
  };
  v.add_bos = p.model == Model::spm || (p.model == Model::bpe && p.pre == "llama-bpe");
  v.add_eos = false;
  if (p.post.found) {
    v.add_bos = !p.post.first_special.empty() && p.post.first_special == text_of_id(v.bos);
    v.add_eos = !p.post.last_special.empty() && p.post.last_special == text_of_id(v.eos);
  }
  for (const auto& [key, flag] :
       {std::pair<const char*, bool*>{"add_bos_token", &v.add_bos}, {"add_eos_token", &v.add_eos}}) {
    if (config.contains(key) && config[key].is_boolean()) *flag = config[key].get<bool>();
  }
  TESSERA_CHECK(!v.add_bos || v.bos != kNoToken,
                "{}: the tokenizer adds a BOS token, but none is named (bos_token in tokenizer_config.json or "
                "bos_token_id in config.json)",
                folder);
  TESSERA_CHECK(!v.add_eos || v.eos != kNoToken,
                "{}: the tokenizer adds an EOS token, but none is named (eos_token in tokenizer_config.json or "
                "eos_token_id in config.json)",
                folder);
  v.index();
  return {std::move(v), p.source};
}

}  // namespace tessera::tokenizers
