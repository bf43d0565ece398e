// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/db_iter.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "table/iterate_bounds.h"
#include "util/random.h"

namespace siftdb {
namespace {

// Invariants:
//  forward (direction_ == kForward): when Valid(), internal_ is at the
//    entry that supplies key() and value().
//  backward: internal_ is positioned just before every entry of key()
//    (at the previous user key's entries, or invalid); key() and value()
//    are held in saved_key_ and saved_value_.
//  bounds: when Valid(), lower <= key() < upper. Moving forward the scan
//    stops at the first internal entry whose user key is >= upper, moving
//    backward at the first below lower (hidden entries included), so a
//    bounded scan never reads on past its bound.
class DBIter : public Iterator {
 public:
  DBIter(const Comparator* ucmp, std::unique_ptr<Iterator> internal,
         SequenceNumber sequence, const IterateBounds& bounds,
         ReadSampler sampler, uint64_t sample_seed)
      : ucmp_(ucmp),
        internal_(std::move(internal)),
        sequence_(sequence),
        bounds_(bounds),
        empty_(bounds_.empty()),
        sampler_(std::move(sampler)),
        random_(sample_seed) {
    bytes_until_sample_ = SamplePeriod();
    if (bounds_.lower) {
      AppendInternalKey(&lower_seek_key_, *bounds_.lower, sequence_,
                        kValueTypeForSeek);
    }
    if (bounds_.upper) upper_seek_key_ = SmallestInternalKeyOf(*bounds_.upper);
  }

  bool Valid() const override { return valid_; }
  std::string_view key() const override {
    return direction_ == kForward ? ExtractUserKey(internal_->key())
                                  : std::string_view(saved_key_);
  }
  std::string_view value() const override {
    return direction_ == kForward ? internal_->value()
                                  : std::string_view(saved_value_);
  }
  absl::Status status() const override {
    return status_.ok() ? internal_->status() : status_;
  }

  void Next() override;
  void Prev() override;
  void Seek(std::string_view target) override;
  void SeekToFirst() override;
  void SeekToLast() override;

 private:
  enum Direction { kForward, kReverse };

  // Moves forward to the first visible, non-deleted entry at or after
  // internal_; when skipping is set, entries of user key *skip are hidden.
  void FindNextUserEntry(bool skipping, std::string* skip);
  // From a backward position, collects the newest visible entry of the
  // previous user key into saved_key_/saved_value_.
  void FindPrevUserEntry();
  bool ParseKey(ParsedInternalKey* ikey);
  // Counts what ParseKey's entry cost to read; samples when due.
  void CountRead();
  int64_t SamplePeriod() { return random_.Uniform(2 * kReadSampleBytes); }

  // Invalid, nothing held (the position of an exhausted iterator).
  void Exhausted() {
    valid_ = false;
    direction_ = kForward;
    saved_key_.clear();
    saved_value_.clear();
  }

