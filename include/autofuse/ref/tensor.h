// A host tensor with concrete shape: what the reference interpreter and the
// CLI pass around. Row-major, contiguous, owns its bytes.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "autofuse/graph/dtype.h"
#include "autofuse/support/host_memory.h"

namespace autofuse {

/// Allocates on 64-byte (cache-line, AVX-512 vector) boundaries, so kernels
/// reading a HostTensor in place never split a vector load across lines;
/// large tensors on huge pages (support/host_memory.h).
template <typename T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <typename U>
  HostAllocator(const HostAllocator<U>&) {}  // NOLINT(google-explicit-constructor)
  T* allocate(size_t n) { return static_cast<T*>(allocate_host_buffer(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { free_host_buffer(p, n * sizeof(T)); }
  /// Default-initializes (writes nothing): HostTensor zero-fills only
  /// memory that is not zero already (host_buffer_starts_zeroed).
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const HostAllocator<U>&) const {
    return true;
  }
};

class HostTensor {
 public:
  HostTensor() = default;
  /// Zero-filled.
  HostTensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  void* data() { return storage_.data(); }
  const void* data() const { return storage_.data(); }
  template <typename T>
  T* data_as() {
    return reinterpret_cast<T*>(storage_.data());
  }
  template <typename T>
  const T* data_as() const {
    return reinterpret_cast<const T*>(storage_.data());
  }

  /// Element i (flat index) as a double (f16/bf16/float8 widened exactly;
  /// i64/u64 beyond 2^53 rounds). For tests, summaries and error metrics.
  double get_f64(int64_t i) const;
  /// Stores `v` converted to the dtype (float: rounded once to nearest even,
  /// float8 saturating; integers: truncated toward zero, clamped to int64
  /// (u64: uint64), then wrapped to the dtype's width, NaN -> 0; bool: v != 0).
  void set_f64(int64_t i, double v);
  /// Element i of an integer/bool tensor as int64 (exact; a u64 element
  /// above INT64_MAX wraps to a negative value).
  int64_t get_i64(int64_t i) const;
  void set_i64(int64_t i, int64_t v);

  /// "f32[2, 3]"
  std::string type_string() const;

 private:
  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::vector<uint64_t, HostAllocator<uint64_t>> storage_;
};

}  // namespace autofuse
