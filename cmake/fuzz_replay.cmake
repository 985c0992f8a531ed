# The corpus replay tests (tests/io/test_corpus_replay.cpp, tests/gguf/test_fuzz_corpus.cpp) run every
# file of fuzz/corpus through the fuzz harnesses themselves, compiled here with TESSERA_FUZZ_REPLAY
# (fuzz/fuzz_target.h), so that CI checks the same invariants libFuzzer does without needing clang.
if(TARGET test_io)
  target_sources(test_io PRIVATE ${PROJECT_SOURCE_DIR}/fuzz/fuzz_safetensors.cpp ${PROJECT_SOURCE_DIR}/fuzz/fuzz_npy.cpp
                                 ${PROJECT_SOURCE_DIR}/fuzz/fuzz_idx.cpp ${PROJECT_SOURCE_DIR}/fuzz/fuzz_ir_text.cpp)
  target_compile_definitions(test_io PRIVATE TESSERA_FUZZ_REPLAY)
endif()
if(TARGET test_gguf)
  target_sources(test_gguf PRIVATE ${PROJECT_SOURCE_DIR}/fuzz/fuzz_gguf.cpp)
  target_compile_definitions(test_gguf PRIVATE TESSERA_FUZZ_REPLAY)
endif()
if(TARGET test_onnx)
  target_sources(test_onnx PRIVATE ${PROJECT_SOURCE_DIR}/fuzz/fuzz_onnx.cpp)
  target_compile_definitions(test_onnx PRIVATE TESSERA_FUZZ_REPLAY)
endif()
