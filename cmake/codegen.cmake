# The codegen tests compile the CUDA dialect's text with NVRTC where the toolkit is installed (no GPU
# needed); without it that test skips.
if(TARGET test_codegen)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND CUDA_nvrtc_LIBRARY)
    # With the CUDA backend built, its lazily loaded NVRTC serves (tessera/backends/cuda/lazy_nvrtc.cpp);
    # otherwise the library by its file: CUDA::nvrtc would also link the driver stub (libcuda.so), which
    # would make the test need libcuda.so.1 to start.
    if(NOT TARGET tessera_cuda)
      target_link_libraries(test_codegen PRIVATE ${CUDA_nvrtc_LIBRARY})
    endif()
    target_include_directories(test_codegen PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    list(GET CUDAToolkit_INCLUDE_DIRS 0 TESSERA_CUDA_INCLUDE)
    target_compile_definitions(test_codegen PRIVATE TESSERA_HAVE_NVRTC=1
                                                    TESSERA_CUDA_INCLUDE_DIR="${TESSERA_CUDA_INCLUDE}")
  endif()
endif()
