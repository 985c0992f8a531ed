// End-to-end tests of the tessera executable: version, help, inspect (summary, --print, --dot,
// --verify), ops, and the error paths (exit code and a one-line message on stderr).
#include <sys/stat.h>

#include <fstream>

#include "cli_runner.h"
#include "tessera/io/safetensors.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

// A small traced graph with two named parameters (captured constants), a broadcast and a reduction.
ir::Graph sample_graph() {
  Tensor w = Tensor::from_vector<float>({0.5f, -1.0f, 2.0f}, {3}, "w");
  Tensor b = Tensor::from_vector<float>({0.25f, 0.0f}, {2, 1}, "bias");
  return trace(
      [&](const std::vector<Tensor>& xs) {
        Tensor h = ops::relu(xs[0] * w + b);
        return std::vector<Tensor>{ops::tanh(h), ops::sum(h, {1}, true)};
      },
      {{DType::f32, {2, 3}}, {DType::f64, {4}}}, {"x", "unused"});
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_F(CliTest, VersionPrintsTheLibraryVersion) {
  const CliResult r = run("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string("tessera ") + TESSERA_VERSION + "\n");
  EXPECT_EQ(r.out, "tessera 0.1.0\n");
}

TEST_F(CliTest, HelpListsTheSubcommands) {
  const CliResult r = run("--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "Usage: tessera")) << r.out;
  EXPECT_TRUE(contains(r.out, "inspect")) << r.out;
  EXPECT_TRUE(contains(r.out, "ops")) << r.out;
  EXPECT_TRUE(contains(r.out, "--version")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(CliTest, InspectHelpListsItsOptions) {
  const CliResult r = run("inspect --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option : {"FILE", "--dot", "--verify", "--print"}) {
    EXPECT_TRUE(contains(r.out, option)) << option << " missing from\n" << r.out;
  }
}

TEST_F(CliTest, NoSubcommandIsAUsageError) {
  const CliResult r = run("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "Usage: tessera")) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, UnknownSubcommandOrOptionIsAUsageError) {
  for (const char* args : {"frobnicate", "--frobnicate", "inspect x.tsr --frobnicate", "inspect"}) {
    const CliResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err.rfind("tessera: error: ", 0), 0u) << args << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
  EXPECT_TRUE(contains(run("inspect").err, "FILE is required"));
}

TEST_F(CliTest, MisspeltCommandsAndFlagsGetASuggestionAndTheirCommandsHelp) {
  const CliResult sub = run("trian");
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_TRUE(contains(sub.err, "'trian': did you mean 'train'?")) << sub.err;
  EXPECT_TRUE(contains(sub.err, "(see 'tessera --help')")) << sub.err;
  const CliResult flag = run("train --epoch 3");
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_TRUE(contains(flag.err, "'--epoch': did you mean '--epochs'?")) << flag.err;
  EXPECT_TRUE(contains(flag.err, "(see 'tessera train --help')")) << flag.err;
  const CliResult nested = run("bench llm --promt-tokens 4");
  EXPECT_TRUE(contains(nested.err, "did you mean '--prompt-tokens'?")) << nested.err;
  EXPECT_TRUE(contains(nested.err, "(see 'tessera bench llm --help')")) << nested.err;
  // Nothing close: no suggestion, still the command's help.
  const CliResult far = run("train --zzzzzzzz");
  EXPECT_FALSE(contains(far.err, "did you mean")) << far.err;
  EXPECT_TRUE(contains(far.err, "(see 'tessera train --help')")) << far.err;
}

TEST_F(CliTest, RangeErrorsReadAsNumbers) {
  for (const char* args : {"train --lr -1", "train --weight-decay -0.5", "train --lr abc"}) {
    const CliResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(contains(r.err, "must be")) << args << ": " << r.err;
    EXPECT_LT(r.err.size(), 160u) << args << ": " << r.err;  // CLI11's own range printed DBL_MAX in full
  }
}

TEST_F(CliTest, UnwritableOutputsAreRefusedBeforeAnyWork) {
  const std::string model = "init-model --arch llama --dim 64 --layers 1 --heads 2 --ffn 64 --vocab 300";
  const CliResult missing = run(model + " --out " + shell_quote(path("no/such/folder/m.gguf").string()));
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_TRUE(contains(missing.err, "it is not an existing folder")) << missing.err;
  EXPECT_TRUE(contains(missing.err, "(see 'tessera init-model --help')")) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(path("no"))) << "a file output must not create folders";
  const CliResult folder = run(model + " --out " + shell_quote(dir_.string()));
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_TRUE(contains(folder.err, "is a folder, not a file")) << folder.err;
  // /proc takes no new files: refused while parsing, so nothing is trained or read first.
  const CliResult train = run("train --epochs 1 --out /proc/tessera-test-run");
  EXPECT_EQ(train.exit_code, 1) << train.err;
  EXPECT_TRUE(contains(train.err, "cannot create the folder '/proc/tessera-test-run'")) << train.err;
  EXPECT_FALSE(contains(train.err, "internal error")) << train.err;
  EXPECT_FALSE(contains(train.err, "training")) << train.err;
  write_file(path("in.gguf"), "GGUF");  // never read: the output is checked while parsing
  const CliResult quantize = run("quantize in.gguf /proc/out.gguf --type q8_0");
  EXPECT_EQ(quantize.exit_code, 2) << quantize.err;
  EXPECT_TRUE(contains(quantize.err, "cannot write into the folder '/proc'")) << quantize.err;
}

TEST_F(CliTest, WithoutACCompilerTheCpuBackendSaysSoOnceAndStillRuns) {
  const CliResult devices = run("devices", "", "TESSERA_CC=/nonexistent/cc");
  EXPECT_EQ(devices.exit_code, 0) << devices.err;
  EXPECT_TRUE(contains(devices.out, "kernel compiler: none ('/nonexistent/cc' did not run; set TESSERA_CC)"))
      << devices.out;
  // Several graphs compile in one run; the note comes once and the command succeeds.
  const CliResult bench = run("bench mlp_infer_b1 compile_mlp_step_cold --repeat 1 --seconds 0.05", "",
                              "TESSERA_CC=/nonexistent/cc TESSERA_CACHE_DIR=" + shell_quote(path("cache").string()));
  EXPECT_EQ(bench.exit_code, 0) << bench.err;
  size_t notes = 0;
  for (size_t at = bench.err.find("no C compiler"); at != std::string::npos; at = bench.err.find("no C compiler", at + 1)) {
    ++notes;
  }
  EXPECT_EQ(notes, 1u) << bench.err;
  EXPECT_TRUE(contains(bench.out, "mlp_infer_b1")) << bench.out;
}

TEST_F(CliTest, InspectReadsSafetensorsFiles) {
  const Array w = Array::from_vector<float>({1.5f, -2.0f, 0.25f, 4.0f, 0.0f, -1.0f}, {2, 3});
  const Array b = Array::from_vector<float>({0.5f, 0.5f}, {2}).astype(DType::bf16);
  io::save_safetensors(path("ckpt.safetensors").string(), {{"model.w", w}, {"model.b", b}},
                       {{"epoch", "3"}, {"model", "mlp"}});
  const CliResult r = run("inspect ckpt.safetensors");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "safetensors: 2 tensors, 2 metadata entries")) << r.out;
  EXPECT_TRUE(contains(r.out, "  epoch = 3\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "model.w")) << r.out;
  EXPECT_TRUE(contains(r.out, "F32   [2, 3]")) << r.out;
  EXPECT_TRUE(contains(r.out, "BF16  [2]")) << r.out;
  EXPECT_TRUE(contains(r.out, "total: 8 values in 28 bytes")) << r.out;
  const CliResult t = run("inspect ckpt.safetensors --tensor model.w --dump w.npy");
  EXPECT_EQ(t.exit_code, 0) << t.err;
  EXPECT_TRUE(contains(t.out, "values  min -2, max 4, mean 0.458333")) << t.out;
  EXPECT_TRUE(std::filesystem::exists(path("w.npy")));
  // Found by content too, without the extension.
  std::filesystem::copy_file(path("ckpt.safetensors"), path("weights.bin"));
  EXPECT_TRUE(contains(run("inspect weights.bin").out, "safetensors: 2 tensors"));
  const CliResult missing = run("inspect ckpt.safetensors --tensor model.x");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.err, "no tensor named 'model.x'")) << missing.err;
  // A truncated file is refused naming it, never a crash.
  const std::string bytes = read_file(path("ckpt.safetensors"));
  write_file(path("cut.safetensors"), bytes.substr(0, bytes.size() - 5));
  const CliResult cut = run("inspect cut.safetensors");
  EXPECT_EQ(cut.exit_code, 1) << cut.err;
  EXPECT_TRUE(contains(cut.err, "cut.safetensors")) << cut.err;
}

TEST_F(CliTest, InspectSummarisesATracedGraph) {
  const ir::Graph g = sample_graph();
  write_file(path("g.tsr"), ir::print_graph(g));
  const CliResult r = run("inspect g.tsr");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string& s = r.out;
  EXPECT_TRUE(contains(s, "graph @traced")) << s;
  // Inputs with names and types, numbered as in the text form.
  EXPECT_TRUE(contains(s, "inputs (2):")) << s;
  EXPECT_TRUE(contains(s, "%0")) << s;
  EXPECT_TRUE(contains(s, "x  ")) << s;
  EXPECT_TRUE(contains(s, "f32[2, 3]")) << s;
  EXPECT_TRUE(contains(s, "unused")) << s;
  EXPECT_TRUE(contains(s, "f64[4]")) << s;
  // Outputs with their types and producing ops.
  EXPECT_TRUE(contains(s, "outputs (2):")) << s;
  EXPECT_TRUE(contains(s, "from tanh")) << s;
  EXPECT_TRUE(contains(s, "f32[2, 1]")) << s;
  EXPECT_TRUE(contains(s, "from sum")) << s;
  // Node count per op: constant x2, mul, add, relu, tanh, sum.
  EXPECT_TRUE(contains(s, fmt::format("nodes ({}):", g.nodes().size()))) << s;
  EXPECT_EQ(g.nodes().size(), 7u);
  for (const char* line :
       {"constant  2\n", "mul       1\n", "add       1\n", "relu      1\n", "tanh      1\n", "sum       1\n"}) {
    EXPECT_TRUE(contains(s, line)) << "missing '" << line << "' in\n" << s;
  }
  // Constant data: 3 + 2 f32 elements = 20 bytes, both named.
  EXPECT_TRUE(contains(s, "constants: 2 (2 named), 5 elements, 20 bytes")) << s;
  EXPECT_TRUE(contains(s, "bias")) << s;
  EXPECT_TRUE(contains(s, "12 bytes")) << s;
}

TEST_F(CliTest, InspectPrintReproducesTheCanonicalText) {
  const std::string text = ir::print_graph(sample_graph());
  // Comments and odd spacing are accepted; --print gives back the canonical form.
  std::string messy = "# a comment line\n" + text;
  for (size_t pos = 0; (pos = messy.find(", ", pos)) != std::string::npos; pos += 4) messy.replace(pos, 2, " ,  ");
  write_file(path("messy.tsr"), messy);
  const CliResult r = run("inspect --print messy.tsr");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, text);
}

TEST_F(CliTest, InspectReadsStandardInput) {
  const std::string text = ir::print_graph(sample_graph());
  write_file(path("g.tsr"), text);
  const CliResult r = run("inspect --print -", path("g.tsr").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, text);
}

TEST_F(CliTest, InspectVerifyReportsOk) {
  write_file(path("g.tsr"), ir::print_graph(sample_graph()));
  const CliResult r = run("inspect --verify g.tsr");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "verify: ok")) << r.out;
  EXPECT_FALSE(contains(run("inspect g.tsr").out, "verify"));
}

