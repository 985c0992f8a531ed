# test_vulkan: the Vulkan backend's own tests (tests/vulkan: device, pool, shaders, recorder, missing
# driver) plus the backend-neutral differential suite of tests/cpu_backend (every op sample, the MLP/CNN
# training steps) with the Vulkan backend under test. Without a Vulkan device every test that needs one
# is skipped with one message saying why; CI runs them on Mesa's lavapipe (a CPU Vulkan driver).
if(TARGET test_vulkan)
  target_sources(test_vulkan PRIVATE
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/op_samples.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_elementwise.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_structural.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_nn.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/model_steps.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_training_steps.cpp)
  target_include_directories(test_vulkan PRIVATE ${PROJECT_SOURCE_DIR}/tests/cpu_backend)
  target_compile_definitions(test_vulkan PRIVATE TESSERA_TEST_BACKEND_DEFAULT="vulkan")
  target_link_libraries(test_vulkan PRIVATE tessera_vulkan)
endif()
