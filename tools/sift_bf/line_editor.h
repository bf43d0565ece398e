// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A minimal line editor for sift_bf's interactive prompt (no readline or
// linenoise among siftdb's dependencies): raw terminal mode, insert and
// delete at the cursor, Left/Right/Home/End (and Ctrl-A/E/B/F), Ctrl-U to
// clear, Up/Down to walk an in-memory history (not saved to disk), Ctrl-C
// to abandon the line and Ctrl-D on an empty line to leave.
//
// Thread safety: one editor per terminal, used from one thread.

#ifndef SIFTDB_TOOLS_SIFT_BF_LINE_EDITOR_H_
#define SIFTDB_TOOLS_SIFT_BF_LINE_EDITOR_H_

#include <optional>
#include <string>
#include <vector>

namespace siftdb::sift_bf {

class LineEditor {
 public:
  LineEditor(int in_fd, int out_fd) : in_(in_fd), out_(out_fd) {}
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  // Shows `prompt` and reads one line; nullopt at end of input (Ctrl-D on
  // an empty line, or a read error).
  std::optional<std::string> ReadLine(const std::string& prompt);
  // Adds a line to the history (consecutive duplicates are dropped).
  void AddHistory(const std::string& line);

 private:
  std::optional<std::string> ReadRaw(const std::string& prompt);
  void Refresh(const std::string& prompt, const std::string& buf,
               size_t cursor);
  void Write(const std::string& s);

  int in_;
  int out_;
  std::vector<std::string> history_;
};

}  // namespace siftdb::sift_bf

#endif  // SIFTDB_TOOLS_SIFT_BF_LINE_EDITOR_H_