TEST_F(CliTest, InspectDotWritesGraphviz) {
  const std::string text = ir::print_graph(sample_graph());
  write_file(path("g.tsr"), text);
  write_file(path("g.dot"), "old contents that must be replaced");
  const CliResult r = run("inspect g.tsr --dot g.dot");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "dot: wrote g.dot")) << r.out;
  const std::string dot = read_file(path("g.dot"));
  EXPECT_EQ(dot, ir::graph_to_dot(ir::parse_graph(text)));
  EXPECT_EQ(dot.rfind("digraph \"traced\" {", 0), 0u) << dot;
  EXPECT_EQ(dot.back(), '\n');
  EXPECT_TRUE(contains(dot, "}\n")) << dot;
  for (const char* fragment : {"label=\"x\\nf32[2, 3]\"", "label=\"relu", "label=\"tanh", "label=\"sum\\naxes=[1]",
                               "name=\\\"bias\\\"", "in0 -> n", "-> out0;", "-> out1;", "fillcolor=lightgrey"}) {
    EXPECT_TRUE(contains(dot, fragment)) << "missing " << fragment << " in\n" << dot;
  }
  // The write went through a temporary file that is gone afterwards.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(name.find(".tmp"), std::string::npos) << "left behind: " << name;
    ++files;
  }
  EXPECT_EQ(files, 4);  // g.tsr, g.dot, stdout.txt, stderr.txt
}

