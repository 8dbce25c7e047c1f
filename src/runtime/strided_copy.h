// The copy engine behind transpose, slice, concat and split: copies a
// strided view into another, element by element of a fixed size, after
// dropping size-1 dims and merging dims that are contiguous in both. Three
// inner loops: contiguous rows (memcpy), a cache-blocked 2-D transpose when
// the source's unit-stride dim is not the destination's, and plain strided
// loops. Large copies are split across the thread pool.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/library.h"

namespace autofuse::runtime {

/// Most dims a copy may have after dropping size-1 dims and merging.
inline constexpr int kMaxCopyDims = 16;

/// dst[sum i_k * dst_strides[k]] = src[sum i_k * src_strides[k]] for every
/// index in `shape`. Strides in elements (may be negative); elem_size is 1,
/// 2, 4 or 8. UserError when the copy has more than kMaxCopyDims dims left.
void strided_copy(void* dst, const void* src, int elem_size, std::span<const int64_t> shape,
                  std::span<const int64_t> dst_strides, std::span<const int64_t> src_strides,
                  LibraryContext& ctx);

/// Row-major strides (elements) of a shape, into `out` (same length).
void contiguous_strides(std::span<const int64_t> shape, std::span<int64_t> out);

}  // namespace autofuse::runtime
