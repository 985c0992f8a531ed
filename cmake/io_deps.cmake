# Third-party libraries behind Tessera's checkpoint I/O and data loaders, included by the top-level
# CMakeLists.txt right after the layers (cmake/layers.cmake) are defined; each goes to the layers using it:
#   zlib      - gzip'd IDX files (tessera/data/idx.cpp)
#   libpng    - PNG image folders (tessera/data/image_folder.cpp) and plots (tessera/viz/canvas.cpp)
#   nlohmann  - the safetensors JSON header (header-only; tessera/io/safetensors.cpp), the training
#               metrics (tessera/train/classifier.cpp) and Hugging Face folders' JSON files
#               (tessera/tokenizers/hf_vocab.cpp, tessera/models/llm/hf_convert.cpp)
#   PCRE2     - the BPE pre-tokenizer's Unicode regular expressions (tessera/tokenizers/pretokenizer.cpp)
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
find_package(nlohmann_json 3.2 REQUIRED)
# PRIVATE: no public Tessera header exposes these libraries; for a static library CMake still passes
# ZLIB/PNG on to whatever links it.
target_link_libraries(tessera_data PRIVATE ZLIB::ZLIB PNG::PNG)
target_link_libraries(tessera_viz PRIVATE PNG::PNG)
target_link_libraries(tessera_io PRIVATE nlohmann_json::nlohmann_json)
target_link_libraries(tessera_train PRIVATE nlohmann_json::nlohmann_json)
target_link_libraries(tessera_tokenizers PRIVATE nlohmann_json::nlohmann_json)
target_link_libraries(tessera_llm PRIVATE nlohmann_json::nlohmann_json)
find_package(PkgConfig REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
target_link_libraries(tessera_tokenizers PRIVATE PkgConfig::PCRE2)
# ONNX (tessera/io/onnx): Debian's libonnx-dev, whose onnx_proto target carries the generated protobuf
# classes (ONNX_ML flavour) and links libprotobuf. Only io/onnx's own files include them.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
target_link_libraries(tessera_io PRIVATE onnx_proto)