TEST_F(CliTest, InspectDotToStdout) {
  const std::string text = ir::print_graph(sample_graph());
  write_file(path("g.tsr"), text);
  const CliResult r = run("inspect g.tsr --dot -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, ir::graph_to_dot(ir::parse_graph(text)));
}

TEST_F(CliTest, InspectDotToAnUnwritablePlaceFails) {
  write_file(path("g.tsr"), ir::print_graph(sample_graph()));
  const CliResult r = run("inspect g.tsr --dot no/such/dir/g.dot");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_TRUE(contains(r.err, "tessera: error: cannot write 'no/such/dir/g.dot'")) << r.err;
  EXPECT_TRUE(contains(r.err, "No such file or directory")) << r.err;
  const CliResult to_dir = run("inspect g.tsr --dot .");
  EXPECT_EQ(to_dir.exit_code, 1);
  EXPECT_TRUE(contains(to_dir.err, "is a directory")) << to_dir.err;
}

TEST_F(CliTest, MissingFileIsAOneLineError) {
  const CliResult r = run("inspect does_not_exist.tsr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "tessera: error: cannot read 'does_not_exist.tsr': No such file or directory\n");
  EXPECT_EQ(r.out, "");
  const CliResult dir = run("inspect .");
  EXPECT_EQ(dir.exit_code, 1);
  EXPECT_EQ(dir.err, "tessera: error: cannot read '.': it is a directory, not a regular file\n");
}

TEST_F(CliTest, CorruptTextNamesFileLineAndColumn) {
  std::string text = ir::print_graph(sample_graph());
  // Line 3 is the second statement; replace its op with an unknown one.
  const size_t line3 = text.find('\n', text.find('\n') + 1) + 1;
  const size_t eq = text.find("= ", line3) + 2;
  const size_t paren = text.find('(', eq);
  text.replace(eq, paren - eq, "bogus_op");
  write_file(path("bad.tsr"), text);
  const CliResult r = run("inspect bad.tsr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("tessera: error: bad.tsr: IR text line 3, column", 0), 0u) << r.err;
  EXPECT_TRUE(contains(r.err, "unknown op 'bogus_op'")) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, MalformedInputsFailCleanly) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected 'graph'"},
      {"graph @g(", "expected '%'"},
      {"graph @g() {\n  return %3\n}\n", "value %3 used before it is defined"},
      {"graph @g(%0: f32[2] {name = \"x\"}) {\n  %1 = add(%0, %0) : f32[3]\n  return %1\n}\n",
       "declared output types (f32[3]) differ from the inferred (f32[2])"},
      {"graph @g(%0: f32[2] {name = \"x\"}) {\n  %0 = neg(%0) : f32[2]\n  return %0\n}\n", "defined twice"},
      {"graph @g(%0: q7[2] {name = \"x\"}) {\n  return %0\n}\n", "unknown dtype 'q7'"},
      {"graph @g() {\n  %0 = constant() {value = dense<f32[2], 0x00>} : f32[2]\n  return %0\n}\n", "dense literal"},
      {std::string("\x7f"
                   "ELF\x01\x02\x00\xff garbage",
                   16),
       "expected 'graph'"},
  };
  for (const auto& [text, fragment] : cases) {
    write_file(path("bad.tsr"), text);
    const CliResult r = run("inspect --verify bad.tsr");
    EXPECT_EQ(r.exit_code, 1) << text;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("tessera: error: bad.tsr: ", 0), 0u) << r.err;
    EXPECT_TRUE(contains(r.err, fragment)) << "expected '" << fragment << "' in " << r.err;
  }
}

