# The library, one static library per layer (docs/architecture.md, "Layers and targets").
#
# tessera_layer(<name> [OPTIONAL] <source>...) declares the layer tessera_<name>: every .cpp under the
# listed folders (with their subfolders) or files of tessera/; a file belongs to the layer whose entry
# names it most specifically (backends/cuda is not in `backends`). The lines below are the one
# declaration of the order, bottom to top: each layer links the one below it (PUBLIC, so every lower
# one), never one above. scripts/check_layers.py reads the same lines and fails on any include that
# points up (ctest: layers.includes); the tessera_layer_check_* executables below link each layer's
# archive whole with only the layers below it, so a call that points up fails to link.
#
# An OPTIONAL layer is created elsewhere, from TESSERA_LAYER_<name>_SOURCES, when its toolkit is found
# (cuda: cmake/cuda.cmake; vulkan: cmake/vulkan.cmake); without it the layer above links the one below it directly.
set(TESSERA_LAYERS "")
function(tessera_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "OPTIONAL" "" "")
  set(TESSERA_LAYERS ${TESSERA_LAYERS} ${name} PARENT_SCOPE)
  set(TESSERA_LAYER_${name}_ENTRIES ${arg_UNPARSED_ARGUMENTS} PARENT_SCOPE)
  set(TESSERA_LAYER_${name}_OPTIONAL ${arg_OPTIONAL} PARENT_SCOPE)
endfunction()

tessera_layer(core     core)                                # arrays, dtypes, devices, errors, files
tessera_layer(quant    quant)                               # GGUF block formats, (de)quantisation
tessera_layer(ir       ir)                                  # Graph, Node, OpDef registry, text form
tessera_layer(passes   passes)                              # Graph -> Graph rewrites, pipelines
tessera_layer(runtime  runtime)                             # memory plan, thread pool
tessera_layer(kernels  kernels)                             # CPU kernels: GEMM, conv, quantised dots
tessera_layer(lower    lower)                               # clusters -> loop kernels (the kernel IR)
tessera_layer(codegen  codegen)                             # the C-family emitter and its dialects
tessera_layer(backends backends)                            # Backend interface, common, reference, cpu
tessera_layer(cuda     OPTIONAL backends/cuda)              # the CUDA backend (cmake/cuda.cmake)
tessera_layer(vulkan   OPTIONAL backends/vulkan)            # the Vulkan backend (cmake/vulkan.cmake)
tessera_layer(registry backends/backend_registry.cpp)       # backends by name, the default backend
tessera_layer(ops      api ops autodiff)                    # Tensor, ops::, grad: one layer (see docs)
tessera_layer(nn       nn)                                  # Module and layers
tessera_layer(optim    optim)                               # optimisers, schedules
tessera_layer(models   models)                              # model zoo
tessera_layer(data     data)                                # datasets and loaders
tessera_layer(io       io)                                  # safetensors, npy, GGUF, StableHLO, C export
tessera_layer(tokenizers tokenizers)                        # SentencePiece and byte-level BPE from GGUF
tessera_layer(llm      models/llm)                          # Llama / GPT-2 graphs from GGUF files (above io)
tessera_layer(viz      viz)                                 # charts and images
tessera_layer(train    train)                               # training loops, checkpoints
tessera_layer(testing  testing)                             # graph fuzzer, differential helpers
tessera_layer(bench    bench)                               # the benchmark suite behind `tessera bench`

# Each source to its layer.
file(GLOB_RECURSE tessera_all_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tessera/*.cpp)
foreach(src IN LISTS tessera_all_sources)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR}/tessera ${src})
  set(best "")
  set(best_length -1)
  foreach(layer IN LISTS TESSERA_LAYERS)
    foreach(entry IN LISTS TESSERA_LAYER_${layer}_ENTRIES)
      string(FIND "${rel}" "${entry}/" at)
      string(LENGTH "${entry}" length)
      if((rel STREQUAL entry OR at EQUAL 0) AND length GREATER best_length)
        set(best ${layer})
        set(best_length ${length})
      endif()
    endforeach()
  endforeach()
  if(NOT best)
    message(FATAL_ERROR "tessera/${rel} is in no layer: add its folder to cmake/layers.cmake")
  endif()
  list(APPEND TESSERA_LAYER_${best}_SOURCES ${src})
endforeach()

foreach(layer IN LISTS TESSERA_LAYERS)
  if(NOT TESSERA_LAYER_${layer}_OPTIONAL)
    add_library(tessera_${layer} STATIC ${TESSERA_LAYER_${layer}_SOURCES})
    target_link_libraries(tessera_${layer} PRIVATE tessera_warnings)
  endif()
endforeach()
target_include_directories(tessera_core PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                                               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(tessera_core PUBLIC fmt::fmt Threads::Threads)
target_compile_definitions(tessera_core PUBLIC TESSERA_VERSION="${PROJECT_VERSION}")
# The kernels' files are compiled for different instruction sets (per-file target attributes and macros).
set_target_properties(tessera_kernels PROPERTIES UNITY_BUILD OFF)
if(TESSERA_PORTABLE)
  target_compile_definitions(tessera_kernels PRIVATE TESSERA_PORTABLE=1)  # tessera/kernels/cpu/x86_kernels.h
endif()
# The op definitions are reached from the IR through a weak reference (tessera/ir/op_registry.cpp), which
# pulls nothing out of an archive: whatever links the ops layer asks for them by name.
target_link_options(tessera_ops INTERFACE "LINKER:--undefined=tessera_register_all_ops")

# The CUDA backend, when the toolkit is found (creates tessera_cuda from TESSERA_LAYER_cuda_SOURCES).
include(${CMAKE_CURRENT_LIST_DIR}/cuda.cmake)
# The Vulkan backend, when the Vulkan headers and shaderc are found (creates tessera_vulkan).
include(${CMAKE_CURRENT_LIST_DIR}/vulkan.cmake)

# Each layer links the nearest one below it that exists; `tessera` links the top, hence all of them.
set(tessera_below "")
foreach(layer IN LISTS TESSERA_LAYERS)
  if(TARGET tessera_${layer})
    if(tessera_below)
      target_link_libraries(tessera_${layer} PUBLIC ${tessera_below})
    endif()
    set(tessera_below tessera_${layer})
  endif()
endforeach()
add_library(tessera INTERFACE)
target_link_libraries(tessera INTERFACE ${tessera_below})

# The link check: each layer's archive linked whole (every object, used or not) into an empty program
# with only the layers below it, so that any reference to a layer above is an undefined symbol and the
# build fails naming it. A few seconds of linking; left out of sanitizer builds, which would only repeat it,
# and of projects that include Tessera as a subproject.
if(TESSERA_SANITIZE OR NOT PROJECT_IS_TOP_LEVEL)
  set(tessera_layer_check_default OFF)
else()
  set(tessera_layer_check_default ON)
endif()
option(TESSERA_LAYER_CHECK "Link each layer alone (with the layers below it) to prove no call points up"
       ${tessera_layer_check_default})
if(TESSERA_LAYER_CHECK)
  foreach(layer IN LISTS TESSERA_LAYERS)
    if(TARGET tessera_${layer})
      add_executable(tessera_layer_check_${layer} ${PROJECT_SOURCE_DIR}/tools/layer_check/main.cpp)
      target_link_libraries(tessera_layer_check_${layer} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,tessera_${layer}>")
    endif()
  endforeach()
endif()
