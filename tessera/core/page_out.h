#pragma once
// A hint that a range of memory will not be read again soon: its resident pages are handed back to
// the kernel (madvise MADV_PAGEOUT: clean file-backed pages are dropped, anonymous ones written to swap),
// so that the weights of a mapped model file stop counting twice once they are repacked. Contents are
// kept: a later read faults the pages back in. A no-op where the kernel lacks the advice.
#include <cstddef>

namespace tessera {

void page_out(const void* data, size_t bytes);

// The opposite hint, for a range about to be read through: its pages are mapped in one call
// (MADV_POPULATE_READ) instead of one fault at a time, which on a virtual machine costs microseconds
// each (a 1B model's weights are ~140K pages). False where the kernel did not take the advice (an old
// kernel, a range not mapped): the pages then come in by faults as before.
bool page_in(const void* data, size_t bytes);

}  // namespace tessera
