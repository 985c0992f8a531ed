# CPU kernels: optional OpenBLAS as a second GEMM provider, the kernel benchmarks (bench_*).
# Included from the top-level CMakeLists.txt after the layers (cmake/layers.cmake) are defined.
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
endif()
if(OPENBLAS_FOUND)
  target_link_libraries(tessera_kernels PUBLIC PkgConfig::OPENBLAS)
  # Only the provider's own file needs to know (keeps every other file's flags, and ccache hits, stable).
  set_source_files_properties(${PROJECT_SOURCE_DIR}/tessera/kernels/cpu/gemm_openblas.cpp
                              PROPERTIES COMPILE_DEFINITIONS TESSERA_HAVE_OPENBLAS=1)
  message(STATUS "Tessera: OpenBLAS ${OPENBLAS_VERSION} found, GEMM provider 'openblas' available")
else()
  message(STATUS "Tessera: OpenBLAS not found, GEMM provider 'openblas' unavailable")
endif()

# Benchmark programs: one per file under bench/kernels.
if(TESSERA_BUILD_EXAMPLES)
  tessera_add_programs(${PROJECT_SOURCE_DIR}/bench/kernels)
endif()
