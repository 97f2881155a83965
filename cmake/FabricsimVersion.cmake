# Generates fabricsim/util/version_info.hpp with the project version and the
# git SHA of the source tree (or "unknown" outside a git checkout).  The SHA is
# refreshed on every build by a small script, so it never goes stale.
set(FABRICSIM_VERSION_DIR "${PROJECT_BINARY_DIR}/generated")
# How the program was built, for /meta: timings depend on it, results do not.
set(_flavour "${CMAKE_BUILD_TYPE}")
if(FABRICSIM_PGO STREQUAL "USE")
  string(APPEND _flavour ", PGO")
elseif(FABRICSIM_PGO STREQUAL "GENERATE")
  string(APPEND _flavour ", PGO-instrumented")
endif()
if(FABRICSIM_SANITIZE)
  string(APPEND _flavour ", sanitizers")
endif()
add_custom_target(fabricsim_version_header
  COMMAND ${CMAKE_COMMAND}
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
    -DOUTPUT=${FABRICSIM_VERSION_DIR}/fabricsim/version_info.hpp
    -DVERSION=${PROJECT_VERSION}
    "-DFLAVOUR=${_flavour}"
    -P ${PROJECT_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${FABRICSIM_VERSION_DIR}/fabricsim/version_info.hpp
  COMMENT "Recording version and git SHA")
