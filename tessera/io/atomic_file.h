#pragma once
// The atomic writer and the read-only file map live in core (tessera/core/atomic_file.h), below the
// backends, data loaders and plots that write files too; the readers and writers of io name them io::.
#include "tessera/core/atomic_file.h"

namespace tessera::io {

using ::tessera::AtomicFile;
using ::tessera::MappedFile;
using ::tessera::write_file_atomic;

}  // namespace tessera::io
