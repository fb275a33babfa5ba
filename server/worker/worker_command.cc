#include "server/worker/worker_command.h"

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <optional>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tunedb {

std::vector<std::string> WorkerCommand::ToArgs() const {
  std::vector<std::string> args = {absl::StrCat("--finder=", finder),
                                   absl::StrCat("--device=", device),
                                   absl::StrCat("--fd=", fd)};
  if (finder == "simulated") {
    args.push_back(absl::StrCat("--simulated=", simulated));
  }
  return args;
}

absl::StatusOr<WorkerCommand> WorkerCommand::Parse(
    const std::vector<std::string>& args) {
  WorkerCommand command;
  for (const std::string& arg : args) {
    const std::string_view a = arg;
    auto value = [&](std::string_view name) -> std::optional<std::string> {
      if (a.substr(0, name.size()) == name) {
        return std::string(a.substr(name.size()));
      }
      return std::nullopt;
    };
    if (auto v = value("--finder=")) {
      command.finder = *v;
    } else if (auto v = value("--simulated=")) {
      command.simulated = *v;
    } else if (auto v = value("--device=")) {
      if (!absl::SimpleAtoi(*v, &command.device)) {
        return absl::InvalidArgumentError(absl::StrCat("bad --device: ", *v));
      }
    } else if (auto v = value("--fd=")) {
      if (!absl::SimpleAtoi(*v, &command.fd)) {
        return absl::InvalidArgumentError(absl::StrCat("bad --fd: ", *v));
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown argument: ", arg));
    }
  }
  return command;
}

std::string ExecutableDir() {
  char buf[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  return std::filesystem::path(std::string(buf, static_cast<size_t>(n)))
      .parent_path()
      .string();
}

std::string DefaultWorkerPath() { return ExecutableDir() + "/tunedb-worker"; }

}  // namespace tunedb
