# The optional Vulkan backend (tessera/backends/vulkan, the layer tessera_vulkan of cmake/layers.cmake,
# which includes this file): built when the Vulkan headers and shaderc's static library are found
# (TESSERA_VULKAN=AUTO), required with ON, skipped with OFF. The Vulkan loader is not linked: the
# backend opens libvulkan.so.1 with dlopen when it is first asked for, so a machine without a loader or
# a driver runs everything else and reports the backend as unavailable. Shaders are compiled at run time
# with shaderc, linked statically as shaderc_combined (Debian's shared libshaderc is broken).
set(TESSERA_VULKAN AUTO CACHE STRING "Build the Vulkan backend: AUTO (when Vulkan headers and shaderc are found), ON, OFF")
set_property(CACHE TESSERA_VULKAN PROPERTY STRINGS AUTO ON OFF)
set(tessera_vulkan_found FALSE)
if(NOT TESSERA_VULKAN STREQUAL "OFF")
  find_path(TESSERA_VULKAN_INCLUDE_DIR vulkan/vulkan.h)
  find_path(TESSERA_SHADERC_INCLUDE_DIR shaderc/shaderc.h)
  find_library(TESSERA_SHADERC_COMBINED NAMES libshaderc_combined.a shaderc_combined)
  # Debian's shaderc_combined holds shaderc alone: glslang and SPIRV-Tools come as their own archives
  # (glslang-dev, spirv-tools), linked after it where they exist.
  set(TESSERA_SHADERC_DEPENDENCIES "")
  foreach(lib glslang SPIRV glslang-default-resource-limits MachineIndependent OSDependent OGLCompiler GenericCodeGen
              SPIRV-Tools-opt SPIRV-Tools)
    find_library(TESSERA_SHADERC_DEP_${lib} NAMES lib${lib}.a)
    if(TESSERA_SHADERC_DEP_${lib})
      list(APPEND TESSERA_SHADERC_DEPENDENCIES ${TESSERA_SHADERC_DEP_${lib}})
    endif()
  endforeach()
  if(TESSERA_VULKAN_INCLUDE_DIR AND TESSERA_SHADERC_INCLUDE_DIR AND TESSERA_SHADERC_COMBINED)
    set(tessera_vulkan_found TRUE)
  elseif(TESSERA_VULKAN STREQUAL "ON")
    message(FATAL_ERROR "tessera: TESSERA_VULKAN=ON but the Vulkan headers (libvulkan-dev) or shaderc_combined "
                        "(libshaderc-dev) were not found")
  endif()
endif()
if(tessera_vulkan_found)
  message(STATUS "tessera: Vulkan backend on (shaderc: ${TESSERA_SHADERC_COMBINED})")
  add_library(tessera_vulkan STATIC ${TESSERA_LAYER_vulkan_SOURCES})
  target_include_directories(tessera_vulkan PUBLIC ${TESSERA_VULKAN_INCLUDE_DIR} ${TESSERA_SHADERC_INCLUDE_DIR})
  # Every Vulkan function comes through the table of vulkan_api.h (dlopen), never from a linked loader.
  target_compile_definitions(tessera_vulkan PUBLIC VK_NO_PROTOTYPES)
  # The archives refer to one another in both directions: one group, rescanned by the linker.
  target_link_libraries(tessera_vulkan PUBLIC "$<LINK_GROUP:RESCAN,${TESSERA_SHADERC_COMBINED};${TESSERA_SHADERC_DEPENDENCIES}>"
                        ${CMAKE_DL_LIBS} Threads::Threads
                        PRIVATE tessera_warnings)
  target_compile_definitions(tessera_registry PUBLIC TESSERA_HAVE_VULKAN=1)
else()
  message(STATUS "tessera: Vulkan backend off (no Vulkan headers or shaderc_combined found, or TESSERA_VULKAN=OFF)")
endif()
