#include "tuner/progress_bar.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tunedb::tuner {

std::string FormatSeconds(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 60) return absl::StrFormat("%.1fs", s);
  const int64_t total = static_cast<int64_t>(s + 0.5);
  if (total < 3600) return absl::StrFormat("%dm%02ds", total / 60, total % 60);
  return absl::StrFormat("%dh%02dm", total / 3600, (total % 3600) / 60);
}

ProgressBar::ProgressBar(std::ostream& out, bool tty, std::string label,
                         int64_t total, std::chrono::milliseconds interval)
    : out_(out),
      tty_(tty),
      label_(std::move(label)),
      total_(total),
      interval_(interval),
      start_(Clock::now()),
      last_draw_(start_) {}

std::string ProgressBar::Line(int64_t done, const std::string& detail) const {
  if (waiting_) {
    const double waited =
        std::chrono::duration<double>(Clock::now() - wait_start_).count();
    std::string line = absl::StrCat(label_, "...  ", FormatSeconds(waited));
    if (!detail.empty()) absl::StrAppend(&line, "  ", detail);
    return line;
  }
  const double elapsed =
      std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0;
  const double eta = rate > 0 ? (total_ - done) / rate : NAN;
  const double frac = total_ > 0 ? static_cast<double>(done) / total_ : 1.0;
  std::string line = label_ + " ";
  if (tty_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(frac * kWidth);
    line += "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') +
            "] ";
  }
  line += absl::StrFormat("%d/%d (%.0f%%)  %.1f/s  elapsed %s  ETA %s", done,
                          total_, frac * 100, rate, FormatSeconds(elapsed),
                          done >= total_ ? "0s" : FormatSeconds(eta));
  if (!detail.empty()) line += "  " + detail;
  return line;
}

void ProgressBar::Update(int64_t done, const std::string& detail) {
  done_ = done;
  if (silent_ || finished_) return;
  const auto now = Clock::now();
  if (tty_) {
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
    out_ << "\r" << Line(done, detail) << "\x1b[K" << std::flush;
  } else {
    if (now - last_draw_ < interval_) return;
    out_ << Line(done, detail) << "\n" << std::flush;
  }
  drawn_ = true;
  last_draw_ = now;
}

void ProgressBar::StartWaiting(const std::string& what) {
  if (!silent_ && !finished_) {
    // The counted part's final line stays.
    if (tty_) {
      out_ << "\r" << Line(done_, "") << "\x1b[K\n";
    } else {
      out_ << Line(done_, "") << "\n";
    }
  }
  label_ = what;
  waiting_ = true;
  wait_start_ = Clock::now();
  drawn_ = false;
  last_draw_ = wait_start_;
  if (!silent_ && !finished_ && tty_) {
    out_ << Line(done_, "") << std::flush;
    drawn_ = true;
  }
}

void ProgressBar::Finish(const std::string& detail) {
  if (silent_ || finished_) return;
  finished_ = true;
  if (tty_) {
    out_ << "\r" << Line(done_, detail) << "\x1b[K\n" << std::flush;
  } else {
    out_ << Line(done_, detail) << "\n" << std::flush;
  }
}

}  // namespace tunedb::tuner
