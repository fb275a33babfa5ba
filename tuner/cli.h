// The tunedb CLI entry point, callable in-process: parses `args` (without
// the program name), runs one subcommand against the daemon, writes to the
// streams in `io`, and returns the exit code (exit_codes.h).
//
// Thread safety: reentrant, but SIGINT handling (io.handle_signals) is
// process-wide.
#ifndef TUNEDB_TUNER_CLI_H_
#define TUNEDB_TUNER_CLI_H_

#include <string>
#include <vector>

#include "tuner/cli_context.h"

namespace tunedb::tuner {

int RunCli(const std::vector<std::string>& args, const CliIo& io);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_CLI_H_
