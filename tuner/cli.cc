#include "tuner/cli.h"

#include <algorithm>
#include <ostream>

#include "CLI/CLI.hpp"
#include "tunedb/version.h"
#include "tuner/commands.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

// The first argument that is not one of the app's own options or an option's
// value: where the subcommand's name must stand. "" if there is none.
std::string FirstPositional(CLI::App& app,
                            const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return "";
    if (a.empty() || a[0] != '-') return a;
    if (a.find('=') != std::string::npos) continue;
    const CLI::Option* option = app.get_option_no_throw(a);
    if (option != nullptr && option->get_items_expected_min() > 0) ++i;
  }
  return "";
}

// The flags every subcommand shares, into `global`.
void AddGlobalOptions(CLI::App& app, GlobalOptions& global) {
  app.add_option("--address", global.address,
                 "Daemon address: unix:/path or host:port")
      ->envname("TUNEDB_ADDRESS")
      ->capture_default_str();
  // TLS to a daemon on TCP: each flag also read from its variable.
  struct TlsFlag {
    const char* flag;
    std::string* value;
    const char* env;
    const char* help;
  };
  for (const TlsFlag& f :
       {TlsFlag{"--tls-ca", &global.tls.ca_file, "TUNEDB_TLS_CA",
                "PEM CA of the daemon's TLS certificate (TCP addresses)"},
        TlsFlag{"--tls-cert", &global.tls.cert_file, "TUNEDB_TLS_CERT",
                "PEM client certificate, for a daemon that requires one"},
        TlsFlag{"--tls-key", &global.tls.key_file, "TUNEDB_TLS_KEY",
                "PEM private key of --tls-cert"},
        TlsFlag{"--tls-server-name", &global.tls.server_name,
                "TUNEDB_TLS_SERVER_NAME",
                "Name in the daemon's certificate, if not the address's "
                "host"}}) {
    app.add_option(f.flag, *f.value, f.help)->envname(f.env);
  }
  app.add_option("--timeout", global.timeout_s,
                 "Seconds to wait for the daemon per request")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--json", global.json, "Machine-readable JSON on stdout");
  app.set_version_flag("--version",
                       std::string("tunedb ") + TUNEDB_VERSION_STRING);
}

// Parses `args` (which runs the subcommand's callback); the exit code of a
// parse that ends in help, the version or a usage error, or -1 if the
// subcommand ran.
int Parse(CLI::App& app, const std::vector<std::string>& args,
          const CliIo& io) {
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
  return -1;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, const CliIo& io) {
  CliContext ctx(io);
  CLI::App app(
      "tunedb: inspect and fill the tunedb database of cuDNN convolution "
      "searches.\nTalks to the tunedbd daemon over gRPC.",
      "tunedb");
  app.footer(kExitCodeHelp);
  app.require_subcommand(1);
  app.fallthrough();  // global flags may also follow the subcommand
  AddGlobalOptions(app, ctx.options());

  int exit_code = kExitOk;
  AddPrewarmCommand(app, ctx, &exit_code);
  AddModelsCommand(app, ctx, &exit_code);
  AddQueryCommands(app, ctx, &exit_code);
  AddTransferCommands(app, ctx, &exit_code);
  AddAdminCommands(app, ctx, &exit_code);
  AddDoctorCommands(app, ctx, &exit_code);
  AddKeyCommands(app, ctx, &exit_code);
  AddRunCommand(app, ctx, &exit_code);
  AddPinCommands(app, ctx, &exit_code);
  AddDiffCommand(app, ctx, &exit_code);
  AddRevalidateCommand(app, ctx, &exit_code);
  AddCoverageCommand(app, ctx, &exit_code);
  AddReportCommand(app, ctx, &exit_code);

  // Before parsing: CLI11 would answer `tunedb nosuchcmd --help` with the
  // top-level help.
  const std::string first = FirstPositional(app, args);
  const auto named = [&first](const CLI::App* sub) {
    return sub->check_name(first);
  };
  if (!first.empty() && app.get_subcommands(named).empty()) {
    *io.err << "tunedb: error: unknown subcommand '" << first
            << "' (see tunedb --help)\n";
    return kExitUsage;
  }
  const int parse_code = Parse(app, args, io);
  return parse_code >= 0 ? parse_code : exit_code;
}

}  // namespace tunedb::tuner
