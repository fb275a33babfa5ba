// The `tunedb` command-line tool; see docs/cli.md.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "tuner/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  tunedb::tuner::CliIo io;
  io.in = &std::cin;
  io.out = &std::cout;
  io.err = &std::cerr;
  io.stdin_is_tty = isatty(STDIN_FILENO) == 1;
  io.stderr_is_tty = isatty(STDERR_FILENO) == 1;
  io.handle_signals = true;
  const int code = tunedb::tuner::RunCli(args, io);
  std::cout.flush();
  return code;
}
