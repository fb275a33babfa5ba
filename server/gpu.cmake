# GPU search: the worker protocol, WorkerFinder (always built; it supervises
# tunedb-worker processes), the tunedb-worker program, and — when CUDA and
# cuDNN are found — the in-process cuDNN finder the worker runs.

# Private worker protocol (server/worker.proto).
set(_worker_proto ${CMAKE_CURRENT_SOURCE_DIR}/worker.proto)
set(_worker_gen ${CMAKE_CURRENT_BINARY_DIR}/gen)
file(MAKE_DIRECTORY ${_worker_gen}/server)
add_custom_command(
  OUTPUT ${_worker_gen}/server/worker.pb.cc ${_worker_gen}/server/worker.pb.h
  COMMAND protobuf::protoc
  ARGS --proto_path=${PROJECT_SOURCE_DIR}
       --proto_path=${PROJECT_SOURCE_DIR}/proto --cpp_out=${_worker_gen}
       ${_worker_proto}
  DEPENDS ${_worker_proto}
  COMMENT "protoc server/worker.proto")

add_library(tunedb_worker_finder STATIC
  worker_finder.cc worker_finder.h
  worker_protocol.cc worker_protocol.h
  ${_worker_gen}/server/worker.pb.cc ${_worker_gen}/server/worker.pb.h)
target_include_directories(tunedb_worker_finder PUBLIC
  ${PROJECT_SOURCE_DIR} ${_worker_gen})
target_link_libraries(tunedb_worker_finder PUBLIC
  tunedb_key tunedb_proto_convert tunedb_internal protobuf::libprotobuf absl::status
  absl::statusor absl::strings absl::time absl::synchronization
  Threads::Threads)
tunedb_target(tunedb_worker_finder)

if(TUNEDB_HAVE_CUDNN)
  add_library(tunedb_finder_cudnn STATIC
    cudnn_status.cc cudnn_status.h
    cudnn_handles.cc cudnn_handles.h
    cudnn_device.cc cudnn_device.h
    cudnn_conv.cc cudnn_conv.h
    cudnn_finder.cc cudnn_finder.h)
  target_include_directories(tunedb_finder_cudnn PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(tunedb_finder_cudnn PUBLIC
    tunedb_key tunedb_internal tunedb_cudnn absl::status absl::statusor
    absl::strings absl::str_format absl::time)
  tunedb_target(tunedb_finder_cudnn)
  # The legacy convolution API (Find*Ex, cudnnConvolution*) is deprecated in
  # cuDNN 9 but still the one that measures every algorithm.
  target_compile_options(tunedb_finder_cudnn PRIVATE
    -Wno-deprecated-declarations)
  target_compile_definitions(tunedb_finder_cudnn PUBLIC TUNEDB_HAVE_CUDNN=1)
endif()

add_executable(tunedb-worker worker_main.cc)
target_link_libraries(tunedb-worker PRIVATE tunedb_worker_finder
  tunedb_finder_sim)
if(TUNEDB_HAVE_CUDNN)
  target_link_libraries(tunedb-worker PRIVATE tunedb_finder_cudnn)
endif()
tunedb_target(tunedb-worker)
install(TARGETS tunedb-worker RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