  const Comparator* const ucmp_;
  std::unique_ptr<Iterator> internal_;
  const SequenceNumber sequence_;
  const IterateBounds bounds_;
  const bool empty_;            // lower >= upper: never valid
  std::string lower_seek_key_;  // lower @ sequence_: where a scan starts
  std::string upper_seek_key_;  // before every entry of upper
  absl::Status status_;
  std::string saved_key_;    // reverse: current key; forward: scratch
  std::string saved_value_;  // reverse: current value
  Direction direction_ = kForward;
  bool valid_ = false;
  const ReadSampler sampler_;   // may be empty
  Random random_;               // sample points
  int64_t bytes_until_sample_;  // keys' and values' bytes
};

// *dst = src, writing over dst's bytes in place when the sizes match (the
// user keys of a DB often all have one size): a scan saves every entry's
// key, and std::string::assign cost about 50 instructions of the ~900 a
// step of readseq takes (callgrind).
void CopyKey(std::string_view src, std::string* dst) {
  if (dst->size() == src.size()) {
    if (!src.empty()) std::memcpy(dst->data(), src.data(), src.size());
  } else {
    dst->assign(src.data(), src.size());
  }
}

bool DBIter::ParseKey(ParsedInternalKey* ikey) {
  if (!ParseInternalKey(internal_->key(), ikey)) {
    status_ = absl::DataLossError(
        absl::StrFormat("iterator met a malformed internal key (%d bytes)",
                        internal_->key().size()));
    return false;
  }
  if (sampler_) CountRead();
  return true;
}

void DBIter::CountRead() {
  bytes_until_sample_ -=
      static_cast<int64_t>(internal_->key().size() + internal_->value().size());
  if (bytes_until_sample_ >= 0) return;
  bytes_until_sample_ += SamplePeriod();
  if (bytes_until_sample_ < 0) bytes_until_sample_ = SamplePeriod();
  sampler_(internal_->key());
}

void DBIter::Next() {
  if (!valid_) return;
  if (direction_ == kReverse) {
    direction_ = kForward;
    // internal_ is before the entries of saved_key_; step into them, then
    // FindNextUserEntry skips them.
    if (!internal_->Valid()) {
      // Nothing before key(): start over at the first entry in bounds.
      if (bounds_.lower) {
        internal_->Seek(lower_seek_key_);
      } else {
        internal_->SeekToFirst();
      }
    } else {
      internal_->Next();
    }
    if (!internal_->Valid()) {
      valid_ = false;
      saved_key_.clear();
      return;
    }
  } else {
    CopyKey(ExtractUserKey(internal_->key()), &saved_key_);
    internal_->Next();
  }
  FindNextUserEntry(true, &saved_key_);
}

void DBIter::FindNextUserEntry(bool skipping, std::string* skip) {
  for (; internal_->Valid(); internal_->Next()) {
    ParsedInternalKey ikey;
    if (!ParseKey(&ikey)) {
      valid_ = false;
      return;
    }
    // Past the upper bound: stop, even while skipping hidden entries.
    if (bounds_.AtOrAboveUpper(ikey.user_key)) break;
    if (ikey.sequence > sequence_) continue;  // newer than the snapshot
    if (ikey.type == kTypeDeletion) {
      // Hide every older entry of this key.
      CopyKey(ikey.user_key, skip);
      skipping = true;
    } else if (skipping && ucmp_->Compare(ikey.user_key, *skip) <= 0) {
      // Hidden by a newer entry or deletion.
    } else {
      // saved_key_ (scratch now) keeps its bytes, so that the next step's
      // copy of a key of the same size writes over them.
      valid_ = true;
      return;
    }
  }
  saved_key_.clear();
  valid_ = false;
}

void DBIter::Prev() {
  if (!valid_) return;
  if (direction_ == kForward) {
    // internal_ is at the entry of key(); move before all entries of it.
    CopyKey(ExtractUserKey(internal_->key()), &saved_key_);
    while (true) {
      internal_->Prev();
      if (!internal_->Valid()) {
        valid_ = false;
        saved_key_.clear();
        saved_value_.clear();
        return;
      }
      if (ucmp_->Compare(ExtractUserKey(internal_->key()), saved_key_) < 0) {
        break;
      }
    }
    direction_ = kReverse;
  }
  FindPrevUserEntry();
}

void DBIter::FindPrevUserEntry() {
  ValueType value_type = kTypeDeletion;
  if (internal_->Valid()) {
    do {
      ParsedInternalKey ikey;
      if (!ParseKey(&ikey)) {
        valid_ = false;
        return;
      }
      // Below the lower bound: what was collected (if anything) is the
      // answer, and nothing before it may be.
      if (bounds_.BelowLower(ikey.user_key)) break;
      // At or above the upper bound (a SeekToLast that had to start at the
      // very end): not a candidate; move on down.
      if (ikey.sequence <= sequence_ &&
          !bounds_.AtOrAboveUpper(ikey.user_key)) {
        if (value_type != kTypeDeletion &&
            ucmp_->Compare(ikey.user_key, saved_key_) < 0) {
          // Passed the key we collected: it is the answer.
          break;
        }
        value_type = ikey.type;
        if (value_type == kTypeDeletion) {
          saved_key_.clear();
          saved_value_.clear();
        } else {
          CopyKey(ikey.user_key, &saved_key_);
          std::string_view v = internal_->value();
          saved_value_.assign(v.data(), v.size());
        }
      }
      internal_->Prev();
    } while (internal_->Valid());
  }
  if (value_type == kTypeDeletion) {
    valid_ = false;
    saved_key_.clear();
    saved_value_.clear();
    direction_ = kForward;
  } else {
    valid_ = true;
  }
}

void DBIter::Seek(std::string_view target) {
  if (bounds_.BelowLower(target)) return SeekToFirst();
  Exhausted();
  if (empty_ || bounds_.AtOrAboveUpper(target)) return;
  // saved_key_ is scratch moving forward: hold the seek key there (no
  // allocation once it has grown); Seek does not keep a reference.
  AppendInternalKey(&saved_key_, target, sequence_, kValueTypeForSeek);
  internal_->Seek(saved_key_);
  FindNextUserEntry(false, &saved_key_);
}

void DBIter::SeekToFirst() {
  Exhausted();
  if (empty_) return;
  if (bounds_.lower) {
    internal_->Seek(lower_seek_key_);
  } else {
    internal_->SeekToFirst();
  }
  FindNextUserEntry(false, &saved_key_);
}

void DBIter::SeekToLast() {
  Exhausted();
  if (empty_) return;
  direction_ = kReverse;
  if (bounds_.upper) {
    // Just before the first entry of the upper bound; from the very end
    // when every entry is below it.
    internal_->Seek(upper_seek_key_);
    if (internal_->Valid()) {
      internal_->Prev();
    } else if (internal_->status().ok()) {
      internal_->SeekToLast();
    }
  } else {
    internal_->SeekToLast();
  }
  FindPrevUserEntry();
}

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(const Comparator* user_comparator,
                                        std::unique_ptr<Iterator> internal,
                                        SequenceNumber sequence,
                                        const ReadOptions& options,
                                        ReadSampler sampler,
                                        uint64_t sample_seed) {
  return std::make_unique<DBIter>(user_comparator, std::move(internal),
                                  sequence,
                                  IterateBounds::From(user_comparator, options),
                                  std::move(sampler), sample_seed);
}

}  // namespace siftdb
