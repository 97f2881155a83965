# Profile-guided optimization (GCC), in two stages that scripts/build_pgo.sh
# runs in one build directory:
#   FABRICSIM_PGO=GENERATE  instrumented build; its runs write profiles into
#                           FABRICSIM_PGO_DIR
#   FABRICSIM_PGO=USE       optimized with those profiles
# The profiles are named after the object files, so both stages must use the
# same build directory.  The flags are set for the whole project (not per
# target as elsewhere) because every object linked into the instrumented
# program needs them, the test programs included.  Floating-point semantics
# are untouched: a PGO build gives bit-identical results (checked by the
# pgo_build test).
set(FABRICSIM_PGO OFF CACHE STRING "Profile-guided optimization stage: OFF, GENERATE or USE (see scripts/build_pgo.sh)")
set_property(CACHE FABRICSIM_PGO PROPERTY STRINGS OFF GENERATE USE)
set(FABRICSIM_PGO_DIR "${CMAKE_BINARY_DIR}/pgo-profile" CACHE PATH "Where FABRICSIM_PGO=GENERATE runs write profiles")

if(FABRICSIM_PGO STREQUAL "OFF")
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  message(FATAL_ERROR "FABRICSIM_PGO: profile-guided builds are set up for GCC only")
endif()
if(FABRICSIM_PGO STREQUAL "GENERATE")
  # Atomic counter updates: the routing tables are built by OpenMP threads.
  add_compile_options(-fprofile-generate -fprofile-update=prefer-atomic "-fprofile-dir=${FABRICSIM_PGO_DIR}")
  add_link_options(-fprofile-generate)
elseif(FABRICSIM_PGO STREQUAL "USE")
  # Partial training: code the training runs did not reach is optimized as
  # without profiles rather than for size.  Correction: counters of
  # OpenMP-parallel code may be slightly inconsistent.
  add_compile_options(-fprofile-use -fprofile-partial-training -fprofile-correction -Wno-missing-profile
                      "-fprofile-dir=${FABRICSIM_PGO_DIR}")
else()
  message(FATAL_ERROR "FABRICSIM_PGO: OFF, GENERATE or USE, not '${FABRICSIM_PGO}'")
endif()
message(STATUS "fabricsim: profile-guided optimization, stage ${FABRICSIM_PGO} (${FABRICSIM_PGO_DIR})")
