// ProgressBar: progress of long work on stderr.
//
// On a terminal it redraws one line in place ("\r"): a bar, done/total,
// rate, ETA and counters. When stderr is not a terminal (a log file, CI) it
// prints a plain line at most every `interval` instead, and always a final
// line, so logs stay readable.
//
// Work whose last part has no count (the daemon committing an import after
// the last line was sent) is shown with StartWaiting: the line then names
// what is awaited and how long it has taken so far, instead of a bar at
// 100 % that does not move.
//
// Thread safety: not thread-safe; call from one thread.
#ifndef TUNEDB_TUNER_PROGRESS_BAR_H_
#define TUNEDB_TUNER_PROGRESS_BAR_H_

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace tunedb::tuner {

class ProgressBar {
 public:
  ProgressBar(std::ostream& out, bool tty, std::string label, int64_t total,
              std::chrono::milliseconds interval = std::chrono::seconds(10));

  // `done` of `total` finished; `detail` is appended (e.g. "12 searched,
  // 3 hits"). Redraws at most every 100 ms on a terminal.
  void Update(int64_t done, const std::string& detail = "");
  // Prints the final state and ends the line.
  void Finish(const std::string& detail = "");
  // Disables all output.
  void Silence() { silent_ = true; }
  // Ends the counted part (its line is kept) and waits: from now on the line
  // is "`what`... <seconds since this call>" (e.g. "committing 1000 records").
  // Update() redraws it; Finish() ends it.
  void StartWaiting(const std::string& what);

  // The line Update would draw, without "\r" (tests).
  std::string Line(int64_t done, const std::string& detail) const;

 private:
  using Clock = std::chrono::steady_clock;

  std::ostream& out_;
  const bool tty_;
  std::string label_;
  const int64_t total_;
  const std::chrono::milliseconds interval_;
  const Clock::time_point start_;
  Clock::time_point last_draw_;
  int64_t done_ = 0;
  bool drawn_ = false;
  bool finished_ = false;
  bool silent_ = false;
  bool waiting_ = false;
  Clock::time_point wait_start_;
};

// "1m05s", "3.2s", "2h03m".
std::string FormatSeconds(double seconds);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_PROGRESS_BAR_H_
