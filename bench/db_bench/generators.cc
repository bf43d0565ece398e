// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/db_bench/generators.h"

#include <algorithm>

#include "util/random.h"

namespace siftdb::bench {

void KeyFormatter::AppendNumber(uint64_t k, int width) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + k % 10);
    k /= 10;
  } while (k != 0);
  width = std::max(width, n);
  const size_t start = buf_.size();
  buf_.append(width, '0');
  char* number = buf_.data() + start;
  for (int i = 0; i < n; i++) number[width - 1 - i] = digits[i];
}

std::string_view KeyFormatter::Key(uint64_t k) {
  buf_.clear();
  if (num_groups_ > 0) AppendNumber(2 * (k % num_groups_), group_prefix_size_);
  buf_.append(key_prefix_, 'a');
  AppendNumber(k, key_size_);
  return buf_;
}

std::string_view KeyFormatter::GroupPrefix(uint64_t g) {
  buf_.clear();
  AppendNumber(g, group_prefix_size_);
  return buf_;
}

std::string_view KeyFormatter::MissingKey(uint64_t k) {
  Key(k);
  buf_.push_back('.');
  return buf_;
}

ValueGenerator::ValueGenerator(double compression_ratio, size_t max_value_size,
                               uint64_t seed) {
  constexpr size_t kPiece = 100;
  const size_t want = std::max<size_t>(size_t{1} << 20, max_value_size);
  size_t raw = static_cast<size_t>(compression_ratio * kPiece);
  if (raw < 1) raw = 1;
  if (raw > kPiece) raw = kPiece;
  Random rnd(seed);
  pool_.reserve(want + kPiece);
  std::string piece(kPiece, ' ');
  while (pool_.size() < want) {
    // A random printable prefix, repeated: compresses to about raw / kPiece.
    for (size_t i = 0; i < raw; i++) {
      piece[i] = static_cast<char>(' ' + rnd.Uniform(95));
    }
    for (size_t i = raw; i < kPiece; i++) piece[i] = piece[i - raw];
    pool_.append(piece);
  }
}

std::string_view ValueGenerator::Generate(size_t len) {
  if (pos_ + len > pool_.size()) pos_ = 0;
  std::string_view out(pool_.data() + pos_, len);
  pos_ += len;
  return out;
}

}  // namespace siftdb::bench
