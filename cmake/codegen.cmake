# The codegen tests compile the CUDA dialect's text with NVRTC where the toolkit is installed (no GPU
# needed); without it that test skips.
if(TARGET test_codegen)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc)
    target_link_libraries(test_codegen PRIVATE CUDA::nvrtc)
    list(GET CUDAToolkit_INCLUDE_DIRS 0 TESSERA_CUDA_INCLUDE)
    target_compile_definitions(test_codegen PRIVATE TESSERA_HAVE_NVRTC=1
                                                    TESSERA_CUDA_INCLUDE_DIR="${TESSERA_CUDA_INCLUDE}")
  endif()
endif()
