# The client library (issue "Client library"), included from
# client/CMakeLists.txt.
#
#   tunedb_client         static library (libtunedb_client.a)
#   tunedb_client_shared  shared library (libtunedb.so)
#
# Both are self-contained: they carry the key/record code, the generated wire
# code and the read side of the daemon's SQLite store (the db_path fallback),
# so an installed copy needs only gRPC, protobuf, abseil and SQLite.
# Installed, `find_package(tunedb)` gives tunedb::client (shared) and
# tunedb::client_static; pkg-config gives tunedb.pc.

set(_client_srcs
  src/answer_cache.cc src/answer_cache.h
  src/client.cc
  src/conv_shape.cc
  src/daemon_link.cc src/daemon_link.h
  src/packed_key.cc src/packed_key.h
  src/striped_counters.h
  src/tunedb_c.cc)
set(_client_public_headers
  include/tunedb/client.h
  include/tunedb/client_options.h
  include/tunedb/conv_shape.h
  include/tunedb/problem.h
  include/tunedb/record.h
  include/tunedb/tunedb_c.h)
if(TUNEDB_HAVE_CUDNN)
  list(APPEND _client_srcs src/cudnn_helpers.cc)
  list(APPEND _client_public_headers include/tunedb/cudnn_helpers.h)
endif()

add_library(tunedb_client_objs OBJECT ${_client_srcs})
target_include_directories(tunedb_client_objs
  PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_link_libraries(tunedb_client_objs
  PUBLIC absl::status absl::statusor absl::time
  PRIVATE tunedb_key tunedb_proto_convert tunedb_store tunedb_internal
          gRPC::grpc++ absl::strings)
if(TUNEDB_HAVE_CUDNN)
  target_link_libraries(tunedb_client_objs PUBLIC tunedb_cudnn)
  target_compile_definitions(tunedb_client_objs PUBLIC TUNEDB_HAVE_CUDNN=1)
endif()
tunedb_target(tunedb_client_objs)

set(_client_objects
  $<TARGET_OBJECTS:tunedb_client_objs>
  $<TARGET_OBJECTS:tunedb_key>
  $<TARGET_OBJECTS:tunedb_proto>
  $<TARGET_OBJECTS:tunedb_proto_convert>
  $<TARGET_OBJECTS:tunedb_store>)

foreach(_lib tunedb_client tunedb_client_shared)
  if(_lib STREQUAL "tunedb_client")
    add_library(${_lib} STATIC ${_client_objects})
  else()
    add_library(${_lib} SHARED ${_client_objects})
    set_target_properties(${_lib} PROPERTIES
      OUTPUT_NAME tunedb
      VERSION ${PROJECT_VERSION}
      SOVERSION ${PROJECT_VERSION_MAJOR})
  endif()
  add_dependencies(${_lib} tunedb_client_objs tunedb_key tunedb_proto
                   tunedb_proto_convert tunedb_store)
  target_include_directories(${_lib} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${_lib}
    PUBLIC absl::status absl::statusor absl::time
    PRIVATE gRPC::grpc++ protobuf::libprotobuf SQLite::SQLite3 absl::strings
            absl::str_format Threads::Threads)
  if(TUNEDB_HAVE_CUDNN)
    target_link_libraries(${_lib} PUBLIC $<BUILD_INTERFACE:tunedb_cudnn>)
    target_compile_definitions(${_lib} PUBLIC TUNEDB_HAVE_CUDNN=1)
  endif()
endforeach()
set_target_properties(tunedb_client PROPERTIES EXPORT_NAME client_static)
set_target_properties(tunedb_client_shared PROPERTIES EXPORT_NAME client)

# --- Install -----------------------------------------------------------------
include(CMakePackageConfigHelpers)
install(TARGETS tunedb_client tunedb_client_shared
  EXPORT tunedbTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${_client_public_headers}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tunedb)
install(EXPORT tunedbTargets
  NAMESPACE tunedb::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tunedb)
configure_package_config_file(
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/tunedbConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tunedbConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tunedb)
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/tunedbConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/tunedbConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/tunedbConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tunedb)
# The .pc file finds the prefix relative to itself (relocatable installs).
file(RELATIVE_PATH TUNEDB_PC_TO_PREFIX
     "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" TUNEDB_PC_TO_PREFIX "${TUNEDB_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/tunedb.pc.in
               ${CMAKE_CURRENT_BINARY_DIR}/tunedb.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/tunedb.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# --- Example -------------------------------------------------------------------
if(EXISTS ${PROJECT_SOURCE_DIR}/examples/CMakeLists.txt)
  add_subdirectory(${PROJECT_SOURCE_DIR}/examples
                   ${PROJECT_BINARY_DIR}/examples)
endif()
