# The optional CUDA backend (tessera/backends/cuda): built whenever the CUDA toolkit is found. It needs
# no nvcc: kernels are compiled at run time with NVRTC, matrix products go through cuBLASLt, and the
# runtime is linked statically, so a machine without a GPU or driver runs everything else and reports
# the backend as unavailable.
option(TESSERA_CUDA "Build the CUDA backend when the CUDA toolkit is found" ON)
if(TESSERA_CUDA)
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
endif()
if(TESSERA_CUDA AND CUDAToolkit_FOUND)
  message(STATUS "tessera: CUDA backend on (toolkit ${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_DIR})")
  file(GLOB TESSERA_CUDA_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tessera/backends/cuda/*.cpp)
  add_library(tessera_cuda STATIC ${TESSERA_CUDA_SOURCES})
  # NVRTC by its file, not CUDA::nvrtc: that target also links the driver stub (libcuda.so), which would
  # make every binary need libcuda.so.1 at start-up, so none would run on a machine without a driver.
  target_link_libraries(tessera_cuda PUBLIC tessera CUDA::cudart_static ${CUDA_nvrtc_LIBRARY} CUDA::cublasLt
                        PRIVATE tessera_warnings)
  target_include_directories(tessera_cuda PUBLIC ${CUDAToolkit_INCLUDE_DIRS})
  list(GET CUDAToolkit_INCLUDE_DIRS 0 tessera_cuda_include)
  target_compile_definitions(tessera_cuda PRIVATE TESSERA_CUDA_INCLUDE_DIR="${tessera_cuda_include}")
  # The registry (in tessera) lists the backend; the two static libraries refer to each other.
  target_link_libraries(tessera PUBLIC tessera_cuda)
  set_property(TARGET tessera tessera_cuda PROPERTY LINK_INTERFACE_MULTIPLICITY 3)
  target_compile_definitions(tessera PUBLIC TESSERA_HAVE_CUDA=1)
else()
  message(STATUS "tessera: CUDA backend off (no CUDA toolkit found, or TESSERA_CUDA=OFF)")
endif()
