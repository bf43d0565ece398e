// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/sift_bf/line_editor.h"

#include <termios.h>
#include <unistd.h>

#include <cstdio>

namespace siftdb::sift_bf {

namespace {

constexpr size_t kMaxHistory = 1000;

// Restores the terminal mode when it goes out of scope.
class RawMode {
 public:
  explicit RawMode(int fd) : fd_(fd) {
    if (tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_iflag &= ~(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
    raw.c_cflag |= CS8;
    raw.c_lflag &= ~(ECHO | ICANON | IEXTEN | ISIG);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    ok_ = tcsetattr(fd_, TCSADRAIN, &raw) == 0;
  }
  ~RawMode() {
    if (ok_) tcsetattr(fd_, TCSADRAIN, &saved_);
  }
  bool ok() const { return ok_; }

 private:
  int fd_;
  termios saved_{};
  bool ok_ = false;
};

}  // namespace

void LineEditor::Write(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t w = write(out_, s.data() + done, s.size() - done);
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}

void LineEditor::Refresh(const std::string& prompt, const std::string& buf,
                         size_t cursor) {
  std::string s = "\r" + prompt + buf + "\x1b[0K\r";
  size_t col = prompt.size() + cursor;
  if (col > 0) s += "\x1b[" + std::to_string(col) + "C";
  Write(s);
}

void LineEditor::AddHistory(const std::string& line) {
  if (line.empty() || (!history_.empty() && history_.back() == line)) return;
  history_.push_back(line);
  if (history_.size() > kMaxHistory) history_.erase(history_.begin());
}

std::optional<std::string> LineEditor::ReadLine(const std::string& prompt) {
  RawMode raw(in_);
  if (!raw.ok()) {
    // Not a terminal after all: plain buffered read.
    Write(prompt);
    std::string line;
    char c;
    while (read(in_, &c, 1) == 1) {
      if (c == '\n') return line;
      line.push_back(c);
    }
    if (line.empty()) return std::nullopt;
    return line;
  }
  return ReadRaw(prompt);
}

std::optional<std::string> LineEditor::ReadRaw(const std::string& prompt) {
  std::string buf;
  size_t cursor = 0;
  size_t hist = history_.size();  // == size(): editing a new line
  std::string pending;            // the new line while browsing history
  Refresh(prompt, buf, cursor);
  while (true) {
    char c;
    if (read(in_, &c, 1) != 1) return std::nullopt;
    switch (c) {
      case '\r':
      case '\n':
        Write("\r\n");
        return buf;
      case 3:  // Ctrl-C
        Write("^C\r\n");
        return std::string();
      case 4:  // Ctrl-D
        if (buf.empty()) {
          Write("\r\n");
          return std::nullopt;
        }
        if (cursor < buf.size()) buf.erase(cursor, 1);
        break;
      case 127:
      case 8:  // Backspace
        if (cursor > 0) buf.erase(--cursor, 1);
        break;
      case 1:  // Ctrl-A
        cursor = 0;
        break;
      case 5:  // Ctrl-E
        cursor = buf.size();
        break;
      case 2:  // Ctrl-B
        if (cursor > 0) cursor--;
        break;
      case 6:  // Ctrl-F
        if (cursor < buf.size()) cursor++;
        break;
      case 21:  // Ctrl-U
        buf.clear();
        cursor = 0;
        break;
      case 27: {  // escape sequences
        char seq[3];
        if (read(in_, &seq[0], 1) != 1 || read(in_, &seq[1], 1) != 1) break;
        if (seq[0] != '[' && seq[0] != 'O') break;
        if (seq[1] >= '0' && seq[1] <= '9') {
          if (read(in_, &seq[2], 1) != 1) break;
          if (seq[2] == '~' && seq[1] == '3' && cursor < buf.size()) {
            buf.erase(cursor, 1);  // Delete
          }
          break;
        }
        switch (seq[1]) {
          case 'A':  // Up
          case 'B':  // Down
            if (history_.empty()) break;
            if (hist == history_.size()) pending = buf;
            if (seq[1] == 'A' && hist > 0) hist--;
            if (seq[1] == 'B' && hist < history_.size()) hist++;
            buf = hist == history_.size() ? pending : history_[hist];
            cursor = buf.size();
            break;
          case 'C':
            if (cursor < buf.size()) cursor++;
            break;
          case 'D':
            if (cursor > 0) cursor--;
            break;
          case 'H':
            cursor = 0;
            break;
          case 'F':
            cursor = buf.size();
            break;
        }
        break;
      }
      default:
        if (static_cast<unsigned char>(c) >= 0x20) {
          buf.insert(cursor++, 1, c);
        }
        break;
    }
    Refresh(prompt, buf, cursor);
  }
}

}  // namespace siftdb::sift_bf
