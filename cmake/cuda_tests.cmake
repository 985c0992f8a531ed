# test_cuda: the CUDA backend's own tests (tests/cuda) plus the backend-neutral differential suite of
# tests/cpu_backend (every op sample, the MLP/CNN training steps) with the CUDA backend under test.
# Without a GPU every test in it is skipped with one message saying why (tests/cuda/gpu_environment.cpp).
if(TARGET test_cuda)
  target_sources(test_cuda PRIVATE
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/op_samples.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_elementwise.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_structural.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_nn.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/model_steps.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_training_steps.cpp)
  target_include_directories(test_cuda PRIVATE ${PROJECT_SOURCE_DIR}/tests/cpu_backend)
  target_compile_definitions(test_cuda PRIVATE TESSERA_TEST_BACKEND_DEFAULT="cuda")
  target_link_libraries(test_cuda PRIVATE tessera_cuda)
endif()
