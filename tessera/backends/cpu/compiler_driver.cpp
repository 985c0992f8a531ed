#include "tessera/backends/cpu/compiler_driver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "tessera/backends/common/kernel_cache.h"
#include "tessera/core/error.h"
#include "tessera/kernels/cpu/cpu_features.h"

extern char** environ;

namespace tessera::backends::cpu {

namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Runs argv with stdout and stderr captured through a pipe; returns the exit status (-1 with
// `output` explaining when it could not start).
int run_captured(const std::vector<std::string>& argv, std::string& output) {
  int fds[2];
  if (::pipe(fds) != 0) {
    output = fmt::format("cannot create a pipe: {}", std::strerror(errno));
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int err = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    output = fmt::format("cannot run '{}': {}", argv[0], std::strerror(err));
    return -1;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  output += fmt::format("\n(terminated by signal {})", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

// Where a program named on the command line lives, resolved through $PATH and symlinks ("" if not found).
std::string resolve_program(const std::string& name) {
  auto real = [](const std::string& p) -> std::string {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
  };
  if (name.find('/') != std::string::npos) return real(name);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return real(candidate);
  }
  return {};
}

// The compiler's version line. Asking the compiler costs a process start (~10 ms), so the answer is
// memoised on disk under the identity of its binaries (path, size, modification time).
std::string compiler_version(const std::vector<std::string>& program) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;  // identity -> version, for this process
  std::string identity;
  for (const std::string& word : program) {
    identity += word + "\n";
    const std::string real = resolve_program(word);
    struct stat st {};
    if (!real.empty() && ::stat(real.c_str(), &st) == 0) {
      identity += fmt::format("{} {} {}.{}\n", real, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(identity); it != known.end()) return it->second;
  const std::string memo = common::kernel_cache_dir() + "/compilers/" + common::content_hash(identity) + ".version";
  if (common::file_exists(memo)) return known[identity] = common::read_file(memo);
  std::vector<std::string> argv = program;
  argv.push_back("--version");
  std::string output;
  const int status = run_captured(argv, output);
  if (status != 0) return {};  // the compile itself will report what is wrong
  std::string version = output.substr(0, output.find('\n'));
  try {
    common::make_directories(common::kernel_cache_dir() + "/compilers");
    common::write_file_atomically(memo, version);
  } catch (const Error&) {
    // An unwritable cache only costs the next process the version query.
  }
  return known[identity] = version;
}

}  // namespace

std::string CompilerCommand::text() const {
  std::vector<std::string> all = program;
  all.insert(all.end(), flags.begin(), flags.end());
  return fmt::format("{}", fmt::join(all, " "));
}

const CompilerCommand& compiler_command() {
  static std::mutex mutex;
  static std::map<std::string, CompilerCommand> memo;
  const char* cc_env = std::getenv("TESSERA_CC");
  const char* opt_env = std::getenv("TESSERA_JIT_OPT");
  const std::string cc = cc_env && *cc_env ? cc_env : "cc";
  // -O1 by default: the inner loops carry `omp simd`, so they vectorise at -O1 too, and -O1 compiles
  // in about three quarters of the time of -O2 (the cold compile is on the user's critical path).
  const std::string opt = opt_env && *opt_env ? opt_env : "1";
  const std::string key = cc + "\n" + opt;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = memo.find(key);
  if (it != memo.end()) return it->second;
  CompilerCommand c;
  c.program = split_words(cc);
  TESSERA_CHECK(!c.program.empty(), "TESSERA_CC is empty");
  TESSERA_CHECK(opt == "0" || opt == "1" || opt == "2" || opt == "3" || opt == "s",
                "TESSERA_JIT_OPT must be 0, 1, 2, 3 or s, got '{}'", opt);
  // -ffp-contract=off: no fused multiply-adds, so results round exactly as the reference kernels.
  // -fno-math-errno: sqrt and friends may inline (errno is never read). -fopenmp-simd: honour the
  // `omp simd` pragmas (vectorised inner loops and reductions) without linking an OpenMP runtime.
  // -fstrict-aliasing: on at -O2 but not at -O1; lets loads from one element type move past stores of another.
  // --param=vect-epilogues-nomask=0: a second, narrower vectorised copy of every loop for its
  // remainder costs about a quarter of the compile time and little speed; remainders stay scalar.
  c.flags = {"-O" + opt,
             "-std=gnu11",
             "-fPIC",
             "-shared",
             "-pipe",
             "-ffp-contract=off",
             "-fno-math-errno",
             "-fopenmp-simd",
             "-fstrict-aliasing",
             "-fno-plt",
             "-w",
             "--param=vect-epilogues-nomask=0"};
  if (kernels::cpu_has_avx2_fma()) {
    c.flags.push_back("-mavx2");
    c.flags.push_back("-mfma");
  }
  c.version = compiler_version(c.program);
  return memo.emplace(key, std::move(c)).first->second;
}

CompileResult run_compiler(const CompilerCommand& command, const std::string& source_path,
                           const std::string& output_path) {
  std::vector<std::string> argv = command.program;
  argv.insert(argv.end(), command.flags.begin(), command.flags.end());
  argv.insert(argv.end(), {"-o", output_path, source_path, "-lm"});
  CompileResult r;
  r.exit_status = run_captured(argv, r.messages);
  r.ok = r.exit_status == 0 && common::file_exists(output_path);
  if (r.exit_status == 0 && !r.ok) r.messages += "\n(the compiler reported success but wrote no output)";
  return r;
}

bool compiler_available() { return !compiler_command().version.empty(); }

}  // namespace tessera::backends::cpu
