#include "autofuse/ref/tensor.h"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/error.h"
#include "ref/dtype_traits.h"

namespace autofuse {

using ref::DTypeTraits;
using ref::StorageOf;

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(1) {
  for (int64_t d : shape_) {
    if (d < 0)
      throw UserError(fmt::format("tensor shape [{}] has a negative dim", fmt::join(shape_, ", ")));
    if (__builtin_mul_overflow(numel_, d, &numel_))
      throw UserError(
          fmt::format("tensor shape [{}] has too many elements", fmt::join(shape_, ", ")));
  }
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel_), static_cast<size_t>(dtype_size(dtype)),
                             &bytes))
    throw UserError(
        fmt::format("tensor shape [{}] has too many elements", fmt::join(shape_, ", ")));
  const size_t words = (bytes + 7) / 8;
  storage_.resize(words);  // default-initialized: see HostAllocator::construct
  if (words > 0 && !host_buffer_starts_zeroed(words * sizeof(uint64_t)))
    std::memset(storage_.data(), 0, words * sizeof(uint64_t));
}

double HostTensor::get_f64(int64_t i) const {
  AF_CHECK(i >= 0 && i < numel_, "element {} of {}", i, type_string());
  return ref::visit_dtype(dtype_, [&](auto tag) -> double {
    constexpr DType D = decltype(tag)::value;
    return static_cast<double>(DTypeTraits<D>::load(data_as<StorageOf<D>>()[i]));
  });
}

void HostTensor::set_f64(int64_t i, double v) {
  AF_CHECK(i >= 0 && i < numel_, "element {} of {}", i, type_string());
  ref::visit_dtype(dtype_, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    StorageOf<D>& dst = data_as<StorageOf<D>>()[i];
    if constexpr (ref::kIsFloat<D>)
      dst = ref::store_f64<D>(v);
    else if constexpr (ref::kIsBool<D>)
      dst = v != 0 ? 1 : 0;
    else
      dst = DTypeTraits<D>::store(ref::float_to_int_wrapping<ref::ComputeOf<D>>(v));
  });
}

int64_t HostTensor::get_i64(int64_t i) const {
  AF_CHECK(i >= 0 && i < numel_, "element {} of {}", i, type_string());
  AF_CHECK(!is_float(dtype_), "get_i64 on a {} tensor", dtype_name(dtype_));
  return ref::visit_dtype(dtype_, [&](auto tag) -> int64_t {
    constexpr DType D = decltype(tag)::value;
    if constexpr (ref::kIsFloat<D>)
      return 0;  // excluded above
    else
      return static_cast<int64_t>(DTypeTraits<D>::load(data_as<StorageOf<D>>()[i]));
  });
}

void HostTensor::set_i64(int64_t i, int64_t v) {
  AF_CHECK(i >= 0 && i < numel_, "element {} of {}", i, type_string());
  ref::visit_dtype(dtype_, [&](auto tag) {
    constexpr DType D = decltype(tag)::value;
    data_as<StorageOf<D>>()[i] = ref::store_i64<D>(v);
  });
}

std::string HostTensor::type_string() const {
  return fmt::format("{}[{}]", dtype_name(dtype_), fmt::join(shape_, ", "));
}

}  // namespace autofuse
