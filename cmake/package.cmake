# The Debian package of the CLI and the library (headers, static libraries, CMake package, tessera.pc),
# made from the install rules (cmake/install.cmake) into /usr:
#   cmake --build build && (cd build && cpack -G DEB)   # tessera_<version>_<arch>.deb
# scripts/check_deb.sh builds it, installs it with dpkg -i, tries the installed CLI and a consumer
# project built against /usr, and removes it again.
set(CPACK_PACKAGE_NAME tessera)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Tessera deep-learning framework: the tessera CLI and the C++ library")
set(CPACK_PACKAGE_DESCRIPTION
    "A C++20 deep-learning framework and tensor compiler: one graph IR, autodiff as a graph transform, a\n"
    "reference and a compiling CPU backend. This package holds the tessera command-line tool, the headers,\n"
    "the static libraries, the CMake package (find_package(Tessera)) and tessera.pc.")
set(CPACK_PACKAGE_CONTACT "Tessera developers <tessera@localhost>")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # tessera_0.1.0_amd64.deb
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# The CLI's shared libraries (libfmt9, libpng16-16, libstdc++6, ...) come from dpkg-shlibdeps; a program
# linking the static libraries needs what they link, as -dev packages (the same list as
# scripts/install_deps.sh), and a C compiler for the CPU backend's generated kernels.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(tessera_deb_depends 
    "libfmt-dev, zlib1g-dev, libpng-dev, libpcre2-dev, nlohmann-json3-dev, libonnx-dev, libprotobuf-dev, pkg-config")
if(OPENBLAS_FOUND)
  string(APPEND tessera_deb_depends ", libopenblas-dev")
endif()
if(TARGET tessera_vulkan)
  # The Vulkan layer's headers and shaderc's static archives; the loader itself is opened at run time.
  string(APPEND tessera_deb_depends ", libvulkan-dev, libshaderc-dev, glslang-dev, spirv-tools")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${tessera_deb_depends}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gcc | c-compiler")
# gzip: the static libraries make a large payload, and xz would spend a minute on it in every CI run.
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
include(CPack)
