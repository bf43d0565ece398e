// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/db_stress/expected_state.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_format.h"

namespace siftdb::stress {
namespace {

constexpr uint64_t kMagic = 0x5354524553533031ull;  // "STRESS01"
constexpr size_t kHeader = 16;                      // magic, num_keys, pad

}  // namespace

absl::StatusOr<std::unique_ptr<ExpectedState>> ExpectedState::Open(
    const std::string& path, uint32_t num_keys) {
  const size_t size = kHeader + size_t{num_keys} * 2 * sizeof(uint32_t);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrFormat("open %s: %s", path, strerror(errno)));
  }
  struct stat st;
  bool fresh = fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != size;
  if (fresh && ftruncate(fd, 0) != 0) fresh = true;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(
        absl::StrFormat("ftruncate %s: %s", path, strerror(err)));
  }
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    return absl::InternalError(
        absl::StrFormat("mmap %s: %s", path, strerror(errno)));
  }
  char* base = static_cast<char*>(map);
  uint64_t magic;
  uint32_t keys;
  std::memcpy(&magic, base, 8);
  std::memcpy(&keys, base + 8, 4);
  if (fresh || magic != kMagic || keys != num_keys) {
    std::memset(base, 0, size);
    std::memcpy(base, &kMagic, 8);
    std::memcpy(base + 8, &num_keys, 4);
  }
  return std::unique_ptr<ExpectedState>(new ExpectedState(num_keys, map, size));
}

ExpectedState::ExpectedState(uint32_t num_keys, void* map, size_t map_size)
    : num_keys_(num_keys),
      map_(map),
      map_size_(map_size),
      words_(reinterpret_cast<std::atomic<uint32_t>*>(static_cast<char*>(map) +
                                                      kHeader)) {}

ExpectedState::~ExpectedState() { munmap(map_, map_size_); }

}  // namespace siftdb::stress
