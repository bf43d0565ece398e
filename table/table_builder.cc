// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/table_builder.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace siftdb {

TableBuilder::TableBuilder(const TableOptions& options, WritableFile* file)
    : options_(options),
      comparator_(UserComparatorOf(options)),
      file_(file),
      data_block_(options.block_restart_interval),
      index_block_(1) {
  if (options_.filter_policy != nullptr) {
    filter_builder_ = options_.filter_policy->NewBuilder();
    props_.filter_policy_name = options_.filter_policy->Name();
    props_.filter_bits_per_key = options_.filter_policy->BitsPerKey();
    if (options_.prefix_extractor != nullptr) {
      prefix_extractor_ = options_.prefix_extractor.get();
      props_.filter_prefix_extractor = prefix_extractor_->Name();
      filter_whole_keys_ = options_.whole_key_filtering;
      // A prefix-only filter must never be probed for whole keys: readers
      // that do not know the tag find no policy of that name.
      if (!filter_whole_keys_) {
        props_.filter_policy_name.insert(0, kPrefixOnlyFilterTag);
      }
    }
  }
  if (filter_builder_ != nullptr && PartitionsFilters(options_)) {
    filter_builder_.reset();
    partitioned_builder_ = std::make_unique<PartitionedFilterBuilder>(
        options_.filter_policy.get(),
        std::max<size_t>(options_.filter_partition_size, 64));
  }
  if (options_.compression == kZstdCompression &&
      options_.compression_max_dict_bytes > 0) {
    buffering_ = true;
    const size_t dict_bytes = options_.compression_max_dict_bytes;
    buffer_limit_ = std::max(options_.compression_zstd_max_train_bytes > 0
                                 ? options_.compression_zstd_max_train_bytes
                                 : 8 * dict_bytes,
                             dict_bytes);
  }
  props_.comparator_name = comparator_.user_comparator()->Name();
  props_.compression_name = CompressionTypeName(options_.compression);
  props_.format_version = kTableFormatVersion;
}

TableBuilder::~TableBuilder() = default;

bool TableBuilder::PartitionsFilters(const TableOptions& options) {
  if (!options.partition_filters || options.filter_policy == nullptr) {
    return false;
  }
  // The remote reader orders keys bytewise and decodes siftdb's encodings
  // only; older siftdb readers answer "may match" for kind 'P' under them.
  if (std::strcmp(UserComparatorOf(options)->Name(),
                  BytewiseComparator()->Name()) != 0 ||
      !std::string_view(options.filter_policy->Name()).starts_with("siftdb.") ||
      !(options.filter_policy->BitsPerKey() > 0)) {
    return false;
  }
  // A prefix is probed in the partition of the first key >= it, which
  // holds it only when every key between the prefix and a key with that
  // prefix has that prefix too: true of the fixed and capped extractors.
  if (options.prefix_extractor != nullptr) {
    const std::string_view name = options.prefix_extractor->Name();
    return name.starts_with("siftdb.FixedPrefix.") ||
           name.starts_with("siftdb.CappedPrefix.");
  }
  return true;
}

void TableBuilder::AddToFilter(std::string_view user_key) {
  if (partitioned_builder_ != nullptr) {
    std::string_view prefix;
    const bool has_prefix =
        prefix_extractor_ != nullptr && prefix_extractor_->InDomain(user_key);
    if (has_prefix) prefix = prefix_extractor_->Transform(user_key);
    partitioned_builder_->Add(user_key, filter_whole_keys_,
                              has_prefix ? &prefix : nullptr);
    return;
  }
  if (filter_whole_keys_) filter_builder_->AddKey(user_key);
  if (prefix_extractor_ == nullptr || !prefix_extractor_->InDomain(user_key)) {
    return;
  }
  // Keys arrive sorted and a prefix's keys are contiguous: each prefix is
  // added once, when it first appears.
  const std::string_view prefix = prefix_extractor_->Transform(user_key);
  if (have_last_prefix_ && prefix == last_prefix_) return;
  filter_builder_->AddKey(prefix);
  last_prefix_.assign(prefix.data(), prefix.size());
  have_last_prefix_ = true;
}

