// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/redis_reply.h"

#include <charconv>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace siftdb {

RedisReply RedisReply::Status(std::string s) {
  RedisReply r;
  r.type_ = Type::kStatus;
  r.str_ = std::move(s);
  return r;
}

RedisReply RedisReply::Error(std::string s) {
  RedisReply r;
  r.type_ = Type::kError;
  r.str_ = std::move(s);
  return r;
}

RedisReply RedisReply::Integer(int64_t v) {
  RedisReply r;
  r.type_ = Type::kInteger;
  r.integer_ = v;
  return r;
}

RedisReply RedisReply::String(std::string s) {
  RedisReply r;
  r.type_ = Type::kString;
  r.str_ = std::move(s);
  return r;
}

RedisReply RedisReply::Array(std::vector<RedisReply> elements) {
  RedisReply r;
  r.type_ = Type::kArray;
  r.elements_ = std::move(elements);
  return r;
}

bool RedisReply::operator==(const RedisReply& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case Type::kNil:
      return true;
    case Type::kInteger:
      return integer_ == other.integer_;
    case Type::kArray:
      return elements_ == other.elements_;
    default:
      return str_ == other.str_;
  }
}

namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += absl::StrFormat("\\x%02x", c);
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace

std::string RedisReply::DebugString() const {
  switch (type_) {
    case Type::kNil:
      return "(nil)";
    case Type::kStatus:
      return "+" + str_;
    case Type::kError:
      return "-" + str_;
    case Type::kInteger:
      return absl::StrCat(":", integer_);
    case Type::kString:
      return Quote(str_);
    case Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < elements_.size(); i++) {
        if (i > 0) out += ", ";
        out += elements_[i].DebugString();
      }
      return out + "]";
    }
  }
  return "?";
}

RedisArgs::RedisArgs(std::initializer_list<std::string_view> args) {
  for (std::string_view a : args) Add(a);
}

void RedisArgs::AddRaw(const char* data, size_t len) {
  // "$<len>\r\n<bytes>\r\n". A short argument (a BITFIELD command carries
  // thousands: "SET", "u1", offsets) is composed on the stack and appended
  // once, not in three appends.
  constexpr size_t kShort = 64;
  char buf[kShort + 32];
  buf[0] = '$';
  char* end = std::to_chars(buf + 1, buf + 24, len).ptr;
  *end++ = '\r';
  *end++ = '\n';
  if (len <= kShort) {
    if (len > 0) std::memcpy(end, data, len);
    end += len;
    *end++ = '\r';
    *end++ = '\n';
    body_.append(buf, end - buf);
  } else {
    body_.append(buf, end - buf);
    body_.append(data, len);
    body_.append("\r\n", 2);
  }
  if (count_ == 0) name_.assign(data, len);
  count_++;
}

RedisArgs& RedisArgs::Add(std::string_view arg) {
  AddRaw(arg.data(), arg.size());
  return *this;
}

RedisArgs& RedisArgs::AddInt(int64_t v) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
  AddRaw(buf, end - buf);
  return *this;
}

RedisArgs& RedisArgs::AddUint(uint64_t v) {
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
  AddRaw(buf, end - buf);
  return *this;
}

RedisArgs& RedisArgs::Append(const RedisArgs& other) {
  if (count_ == 0) name_ = other.name_;
  body_ += other.body_;
  count_ += other.count_;
  return *this;
}

std::string RedisArgs::Encode() const {
  std::string out;
  out.reserve(body_.size() + 24);
  AppendEncodedTo(&out);
  return out;
}

void RedisArgs::AppendEncodedTo(std::string* out) const {
  char head[32];
  head[0] = '*';
  char* end = std::to_chars(head + 1, head + sizeof(head) - 2, count_).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out->append(head, end - head);
  out->append(body_);
}

std::vector<std::string> RedisArgs::ToVector() const {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < body_.size()) {
    // "$<len>\r\n<bytes>\r\n"
    size_t crlf = body_.find("\r\n", pos);
    size_t len = 0;
    std::from_chars(body_.data() + pos + 1, body_.data() + crlf, len);
    out.emplace_back(body_.substr(crlf + 2, len));
    pos = crlf + 2 + len + 2;
  }
  return out;
}

}  // namespace siftdb
