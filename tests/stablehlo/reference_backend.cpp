// These tests compare exports with Tessera's oracle: every eager evaluation in them runs on the
// reference backend, whatever $TESSERA_BACKEND or the build's default is.
#include <gtest/gtest.h>

#include "tessera/backends/backend.h"

namespace {

class ReferenceBackendEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { tessera::backends::set_default_backend(tessera::backends::reference_backend()); }
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new ReferenceBackendEnvironment);

}  // namespace
