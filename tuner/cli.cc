#include "tuner/cli.h"

#include <algorithm>
#include <ostream>

#include "CLI/CLI.hpp"
#include "tunedb/version.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"

namespace tunedb::cli {

int RunCli(const std::vector<std::string>& args, const CliIo& io) {
  CliContext ctx(io);
  CLI::App app(
      "tunedb: inspect and fill the tunedb database of cuDNN convolution "
      "searches.\nTalks to the tunedbd daemon over gRPC.",
      "tunedb");
  app.footer(kExitCodeHelp);
  app.require_subcommand(1);
  app.fallthrough();  // global flags may also follow the subcommand
  GlobalOptions& global = ctx.options();
  app.add_option("--address", global.address,
                 "Daemon address: unix:/path or host:port")
      ->envname("TUNEDB_ADDRESS")
      ->capture_default_str();
  app.add_option("--timeout", global.timeout_s,
                 "Seconds to wait for the daemon per request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--json", global.json, "Machine-readable JSON on stdout");
  app.set_version_flag("--version",
                       std::string("tunedb ") + TUNEDB_VERSION_STRING);

  int exit_code = kExitOk;
  AddPrewarmCommand(app, ctx, &exit_code);
  AddModelsCommand(app, ctx, &exit_code);
  AddQueryCommands(app, ctx, &exit_code);
  AddTransferCommands(app, ctx, &exit_code);
  AddAdminCommands(app, ctx, &exit_code);
  AddDoctorCommands(app, ctx, &exit_code);
  AddKeyCommands(app, ctx, &exit_code);
  AddRunCommand(app, ctx, &exit_code);

  const std::vector<std::string> separated = WithRunSeparator(args);
  std::vector<std::string> reversed(separated.rbegin(), separated.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e, *io.out, *io.err);
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    app.exit(e, *io.out, *io.err);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e, *io.out, *io.err);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    app.exit(e, *io.out, *io.err);
    return kExitUsage;
  }
  return exit_code;
}

}  // namespace tunedb::cli
