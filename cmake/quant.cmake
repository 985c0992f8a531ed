# Quantization (issue 6): the benchmark programs under bench/quant, and the CLI that the GGUF tests
# run. Included from the top-level CMakeLists.txt after the test targets are defined.
if(TESSERA_BUILD_EXAMPLES)
  file(GLOB TESSERA_QUANT_BENCHES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/../bench/quant/*.cpp)
  foreach(bench ${TESSERA_QUANT_BENCHES})
    get_filename_component(bench_name ${bench} NAME_WE)
    add_executable(${bench_name} ${bench})
    target_link_libraries(${bench_name} PRIVATE tessera tessera_warnings)
  endforeach()
endif()
if(TARGET test_gguf)
  add_dependencies(test_gguf tessera_cli)
endif()
