# Third-party libraries behind Tessera's checkpoint I/O and data loaders, included by the top-level
# CMakeLists.txt right after the `tessera` library target is defined:
#   zlib      - gzip'd IDX files (tessera/data/idx.cpp)
#   libpng    - PNG image folders (tessera/data/image_folder.cpp)
#   nlohmann  - the safetensors JSON header (header-only; tessera/io/safetensors.cpp)
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
find_package(nlohmann_json 3.2 REQUIRED)
# PRIVATE: no public Tessera header exposes these libraries; for a static library CMake still passes
# ZLIB/PNG on to whatever links `tessera`.
target_link_libraries(tessera PRIVATE ZLIB::ZLIB PNG::PNG nlohmann_json::nlohmann_json)
