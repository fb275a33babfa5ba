// Interrupt: a process-wide "stop requested" flag set by SIGINT (or by
// tests), polled by long-running subcommands so they can stop sending work,
// collect outstanding answers and print a summary.
//
// Thread safety: all functions are thread-safe; the signal handler only
// stores to a lock-free atomic (async-signal-safe).
#ifndef TUNEDB_TUNER_INTERRUPT_H_
#define TUNEDB_TUNER_INTERRUPT_H_

namespace tunedb::tuner {

void RequestInterrupt();
bool InterruptRequested();
void ClearInterrupt();

// Installs a SIGINT handler that calls RequestInterrupt() while in scope; a
// second SIGINT exits at once with status 130. Restores the previous
// handler on destruction. Does nothing if `enabled` is false.
class ScopedSigintHandler {
 public:
  explicit ScopedSigintHandler(bool enabled);
  ~ScopedSigintHandler();
  ScopedSigintHandler(const ScopedSigintHandler&) = delete;
  ScopedSigintHandler& operator=(const ScopedSigintHandler&) = delete;

 private:
  bool enabled_;
};

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_INTERRUPT_H_
