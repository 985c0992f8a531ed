# Every ```cpp block of the README and the newcomer docs is compiled and run (tools/doc_blocks): the
# blocks are extracted at configure time (a page's edit re-runs it), built into one program, and each
# block is a ctest of its own named after its file and line. The program is built by the test
# docs.blocks.build, so a block that stops compiling fails that test (and with it every block's).
set(TESSERA_DOC_PAGES README.md docs/getting-started.md docs/for-pytorch-users.md)
set(doc_blocks_dir ${CMAKE_BINARY_DIR}/doc_pages)  # not doc_blocks: that is the program
set(doc_page_paths "")
foreach(page ${TESSERA_DOC_PAGES})
  list(APPEND doc_page_paths ${PROJECT_SOURCE_DIR}/${page})
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${doc_page_paths}
                                                               ${PROJECT_SOURCE_DIR}/tools/doc_blocks/extract.py)
execute_process(
  COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tools/doc_blocks/extract.py --out ${doc_blocks_dir}/src
          --root ${PROJECT_SOURCE_DIR} ${doc_page_paths}
  OUTPUT_VARIABLE doc_block_names RESULT_VARIABLE doc_blocks_status)
if(NOT doc_blocks_status EQUAL 0)
  message(FATAL_ERROR "tools/doc_blocks/extract.py failed on the documentation pages")
endif()
string(STRIP "${doc_block_names}" doc_block_names)
string(REPLACE "\n" ";" doc_block_names "${doc_block_names}")

set(doc_block_sources ${PROJECT_SOURCE_DIR}/tools/doc_blocks/main.cpp)
foreach(page ${TESSERA_DOC_PAGES})
  string(REGEX REPLACE "[^A-Za-z0-9]" "_" stem ${page})
  list(APPEND doc_block_sources ${doc_blocks_dir}/src/${stem}.cpp)
endforeach()
add_executable(doc_blocks EXCLUDE_FROM_ALL ${doc_block_sources})
target_include_directories(doc_blocks PRIVATE ${PROJECT_SOURCE_DIR}/tools)
target_link_libraries(doc_blocks PRIVATE tessera tessera_warnings)

add_test(NAME docs.blocks.build COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target doc_blocks)
set_tests_properties(docs.blocks.build PROPERTIES FIXTURES_SETUP doc_blocks TIMEOUT 900)
file(MAKE_DIRECTORY ${doc_blocks_dir}/run)
foreach(name ${doc_block_names})
  add_test(NAME docs.${name} COMMAND doc_blocks ${name} WORKING_DIRECTORY ${doc_blocks_dir}/run)
  set_tests_properties(docs.${name} PROPERTIES FIXTURES_REQUIRED doc_blocks TIMEOUT 300)
endforeach()
