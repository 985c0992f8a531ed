# ONNX: the conformance driver (tools/onnx_conformance) over Debian's libonnx-testdata, registered as the
# ctest onnx.conformance when the test data is installed, and the onnx test suite's protobuf access
# (tests/onnx build models with ONNX's generated classes).
add_executable(onnx_conformance ${PROJECT_SOURCE_DIR}/tools/onnx_conformance/main.cpp
                                ${PROJECT_SOURCE_DIR}/tools/onnx_conformance/exclusions.cpp
                                ${PROJECT_SOURCE_DIR}/tools/onnx_conformance/test_case.cpp)
target_include_directories(onnx_conformance PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(onnx_conformance PRIVATE tessera tessera_warnings)
set(TESSERA_ONNX_TESTDATA /usr/share/libonnx-testdata/data CACHE PATH "ONNX's backend test data (libonnx-testdata)")
if(TESSERA_BUILD_TESTS AND EXISTS ${TESSERA_ONNX_TESTDATA}/node)
  add_test(NAME onnx.conformance
           COMMAND onnx_conformance --data ${TESSERA_ONNX_TESTDATA}
                   --exclusions ${PROJECT_SOURCE_DIR}/tools/onnx_conformance/exclusions.txt)
  set_tests_properties(onnx.conformance PROPERTIES TIMEOUT 300)
  # The same tests on the Vulkan backend (lavapipe in CI): skipped where no Vulkan device is found.
  if(TARGET tessera_vulkan)
    add_test(NAME onnx.conformance_vulkan
             COMMAND onnx_conformance --data ${TESSERA_ONNX_TESTDATA} --backend vulkan
                     --exclusions ${PROJECT_SOURCE_DIR}/tools/onnx_conformance/exclusions.txt)
    set_tests_properties(onnx.conformance_vulkan PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
                         ENVIRONMENT "LSAN_OPTIONS=detect_leaks=0")  # Mesa leaks a little by itself
  endif()
endif()
if(TARGET test_onnx)
  target_link_libraries(test_onnx PRIVATE onnx)  # onnx_proto, and the operator schemas (test_onnx_versions)
endif()
# The export's tests reuse the StableHLO suite's op cases (small instances of every registered op).
if(TARGET test_onnx_export)
  target_sources(test_onnx_export PRIVATE ${PROJECT_SOURCE_DIR}/tests/stablehlo/op_cases.cpp)
endif()
# `tessera export onnx`'s output: onnx.checker accepts it (python3-onnx) and ONNX Runtime (onnxruntime-node,
# installed into build/ort by scripts/install_ort.sh) computes Tessera's outputs; each skips when its tool
# is missing, saying so.
if(TESSERA_BUILD_TESTS AND TARGET tessera_cli)
  foreach(mode checker ort)
    add_test(NAME onnx.export_${mode}
             COMMAND ${PROJECT_SOURCE_DIR}/tools/onnx_export/test_export.sh ${mode} $<TARGET_FILE:tessera_cli>
                     ${CMAKE_BINARY_DIR}/ort)
    set_tests_properties(onnx.export_${mode} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
  if(TARGET test_onnx_export)
    add_test(NAME onnx.export_ort_ops
             COMMAND ${PROJECT_SOURCE_DIR}/tools/onnx_export/test_export.sh ort_ops $<TARGET_FILE:test_onnx_export>
                     ${CMAKE_BINARY_DIR}/ort)
    set_tests_properties(onnx.export_ort_ops PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
  endif()
endif()
# The ONNX model benchmark's Tessera side (bench/onnx/compare_onnxruntime.py runs it beside ONNX Runtime).
if(TESSERA_BUILD_EXAMPLES)
  tessera_add_programs(${PROJECT_SOURCE_DIR}/bench/onnx)
endif()
# Real PyTorch-exported models (scripts/onnx_models): exported into the build tree, run with `tessera run`
# on the reference and CPU backends (and Vulkan where it is built: lavapipe in CI), compared with
# PyTorch's outputs; skipped (77) without torch. CUDA's run is scripts/device/cuda_suite.sh's onnx stage.
if(TESSERA_BUILD_TESTS AND TARGET tessera_cli)
  set(onnx_model_backends reference,cpu)
  if(tessera_vulkan_found)
    set(onnx_model_backends reference,cpu,vulkan)
  endif()
  add_test(NAME onnx.pytorch_models
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/onnx_models/check_models.py
                   --tessera $<TARGET_FILE:tessera_cli> --work ${CMAKE_BINARY_DIR}/onnx_models
                   --backends ${onnx_model_backends})
  set_tests_properties(onnx.pytorch_models PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
