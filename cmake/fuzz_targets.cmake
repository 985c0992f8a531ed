# The libFuzzer targets (fuzz/fuzz_*.cpp -> fuzz_<reader>), built when TESSERA_FUZZ is on. They need
# clang: CI's sanitizer stage builds with clang, ASan, UBSan and `fuzzer-no-link` coverage, so that one
# build serves both the sanitizer test run and the fuzz run (fuzz/README.md). The option itself, and the
# coverage flags every target needs, are set in CMakeLists.txt before any target exists.
if(TESSERA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TESSERA_FUZZ needs clang (libFuzzer); this build uses ${CMAKE_CXX_COMPILER_ID}. "
                        "Configure with -DCMAKE_CXX_COMPILER=clang++ or run fuzz/build.sh.")
  endif()
  file(GLOB TESSERA_FUZZ_HARNESSES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/fuzz/fuzz_*.cpp)
  foreach(harness ${TESSERA_FUZZ_HARNESSES})
    get_filename_component(target ${harness} NAME_WE)
    add_executable(${target} ${harness})
    target_link_libraries(${target} PRIVATE tessera tessera_warnings)
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
  endforeach()
endif()
