// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// siftdb_comparator_t (a key order from C callbacks) and
// siftdb_filterpolicy_t (the built-in filter policies). Both are
// reference-counted: the handle is one reference, every options object and
// DB given it another, so destroying the handle early is safe.

#include <string>

#include "c/handles.h"
#include "siftdb/c.h"
#include "siftdb/filter_policy.h"

namespace siftdb::c_api {

CallbackComparator::~CallbackComparator() {
  if (destructor_ != nullptr) destructor_(state_);
}

int CallbackComparator::Compare(std::string_view a, std::string_view b) const {
  return compare_(state_, a.data(), a.size(), b.data(), b.size());
}

const char* CallbackComparator::Name() const {
  const char* name = name_(state_);
  return name != nullptr ? name : "";
}

}  // namespace siftdb::c_api

extern "C" {

siftdb_comparator_t* siftdb_comparator_create(
    void* state, void (*destructor)(void*),
    int (*compare)(void*, const char*, size_t, const char*, size_t),
    const char* (*name)(void*)) {
  if (compare == nullptr || name == nullptr) return nullptr;
  auto* result = new siftdb_comparator_t;
  result->rep = std::make_shared<const siftdb::c_api::CallbackComparator>(
      state, destructor, compare, name);
  return result;
}

void siftdb_comparator_destroy(siftdb_comparator_t* comparator) {
  delete comparator;
}

siftdb_filterpolicy_t* siftdb_filterpolicy_create_bloom(double bits_per_key) {
  return new siftdb_filterpolicy_t{siftdb::NewBloomFilterPolicy(bits_per_key)};
}

siftdb_filterpolicy_t* siftdb_filterpolicy_create_classic_bloom(
    double bits_per_key) {
  return new siftdb_filterpolicy_t{
      siftdb::NewClassicBloomFilterPolicy(bits_per_key)};
}

siftdb_filterpolicy_t* siftdb_filterpolicy_create_ribbon(
    double bits_per_key_equivalent) {
  return new siftdb_filterpolicy_t{
      siftdb::NewRibbonFilterPolicy(bits_per_key_equivalent)};
}

siftdb_filterpolicy_t* siftdb_filterpolicy_create_from_name(const char* name,
                                                            double bits_per_key,
                                                            char** errptr) {
  using siftdb::c_api::SaveArgError;
  using siftdb::c_api::SaveError;
  if (name == nullptr) {
    SaveArgError(errptr, "siftdb_filterpolicy_create_from_name",
                 "name is NULL");
    return nullptr;
  }
  auto policy = siftdb::FilterPolicyFromName(name, bits_per_key);
  if (SaveError(errptr, policy.status())) return nullptr;
  return new siftdb_filterpolicy_t{*std::move(policy)};
}

const char* siftdb_filterpolicy_name(const siftdb_filterpolicy_t* policy) {
  return policy == nullptr ? "" : policy->rep->Name();
}

void siftdb_filterpolicy_destroy(siftdb_filterpolicy_t* policy) {
  delete policy;
}

}  // extern "C"

// ---- Prefix extractors ----

siftdb_slicetransform_t* siftdb_slicetransform_create_fixed_prefix(size_t n) {
  return new siftdb_slicetransform_t{siftdb::NewFixedPrefixTransform(n)};
}

siftdb_slicetransform_t* siftdb_slicetransform_create_capped_prefix(size_t n) {
  return new siftdb_slicetransform_t{siftdb::NewCappedPrefixTransform(n)};
}

const char* siftdb_slicetransform_name(
    const siftdb_slicetransform_t* transform) {
  return transform == nullptr ? "" : transform->rep->Name();
}

void siftdb_slicetransform_destroy(siftdb_slicetransform_t* transform) {
  delete transform;
}
