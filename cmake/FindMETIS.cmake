# FindMETIS: locate the METIS graph partitioner (Debian: libmetis-dev).
# Defines METIS_FOUND, METIS_INCLUDE_DIR, METIS_LIBRARY, METIS_VERSION and the
# imported target METIS::METIS.
find_path(METIS_INCLUDE_DIR NAMES metis.h PATH_SUFFIXES metis)
find_library(METIS_LIBRARY NAMES metis)
if(METIS_INCLUDE_DIR AND EXISTS "${METIS_INCLUDE_DIR}/metis.h")
  file(STRINGS "${METIS_INCLUDE_DIR}/metis.h" _metis_ver REGEX "^#define METIS_VER_(MAJOR|MINOR|SUBMINOR) ")
  foreach(_part MAJOR MINOR SUBMINOR)
    string(REGEX REPLACE ".*METIS_VER_${_part} +([0-9]+).*" "\\1" _v_${_part} "${_metis_ver}")
  endforeach()
  set(METIS_VERSION "${_v_MAJOR}.${_v_MINOR}.${_v_SUBMINOR}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(METIS REQUIRED_VARS METIS_LIBRARY METIS_INCLUDE_DIR VERSION_VAR METIS_VERSION)
if(METIS_FOUND AND NOT TARGET METIS::METIS)
  add_library(METIS::METIS UNKNOWN IMPORTED)
  set_target_properties(METIS::METIS PROPERTIES
    IMPORTED_LOCATION "${METIS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${METIS_INCLUDE_DIR}")
endif()
mark_as_advanced(METIS_INCLUDE_DIR METIS_LIBRARY)
