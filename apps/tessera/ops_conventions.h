#pragma once
// The "Conventions" part of docs/ops.md: where Tessera's ops could be expected to behave like PyTorch's,
// what they do. `tessera ops --markdown` prints it after the op table, so the document stays one
// generated file (tests/cli checks it against docs/ops.md).
#include <string_view>

namespace tessera::cli {

std::string_view ops_conventions_markdown();

}  // namespace tessera::cli
