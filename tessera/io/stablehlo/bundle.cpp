#include "tessera/io/stablehlo/bundle.h"

#include <fmt/format.h>

#include <filesystem>

#include "tessera/io/atomic_file.h"
#include "tessera/io/npy.h"

namespace tessera::io::stablehlo {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(ch));
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

namespace {

std::string type_json(const ir::TensorType& t) {
  return fmt::format("\"dtype\": {}, \"shape\": [{}]", json_string(dtype_name(t.dtype)), fmt::join(t.shape, ", "));
}

}  // namespace

std::vector<std::string> write_bundle(const std::string& dir, const BundleContents& c) {
  TESSERA_CHECK(c.module != nullptr, "export bundle '{}': no module", c.name);
  const Module& m = *c.module;
  size_t graph_inputs = 0;
  for (const Argument& a : m.arguments) graph_inputs += a.kind == Argument::Kind::Input;
  TESSERA_CHECK(c.inputs.size() == graph_inputs, "export bundle '{}': {} input values for {} graph inputs", c.name,
                c.inputs.size(), graph_inputs);
  TESSERA_CHECK(c.expected.empty() || c.expected.size() == m.results.size(),
                "export bundle '{}': {} expected values for {} results", c.name, c.expected.size(), m.results.size());

  // Every file's bytes first, so that a failure (a bad value, say) writes nothing.
  std::vector<std::pair<std::string, std::string>> files;
  const std::filesystem::path base(dir);
  files.emplace_back(c.name + ".mlir", m.text);
  std::vector<std::string> args_json, results_json;
  size_t next_input = 0;
  for (size_t i = 0; i < m.arguments.size(); ++i) {
    const Argument& a = m.arguments[i];
    const Array& value = a.kind == Argument::Kind::Input ? c.inputs[next_input++] : a.value;
    TESSERA_CHECK(value.dtype() == a.type.dtype && value.shape() == a.type.shape,
                  "export bundle '{}': argument {} ('{}') is {} but the value given is {}", c.name, i, a.name,
                  ir::type_str(a.type), ir::type_str({value.dtype(), value.shape()}));
    const std::string file = fmt::format("{}.input_{}.npy", c.name, i);
    files.emplace_back(file, serialize_npy(value));
    args_json.push_back(
        fmt::format("    {{\"file\": {}, \"name\": {}, \"kind\": {}, {}}}", json_string(file), json_string(a.name),
                    json_string(a.kind == Argument::Kind::Input ? "input" : "constant"), type_json(a.type)));
  }
  for (size_t i = 0; i < m.results.size(); ++i) {
    std::string file;
    if (!c.expected.empty()) {
      const Array& value = c.expected[i];
      TESSERA_CHECK(value.dtype() == m.results[i].dtype && value.shape() == m.results[i].shape,
                    "export bundle '{}': expected value {} does not match result type {}", c.name, i,
                    ir::type_str(m.results[i]));
      file = fmt::format("{}.expected_{}.npy", c.name, i);
      files.emplace_back(file, serialize_npy(value));
    }
    const std::string name = i < c.result_names.size() ? c.result_names[i] : fmt::format("result_{}", i);
    results_json.push_back(fmt::format("    {{\"file\": {}, \"name\": {}, {}}}",
                                       file.empty() ? std::string("null") : json_string(file), json_string(name),
                                       type_json(m.results[i])));
  }
  std::string manifest = "{\n";
  manifest += fmt::format("  \"name\": {},\n  \"module\": {},\n  \"tessera_version\": {},\n", json_string(c.name),
                          json_string(c.name + ".mlir"), json_string(TESSERA_VERSION));
  for (const auto& [key, value] : c.info) manifest += fmt::format("  {}: {},\n", json_string(key), value);
  manifest += fmt::format("  \"arguments\": [\n{}\n  ],\n", fmt::join(args_json, ",\n"));
  manifest += fmt::format("  \"results\": [\n{}\n  ]\n}}\n", fmt::join(results_json, ",\n"));
  files.emplace_back(c.name + ".json", manifest);

  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  TESSERA_CHECK(!ec, "export bundle '{}': cannot create folder '{}': {}", c.name, dir, ec.message());
  std::vector<std::string> written;
  for (const auto& [file, bytes] : files) {
    const std::string path = (base / file).string();
    write_file_atomic(path, bytes);
    written.push_back(path);
  }
  return written;
}

}  // namespace tessera::io::stablehlo
