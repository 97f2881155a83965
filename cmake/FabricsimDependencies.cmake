# All dependencies come from Debian packages and are used as imported targets.
#
# MPICH is chosen explicitly, even when Open MPI is installed as well (and may
# own the /usr/bin/mpicxx and /usr/bin/mpiexec alternatives): we point FindMPI
# at the MPICH compiler wrappers and launcher, and we take HDF5 from the
# MPICH-flavoured pkg-config module.  A configure-time check refuses an HDF5
# that is not built for parallel I/O or an MPI that is not MPICH.
# See docs/install.md.

set(FABRICSIM_MPI_FLAVOUR "mpich" CACHE STRING "MPI implementation to build against (only mpich is supported)")

foreach(_lang C CXX)
  string(TOLOWER "${_lang}" _l)
  if(_lang STREQUAL "C")
    set(_wrapper mpicc.mpich)
  else()
    set(_wrapper mpicxx.mpich)
  endif()
  if(NOT MPI_${_lang}_COMPILER)
    find_program(_fabricsim_mpi_${_l} NAMES ${_wrapper})
    if(_fabricsim_mpi_${_l})
      set(MPI_${_lang}_COMPILER "${_fabricsim_mpi_${_l}}" CACHE FILEPATH "MPICH ${_lang} wrapper")
    endif()
  endif()
endforeach()
if(NOT MPIEXEC_EXECUTABLE)
  find_program(_fabricsim_mpiexec NAMES mpiexec.mpich mpiexec.hydra mpiexec)
  if(_fabricsim_mpiexec)
    set(MPIEXEC_EXECUTABLE "${_fabricsim_mpiexec}" CACHE FILEPATH "MPICH launcher")
  endif()
endif()
find_package(MPI 3.0 REQUIRED COMPONENTS C CXX)

# Check that the MPI we compile against really is MPICH.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_CXX)
check_cxx_source_compiles([[
#include <mpi.h>
#ifndef MPICH_VERSION
#error not MPICH
#endif
int main() { return 0; }
]] FABRICSIM_MPI_IS_MPICH)
unset(CMAKE_REQUIRED_LIBRARIES)
if(NOT FABRICSIM_MPI_IS_MPICH)
  message(FATAL_ERROR "fabricsim: the MPI found (${MPI_CXX_COMPILER}) is not MPICH. "
    "Install 'mpich libmpich-dev' or pass -DMPI_CXX_COMPILER=/usr/bin/mpicxx.mpich")
endif()

find_package(PkgConfig REQUIRED)
pkg_check_modules(HDF5_MPICH REQUIRED IMPORTED_TARGET hdf5-mpich)
# COIN-OR CBC (coinor-libcbc-dev) for the ctrl layer's ILP.
pkg_check_modules(CBC REQUIRED IMPORTED_TARGET cbc)
add_library(fabricsim_hdf5 INTERFACE)
add_library(fabricsim::hdf5 ALIAS fabricsim_hdf5)
target_link_libraries(fabricsim_hdf5 INTERFACE PkgConfig::HDF5_MPICH MPI::MPI_C)
set(CMAKE_REQUIRED_LIBRARIES PkgConfig::HDF5_MPICH MPI::MPI_C)
check_cxx_source_compiles([[
#include <hdf5.h>
#ifndef H5_HAVE_PARALLEL
#error serial HDF5
#endif
int main() { return 0; }
]] FABRICSIM_HDF5_IS_PARALLEL)
unset(CMAKE_REQUIRED_LIBRARIES)
if(NOT FABRICSIM_HDF5_IS_PARALLEL)
  message(FATAL_ERROR "fabricsim: HDF5 from pkg-config module hdf5-mpich is not parallel; install libhdf5-mpich-dev")
endif()

find_package(METIS REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(tomlplusplus 3 REQUIRED)
find_package(CLI11 2 REQUIRED)
find_package(fmt 9 REQUIRED)
find_package(Threads REQUIRED)
# Chakra execution traces (libprotobuf-dev, protobuf-compiler).
find_package(Protobuf 3 REQUIRED)

if(FABRICSIM_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(FABRICSIM_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# Tools used by tests.
find_program(FABRICSIM_H5DUMP h5dump)
find_program(FABRICSIM_H5DIFF h5diff)
# Debian's numpy/h5py/matplotlib belong to /usr/bin/python3, which may not be the
# python3 first on PATH (pyenv and similar).
find_program(FABRICSIM_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT FABRICSIM_PYTHON)
  find_program(FABRICSIM_PYTHON python3)
endif()
