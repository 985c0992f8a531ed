# The API reference's check: every public declaration has a comment (scripts/api_reference.sh --check).
# Registered when Doxygen is installed (scripts/install_deps.sh installs it).
find_program(TESSERA_DOXYGEN doxygen)
if(TESSERA_DOXYGEN)
  add_test(NAME docs.api_undocumented COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/api_reference.sh --check)
  set_tests_properties(docs.api_undocumented PROPERTIES TIMEOUT 120)
endif()
