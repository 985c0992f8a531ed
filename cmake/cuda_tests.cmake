# test_cuda: the CUDA backend's own tests (tests/cuda) plus the backend-neutral differential suite of
# tests/cpu_backend (every op sample, the MLP/CNN training steps) with the CUDA backend under test.
# Without a GPU every test in it is skipped with one message saying why (tests/cuda/gpu_environment.cpp).
include(${PROJECT_SOURCE_DIR}/cmake/differential_suite.cmake)
tessera_add_differential_suite(test_cuda cuda tessera_cuda)
