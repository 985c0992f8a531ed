# The graph fuzzer's long-run tool (tools/fuzz_graphs); its CI budget runs as tests/fuzz_graphs.
find_package(CLI11 CONFIG QUIET)
add_executable(fuzz_graphs ${PROJECT_SOURCE_DIR}/tools/fuzz_graphs/main.cpp)
target_link_libraries(fuzz_graphs PRIVATE tessera tessera_warnings)
if(CLI11_FOUND)
  target_link_libraries(fuzz_graphs PRIVATE CLI11::CLI11)
endif()
