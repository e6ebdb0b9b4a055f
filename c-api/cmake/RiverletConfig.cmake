# CMake package config of the Riverlet C library.
#
#   find_package(Riverlet REQUIRED)            # with CMAKE_PREFIX_PATH=<install prefix>
#   target_link_libraries(app PRIVATE Riverlet::riverlet)          # shared library
#   target_link_libraries(app PRIVATE Riverlet::riverlet_static)   # static library
#
# Both targets carry the include directory of riverlet.h and of riverlet.hpp, the header-only
# C++17 API over it (#include <riverlet.hpp>; set CMAKE_CXX_STANDARD 17 or later).
#
# Installed by c-api/install.sh into <prefix>/lib/cmake/Riverlet/. In a source tree, set
# Riverlet_DIR=<repo>/c-api/cmake and RIVERLET_LIBRARY_DIR=<repo>/target/<profile>.
get_filename_component(_riverlet_here "${CMAKE_CURRENT_LIST_FILE}" DIRECTORY)

if(EXISTS "${_riverlet_here}/../../../include/riverlet.h")
  # installed layout: <prefix>/lib/cmake/Riverlet
  get_filename_component(_riverlet_prefix "${_riverlet_here}/../../.." ABSOLUTE)
  set(_riverlet_include "${_riverlet_prefix}/include")
  set(_riverlet_libdir "${_riverlet_prefix}/lib")
else()
  # source layout: <repo>/c-api/cmake
  get_filename_component(_riverlet_include "${_riverlet_here}/../include" ABSOLUTE)
  if(DEFINED RIVERLET_LIBRARY_DIR)
    set(_riverlet_libdir "${RIVERLET_LIBRARY_DIR}")
  else()
    get_filename_component(_riverlet_libdir "${_riverlet_here}/../../target/release" ABSOLUTE)
  endif()
endif()

find_library(RIVERLET_SHARED_LIBRARY NAMES riverlet PATHS "${_riverlet_libdir}" NO_DEFAULT_PATH)
find_library(RIVERLET_STATIC_LIBRARY NAMES libriverlet.a PATHS "${_riverlet_libdir}" NO_DEFAULT_PATH)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Riverlet
  REQUIRED_VARS RIVERLET_SHARED_LIBRARY _riverlet_include)

if(Riverlet_FOUND AND NOT TARGET Riverlet::riverlet)
  add_library(Riverlet::riverlet SHARED IMPORTED)
  set_target_properties(Riverlet::riverlet PROPERTIES
    IMPORTED_LOCATION "${RIVERLET_SHARED_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${_riverlet_include}")
  if(RIVERLET_STATIC_LIBRARY)
    find_package(Threads REQUIRED)
    add_library(Riverlet::riverlet_static STATIC IMPORTED)
    set_target_properties(Riverlet::riverlet_static PROPERTIES
      IMPORTED_LOCATION "${RIVERLET_STATIC_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${_riverlet_include}"
      INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
  endif()
endif()
