# The tunedb command-line tool: tunedb_cli_lib (every subcommand, callable
# in-process by tests) and the `tunedb` executable.
add_library(tunedb_cli_lib STATIC
  net_builder.cc net_builder.h
  model_generators.h
  models_resnet.cc models_vgg_mobile.cc models_unet.cc
  models.cc models.h
  training_problems.cc training_problems.h
  shape_file.cc shape_file.h
  table.cc table.h
  progress_bar.cc progress_bar.h
  interrupt.cc interrupt.h
  format.cc format.h
  filter_flags.cc filter_flags.h
  cli_context.cc cli_context.h
  record_stream.cc record_stream.h
  exit_codes.h
  prewarm_runner.cc prewarm_runner.h
  cmd_prewarm.cc
  cmd_models.cc
  cmd_query.cc
  cmd_transfer.cc
  cmd_admin.cc
  cmd_doctor.cc
  cmd_key.cc
  commands.h
  cli.cc cli.h)
target_include_directories(tunedb_cli_lib PUBLIC ${PROJECT_SOURCE_DIR})
target_compile_definitions(tunedb_cli_lib PRIVATE
  TUNEDB_VERSION="${PROJECT_VERSION}")
target_link_libraries(tunedb_cli_lib PUBLIC
  tunedb_proto_convert tunedb_key tunedb_internal CLI11::CLI11
  nlohmann_json::nlohmann_json gRPC::grpc++ SQLite::SQLite3
  absl::strings absl::str_format absl::time absl::status absl::statusor
  Threads::Threads)
tunedb_target(tunedb_cli_lib)

add_executable(tunedb_cli main.cc)
set_target_properties(tunedb_cli PROPERTIES OUTPUT_NAME tunedb)
target_link_libraries(tunedb_cli PRIVATE tunedb_cli_lib)
tunedb_target(tunedb_cli)
install(TARGETS tunedb_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
