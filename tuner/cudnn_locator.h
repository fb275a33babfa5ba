// CudnnLocator: the folder of the cuDNN library a program will load, found
// without the user naming it, so that a daemon `tunedb run` starts for the
// program searches with that same cuDNN (docs/preload.md, "The daemon
// `tunedb run` starts"). The rules, first match wins:
//   1. a Python program (the command is a python interpreter): the lib/
//      folder of the nvidia.cudnn package its interpreter imports (PyTorch's
//      wheels), asked of that interpreter with a short timeout;
//   2. the first LD_LIBRARY_PATH entry holding libcudnn.so*;
//   3. the libcudnn.so* that `ldconfig -p` lists (the newest major version).
// "" when none matches: the daemon then uses the cuDNN its workers load.
//
// Thread safety: the parsing functions are pure; LocateCudnnDir runs
// processes and reads the file system, and may be called from any thread.
#ifndef TUNEDB_TUNER_CUDNN_LOCATOR_H_
#define TUNEDB_TUNER_CUDNN_LOCATOR_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tunedb::tuner {

// Whether `program` (argv[0], a path or a name) is a python interpreter:
// its file name is python, python3 or python3.N (optionally followed by a
// build suffix such as "3.11d"), not a script.
bool IsPythonInterpreter(absl::string_view program);

// The first folder of `ld_library_path` (':'-separated; empty entries
// skipped) for which `has_cudnn` is true; "" if none.
std::string CudnnDirInLibraryPath(
    absl::string_view ld_library_path,
    const std::function<bool(const std::string&)>& has_cudnn);

// The folder of the libcudnn.so.N with the highest N that `ldconfig -p`
// printed in `ldconfig_output` (lines "libcudnn.so.9 (libc6,x86-64) =>
// /usr/lib/.../libcudnn.so.9"); other libraries (libcudnn_ops.so.9, ...) and
// unversioned names are ignored; "" if none is listed.
std::string CudnnDirInLdconfig(absl::string_view ldconfig_output);

// The python snippet that prints the nvidia.cudnn package's lib/ folder.
inline constexpr const char* kPythonCudnnProbe =
    "import nvidia.cudnn, os; "
    "print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))";

// Whether `dir` holds a file named libcudnn.so or libcudnn.so.*.
bool DirHoldsCudnn(const std::string& dir);

// The cuDNN folder for `command` (the program and its arguments) under the
// rules above; the python interpreter is given `timeout_s` seconds.
std::string LocateCudnnDir(const std::vector<std::string>& command,
                           double timeout_s = 5);

// What `argv` prints on stdout (at most 1 MiB) if it exits with 0 within
// `timeout_s` seconds (it is killed after that); "" otherwise. The process
// inherits this one's environment; its stderr is dropped.
std::string OutputOf(const std::vector<std::string>& argv, double timeout_s);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_CUDNN_LOCATOR_H_
