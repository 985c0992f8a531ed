// tessera devices: every backend compiled into this build, whether it can run on this machine (and
// why not), and its devices with their memory.
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.h"
#include "tessera/backends/backend.h"

namespace tessera::cli {

namespace {

std::string gib(int64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30)); }

int run_devices(bool json) {
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& name : backends::backend_names()) {
    backends::Backend* b = backends::find_backend(name);
    const bool available = b->available();
    nlohmann::json entry{{"backend", name}, {"available", available}, {"status", b->status()}};
    entry["devices"] = nlohmann::json::array();
    if (!json) std::cout << fmt::format("{:<10} {}\n", name, b->status());
    if (available) {
      for (Device* d : b->devices()) {
        const DeviceMemoryStats m = d->memory_stats();
        entry["devices"].push_back({{"name", d->name()}, {"description", d->description()}, {"capacity_bytes", m.capacity}});
        if (!json) {
          std::cout << fmt::format("  {:<10} {}{}\n", d->name(), d->description(),
                                   m.capacity > 0 ? ", " + gib(m.capacity) : std::string());
        }
      }
    }
    list.push_back(std::move(entry));
  }
  if (json) std::cout << list.dump() << "\n";
  return kExitOk;
}

}  // namespace

Command add_devices_command(CLI::App& root) {
  auto json = std::make_shared<bool>(false);
  CLI::App* app = root.add_subcommand("devices", "List the backends compiled in, whether each runs here, and their devices");
  app->add_flag("--json", *json, "One JSON array");
  return {app, [json] { return run_devices(*json); }};
}

}  // namespace tessera::cli
