#include "tuner/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace tunedb::tuner {
namespace {

std::atomic<bool> g_interrupted{false};
struct sigaction g_previous;

void OnSigint(int) {
  if (g_interrupted.exchange(true)) _exit(130);
}

}  // namespace

void RequestInterrupt() { g_interrupted.store(true); }
bool InterruptRequested() { return g_interrupted.load(); }
void ClearInterrupt() { g_interrupted.store(false); }

ScopedSigintHandler::ScopedSigintHandler(bool enabled) : enabled_(enabled) {
  if (!enabled_) return;
  struct sigaction action = {};
  action.sa_handler = &OnSigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &g_previous);
}

ScopedSigintHandler::~ScopedSigintHandler() {
  if (enabled_) sigaction(SIGINT, &g_previous, nullptr);
}

}  // namespace tunedb::tuner
