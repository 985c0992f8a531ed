# The codegen tests compile the CUDA dialect's text with NVRTC where the toolkit is installed (no GPU
# needed); without it that test skips.
if(TARGET test_codegen)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND CUDA_nvrtc_LIBRARY)
    # By its file: CUDA::nvrtc would also link the driver stub (see cmake/cuda.cmake).
    target_link_libraries(test_codegen PRIVATE ${CUDA_nvrtc_LIBRARY})
    target_include_directories(test_codegen PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
    list(GET CUDAToolkit_INCLUDE_DIRS 0 TESSERA_CUDA_INCLUDE)
    target_compile_definitions(test_codegen PRIVATE TESSERA_HAVE_NVRTC=1
                                                    TESSERA_CUDA_INCLUDE_DIR="${TESSERA_CUDA_INCLUDE}")
  endif()
endif()
