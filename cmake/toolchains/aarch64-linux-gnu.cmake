# Cross-compiling for arm64 (aarch64) Linux with Debian's cross toolchain and multiarch libraries:
#   apt-get install crossbuild-essential-arm64 qemu-user   # after dpkg --add-architecture arm64
#   apt-get install libfmt-dev:arm64 libgtest-dev:arm64 zlib1g-dev:arm64 libpng-dev:arm64 libpcre2-dev:arm64
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# scripts/ci_arm64.sh builds the core test suites this way and runs them under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch: the :arm64 packages put their libraries and CMake packages in /usr/lib/aarch64-linux-gnu,
# which this makes CMake search instead of the host's /usr/lib/x86_64-linux-gnu.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config (PCRE2, OpenBLAS) must read the arm64 .pc files only, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# Test discovery (gtest_discover_tests) and ctest run the arm64 programs through qemu-user; its loader
# and libraries are the multiarch ones (libc6:arm64 puts /lib/ld-linux-aarch64.so.1 in place).
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