void TableBuilder::Add(std::string_view key, std::string_view value) {
  if (!status_.ok() || closed_) return;
  ParsedInternalKey parsed;
  if (!ParseInternalKey(key, &parsed)) {
    status_ = absl::InvalidArgumentError(
        absl::StrFormat("TableBuilder::Add: malformed internal key %s",
                        InternalKeyDebugString(key, /*hex=*/true)));
    return;
  }
  const bool first = props_.num_entries == 0;
  if (!first && comparator_.Compare(key, last_key_) <= 0) {
    status_ = absl::InvalidArgumentError(absl::StrFormat(
        "TableBuilder::Add: key %s is not after the previous key %s",
        InternalKeyDebugString(key, /*hex=*/false),
        InternalKeyDebugString(last_key_, /*hex=*/false)));
    return;
  }

  // The filter holds each distinct user key once (consecutive duplicates
  // are the only duplicates, since keys arrive sorted).
  if ((filter_builder_ != nullptr || partitioned_builder_ != nullptr) &&
      (first || ExtractUserKey(last_key_) != parsed.user_key)) {
    AddToFilter(parsed.user_key);
  }

  if (pending_index_entry_) {
    comparator_.FindShortestSeparator(&last_key_, key);
    if (buffering_) {
      buffered_.back().index_key = last_key_;
    } else {
      std::string handle_encoding;
      pending_handle_.EncodeTo(&handle_encoding);
      index_block_.Add(last_key_, handle_encoding);
    }
    pending_index_entry_ = false;
  }

  if (first) props_.smallest_key.assign(key.data(), key.size());
  props_.num_entries++;
  if (parsed.type == kTypeDeletion) props_.num_deletions++;
  props_.raw_key_size += key.size();
  props_.raw_value_size += value.size();

  last_key_.assign(key.data(), key.size());
  data_block_.Add(key, value);
  if (data_block_.CurrentSizeEstimate() >= options_.block_size) Flush();
}

void TableBuilder::Flush() {
  if (!status_.ok() || data_block_.empty()) return;
  if (buffering_) {
    const std::string_view raw = data_block_.Finish();
    buffered_.push_back({std::string(raw), std::string()});
    buffered_bytes_ += raw.size();
    data_block_.Reset();
    pending_index_entry_ = true;
    props_.num_data_blocks++;
    if (buffered_bytes_ >= buffer_limit_) EndBuffering();
    return;
  }
  WriteBlock(&data_block_, &pending_handle_, dictionary_.get());
  if (status_.ok()) {
    pending_index_entry_ = true;
    props_.num_data_blocks++;
  }
}

void TableBuilder::EndBuffering() {
  buffering_ = false;
  std::string samples;
  samples.reserve(buffered_bytes_);
  std::vector<size_t> sizes;
  sizes.reserve(buffered_.size());
  for (const BufferedBlock& b : buffered_) {
    samples.append(b.raw);
    sizes.push_back(b.raw.size());
  }
  dictionary_ = ZstdDictionary::Build(
      samples, sizes, options_.compression_max_dict_bytes,
      options_.compression_level,
      /*train=*/options_.compression_zstd_max_train_bytes > 0);
  samples.clear();
  samples.shrink_to_fit();
  for (size_t i = 0; i < buffered_.size() && status_.ok(); i++) {
    WriteCompressedBlock(buffered_[i].raw, dictionary_.get(), &pending_handle_);
    if (i + 1 == buffered_.size()) break;  // its entry stays pending
    std::string handle_encoding;
    pending_handle_.EncodeTo(&handle_encoding);
    index_block_.Add(buffered_[i].index_key, handle_encoding);
  }
  buffered_.clear();
  buffered_.shrink_to_fit();
  buffered_bytes_ = 0;
}

void TableBuilder::WriteBlock(BlockBuilder* block, BlockHandle* handle,
                              const ZstdDictionary* dictionary) {
  WriteCompressedBlock(block->Finish(), dictionary, handle);
  block->Reset();
}

void TableBuilder::WriteCompressedBlock(std::string_view raw,
                                        const ZstdDictionary* dictionary,
                                        BlockHandle* handle) {
  std::string_view contents = raw;
  CompressionType type = kNoCompression;
  // Keep the compressed form only when it saves at least 12.5%.
  if (CompressBlock(options_.compression, options_.compression_level, raw,
                    &compressed_, dictionary) &&
      compressed_.size() < raw.size() &&
      8 * (raw.size() - compressed_.size()) >= raw.size()) {
    contents = compressed_;
    type = options_.compression;
  }
  WriteRawBlock(contents, type, handle);
}

void TableBuilder::WriteRawBlock(std::string_view contents,
                                 CompressionType type, BlockHandle* handle) {
  handle->set_offset(offset_);
  handle->set_size(contents.size());
  status_ = file_->Append(contents);
  if (status_.ok()) {
    std::string trailer;
    AppendBlockTrailer(&trailer, contents, type);
    status_ = file_->Append(trailer);
  }
  if (status_.ok()) {
    offset_ += contents.size() + kBlockTrailerSize;
    if (options_.statistics != nullptr) {
      options_.statistics->Record(Ticker::kBytesWritten,
                                  contents.size() + kBlockTrailerSize);
    }
  }
}

