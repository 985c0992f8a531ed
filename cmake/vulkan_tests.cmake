# test_vulkan: the Vulkan backend's own tests (tests/vulkan: device, pool, shaders, recorder, missing
# driver) plus the backend-neutral differential suite of tests/cpu_backend (every op sample, the MLP/CNN
# training steps) with the Vulkan backend under test. Without a Vulkan device every test that needs one
# is skipped with one message saying why; CI runs them on Mesa's lavapipe (a CPU Vulkan driver).
include(${PROJECT_SOURCE_DIR}/cmake/differential_suite.cmake)
tessera_add_differential_suite(test_vulkan vulkan tessera_vulkan)
