// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/server/resp_codec.h"

#include <cctype>
#include <charconv>
#include <cstdint>

#include "absl/strings/str_cat.h"

namespace siftdb {

namespace {

// Position of the "\r\n" ending the line that starts at `from`, or npos.
size_t LineEnd(std::string_view in, size_t from) {
  return in.find("\r\n", from);
}

// A whole-string decimal integer (Redis's string2ll rules, loosely: an
// optional '-', digits only).
bool ParseLength(std::string_view s, long long* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

// Splits an inline line on blanks; "..." and '...' group words (a subset
// of redis-server's sdssplitargs: \" and \\ escapes inside double quotes).
bool SplitInline(std::string_view line, std::vector<std::string>* argv) {
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
      i++;
    if (i == line.size()) break;
    std::string word;
    const char quote = (line[i] == '"' || line[i] == '\'') ? line[i] : 0;
    if (quote != 0) {
      i++;
      while (i < line.size() && line[i] != quote) {
        if (quote == '"' && line[i] == '\\' && i + 1 < line.size()) i++;
        word += line[i++];
      }
      if (i == line.size()) return false;  // unbalanced
      i++;
      if (i < line.size() &&
          !std::isspace(static_cast<unsigned char>(line[i]))) {
        return false;  // closing quote must end the word
      }
    } else {
      while (i < line.size() &&
             !std::isspace(static_cast<unsigned char>(line[i]))) {
        word += line[i++];
      }
    }
    argv->push_back(std::move(word));
  }
  return true;
}

RespParse ParseInline(std::string_view in, const RespLimits& limits,
                      std::vector<std::string>* argv, size_t* consumed,
                      std::string* error) {
  const size_t nl = in.find('\n');
  if (nl == std::string_view::npos) {
    if (in.size() > limits.max_inline) {
      *error = "ERR Protocol error: too big inline request";
      return RespParse::kError;
    }
    return RespParse::kNeedMore;
  }
  std::string_view line = in.substr(0, nl);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!SplitInline(line, argv)) {
    argv->clear();
    *error = "ERR Protocol error: unbalanced quotes in request";
    return RespParse::kError;
  }
  *consumed = nl + 1;
  return RespParse::kRequest;
}

// Reads "<prefix><integer>\r\n" at *pos. kNeedMore when incomplete.
RespParse ReadCount(std::string_view in, size_t* pos, char prefix,
                    const RespLimits& limits, long long* out,
                    std::string* error) {
  const size_t end = LineEnd(in, *pos);
  if (end == std::string_view::npos) {
    if (in.size() - *pos > limits.max_inline) {
      *error = prefix == '*' ? "ERR Protocol error: too big mbulk count string"
                             : "ERR Protocol error: too big bulk count string";
      return RespParse::kError;
    }
    return RespParse::kNeedMore;
  }
  if (in[*pos] != prefix) {
    *error =
        absl::StrCat("ERR Protocol error: expected '", std::string(1, prefix),
                     "', got '", std::string(1, in[*pos]), "'");
    return RespParse::kError;
  }
  if (!ParseLength(in.substr(*pos + 1, end - *pos - 1), out)) {
    *error = prefix == '*' ? "ERR Protocol error: invalid multibulk length"
                           : "ERR Protocol error: invalid bulk length";
    return RespParse::kError;
  }
  *pos = end + 2;
  return RespParse::kRequest;
}

RespParse ParseMultibulk(std::string_view in, const RespLimits& limits,
                         std::vector<std::string>* argv, size_t* consumed,
                         std::string* error) {
  size_t pos = 0;
  long long count = 0;
  RespParse r = ReadCount(in, &pos, '*', limits, &count, error);
  if (r != RespParse::kRequest) return r;
  if (count > static_cast<long long>(limits.max_args)) {
    *error = "ERR Protocol error: invalid multibulk length";
    return RespParse::kError;
  }
  std::vector<std::string> args;
  if (count > 0) args.reserve(static_cast<size_t>(std::min(count, 1024LL)));
  for (long long i = 0; i < count; i++) {
    long long len = 0;
    r = ReadCount(in, &pos, '$', limits, &len, error);
    if (r != RespParse::kRequest) return r;
    if (len < 0 || static_cast<unsigned long long>(len) > limits.max_bulk) {
      *error = "ERR Protocol error: invalid bulk length";
      return RespParse::kError;
    }
    const size_t n = static_cast<size_t>(len);
    if (in.size() - pos < n + 2) return RespParse::kNeedMore;
    if (in[pos + n] != '\r' || in[pos + n + 1] != '\n') {
      *error = "ERR Protocol error: bulk string not terminated by CRLF";
      return RespParse::kError;
    }
    args.emplace_back(in.substr(pos, n));
    pos += n + 2;
  }
  *argv = std::move(args);
  *consumed = pos;
  return RespParse::kRequest;
}

// Length of one reply starting at `pos` (recursing into arrays with an
// explicit count of elements still expected); 0 incomplete, -1 malformed.
long ReplyLengthFrom(std::string_view in) {
  size_t pos = 0;
  uint64_t pending = 1;  // replies still to read, nested arrays included
  while (pending > 0) {
    if (pos >= in.size()) return 0;
    const size_t end = LineEnd(in, pos);
    if (end == std::string_view::npos) return 0;
    const char type = in[pos];
    std::string_view body = in.substr(pos + 1, end - pos - 1);
    pos = end + 2;
    pending--;
    long long n = 0;
    switch (type) {
      case '+':
      case '-':
      case ':':
        break;
      case '$':
        if (!ParseLength(body, &n) || n < -1) return -1;
        if (n >= 0) {
          if (in.size() - pos < static_cast<size_t>(n) + 2) return 0;
          pos += static_cast<size_t>(n) + 2;
        }
        break;
      case '*':
        if (!ParseLength(body, &n) || n < -1) return -1;
        if (n > 0) pending += static_cast<uint64_t>(n);
        break;
      default:
        return -1;
    }
  }
  return static_cast<long>(pos);
}

}  // namespace

