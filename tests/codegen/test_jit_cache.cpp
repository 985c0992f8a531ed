// The JIT's caches and failure reporting: memory and disk hits, cache directory selection, atomic
// sharing between processes, compiler failures naming the generated source, kernel lifetime.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "codegen_test_util.h"
#include "tessera/backends/common/kernel_cache.h"
#include "tessera/core/temp_file.h"

extern char** environ;

using namespace tessera;
using namespace tessera::test;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the binary's temporary cache.
std::string fresh_dir(const std::string& name) {
  const std::string dir = test_cache_dir() + "/" + name + "-" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A graph whose generated source no other test produces (the constant makes it unique).
ir::Graph unique_graph(double tag) {
  return trace([tag](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::tanh(in[0] * tag) + in[1]}; },
               {{DType::f32, {4, 8}}, {DType::f32, {8}}});
}

std::vector<std::string> files_with_suffix(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) out.push_back(p);
  }
  return out;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(JitCache, MemoryThenDiskHits) {
  ScopedEnv dir("TESSERA_CACHE_DIR", fresh_dir("hits"));
  const ir::Graph g = unique_graph(1.25);
  const auto clusters = cluster_all(g);
  backends::cpu::JitStats cold, warm, disk;
  auto t0 = std::chrono::steady_clock::now();
  auto held = backends::cpu::compile_clusters(clusters, &cold);  // kernels in use keep their module loaded
  const double cold_ms = ms_since(t0);
  EXPECT_FALSE(cold.from_disk_cache);
  EXPECT_FALSE(cold.from_memory_cache);
  EXPECT_GT(cold.compile_ms, 0);
  EXPECT_TRUE(fs::exists(cold.source_path)) << cold.source_path;

  backends::cpu::compile_clusters(clusters, &warm);
  EXPECT_TRUE(warm.from_memory_cache);
  EXPECT_EQ(warm.compile_ms, 0);
  // A module no kernel uses any more is unloaded (a long-lived process would otherwise map every module
  // it ever loaded); the next use loads it from the disk cache.
  held.clear();
  backends::cpu::JitStats again;
  held = backends::cpu::compile_clusters(clusters, &again);
  EXPECT_FALSE(again.from_memory_cache);
  EXPECT_TRUE(again.from_disk_cache);
  held.clear();

  backends::cpu::clear_memory_cache();
  t0 = std::chrono::steady_clock::now();
  auto kernels = backends::cpu::compile_clusters(clusters, &disk);
  const double disk_ms = ms_since(t0);
  EXPECT_TRUE(disk.from_disk_cache);
  EXPECT_FALSE(disk.from_memory_cache);
  EXPECT_EQ(disk.compile_ms, 0);
  EXPECT_EQ(disk.source_path, cold.source_path);
  std::printf("[ timing ] cold compile %.1f ms (compiler %.1f ms), disk-cache load %.2f ms\n", cold_ms, cold.compile_ms,
              disk_ms);

  // The kernels loaded from disk compute the right thing.
  const std::vector<Array> in = {random_of(DType::f32, {4, 8}, 1), random_of(DType::f32, {8}, 2)};
  expect_arrays_match(run_with_jit(g, in).outputs, run_reference(g, in));
}

TEST(JitCache, DirectoryOverrideAndFallbacks) {
  {
    const std::string d = fresh_dir("override");
    ScopedEnv dir("TESSERA_CACHE_DIR", d);
    EXPECT_EQ(backends::common::kernel_cache_dir(), d);
    backends::cpu::clear_memory_cache();
    backends::cpu::JitStats st;
    backends::cpu::compile_clusters(cluster_all(unique_graph(2.5)), &st);
    EXPECT_EQ(st.source_path.rfind(d + "/", 0), 0u) << st.source_path;
    EXPECT_EQ(files_with_suffix(d, ".so").size(), 1u);
    EXPECT_EQ(files_with_suffix(d, ".c").size(), 1u);
  }
  {
    ScopedEnv dir("TESSERA_CACHE_DIR", "");
    ScopedEnv xdg("XDG_CACHE_HOME", "/some/xdg");
    EXPECT_EQ(backends::common::kernel_cache_dir(), "/some/xdg/tessera/kernels");
    ScopedEnv no_xdg("XDG_CACHE_HOME", "");
    ScopedEnv home("HOME", "/some/home");
    EXPECT_EQ(backends::common::kernel_cache_dir(), "/some/home/.cache/tessera/kernels");
  }
}

