#include "tessera/core/page_out.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace tessera {

void page_out(const void* data, size_t bytes) {
#ifdef MADV_PAGEOUT
  // Only whole pages inside the range: neighbouring data on a shared page keeps its residency.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
#else
  (void)data;
  (void)bytes;
#endif
}

bool page_in(const void* data, size_t bytes) {
  if (bytes == 0) return true;
#ifdef MADV_POPULATE_READ
  // Every page the range touches.
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes + page - 1) / page * page;
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ) == 0;
#else
  (void)data;
  return false;
#endif
}

}  // namespace tessera