RespParse ParseRequest(std::string_view in, const RespLimits& limits,
                       std::vector<std::string>* argv, size_t* consumed,
                       std::string* error) {
  argv->clear();
  if (in.empty()) return RespParse::kNeedMore;
  if (in[0] == '*') return ParseMultibulk(in, limits, argv, consumed, error);
  return ParseInline(in, limits, argv, consumed, error);
}

long ReplyLength(std::string_view in) { return ReplyLengthFrom(in); }

void AppendReply(const RedisReply& reply, std::string* out) {
  switch (reply.type()) {
    case RedisReply::Type::kNil:
      out->append("$-1\r\n");
      break;
    case RedisReply::Type::kStatus:
      absl::StrAppend(out, "+", reply.str(), "\r\n");
      break;
    case RedisReply::Type::kError:
      out->append(ErrorReply(reply.str()));
      break;
    case RedisReply::Type::kInteger:
      absl::StrAppend(out, ":", reply.integer(), "\r\n");
      break;
    case RedisReply::Type::kString:
      absl::StrAppend(out, "$", reply.str().size(), "\r\n", reply.str(),
                      "\r\n");
      break;
    case RedisReply::Type::kArray:
      absl::StrAppend(out, "*", reply.elements().size(), "\r\n");
      for (const RedisReply& e : reply.elements()) AppendReply(e, out);
      break;
  }
}

std::string ErrorReply(std::string_view text) {
  std::string out = "-";
  out.append(text.data(), text.size());
  out += "\r\n";
  for (size_t i = 1; i + 2 < out.size(); i++) {
    if (out[i] == '\r' || out[i] == '\n') out[i] = ' ';
  }
  return out;
}

}  // namespace siftdb