void TableBuilder::ReuseDictionary(
    std::shared_ptr<const ZstdDictionary> dictionary) {
  // A loaded dictionary (no compression form) cannot be reused.
  if (!buffering_ || dictionary == nullptr || dictionary->cdict() == nullptr) {
    return;
  }
  assert(props_.num_entries == 0);
  buffering_ = false;
  dictionary_ = std::move(dictionary);
}

void TableBuilder::SetInputFiles(std::vector<uint64_t> numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  props_.has_input_files = true;
  props_.input_files = std::move(numbers);
}

absl::Status TableBuilder::Finish() {
  if (closed_) {
    return absl::FailedPreconditionError(
        "TableBuilder::Finish: already finished or abandoned");
  }
  Flush();
  if (buffering_) EndBuffering();
  closed_ = true;
  if (!status_.ok()) return status_;
  props_.data_size = offset_;

  std::vector<std::pair<std::string, std::string>> meta;  // metaindex
  std::string handle_encoding;

  // Compression dictionary, stored raw; its table is format version 2.
  if (dictionary_ != nullptr) {
    BlockHandle dict_handle;
    WriteRawBlock(dictionary_->bytes(), kNoCompression, &dict_handle);
    if (!status_.ok()) return status_;
    props_.compression_dict_size = dictionary_->bytes().size();
    props_.format_version = kTableFormatVersionWithDictionary;
    dict_handle.EncodeTo(&handle_encoding);
    meta.emplace_back(kCompressionDictMetaKey, handle_encoding);
  }

  // Filter block: the filter's bytes, stored raw.
  if (filter_builder_ != nullptr || partitioned_builder_ != nullptr) {
    std::string filter;
    if (partitioned_builder_ != nullptr) {
      props_.filter_num_keys = partitioned_builder_->NumAdded();
      partitioned_builder_->Finish(&filter);
    } else {
      props_.filter_num_keys = filter_builder_->NumAdded();
      filter_builder_->Finish(&filter);
    }
    BlockHandle filter_handle;
    WriteRawBlock(filter, kNoCompression, &filter_handle);
    if (!status_.ok()) return status_;
    props_.filter_size = filter.size();
    handle_encoding.clear();
    filter_handle.EncodeTo(&handle_encoding);
    meta.emplace_back(kFilterMetaPrefix + props_.filter_policy_name,
                      handle_encoding);
  }

  // Index block: the last data block's entry uses a short successor of the
  // last key.
  if (pending_index_entry_) {
    props_.largest_key = last_key_;
    comparator_.FindShortSuccessor(&last_key_);
    handle_encoding.clear();
    pending_handle_.EncodeTo(&handle_encoding);
    index_block_.Add(last_key_, handle_encoding);
    pending_index_entry_ = false;
  }
  BlockHandle index_handle;
  WriteBlock(&index_block_, &index_handle);
  if (!status_.ok()) return status_;
  props_.index_size = index_handle.size();

  // Properties block.
  props_.creation_time = static_cast<uint64_t>(std::time(nullptr));
  {
    BlockBuilder props_block(1);
    for (const auto& [name, value] : EncodeTableProperties(props_)) {
      props_block.Add(name, value);
    }
    BlockHandle props_handle;
    WriteRawBlock(props_block.Finish(), kNoCompression, &props_handle);
    if (!status_.ok()) return status_;
    handle_encoding.clear();
    props_handle.EncodeTo(&handle_encoding);
    meta.emplace_back(kPropertiesMetaKey, handle_encoding);
  }

  // Metaindex block, sorted bytewise.
  BlockHandle metaindex_handle;
  {
    std::sort(meta.begin(), meta.end());
    BlockBuilder meta_block(1);
    for (const auto& [name, value] : meta) meta_block.Add(name, value);
    WriteRawBlock(meta_block.Finish(), kNoCompression, &metaindex_handle);
    if (!status_.ok()) return status_;
  }

  Footer footer;
  footer.format_version = props_.format_version;
  footer.metaindex_handle = metaindex_handle;
  footer.index_handle = index_handle;
  std::string footer_encoding;
  footer.EncodeTo(&footer_encoding);
  status_ = file_->Append(footer_encoding);
  if (status_.ok()) {
    offset_ += footer_encoding.size();
    if (options_.statistics != nullptr) {
      options_.statistics->Record(Ticker::kBytesWritten,
                                  footer_encoding.size());
    }
  }
  return status_;
}

void TableBuilder::Abandon() { closed_ = true; }

}  // namespace siftdb