TEST_F(CliTest, OpsListsEveryRegisteredOp) {
  const CliResult r = run("ops");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto names = ir::OpRegistry::instance().names();
  EXPECT_EQ(r.out.rfind("op ", 0), 0u) << r.out;
  EXPECT_EQ(count_lines(r.out), static_cast<int>(names.size()) + 2);  // header + ops + count
  EXPECT_TRUE(contains(r.out, fmt::format("\n{} ops\n", names.size()))) << r.out;
  for (const std::string& name : names) EXPECT_TRUE(contains(r.out, "\n" + name + " ")) << name;
  // Spot checks of the columns.
  std::istringstream lines(r.out);
  std::string line;
  bool saw_add = false, saw_constant = false, saw_sum = false;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, inputs, vjp, decomp, traits;
    words >> name >> inputs >> vjp >> decomp >> traits;
    if (name == "add") {
      saw_add = true;
      EXPECT_EQ(inputs, "2");
      EXPECT_EQ(vjp, "yes");
      EXPECT_TRUE(contains(traits, "elementwise")) << line;
    } else if (name == "constant") {
      saw_constant = true;
      EXPECT_EQ(inputs, "0");
      EXPECT_EQ(vjp, "no");
      EXPECT_EQ(traits, "leaf");
      EXPECT_TRUE(contains(line, "value:tensor, name?:string")) << line;
    } else if (name == "sum") {
      saw_sum = true;
      EXPECT_TRUE(contains(traits, "reduction")) << line;
      EXPECT_TRUE(contains(line, "axes:ints")) << line;
    }
  }
  EXPECT_TRUE(saw_add && saw_constant && saw_sum) << r.out;
}

