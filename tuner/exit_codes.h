// Exit codes of the tunedb CLI (documented in docs/cli.md and `tunedb --help`).
//
// Thread safety: constants only.
#ifndef TUNEDB_TUNER_EXIT_CODES_H_
#define TUNEDB_TUNER_EXIT_CODES_H_

#include "common/pin_file.h"

namespace tunedb::tuner {

enum ExitCode : int {
  kExitOk = 0,             // success
  kExitError = 1,          // the daemon or the database reported an error;
                           // doctor: a check failed
  kExitUsage = 2,          // bad flags or arguments; confirmation refused
  kExitUnreachable = 3,    // the daemon could not be reached
  kExitBadInput = 4,       // a shape file or import file has bad lines, or
                           // an import file is over the wire limits
  kExitPartial = 5,        // partial: prewarm: some problems failed, the rest
                           // are stored; query, export --skip-bad: records
                           // that cannot be read were skipped (on stderr)
  kExitNotFound = 6,       // lookup/show: nothing stored for the key
  kExitUnreadable = 7,     // a record the command needs cannot be read (a
                           // damaged database: see doctor and repair);
                           // export: nothing was written
  kExitNotWritten = 8,     // pin make, pin seal: the pin could not be
                           // written (a full disk, no such folder, a device)
  kExitGaps = 10,          // coverage: some problems have no tuned record
  kExitPinRefused = kPinRefusedExitCode,  // 78: run --pin, pin show: the
                           // pin cannot be read (an edited answer included;
                           // pin seal: but for its digests), or (the program
                           // stopped by the preload) was made for another
                           // device
  kExitInterrupted = 130,  // interrupted (SIGINT); rerun to resume
};

// The text block of `tunedb --help` describing the codes.
inline constexpr const char* kExitCodeHelp =
    "Exit codes:\n"
    "  0    success\n"
    "  1    error reported by the daemon or database (doctor: a check failed)\n"
    "  2    usage error (bad flag or argument; confirmation refused)\n"
    "  3    daemon unreachable\n"
    "  4    bad input file (shape file or import rejects, or an import file\n"
    "       over the line limits; nothing imported)\n"
    "  5    partial (prewarm: some problems failed; query, export --skip-bad:\n"
    "       unreadable records skipped and listed on stderr)\n"
    "  6    not found (lookup, show)\n"
    "  7    a needed record cannot be read (damaged database; export wrote\n"
    "       nothing): see `tunedb doctor` and `tunedb repair`\n"
    "  8    pin make, pin seal: the pin could not be written (full disk, no\n"
    "       such folder, not a regular file); the reason is on stderr\n"
    "  10   coverage: some problems have no tuned record (gaps listed)\n"
    "  78   a pin was refused (run --pin, pin show, pin seal: it cannot be\n"
    "       read or an answer was edited, or it was made for another GPU,\n"
    "       cuDNN, CUDA runtime or driver)\n"
    "  130  interrupted (prewarm: rerun to resume)\n";

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_EXIT_CODES_H_
