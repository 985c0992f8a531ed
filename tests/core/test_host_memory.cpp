// Host memory: the allocator's alignment (large buffers on a 2 MiB boundary, for transparent huge
// pages) and the residency hints around a model's repack (page_in maps a file range's pages in one
// call, page_out hands them back).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/io_test_util.h"
#include "tessera/core/device.h"
#include "tessera/core/page_out.h"
#include "test_util.h"

using namespace tessera;
using namespace tessera::test;

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t resident_pages(const void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  EXPECT_EQ(mincore(const_cast<void*>(p), bytes, in.data()), 0);
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

}  // namespace

TEST(HostMemory, LargeBuffersStartOnAHugePageBoundary) {
  Device& host = host_device();
  for (size_t bytes : {size_t{4} << 20, (size_t{9} << 20) + 100}) {
    auto* p = static_cast<uint8_t*>(host.allocate(bytes));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePage, 0u) << bytes;
    p[0] = 1;
    p[bytes - 1] = 2;  // the whole length is usable, the small-page tail included
    EXPECT_EQ(p[0] + p[bytes - 1], 3);
    host.deallocate(p, bytes);
  }
  for (size_t bytes : {size_t{1}, size_t{100}, size_t{1} << 20}) {
    void* p = host.allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    host.deallocate(p, bytes);
  }
}

// A file of `bytes` bytes out of the page cache, mapped read-only and private; nullptr if it failed.
void* mapped_cold(const std::string& path, size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return nullptr;
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  return p == MAP_FAILED ? nullptr : p;
}

TEST(HostMemory, PageInMapsAFileRangeAndPageOutHandsItBack) {
  ScratchDir dir;
  const std::string path = dir.file("weights.bin"), control_path = dir.file("control.bin");
  const size_t bytes = size_t{8} << 20;
  write_bytes(path, std::string(bytes, 'w'));
  write_bytes(control_path, std::string(bytes, 'c'));
  const size_t pages = bytes / static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Out of the page cache first, so that residency afterwards is page_in's doing.
  void* p = mapped_cold(path, bytes);
  ASSERT_NE(p, nullptr);
  if (resident_pages(p, bytes) == pages) {
    ::munmap(p, bytes);
    GTEST_SKIP() << "the file's pages could not be evicted from the page cache here";
  }
  const bool taken = page_in(p, bytes);
  const size_t resident = resident_pages(p, bytes);
  if (resident != pages) {
    // Where madvise itself does nothing (qemu's user-mode emulation accepts every advice and ignores
    // it), page_in cannot either: the same advice given directly on a second file tells.
    void* control = mapped_cold(control_path, bytes);
    ASSERT_NE(control, nullptr);
    const bool control_taken = madvise(control, bytes, MADV_POPULATE_READ) == 0;
    const size_t control_resident = resident_pages(control, bytes);
    ::munmap(control, bytes);
    if (!control_taken || control_resident == 0) {
      ::munmap(p, bytes);
      GTEST_SKIP() << "MADV_POPULATE_READ is not carried out here (taken: " << control_taken << ")";
    }
    ADD_FAILURE() << "page_in (taken: " << taken << ") left " << pages - resident << " of " << pages
                  << " pages out, where the advice given directly brought " << control_resident << " in";
  }
  EXPECT_TRUE(taken);
  EXPECT_EQ(static_cast<const char*>(p)[bytes / 2], 'w');
  page_out(p, bytes);
  EXPECT_LT(resident_pages(p, bytes), pages);              // clean file pages are dropped
  EXPECT_EQ(static_cast<const char*>(p)[bytes - 1], 'w');  // and read back on demand
  ::munmap(p, bytes);
  EXPECT_TRUE(page_in(nullptr, 0));
}
