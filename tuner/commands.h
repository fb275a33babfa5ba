// The subcommands of the tunedb CLI. Each Add*Command registers one (or a
// pair of closely related) subcommand(s) on the app; when it runs, it
// stores its exit code in `*exit_code`.
//
// Thread safety: called once while the app is built, on one thread.
#ifndef TUNEDB_TUNER_COMMANDS_H_
#define TUNEDB_TUNER_COMMANDS_H_

#include "CLI/CLI.hpp"
#include "tuner/cli_context.h"

namespace tunedb::cli {

void AddPrewarmCommand(CLI::App& app, CliContext& ctx, int* exit_code);
void AddModelsCommand(CLI::App& app, CliContext& ctx, int* exit_code);
// query and show.
void AddQueryCommands(CLI::App& app, CliContext& ctx, int* exit_code);
// export and import.
void AddTransferCommands(CLI::App& app, CliContext& ctx, int* exit_code);
// stats, devices, invalidate.
void AddAdminCommands(CLI::App& app, CliContext& ctx, int* exit_code);
// doctor and repair.
void AddDoctorCommands(CLI::App& app, CliContext& ctx, int* exit_code);
// tune and lookup.
void AddKeyCommands(CLI::App& app, CliContext& ctx, int* exit_code);

}  // namespace tunedb::cli

#endif  // TUNEDB_TUNER_COMMANDS_H_
