// compile_clusters: loop IR -> one C translation unit -> one compiler run -> one shared object,
// looked up first in memory, then on disk by the hash of (source, compiler command, compiler
// version). Kernels keep the shared object loaded for as long as any of them lives. The object carries
// that hash as a symbol, checked after loading, so a cached file that was swapped or replaced under
// its name is rebuilt instead of silently running other kernels.
#include "tessera/backends/cpu/jit.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "tessera/backends/common/kernel_cache.h"
#include "tessera/backends/cpu/compiler_driver.h"
#include "tessera/codegen/emitter.h"
#include "tessera/lower/loop_ir.h"

namespace tessera::backends::cpu {

namespace {

using KernelFn = void (*)(const void* const*, void* const*, int64_t, int64_t);

// Work below this many domain elements runs on the calling thread: waking the pool costs more.
constexpr int64_t kMinParallelWork = 32768;

struct SharedObject {
  void* handle = nullptr;
  std::string path;
  ~SharedObject() {
    if (handle) ::dlclose(handle);
  }
};

class JitKernel final : public LoopKernel {
 public:
  JitKernel(std::shared_ptr<const SharedObject> so, KernelFn fn, std::string name, int64_t range, int64_t work)
      : so_(std::move(so)), fn_(fn), name_(std::move(name)), range_(range) {
    grain_ = std::max<int64_t>(1, kMinParallelWork / std::max<int64_t>(1, work));
  }

  void run(const void* const* inputs, void* const* outputs, runtime::ThreadPool& pool) const override {
    if (range_ <= 0) return;
    if (range_ < 2 * grain_ || pool.size() <= 1) {
      fn_(inputs, outputs, 0, range_);
      return;
    }
    pool.parallel_for(range_, grain_, [&](int64_t begin, int64_t end) { fn_(inputs, outputs, begin, end); });
  }
  const std::string& name() const override { return name_; }

 private:
  std::shared_ptr<const SharedObject> so_;
  KernelFn fn_;
  std::string name_;
  int64_t range_;
  int64_t grain_ = 1;
};

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
// Loaded modules by key, held weakly: a module stays mapped while some kernel (an executable, a cached
// plan) uses it. Holding every module ever loaded ran a long-lived process (the graph fuzzer, after some
// 16,000 graphs) into the kernel's limit on memory mappings, after which every mmap, malloc and fork
// failed.
std::unordered_map<std::string, std::weak_ptr<const SharedObject>>& memory_cache() {
  static std::unordered_map<std::string, std::weak_ptr<const SharedObject>> cache;
  return cache;
}

void remember(const std::string& key, const std::shared_ptr<const SharedObject>& so) {
  auto& mem = memory_cache();
  if (mem.size() >= 1024) {  // drop the entries of unloaded modules now and then
    for (auto it = mem.begin(); it != mem.end();) it = it->second.expired() ? mem.erase(it) : std::next(it);
  }
  mem.insert_or_assign(key, so);
}

std::shared_ptr<const SharedObject> open_shared_object(const std::string& path) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return nullptr;
  auto so = std::make_shared<SharedObject>();
  so->handle = h;
  so->path = path;
  return so;
}

using common::kModuleKeySymbol;
constexpr const char* kCacheFormat = "tessera kernel cache v2 (module key symbol)";

std::string with_module_key(const std::string& source, const std::string& key) {
  return fmt::format("{}\n/* The cache key of this module, checked after loading it. */\nconst char {}[] = \"{}\";\n", source,
                     kModuleKeySymbol, key);
}

// The key a loaded module names (nullptr when it names none).
const char* module_key(const SharedObject& so) {
  return static_cast<const char*>(::dlsym(so.handle, kModuleKeySymbol));
}

bool holds_key(const SharedObject& so, const std::string& key) {
  const char* stored = module_key(so);
  return stored != nullptr && std::strncmp(stored, key.c_str(), key.size() + 1) == 0;
}

std::string first_lines(const std::string& text, int n) {
  size_t pos = 0;
  for (int i = 0; i < n && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  std::string head = pos == std::string::npos ? text : text.substr(0, pos);
  while (!head.empty() && head.back() == '\n') head.pop_back();
  return head;
}

// A readable kernel name from its ops: fused_mul_add_relu, fused_exp_sum, ...
std::string kernel_name(const lower::Cluster& c, size_t index) {
  std::string name = "fused";
  int shown = 0;
  for (const auto& n : c.nodes) {
    const std::string& op = n->op_name();
    if (op == "reshape" || op == "broadcast_to" || op == "full") continue;
    if (shown++ == 4) {
      name += "_etc";
      break;
    }
    name += "_" + op;
  }
  return fmt::format("{}_{}", name, index);
}

// The C dialect, with TESSERA_JIT_STREAM_BYTES (if set) as the output size from which elementwise
// kernels write with streaming stores: a number of bytes, or "off".
codegen::Dialect jit_dialect() {
  codegen::Dialect d = codegen::c_dialect();
  const char* env = std::getenv("TESSERA_JIT_STREAM_BYTES");
  if (!env || !*env) return d;
  const std::string v = env;
  if (v == "off") {
    d.stream_store_fn.clear();
    return d;
  }
  char* end = nullptr;
  const long long bytes = std::strtoll(v.c_str(), &end, 10);
  TESSERA_CHECK(end && *end == '\0' && bytes >= 0,
                "TESSERA_JIT_STREAM_BYTES must be a byte count >= 0 or 'off', got '{}'", v);
  d.stream_min_bytes = bytes;
  return d;
}

// Finds or builds the shared object for `source`; fills the cache part of `stats`.
std::shared_ptr<const SharedObject> load_module(const std::string& source, JitStats& stats) {
  const CompilerCommand& cmd = compiler_command();
  // The format tag keeps objects of older versions (which carry no key) out of the lookup.
  const common::CacheEntry entry = common::cache_entry(kCacheFormat, source, cmd.text() + "\n--\n" + cmd.version);
  const std::string& key = entry.key;
  stats.source_path = entry.path(".c");
  std::lock_guard<std::mutex> lock(cache_mutex());
  auto& mem = memory_cache();
  if (auto it = mem.find(key); it != mem.end()) {
    if (std::shared_ptr<const SharedObject> so = it->second.lock()) {
      stats.from_memory_cache = true;
      return so;
    }
    mem.erase(it);
  }
  if (const std::string cached = common::find_cached(entry, ".so"); !cached.empty()) {
    if (auto so = open_shared_object(cached)) {
      if (holds_key(*so, key)) {
        stats.from_disk_cache = true;
        remember(key, so);
        return so;
      }
      if (module_key(*so) != nullptr) {
        std::fprintf(stderr,
                     "tessera: warning: kernel cache: '%s' was not built for this source (its key differs); "
                     "recompiling\n",
                     cached.c_str());
      }
    }  // unreadable (e.g. truncated by a crash elsewhere), keyless or another module: rebuild it below
  }
  common::store_cached(entry, ".c", with_module_key(source, key));
  const std::string built = common::store_built(entry, ".so", [&](const std::string& out) {
    const auto t0 = std::chrono::steady_clock::now();
    const CompileResult r = run_compiler(cmd, stats.source_path, out);
    stats.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok) {
      fail("cpu jit: compiling generated kernels failed (exit status {}) with '{}'\n  generated source: {}\n{}",
           r.exit_status, cmd.text(), stats.source_path, first_lines(r.messages, 20));
    }
  });
  auto so = open_shared_object(built);
  if (!so) {
    const char* why = ::dlerror();
    fail("cpu jit: cannot load '{}' (generated source: {}): {}", built, stats.source_path, why ? why : "unknown");
  }
  TESSERA_CHECK(holds_key(*so, key), "cpu jit: '{}' does not hold the module just compiled (was it replaced?)", built);
  remember(key, so);
  return so;
}

}  // namespace

