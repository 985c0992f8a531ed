# `cmake --install`: the headers, every layer's static library, a CMake package (TesseraConfig.cmake with
# its version file and the imported targets Tessera::tessera, and Tessera::cuda where the CUDA backend
# is built) and a pkg-config file, tessera.pc. examples/consumer is a separate project that uses it;
# scripts/check_install.sh installs into a fresh prefix, builds that project against it and runs it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(tessera_install_targets tessera tessera_warnings)
set(tessera_pc_libs "")
foreach(layer IN LISTS TESSERA_LAYERS)
  if(TARGET tessera_${layer})
    list(APPEND tessera_install_targets tessera_${layer})
    # pkg-config links in one pass: the top layer first.
    list(PREPEND tessera_pc_libs "-ltessera_${layer}")
  endif()
endforeach()
set_target_properties(tessera PROPERTIES EXPORT_NAME tessera)
if(TARGET tessera_cuda)
  set_target_properties(tessera_cuda PROPERTIES EXPORT_NAME cuda)
endif()

install(TARGETS ${tessera_install_targets} EXPORT TesseraTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tessera/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessera
        FILES_MATCHING PATTERN "*.h")
install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(tessera_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${tessera_cmake_dir})
# What the package needs from the consumer's machine: the same libraries the build found.
if(OPENBLAS_FOUND)
  set(TESSERA_WITH_OPENBLAS ON)
else()
  set(TESSERA_WITH_OPENBLAS OFF)
endif()
if(TARGET tessera_cuda)
  set(TESSERA_WITH_CUDA ON)
else()
  set(TESSERA_WITH_CUDA OFF)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TesseraConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/TesseraConfig.cmake INSTALL_DESTINATION ${tessera_cmake_dir})
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesseraConfig.cmake ${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
        DESTINATION ${tessera_cmake_dir})

# pkg-config: the layers, top first, then what they link (static archives: a consumer links their
# dependencies too); the op registry is pulled in by its undefined symbol, as Tessera::tessera does.
list(JOIN tessera_pc_libs " " TESSERA_PC_LIBS)
set(TESSERA_PC_REQUIRES "fmt zlib libpng libpcre2-8 protobuf")
# The ONNX import (tessera/io/onnx) uses the generated classes of Debian's libonnx-dev.
set(TESSERA_PC_EXTRA_LIBS "-lonnx_proto")
if(OPENBLAS_FOUND)
  string(APPEND TESSERA_PC_REQUIRES " openblas")
endif()
if(TARGET tessera_cuda)
  string(APPEND TESSERA_PC_EXTRA_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -lrt")
endif()
if(TARGET tessera_vulkan)
  # shaderc's archives refer to one another in both directions: one linker group (the loader is dlopen'ed).
  list(JOIN TESSERA_SHADERC_DEPENDENCIES " " tessera_shaderc_deps)
  string(APPEND TESSERA_PC_EXTRA_LIBS " -Wl,--start-group ${TESSERA_SHADERC_COMBINED} ${tessera_shaderc_deps} -Wl,--end-group")
endif()
# Relocatable: the prefix is found from the file's own folder, so `cmake --install --prefix` anywhere works.
file(RELATIVE_PATH TESSERA_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/tessera.pc.in ${PROJECT_BINARY_DIR}/tessera.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tessera.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
