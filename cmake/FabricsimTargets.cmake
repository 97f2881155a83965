# Warnings and sanitizers as INTERFACE targets; one library per layer.
add_library(fabricsim_warnings INTERFACE)
target_compile_options(fabricsim_warnings INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wconversion -Wno-sign-conversion>)
if(FABRICSIM_WERROR)
  # Only the project's targets link fabricsim_warnings; third-party headers
  # come through imported targets, whose include directories are SYSTEM.
  target_compile_options(fabricsim_warnings INTERFACE $<$<CXX_COMPILER_ID:GNU,Clang>:-Werror>)
endif()

add_library(fabricsim_sanitizers INTERFACE)
if(FABRICSIM_SANITIZE)
  # -fno-sanitize-recover: undefined behaviour aborts the program (and so
  # fails its test) instead of printing a report and going on.
  target_compile_options(fabricsim_sanitizers INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=all
                         -fno-omit-frame-pointer)
  target_link_options(fabricsim_sanitizers INTERFACE -fsanitize=address,undefined -fno-sanitize-recover=all)
endif()

# fabricsim_add_layer(NAME SOURCES ... DEPENDS ...)
# Creates fabricsim_<NAME> (alias fabricsim::<NAME>) with include/ as public
# include directory and src/ as private one.
function(fabricsim_add_layer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;PRIVATE_DEPENDS" ${ARGN})
  add_library(fabricsim_${name} STATIC ${ARG_SOURCES})
  add_library(fabricsim::${name} ALIAS fabricsim_${name})
  target_include_directories(fabricsim_${name}
    PUBLIC "${PROJECT_SOURCE_DIR}/include"
    PRIVATE "${PROJECT_SOURCE_DIR}/src")
  target_link_libraries(fabricsim_${name} PUBLIC ${ARG_DEPENDS} PRIVATE ${ARG_PRIVATE_DEPENDS} fabricsim_warnings fabricsim_sanitizers)
endfunction()

# fabricsim_add_gtest(NAME SOURCES ... DEPENDS ...): one GoogleTest program,
# its tests discovered into ctest with the label "unit".
function(fabricsim_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPENDS} GTest::gtest GTest::gtest_main fabricsim_warnings fabricsim_sanitizers)
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/src" "${PROJECT_SOURCE_DIR}/tests")
  set(_labels unit ${ARG_LABELS})
  gtest_discover_tests(${name} PROPERTIES LABELS "${_labels}" DISCOVERY_TIMEOUT 60)
endfunction()

# fabricsim_add_mpi_test(NAME RANKS n COMMAND ...): registers NAME_npN running
# COMMAND under MPICH's mpiexec with N ranks (oversubscription is allowed by
# MPICH's hydra launcher by default).
function(fabricsim_add_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "RANKS;COMMAND;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  foreach(n ${ARG_RANKS})
    add_test(NAME ${name}_np${n}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} ${ARG_COMMAND})
    set_tests_properties(${name}_np${n} PROPERTIES LABELS "mpi;${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
      PROCESSORS ${n} ENVIRONMENT "OMP_NUM_THREADS=1")
  endforeach()
endfunction()
include(GoogleTest)