std::vector<std::shared_ptr<const LoopKernel>> compile_clusters(const std::vector<lower::Cluster>& clusters,
                                                                JitStats* stats) {
  JitStats local;
  JitStats& st = stats ? *stats : local;
  st = JitStats{};
  if (clusters.empty()) return {};
  std::vector<lower::Kernel> kernels;
  std::vector<std::string> symbols;
  for (size_t i = 0; i < clusters.size(); ++i) {
    kernels.push_back(lower::build_loop_kernel(clusters[i], kernel_name(clusters[i], i)));
    symbols.push_back(fmt::format("tsr_kernel_{}", i));
  }
  const std::string source = codegen::emit_module(kernels, symbols, jit_dialect());
  const char* dump = std::getenv("TESSERA_DUMP_KERNELS");
  if (dump && std::string(dump) == "1") std::fprintf(stderr, "// ---- tessera kernels ----\n%s\n", source.c_str());
  std::shared_ptr<const SharedObject> so = load_module(source, st);
  std::vector<std::shared_ptr<const LoopKernel>> out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    void* sym = ::dlsym(so->handle, symbols[i].c_str());
    TESSERA_CHECK(sym != nullptr, "cpu jit: '{}' lacks the kernel symbol {} (generated source: {})", so->path,
                  symbols[i], st.source_path);
    out.push_back(std::make_shared<JitKernel>(so, reinterpret_cast<KernelFn>(sym), kernels[i].name, kernels[i].range(),
                                              kernels[i].work_per_unit()));
  }
  return out;
}

void clear_memory_cache() {
  std::lock_guard<std::mutex> lock(cache_mutex());
  memory_cache().clear();
}

std::string generate_source(const std::vector<lower::Cluster>& clusters) {
  std::vector<lower::Kernel> kernels;
  std::vector<std::string> symbols;
  for (size_t i = 0; i < clusters.size(); ++i) {
    kernels.push_back(lower::build_loop_kernel(clusters[i], kernel_name(clusters[i], i)));
    symbols.push_back(fmt::format("tsr_kernel_{}", i));
  }
  return codegen::emit_module(kernels, symbols, jit_dialect());
}

}  // namespace tessera::backends::cpu
