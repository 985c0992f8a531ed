# The StableHLO exporter's tests run the tessera CLI (tests/stablehlo/test_cli.cpp), so the test binary
# depends on it. Included from the top-level CMakeLists.txt after the test targets are defined.
if(TARGET test_stablehlo AND TARGET tessera_cli)
  add_dependencies(test_stablehlo tessera_cli)
endif()
