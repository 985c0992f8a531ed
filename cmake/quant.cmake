# Quantization (issue 6): the benchmark programs under bench/quant, and the CLI that the GGUF tests
# run. Included from the top-level CMakeLists.txt after the test targets are defined.
if(TESSERA_BUILD_EXAMPLES)
  tessera_add_programs(${PROJECT_SOURCE_DIR}/bench/quant)
endif()
if(TARGET test_gguf)
  add_dependencies(test_gguf tessera_cli)
endif()