TEST(JitCache, CompilerFailureNamesTheSourceAndShowsMessages) {
  ScopedEnv dir("TESSERA_CACHE_DIR", fresh_dir("failure"));
  const auto clusters = cluster_all(unique_graph(3.75));
  {
    ScopedEnv cc("TESSERA_CC", "false");
    EXPECT_TESSERA_ERROR(backends::cpu::compile_clusters(clusters), "compiling generated kernels failed",
                         "exit status 1", "generated source: " + backends::common::kernel_cache_dir() + "/");
  }
  {
    ScopedEnv cc("TESSERA_CC", "/nonexistent/bin/cc");
    EXPECT_TESSERA_ERROR(backends::cpu::compile_clusters(clusters), "cannot run '/nonexistent/bin/cc'",
                         "generated source:");
  }
  {
    // A "compiler" that complains on stderr: its first lines reach the message.
    const std::string script = backends::common::kernel_cache_dir() + "/broken-cc.sh";
    std::ofstream(script) << "#!/bin/sh\necho \"kernel.c:3:1: error: boom\" >&2\nexit 4\n";
    fs::permissions(script, fs::perms::owner_all);
    ScopedEnv cc("TESSERA_CC", script);
    try {
      backends::cpu::compile_clusters(clusters);
      ADD_FAILURE() << "expected a compiler failure";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("kernel.c:3:1: error: boom"), std::string::npos) << msg;
      EXPECT_NE(msg.find("exit status 4"), std::string::npos) << msg;
      // The path in the message is the generated source, and it is there to read.
      const size_t at = msg.find("generated source: ");
      ASSERT_NE(at, std::string::npos);
      const std::string path = msg.substr(at + 18, msg.find('\n', at) - at - 18);
      EXPECT_TRUE(fs::exists(path)) << path;
      EXPECT_NE(backends::common::read_file(path).find("void tsr_kernel_0("), std::string::npos);
    }
  }
  // With a working compiler again, the same clusters compile (nothing half-written was cached).
  backends::cpu::JitStats st;
  EXPECT_NO_THROW(backends::cpu::compile_clusters(clusters, &st));
  EXPECT_FALSE(st.from_disk_cache);
}

TEST(JitCache, KernelsOutliveTheCaches) {
  ScopedEnv dir("TESSERA_CACHE_DIR", fresh_dir("lifetime"));
  const ir::Graph g = unique_graph(4.5);
  const auto clusters = cluster_all(g);
  auto kernels = backends::cpu::compile_clusters(clusters);
  backends::cpu::clear_memory_cache();
  ASSERT_EQ(kernels.size(), 1u);
  const Array x = random_of(DType::f32, {4, 8}, 3), b = random_of(DType::f32, {8}, 4);
  Array out = Array::empty(DType::f32, {4, 8});
  const void* ins[] = {x.raw_data(), b.raw_data(), nullptr};
  void* outs[] = {out.raw_data()};
  runtime::ThreadPool pool(1);
  // Inputs: x, the scalar (inlined, never read) and b, in the cluster's order.
  std::vector<const void*> in_ptrs;
  for (const ir::Value& v : clusters[0].inputs) {
    in_ptrs.push_back(v == g.inputs()[0] ? ins[0] : v == g.inputs()[1] ? ins[1] : nullptr);
  }
  kernels[0]->run(in_ptrs.data(), outs, pool);
  expect_arrays_match({out}, run_reference(g, {x, b}));
  EXPECT_FALSE(kernels[0]->name().empty());
}

TEST(JitCache, DumpKernelsPrintsTheSource) {
  ScopedEnv dump("TESSERA_DUMP_KERNELS", "1");
  const auto clusters = cluster_all(unique_graph(5.5));
  ::testing::internal::CaptureStderr();
  backends::cpu::compile_clusters(clusters);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("void tsr_kernel_0("), std::string::npos) << err;
  EXPECT_EQ(err.find(backends::cpu::generate_source(clusters)) == std::string::npos, false);
}

// Run as a child process by ConcurrentProcessesShareTheCache (Tool* suites are not registered with ctest).
TEST(ToolJitCache, ChildCompile) {
  if (!std::getenv("TESSERA_CODEGEN_CHILD")) GTEST_SKIP() << "only run as a child process";
  const auto kernels = backends::cpu::compile_clusters(cluster_all(unique_graph(6.25)));
  EXPECT_EQ(kernels.size(), 1u);
}

