// The subcommands of the tunedb CLI. Each Add*Command registers one (or a
// pair of closely related) subcommand(s) on the app; when it runs, it
// stores its exit code in `*exit_code`.
//
// Thread safety: called once while the app is built, on one thread.
#ifndef TUNEDB_TUNER_COMMANDS_H_
#define TUNEDB_TUNER_COMMANDS_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "tuner/cli_context.h"

namespace tunedb::tuner {

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
// diff (choices of two cuDNN versions).
void AddDiffCommand(CLI::App& app, CliContext& ctx, int* exit_code);
// revalidate (a new cuDNN version's records from an older one's).
void AddRevalidateCommand(CLI::App& app, CliContext& ctx, int* exit_code);
// pin make and pin show.
void AddPinCommands(CLI::App& app, CliContext& ctx, int* exit_code);
// pin make (defined with prewarm, whose problem flags it takes).
void AddPinMakeCommand(CLI::App& pin, CliContext& ctx, int* exit_code);
// coverage (problems with no tuned record).
void AddCoverageCommand(CLI::App& app, CliContext& ctx, int* exit_code);
// report (one self-contained HTML page about the database).
void AddReportCommand(CLI::App& app, CliContext& ctx, int* exit_code);
// run (a program under libtunedb_preload.so).
void AddRunCommand(CLI::App& app, CliContext& ctx, int* exit_code);
// `args` with "--" put before the program of a `tunedb run` that has none,
// so that the program's own flags are not read as tunedb's.
std::vector<std::string> WithRunSeparator(std::vector<std::string> args);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_COMMANDS_H_
