// The reference kernels, one function per op family. Each takes its inputs
// and writes into `out`, which the interpreter has already allocated with the
// node's concrete output shape and dtype. Inputs have been type-checked by
// graph inference, so a dtype or shape mismatch here is an internal error;
// data errors (a gather index out of range) are UserErrors without location
// (the interpreter adds the node).
#pragma once

#include <cstdint>
#include <vector>

#include "autofuse/graph/ops.h"
#include "autofuse/ref/tensor.h"

namespace autofuse::ref {

/// Unary ops (OpClass::Unary).
void unary(OpKind op, const HostTensor& x, HostTensor& out);
/// Binary arithmetic, compare and logical ops, broadcasting.
void binary(OpKind op, const HostTensor& a, const HostTensor& b, HostTensor& out);
/// where(cond, a, b), broadcasting.
void where(const HostTensor& cond, const HostTensor& a, const HostTensor& b, HostTensor& out);
/// cast to out.dtype(); `saturate` as CastAttrs (false: float8 targets only).
void cast(const HostTensor& x, HostTensor& out, bool saturate = true);

/// reduce_* over `axes` (normalized; empty = all).
void reduce(OpKind op, const HostTensor& x, const std::vector<int64_t>& axes, HostTensor& out);
/// NumPy matmul, rank >= 2, batch dims broadcast.
void matmul(const HostTensor& a, const HostTensor& b, HostTensor& out);
/// ONNX Conv with normalized attributes; `bias` may be null.
void conv(const HostTensor& x, const HostTensor& w, const HostTensor* bias, const ConvAttrs& attrs,
          HostTensor& out);

void broadcast_to(const HostTensor& x, HostTensor& out);
void transpose(const HostTensor& x, const std::vector<int64_t>& perm, HostTensor& out);
void reshape(const HostTensor& x, HostTensor& out);
void slice(const HostTensor& x, const SliceAttrs& attrs, HostTensor& out);
void concat(const std::vector<const HostTensor*>& xs, int64_t axis, HostTensor& out);
void split(const HostTensor& x, int64_t axis, const std::vector<HostTensor*>& outs);
void gather(const HostTensor& data, const HostTensor& indices, int64_t axis, HostTensor& out);
void constant(const ConstantAttrs& attrs, HostTensor& out);
void iota(int64_t axis, HostTensor& out);

/// Python slice semantics for one dim: the first index, the step and the
/// number of elements. kSliceEnd as `end` means "through the last element in
/// the direction of the step".
struct SliceRange {
  int64_t start;
  int64_t step;
  int64_t length;
};
SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step);

}  // namespace autofuse::ref
