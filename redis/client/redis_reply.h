// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Value types for talking RESP2 to Redis without hiredis in sight:
//   RedisReply - an owned reply tree (status, error, integer, bulk string,
//                nil, array), comparable and printable, used both for what a
//                server answered and for replies siftdb formats itself
//                (the BF.* command interpreter).
//   RedisArgs  - a binary-safe argument vector encoded straight into RESP as
//                it is built, so a command of thousands of arguments costs
//                one buffer and no per-argument allocation.
//
// Thread safety: plain values; no shared state.

#ifndef SIFTDB_REDIS_CLIENT_REDIS_REPLY_H_
#define SIFTDB_REDIS_CLIENT_REDIS_REPLY_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace siftdb {

class RedisReply {
 public:
  enum class Type { kNil, kStatus, kError, kInteger, kString, kArray };

  RedisReply() = default;  // nil

  static RedisReply Nil() { return RedisReply(); }
  static RedisReply Status(std::string s);
  static RedisReply Error(std::string s);
  static RedisReply Integer(int64_t v);
  static RedisReply String(std::string s);
  static RedisReply Array(std::vector<RedisReply> elements);

  Type type() const { return type_; }
  bool is_nil() const { return type_ == Type::kNil; }
  bool is_error() const { return type_ == Type::kError; }
  bool is_status() const { return type_ == Type::kStatus; }
  bool is_integer() const { return type_ == Type::kInteger; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }

  int64_t integer() const { return integer_; }
  // Text of a status, error or bulk string reply; empty otherwise.
  const std::string& str() const { return str_; }
  const std::vector<RedisReply>& elements() const { return elements_; }
  std::vector<RedisReply>* mutable_elements() { return &elements_; }

  bool operator==(const RedisReply& other) const;
  bool operator!=(const RedisReply& other) const { return !(*this == other); }

  // One-line rendering for logs and test failures, e.g.
  // [:1, -ERR not found, "a\x00b", (nil)].
  std::string DebugString() const;

 private:
  Type type_ = Type::kNil;
  int64_t integer_ = 0;
  std::string str_;
  std::vector<RedisReply> elements_;
};

// Binary-safe command arguments, RESP-encoded on the fly.
class RedisArgs {
 public:
  RedisArgs() = default;
  RedisArgs(std::initializer_list<std::string_view> args);

  RedisArgs& Add(std::string_view arg);
  RedisArgs& AddInt(int64_t v);
  RedisArgs& AddUint(uint64_t v);
  // Appends every argument of `other`.
  RedisArgs& Append(const RedisArgs& other);

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Bytes of the encoded arguments (without the array header).
  size_t body_bytes() const { return body_.size(); }
  // The complete RESP command: "*<n>\r\n" followed by the arguments.
  std::string Encode() const;
  // Appends Encode()'s bytes to *out (a pipeline encodes its commands into
  // one buffer without a copy per command).
  void AppendEncodedTo(std::string* out) const;
  // The first argument (the command name), for messages.
  std::string_view name() const { return name_; }
  // Decodes the arguments back (tests and messages; not on hot paths).
  std::vector<std::string> ToVector() const;

 private:
  void AddRaw(const char* data, size_t len);

  std::string body_;
  std::string name_;
  size_t count_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_REDIS_REPLY_H_
