# The optional CUDA backend (tessera/backends/cuda, the layer tessera_cuda of cmake/layers.cmake, which
# includes this file): built whenever the CUDA toolkit is found. It needs no nvcc: kernels are compiled
# at run time with NVRTC, matrix products go through cuBLASLt, and the runtime is linked statically, so
# a machine without a GPU or driver runs everything else and reports the backend as unavailable. NVRTC
# and cuBLASLt are not linked: the backend opens them with dlopen on first use (lazy_library.h), so a
# binary that never uses the GPU does not load them (about 240 MB of peak memory and 80 ms a start-up).
option(TESSERA_CUDA "Build the CUDA backend when the CUDA toolkit is found" ON)
if(TESSERA_CUDA)
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
endif()
if(TESSERA_CUDA AND CUDAToolkit_FOUND)
  message(STATUS "tessera: CUDA backend on (toolkit ${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_DIR})")
  # Its sources are the cuda layer's; cmake/layers.cmake links it to the layer below (backends) and the
  # layer above (registry) to it.
  add_library(tessera_cuda STATIC ${TESSERA_LAYER_cuda_SOURCES})
  # The two lazy loaders each define the library's forwarding functions with one macro of the same name.
  set_source_files_properties(${PROJECT_SOURCE_DIR}/tessera/backends/cuda/lazy_cublaslt.cpp
                              ${PROJECT_SOURCE_DIR}/tessera/backends/cuda/lazy_nvrtc.cpp
                              PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  target_link_libraries(tessera_cuda PUBLIC CUDA::cudart_static ${CMAKE_DL_LIBS} PRIVATE tessera_warnings)
  target_include_directories(tessera_cuda PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  list(GET CUDAToolkit_INCLUDE_DIRS 0 tessera_cuda_include)
  # The toolkit's library folder is where the lazy loader looks when the sonames are not on the search path.
  target_compile_definitions(tessera_cuda PRIVATE TESSERA_CUDA_INCLUDE_DIR="${tessera_cuda_include}"
                                                  TESSERA_CUDA_LIBRARY_DIR="${CUDAToolkit_LIBRARY_DIR}")
  # The registry (the layer above) lists the backend.
  target_compile_definitions(tessera_registry PUBLIC TESSERA_HAVE_CUDA=1)
else()
  message(STATUS "tessera: CUDA backend off (no CUDA toolkit found, or TESSERA_CUDA=OFF)")
endif()
