// How far a long command is, on stderr: on a terminal one line rewritten in place (erased at the
// end), elsewhere (with --progress) plain lines, the first at once and then one every 5 s, so a
// log of a four-hour run stays readable.
#pragma once

#include <chrono>
#include <iostream>
#include <string>

namespace chakrasim::cli {

class ProgressLine {
 public:
  enum class Mode { kOff, kTerminal, kLines };

  // Off under --quiet unless --progress forces it; on a terminal rewritten in place; elsewhere
  // only with --progress.
  static Mode mode_for(bool quiet, bool forced, bool stderr_is_terminal) {
    if (quiet && !forced) return Mode::kOff;
    if (stderr_is_terminal) return Mode::kTerminal;
    return forced ? Mode::kLines : Mode::kOff;
  }

  explicit ProgressLine(Mode mode) : mode_(mode) {}
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool on() const { return mode_ != Mode::kOff; }

  // Shows `text` if the last line is old enough (0.5 s on a terminal, 5 s as plain lines).
  void show(const std::string& text) {
    if (mode_ == Mode::kOff) return;
    const auto now = std::chrono::steady_clock::now();
    const auto every = mode_ == Mode::kTerminal ? std::chrono::milliseconds(500) : std::chrono::milliseconds(5000);
    if (shown_any_ && now - last_ < every) return;
    last_ = now;
    shown_any_ = true;
    if (mode_ == Mode::kTerminal) {
      std::cerr << "\r\033[K" << text << std::flush;
      on_screen_ = true;
    } else {
      std::cerr << "progress: " << text << "\n" << std::flush;
    }
  }

  // Erases a terminal line (before other output, and at the end).
  void clear() {
    if (on_screen_) std::cerr << "\r\033[K" << std::flush;
    on_screen_ = false;
  }

 private:
  Mode mode_;
  bool shown_any_ = false;
  bool on_screen_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace chakrasim::cli
