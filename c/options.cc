// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// siftdb_options_t, siftdb_readoptions_t, siftdb_writeoptions_t and
// siftdb_flushoptions_t: creation and one setter per field of
// siftdb/options.h that C can express. Setters store what they are given;
// the engine checks ranges when the DB opens (an out-of-range value is an
// error naming the option then), except values the C++ types cannot hold
// (an unknown compression or mirror mode), which are remembered here and
// reported by siftdb_open. Setters on a NULL handle do nothing.

#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "c/handles.h"
#include "siftdb/c.h"

namespace {

bool IsCompressionValue(int c) {
  return c == siftdb_no_compression || c == siftdb_snappy_compression ||
         c == siftdb_lz4_compression || c == siftdb_zstd_compression;
}

std::string NotACompression(const char* setter, int c) {
  return absl::StrFormat(
      "%s: %d is not a compression type (siftdb_no_compression = 0, "
      "siftdb_snappy_compression = 1, siftdb_lz4_compression = 4, "
      "siftdb_zstd_compression = 7)",
      setter, c);
}

}  // namespace

extern "C" {

siftdb_options_t* siftdb_options_create(void) { return new siftdb_options_t; }

void siftdb_options_destroy(siftdb_options_t* options) { delete options; }

void siftdb_options_set_comparator(siftdb_options_t* options,
                                   const siftdb_comparator_t* comparator) {
  if (options == nullptr) return;
  if (comparator == nullptr) {
    options->comparator.reset();
  } else {
    options->comparator = comparator->rep;
  }
  options->rep.comparator = options->comparator.get();
}

void siftdb_options_set_create_if_missing(siftdb_options_t* options,
                                          uint8_t v) {
  if (options != nullptr) options->rep.create_if_missing = v != 0;
}

void siftdb_options_set_error_if_exists(siftdb_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.error_if_exists = v != 0;
}

void siftdb_options_set_paranoid_checks(siftdb_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.paranoid_checks = v != 0;
}

void siftdb_options_set_paranoid_file_checks(siftdb_options_t* options,
                                             uint8_t v) {
  if (options != nullptr) options->rep.paranoid_file_checks = v != 0;
}

void siftdb_options_set_wal_mmap_writes(siftdb_options_t* options, uint8_t v) {
  if (options != nullptr) options->rep.wal_mmap_writes = v != 0;
}

void siftdb_options_set_write_buffer_size(siftdb_options_t* options,
                                          size_t bytes) {
  if (options != nullptr) options->rep.write_buffer_size = bytes;
}

void siftdb_options_set_memtable_filter_ratio(siftdb_options_t* options,
                                              double ratio) {
  if (options != nullptr) options->rep.memtable_filter_ratio = ratio;
}

void siftdb_options_set_advise_random_on_open(siftdb_options_t* options,
                                              uint8_t v) {
  if (options != nullptr) options->rep.advise_random_on_open = v != 0;
}

void siftdb_options_set_max_open_files(siftdb_options_t* options, int n) {
  if (options != nullptr) options->rep.max_open_files = n;
}

void siftdb_options_set_block_cache_size(siftdb_options_t* options,
                                         size_t bytes) {
  if (options != nullptr) options->rep.block_cache_size = bytes;
}

void siftdb_options_set_cache(siftdb_options_t* options,
                              siftdb_cache_t* cache) {
  if (options != nullptr) {
    options->rep.block_cache = cache == nullptr ? nullptr : cache->rep;
  }
}

void siftdb_options_set_max_log_file_size(siftdb_options_t* options,
                                          size_t bytes) {
  if (options != nullptr) options->rep.max_log_file_size = bytes;
}

void siftdb_options_set_keep_log_file_num(siftdb_options_t* options, size_t n) {
  if (options != nullptr) options->rep.keep_log_file_num = n;
}

siftdb_cache_t* siftdb_cache_create_lru(size_t capacity) {
  auto* cache = new (std::nothrow) siftdb_cache_t;
  if (cache != nullptr) cache->rep = siftdb::NewLRUCache(capacity);
  return cache;
}

void siftdb_cache_destroy(siftdb_cache_t* cache) { delete cache; }

void siftdb_options_set_ratelimiter(siftdb_options_t* options,
                                    siftdb_ratelimiter_t* limiter) {
  if (options != nullptr) {
    options->rep.rate_limiter = limiter == nullptr ? nullptr : limiter->rep;
  }
}

siftdb_ratelimiter_t* siftdb_ratelimiter_create(int64_t rate_bytes_per_sec) {
  auto* limiter = new (std::nothrow) siftdb_ratelimiter_t;
  if (limiter != nullptr) {
    limiter->rep = siftdb::NewGenericRateLimiter(rate_bytes_per_sec);
  }
  return limiter;
}

void siftdb_ratelimiter_destroy(siftdb_ratelimiter_t* limiter) {
  delete limiter;
}

size_t siftdb_cache_get_usage(const siftdb_cache_t* cache) {
  return cache == nullptr ? 0 : cache->rep->Usage();
}

size_t siftdb_cache_get_capacity(const siftdb_cache_t* cache) {
  return cache == nullptr ? 0 : cache->rep->Capacity();
}

void siftdb_options_set_block_size(siftdb_options_t* options, size_t bytes) {
  if (options != nullptr) options->rep.block_size = bytes;
}

void siftdb_options_set_block_restart_interval(siftdb_options_t* options,
                                               int n) {
  if (options != nullptr) options->rep.block_restart_interval = n;
}

void siftdb_options_set_compression(siftdb_options_t* options,
                                    int compression) {
  if (options == nullptr) return;
  if (!IsCompressionValue(compression)) {
    options->bad_compression =
        NotACompression("siftdb_options_set_compression", compression);
    return;
  }
  options->bad_compression.clear();
  options->rep.compression = static_cast<siftdb::CompressionType>(compression);
}

void siftdb_options_set_compression_per_level(siftdb_options_t* options,
                                              const int* types, size_t n) {
  if (options == nullptr) return;
  std::vector<siftdb::CompressionType> levels;
  for (size_t i = 0; i < n; i++) {
    if (types == nullptr || !IsCompressionValue(types[i])) {
      options->bad_compression_per_level =
          NotACompression("siftdb_options_set_compression_per_level",
                          types == nullptr ? -1 : types[i]);
      return;
    }
    levels.push_back(static_cast<siftdb::CompressionType>(types[i]));
  }
  options->bad_compression_per_level.clear();
  options->rep.compression_per_level = std::move(levels);
}

void siftdb_options_set_bottommost_compression(siftdb_options_t* options,
                                               int compression) {
  if (options == nullptr) return;
  if (!IsCompressionValue(compression) &&
      compression != siftdb_disable_compression_option) {
    options->bad_bottommost_compression = NotACompression(
        "siftdb_options_set_bottommost_compression", compression);
    return;
  }
  options->bad_bottommost_compression.clear();
  options->rep.bottommost_compression =
      static_cast<siftdb::CompressionType>(compression);
}

void siftdb_options_set_compression_level(siftdb_options_t* options,
                                          int level) {
  if (options != nullptr) options->rep.compression_opts.level = level;
}

void siftdb_options_set_compression_max_dict_bytes(siftdb_options_t* options,
                                                   size_t max_dict_bytes) {
  if (options != nullptr) {
    options->rep.compression_opts.max_dict_bytes = max_dict_bytes;
  }
}

void siftdb_options_set_compression_zstd_max_train_bytes(
    siftdb_options_t* options, size_t zstd_max_train_bytes) {
  if (options != nullptr) {
    options->rep.compression_opts.zstd_max_train_bytes = zstd_max_train_bytes;
  }
}

void siftdb_options_set_bottommost_compression_options(
    siftdb_options_t* options, int level, size_t max_dict_bytes,
    size_t zstd_max_train_bytes, unsigned char enabled) {
  if (options == nullptr) return;
  siftdb::CompressionOptions& c = options->rep.bottommost_compression_opts;
  c.level = level;
  c.max_dict_bytes = max_dict_bytes;
  c.zstd_max_train_bytes = zstd_max_train_bytes;
  c.enabled = enabled != 0;
}

void siftdb_options_set_filter_bits_per_key(siftdb_options_t* options,
                                            double bits_per_key) {
  if (options != nullptr) options->rep.filter_bits_per_key = bits_per_key;
}

void siftdb_options_set_filter_policy(siftdb_options_t* options,
                                      const siftdb_filterpolicy_t* policy) {
  if (options == nullptr) return;
  options->rep.filter_policy = policy == nullptr ? nullptr : policy->rep;
}

void siftdb_options_set_prefix_extractor(
    siftdb_options_t* options, const siftdb_slicetransform_t* transform) {
  if (options == nullptr) return;
  options->rep.prefix_extractor =
      transform == nullptr ? nullptr : transform->rep;
}

void siftdb_options_set_whole_key_filtering(siftdb_options_t* options,
                                            uint8_t v) {
  if (options != nullptr) options->rep.whole_key_filtering = v != 0;
}

void siftdb_options_set_target_file_size_base(siftdb_options_t* options,
                                              uint64_t bytes) {
  if (options != nullptr) options->rep.target_file_size_base = bytes;
}

void siftdb_options_set_target_file_size_multiplier(siftdb_options_t* options,
                                                    int multiplier) {
  if (options != nullptr) {
    options->rep.target_file_size_multiplier = multiplier;
  }
}

void siftdb_options_set_cache_filter_blocks(siftdb_options_t* options,
                                            uint8_t v) {
  if (options != nullptr) options->rep.cache_filter_blocks = v != 0;
}

void siftdb_options_set_partition_filters(siftdb_options_t* options,
                                          uint8_t v) {
  if (options != nullptr) options->rep.partition_filters = v != 0;
}

void siftdb_options_set_filter_partition_size(siftdb_options_t* options,
                                              size_t bytes) {
  if (options != nullptr) options->rep.filter_partition_size = bytes;
}

void siftdb_options_set_pin_l0_filter_blocks_in_cache(siftdb_options_t* options,
                                                      uint8_t v) {
  if (options != nullptr) options->rep.pin_l0_filter_blocks_in_cache = v != 0;
}

void siftdb_options_set_filter_bits_per_key_per_level(siftdb_options_t* options,
                                                      const double* bits,
                                                      size_t levels) {
  if (options == nullptr) return;
  options->rep.filter_bits_per_key_per_level.clear();
  if (bits == nullptr) return;
  options->rep.filter_bits_per_key_per_level.assign(bits, bits + levels);
}

void siftdb_options_set_optimize_filters_for_memory_budget(
    siftdb_options_t* options, uint8_t v) {
  if (options != nullptr) {
    options->rep.optimize_filters_for_memory_budget = v != 0;
  }
}

void siftdb_options_set_optimize_filters_for_hits(siftdb_options_t* options,
                                                  uint8_t v) {
  if (options != nullptr) options->rep.optimize_filters_for_hits = v != 0;
}

void siftdb_options_set_max_file_size(siftdb_options_t* options, size_t bytes) {
  if (options != nullptr) options->rep.max_file_size = bytes;
}

void siftdb_options_set_level0_file_num_compaction_trigger(
    siftdb_options_t* options, int n) {
  if (options != nullptr) options->rep.level0_file_num_compaction_trigger = n;
}

void siftdb_options_set_level0_slowdown_writes_trigger(
    siftdb_options_t* options, int n) {
  if (options != nullptr) options->rep.level0_slowdown_writes_trigger = n;
}

void siftdb_options_set_level0_stop_writes_trigger(siftdb_options_t* options,
                                                   int n) {
  if (options != nullptr) options->rep.level0_stop_writes_trigger = n;
}

void siftdb_options_set_soft_pending_compaction_bytes_limit(
    siftdb_options_t* options, uint64_t bytes) {
  if (options != nullptr) {
    options->rep.soft_pending_compaction_bytes_limit = bytes;
  }
}

void siftdb_options_set_hard_pending_compaction_bytes_limit(
    siftdb_options_t* options, uint64_t bytes) {
  if (options != nullptr) {
    options->rep.hard_pending_compaction_bytes_limit = bytes;
  }
}

void siftdb_options_set_delayed_write_rate(siftdb_options_t* options,
                                           uint64_t bytes_per_second) {
  if (options != nullptr) options->rep.delayed_write_rate = bytes_per_second;
}

void siftdb_options_set_max_bytes_for_level_base(siftdb_options_t* options,
                                                 uint64_t bytes) {
  if (options != nullptr) options->rep.max_bytes_for_level_base = bytes;
}

void siftdb_options_set_max_bytes_for_level_multiplier(
    siftdb_options_t* options, double multiplier) {
  if (options != nullptr) {
    options->rep.max_bytes_for_level_multiplier = multiplier;
  }
}

void siftdb_options_set_level_compaction_dynamic_level_bytes(
    siftdb_options_t* options, unsigned char on) {
  if (options != nullptr) {
    options->rep.level_compaction_dynamic_level_bytes = on != 0;
  }
}

void siftdb_options_set_max_subcompactions(siftdb_options_t* options, int n) {
  if (options != nullptr) options->rep.max_subcompactions = n;
}

void siftdb_options_set_free_compaction_inputs_early(siftdb_options_t* options,
                                                     uint8_t v) {
  if (options != nullptr) options->rep.free_compaction_inputs_early = v != 0;
}

void siftdb_options_set_disable_auto_compactions(siftdb_options_t* options,
                                                 uint8_t v) {
  if (options != nullptr) options->rep.disable_auto_compactions = v != 0;
}

// ---- The Redis mirror ----

void siftdb_options_set_remote_filter_mode(siftdb_options_t* options,
                                           int mode) {
  using Mode = siftdb::RemoteFilterOptions::Mode;
  if (options == nullptr) return;
  options->bad_remote_filter_mode.clear();
  switch (mode) {
    case siftdb_remote_filter_off:
      options->rep.remote_filter.mode = Mode::kOff;
      return;
    case siftdb_remote_filter_async:
      options->rep.remote_filter.mode = Mode::kAsync;
      return;
    case siftdb_remote_filter_sync:
      options->rep.remote_filter.mode = Mode::kSync;
      return;
  }
  options->bad_remote_filter_mode = absl::StrFormat(
      "siftdb_options_set_remote_filter_mode: %d is not a mode (off = 0, "
      "async = 1, sync = 2)",
      mode);
}

void siftdb_options_add_remote_filter_endpoint(siftdb_options_t* options,
                                               const char* endpoint) {
  if (options == nullptr) return;
  if (endpoint == nullptr) {
    options->bad_remote_filter_endpoint =
        "siftdb_options_add_remote_filter_endpoint: endpoint is NULL";
    return;
  }
  options->rep.remote_filter.endpoints.emplace_back(endpoint);
}

void siftdb_options_clear_remote_filter_endpoints(siftdb_options_t* options) {
  if (options == nullptr) return;
  options->rep.remote_filter.endpoints.clear();
  options->bad_remote_filter_endpoint.clear();
}

void siftdb_options_set_remote_filter_name(siftdb_options_t* options,
                                           const char* name) {
  if (options != nullptr) {
    options->rep.remote_filter.name = name == nullptr ? "" : name;
  }
}

void siftdb_options_set_remote_filter_auth(siftdb_options_t* options,
                                           const char* username,
                                           const char* password) {
  if (options == nullptr) return;
  options->rep.remote_filter.username = username == nullptr ? "" : username;
  options->rep.remote_filter.password = password == nullptr ? "" : password;
}

void siftdb_options_set_remote_filter_timeouts_ms(siftdb_options_t* options,
                                                  int connect_timeout_ms,
                                                  int command_timeout_ms) {
  if (options == nullptr) return;
  options->rep.remote_filter.connect_timeout_ms = connect_timeout_ms;
  options->rep.remote_filter.command_timeout_ms = command_timeout_ms;
}

void siftdb_options_set_remote_filter_lease_ttl_ms(siftdb_options_t* options,
                                                   int ms) {
  if (options != nullptr) options->rep.remote_filter.lease_ttl_ms = ms;
}

void siftdb_options_set_remote_filter_async_max_lag_ms(
    siftdb_options_t* options, int ms) {
  if (options != nullptr) options->rep.remote_filter.async_max_lag_ms = ms;
}

void siftdb_options_set_remote_filter_wait(siftdb_options_t* options,
                                           int replicas, int timeout_ms) {
  if (options == nullptr) return;
  options->rep.remote_filter.wait_replicas = replicas;
  options->rep.remote_filter.wait_timeout_ms = timeout_ms;
}

void siftdb_options_set_remote_filter_delete_grace_ms(siftdb_options_t* options,
                                                      int ms) {
  if (options != nullptr) options->rep.remote_filter.delete_grace_ms = ms;
}

// ---- Read, write and flush options ----

siftdb_readoptions_t* siftdb_readoptions_create(void) {
  return new siftdb_readoptions_t;
}

void siftdb_readoptions_destroy(siftdb_readoptions_t* options) {
  delete options;
}

void siftdb_readoptions_set_verify_checksums(siftdb_readoptions_t* options,
                                             uint8_t v) {
  if (options != nullptr) options->rep.verify_checksums = v != 0;
}

void siftdb_readoptions_set_fill_cache(siftdb_readoptions_t* options,
                                       uint8_t v) {
  if (options != nullptr) options->rep.fill_cache = v != 0;
}

namespace {

// Stores a bound's bytes in `slot` and points `view` at them; a NULL key
// clears the bound.
void SetBound(const char* key, size_t keylen, std::optional<std::string>* slot,
              std::optional<std::string_view>* view) {
  if (key == nullptr) {
    slot->reset();
    view->reset();
    return;
  }
  slot->emplace(key, keylen);
  *view = std::string_view(**slot);
}

}  // namespace

void siftdb_readoptions_set_iterate_lower_bound(siftdb_readoptions_t* options,
                                                const char* key,
                                                size_t keylen) {
  if (options == nullptr) return;
  SetBound(key, keylen, &options->lower_bound,
           &options->rep.iterate_lower_bound);
}

void siftdb_readoptions_set_iterate_upper_bound(siftdb_readoptions_t* options,
                                                const char* key,
                                                size_t keylen) {
  if (options == nullptr) return;
  SetBound(key, keylen, &options->upper_bound,
           &options->rep.iterate_upper_bound);
}

void siftdb_readoptions_set_prefix_same_as_start(siftdb_readoptions_t* options,
                                                 uint8_t v) {
  if (options != nullptr) options->rep.prefix_same_as_start = v != 0;
}

void siftdb_readoptions_set_total_order_seek(siftdb_readoptions_t* options,
                                             uint8_t v) {
  if (options != nullptr) options->rep.total_order_seek = v != 0;
}

void siftdb_readoptions_set_snapshot(siftdb_readoptions_t* options,
                                     const siftdb_snapshot_t* snapshot) {
  if (options == nullptr) return;
  options->snapshot = snapshot;
  options->rep.snapshot = snapshot == nullptr ? nullptr : snapshot->rep;
}

siftdb_writeoptions_t* siftdb_writeoptions_create(void) {
  return new siftdb_writeoptions_t;
}

void siftdb_writeoptions_destroy(siftdb_writeoptions_t* options) {
  delete options;
}

void siftdb_writeoptions_set_sync(siftdb_writeoptions_t* options, uint8_t v) {
  if (options != nullptr) options->rep.sync = v != 0;
}

void siftdb_writeoptions_set_disable_wal(siftdb_writeoptions_t* options,
                                         uint8_t v) {
  if (options != nullptr) options->rep.disable_wal = v != 0;
}

siftdb_flushoptions_t* siftdb_flushoptions_create(void) {
  return new siftdb_flushoptions_t;
}

void siftdb_flushoptions_destroy(siftdb_flushoptions_t* options) {
  delete options;
}

void siftdb_flushoptions_set_wait(siftdb_flushoptions_t* options, uint8_t v) {
  if (options != nullptr) options->rep.wait = v != 0;
}

}  // extern "C"