TEST_F(CliTest, OpsFilterAndMarkdown) {
  const CliResult r = run("ops relu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\nrelu ")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nleaky_relu ")) << r.out;
  EXPECT_FALSE(contains(r.out, "\nadd ")) << r.out;
  const CliResult md = run("ops --markdown sum");
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out.rfind("| op | inputs | vjp | decomp | traits | attributes |\n|---|", 0), 0u) << md.out;
  EXPECT_TRUE(contains(md.out, "| `sum` | 1 | yes |")) << md.out;
  const CliResult none = run("ops no_op_has_this_name");
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_TRUE(contains(none.out, "0 ops")) << none.out;
}

TEST_F(CliTest, DocsOpsTableIsCurrent) {
  // docs/ops.md is `tessera ops --markdown` (heading, op table, Conventions): a new or changed op, or a
  // changed convention, must update it.
  const std::filesystem::path doc = std::filesystem::absolute(
      std::filesystem::path(TESSERA_SOURCE_DIR) / "docs/ops.md");
  std::ifstream in(doc);
  ASSERT_TRUE(in) << doc;
  std::string line, document;
  while (std::getline(in, line)) document += line + "\n";
  const CliResult r = run("ops --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(document, r.out) << "regenerate: build/tessera ops --markdown > docs/ops.md";
  EXPECT_TRUE(contains(r.out, "\n## Conventions\n")) << r.out;
}

TEST_F(CliTest, ExampleGraphFromTheReadme) {
  // The repository root comes from CMake (TESSERA_SOURCE_DIR): __FILE__ is relative when ccache rewrites
  // paths, and the CLI runs in a folder of its own.
  const std::filesystem::path example = std::filesystem::absolute(
      std::filesystem::path(TESSERA_SOURCE_DIR) / "examples/graphs/mlp.tsr");
  ASSERT_TRUE(std::filesystem::exists(example)) << example;
  const CliResult r = run("inspect --verify --dot mlp.dot " + shell_quote(example.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "graph @mlp")) << r.out;
  EXPECT_TRUE(contains(r.out, "matmul    2\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "constants: 4 (4 named), 67 elements, 268 bytes")) << r.out;
  EXPECT_TRUE(contains(r.out, "fc1.weight  f32[4, 8]")) << r.out;
  EXPECT_TRUE(contains(r.out, "verify: ok")) << r.out;
  EXPECT_TRUE(contains(read_file(path("mlp.dot")), "label=\"matmul\\nf32[2, 8]\"")) << read_file(path("mlp.dot"));
  // The file is canonical text apart from its leading comment.
  std::string text = read_file(example);
  while (text.rfind("#", 0) == 0) text.erase(0, text.find('\n') + 1);
  EXPECT_EQ(run("inspect --print " + shell_quote(example.string())).out, text);
}

TEST_F(CliTest, InspectRefusesDevicesFifosAndDirectories) {
  // /dev/zero used to be read until bad_alloc, and a FIFO blocked the open; `timeout` turns a hang
  // into a failure here.
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  for (const std::string& file : {std::string("/dev/zero"), path("fifo").string(), std::string("/")}) {
    const CliResult r = run("inspect " + shell_quote(file));
    EXPECT_EQ(r.exit_code, 1) << file << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(contains(r.err, "cannot read '" + file + "'")) << r.err;
    EXPECT_TRUE(contains(r.err, "not a regular file")) << r.err;
  }
  const CliResult q = run("quantize /dev/zero out.gguf --type q8_0");
  EXPECT_EQ(q.exit_code, 1) << q.err;
  EXPECT_TRUE(contains(q.err, "a character device, not a regular file")) << q.err;
  const CliResult e = run("export stablehlo --graph " + shell_quote(path("fifo").string()) + " --out x");
  EXPECT_NE(e.exit_code, 0);
  EXPECT_TRUE(contains(e.err, "a FIFO, not a regular file")) << e.err;
}

TEST_F(CliTest, InspectSummaryIsLinearInLongNames) {
  // One very long input name used to pad every input line to its length.
  std::string text = "graph @g(";
  const int n = 2000;
  for (int i = 0; i < n; ++i) {
    const std::string name = i == 0 ? std::string(1 << 20, 'n') : "in" + std::to_string(i);
    text += fmt::format("{}%{}: f32[1] {{name = \"{}\"}}", i ? ", " : "", i, name);
  }
  text += ") {\n  return %1\n}\n";
  write_file(path("wide.tsr"), text);
  const CliResult r = run("inspect wide.tsr");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.out.size(), static_cast<size_t>(n) * 120) << "the summary must stay linear in the names";
  EXPECT_TRUE(contains(r.out, std::string(64, 'n') + "...")) << r.out.substr(0, 400);
}

TEST_F(CliTest, InspectEscapesNamesFromTheFile) {
  const std::string text =
      "graph @g(%0: f32[1] {name = \"evil\x1b[2J\\nforged\"}) {\n  return %0\n}\n";
  write_file(path("evil.tsr"), text);
  const CliResult r = run("inspect evil.tsr");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_TRUE(contains(r.out, "evil\\x1b[2J\\nforged")) << r.out;
}

// tessera check: the replay an internal compiler error points to. A graph (random inputs) or a
// regression file (its own data) runs on every CPU variant against the reference; bad files are errors.
TEST_F(CliTest, CheckRunsAGraphOnEveryVariantAgainstTheReference) {
  write_file(path("g.tsr"), ir::print_graph(sample_graph()));
  CliResult r = run("check g.tsr");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "variant(s) of the cpu backend agree with the reference backend on 2 output(s)")) << r.out;
  r = run("check g.tsr --backend reference --seed 7");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::filesystem::path regression = std::filesystem::absolute(
      std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/fuzz_graphs/regressions/shared_epilogue_two_products.tsr");
  r = run("check " + shell_quote(regression.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  write_file(path("bad.tsr"), "graph @g( {\n");
  r = run("check bad.tsr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "tessera: error:")) << r.err;
  r = run("check --backend gpu g.tsr");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "unknown backend 'gpu'")) << r.err;
}

namespace tessera::test {
namespace {

// `tessera devices` lists every backend, compiled in or not, available or not, with its devices;
// asking for a backend that cannot run here fails with one line and exit code 1 or 2.
TEST_F(CliTest, DevicesListsEveryBackendAndWhyOneCannotRun) {
  const CliResult r = run("devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"\"backend\":\"reference\"", "\"backend\":\"cpu\"", "\"backend\":\"cuda\"",
                           "\"backend\":\"vulkan\""}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << " missing from " << r.out;
  }
  const CliResult text = run("devices");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cpu        available"), std::string::npos) << text.out;
  if (text.out.find("cuda       available") == std::string::npos) {
    const CliResult bench = run("bench mlp_train_b64 --device cuda --repeat 1 --seconds 0.01");
    EXPECT_NE(bench.exit_code, 0);
    EXPECT_NE(bench.err.find("cuda"), std::string::npos) << bench.err;
    EXPECT_NE(bench.err.find("not "), std::string::npos) << bench.err;  // "not available" / "not compiled in"
  }
  // Where a Vulkan device is present (lavapipe in CI), the CLI runs a training step on it.
  if (text.out.find("vulkan     available") != std::string::npos) {
    const CliResult bench = run("bench mlp_train_b64 --device vulkan --repeat 1 --seconds 0.01");
    EXPECT_EQ(bench.exit_code, 0) << bench.err;
  }
}

}  // namespace
}  // namespace tessera::test