TEST(JitCache, ConcurrentProcessesShareTheCache) {
  const std::string d = fresh_dir("concurrent");
  std::vector<std::string> env_strings = {"TESSERA_CACHE_DIR=" + d, "TESSERA_CODEGEN_CHILD=1"};
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "TESSERA_CACHE_DIR=", 18) != 0) env_strings.push_back(*e);
  }
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = fs::read_symlink("/proc/self/exe").string(), filter = "--gtest_filter=ToolJitCache.ChildCompile";
  std::vector<pid_t> pids;
  posix_spawn_file_actions_t quiet;  // the children's gtest banners would clutter this test's output
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  for (int i = 0; i < 4; ++i) {
    char* argv[] = {exe.data(), filter.data(), nullptr};
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, exe.c_str(), &quiet, nullptr, argv, envp.data()), 0);
    pids.push_back(pid);
  }
  posix_spawn_file_actions_destroy(&quiet);
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed";
  }
  // One finished shared object, one source, no temporary files left behind.
  EXPECT_EQ(files_with_suffix(d, ".so").size(), 1u);
  EXPECT_EQ(files_with_suffix(d, ".c").size(), 1u);
  for (const auto& e : fs::directory_iterator(d)) {
    EXPECT_EQ(e.path().string().find(kTempMarker), std::string::npos) << e.path();
  }
}

TEST(JitCache, SwappedObjectsAreRecompiledNotTrusted) {
  // The cache used to trust file names: two swapped .so files silently computed each other's kernels.
  ScopedEnv dir("TESSERA_CACHE_DIR", fresh_dir("swapped"));
  const ir::Graph ga = unique_graph(7.25), gb = unique_graph(8.5);
  backends::cpu::JitStats a, b;
  backends::cpu::compile_clusters(cluster_all(ga), &a);
  backends::cpu::compile_clusters(cluster_all(gb), &b);
  backends::cpu::clear_memory_cache();
  const auto object_of = [](const std::string& source) { return source.substr(0, source.size() - 2) + ".so"; };
  const std::string so_a = object_of(a.source_path), so_b = object_of(b.source_path);
  fs::rename(so_a, so_a + ".swap");
  fs::rename(so_b, so_a);
  fs::rename(so_a + ".swap", so_b);

  ::testing::internal::CaptureStderr();
  backends::cpu::JitStats again;
  backends::cpu::compile_clusters(cluster_all(ga), &again);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(again.from_disk_cache);
  EXPECT_GT(again.compile_ms, 0);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("warning: kernel cache: '" + so_a + "' was not built for this source"), std::string::npos) << err;
  EXPECT_NE(err.find("recompiling"), std::string::npos) << err;
  backends::cpu::clear_memory_cache();
  const std::vector<Array> in = {random_of(DType::f32, {4, 8}, 5), random_of(DType::f32, {8}, 6)};
  expect_arrays_match(run_with_jit(ga, in).outputs, run_reference(ga, in));
  expect_arrays_match(run_with_jit(gb, in).outputs, run_reference(gb, in));  // recompiled as well
  // The cached source names its key, and the rebuilt object is trusted next time.
  EXPECT_NE(backends::common::read_file(a.source_path).find("tsr_module_key[] = \""), std::string::npos);
  backends::cpu::clear_memory_cache();
  ::testing::internal::CaptureStderr();
  backends::cpu::JitStats hit;
  backends::cpu::compile_clusters(cluster_all(ga), &hit);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(hit.from_disk_cache);

  // An object that names no key (as older versions built them) is rebuilt without a warning.
  const std::string keyless_c = backends::common::kernel_cache_dir() + "/keyless.c";
  std::ofstream(keyless_c) << "int tsr_kernel_0;\n";
  ASSERT_EQ(std::system(("cc -shared -fPIC -o '" + so_a + "' '" + keyless_c + "'").c_str()), 0);
  backends::cpu::clear_memory_cache();
  ::testing::internal::CaptureStderr();
  backends::cpu::JitStats rebuilt;
  backends::cpu::compile_clusters(cluster_all(ga), &rebuilt);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(rebuilt.from_disk_cache);
}

TEST(JitCache, LeftoversOfKilledCompilesAreRemoved) {
  const std::string d = fresh_dir("leftovers");
  ScopedEnv dir("TESSERA_CACHE_DIR", d);
  // A compile folder and a half-written source as a killed process leaves them (another host's,
  // older than an hour, so the age rule applies whatever the pid).
  const std::string stale_dir = d + "/.x.so" + std::string(kTempMarker) + "0badf00d-1-0123456789abcdef";
  const std::string stale_file = d + "/.x.c" + std::string(kTempMarker) + "0badf00d-1-0123456789abcdef";
  fs::create_directory(stale_dir);
  std::ofstream(stale_dir + "/kernels.so") << "partial";
  std::ofstream(stale_file) << "partial";
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  fs::last_write_time(stale_dir, old);
  fs::last_write_time(stale_file, old);
  backends::cpu::compile_clusters(cluster_all(unique_graph(9.75)));
  EXPECT_FALSE(fs::exists(stale_dir));
  EXPECT_FALSE(fs::exists(stale_file));
  for (const auto& e : fs::directory_iterator(d)) {
    EXPECT_EQ(e.path().string().find(kTempMarker), std::string::npos) << e.path();
  }
}
