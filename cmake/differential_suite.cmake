# tessera_add_differential_suite(TARGET BACKEND LIBRARY): builds the backend-neutral differential suite
# of tests/cpu_backend (every op sample, the MLP/CNN training steps) into a device backend's own test
# program TARGET, with BACKEND under test and its layer LIBRARY linked. cmake/cuda_tests.cmake and
# cmake/vulkan_tests.cmake call it for test_cuda and test_vulkan.
function(tessera_add_differential_suite target backend library)
  if(NOT TARGET ${target})
    return()
  endif()
  target_sources(${target} PRIVATE
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/op_samples.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_elementwise.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_structural.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_ops_nn.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/model_steps.cpp
    ${PROJECT_SOURCE_DIR}/tests/cpu_backend/test_training_steps.cpp)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests/cpu_backend)
  target_compile_definitions(${target} PRIVATE TESSERA_TEST_BACKEND_DEFAULT="${backend}")
  target_link_libraries(${target} PRIVATE ${library})
endfunction()
