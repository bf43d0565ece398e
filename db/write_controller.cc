// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/write_controller.h"

#include <algorithm>

namespace siftdb {

namespace {

// Near a hard limit the rate is this fraction of delayed_write_rate.
constexpr double kSlowestFraction = 1.0 / 16;

}  // namespace

WritePressure PressureOf(uint64_t value, uint64_t soft, uint64_t hard,
                         const char* cause) {
  WritePressure p;
  p.cause = cause;
  if (hard != 0 && value >= hard) {
    p.level = 1;
  } else if (soft != 0 && value >= soft) {
    // With no hard limit the debt has no ceiling to approach: the rate
    // stays at delayed_write_rate.
    p.level = hard > soft ? static_cast<double>(value - soft) /
                                static_cast<double>(hard - soft)
                          : 0;
  }
  return p;
}

WritePressure Stronger(const WritePressure& a, const WritePressure& b) {
  return b.level > a.level ? b : a;
}

WriteController::WriteController(uint64_t delayed_write_rate)
    : delayed_write_rate_(delayed_write_rate > 0 ? delayed_write_rate
                                                 : uint64_t{16} << 20) {}

void WriteController::SetPressure(const WritePressure& p) {
  pressure_ = p;
  if (!delayed()) paid_until_nanos_ = 0;  // debts end with the delay
}

uint64_t WriteController::rate() const {
  if (!delayed()) return 0;
  const double fraction =
      1.0 - (1.0 - kSlowestFraction) * std::clamp(pressure_.level, 0.0, 1.0);
  return std::max<uint64_t>(
      1, static_cast<uint64_t>(static_cast<double>(delayed_write_rate_) *
                               fraction));
}

uint64_t WriteController::DelayMicros(uint64_t now_micros) const {
  const uint64_t paid_until_micros = paid_until_nanos_ / 1000;
  if (!delayed() || paid_until_micros <= now_micros + kMinDelayMicros) {
    return 0;
  }
  return std::min(paid_until_micros - now_micros, kMaxDelayMicros);
}

void WriteController::Charge(uint64_t now_micros, uint64_t bytes) {
  if (!delayed()) return;
  // In nanoseconds: a 100-byte group at 16 MiB/s costs 5.96 us, and whole
  // microseconds would forgive a sixth of it.
  const double nanos =
      static_cast<double>(bytes) * 1e9 / static_cast<double>(rate());
  paid_until_nanos_ = std::max(paid_until_nanos_, now_micros * 1000) +
                      static_cast<uint64_t>(nanos);
}

}  // namespace siftdb
