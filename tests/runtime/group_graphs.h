// Graphs that several runtime tests share.
#pragma once

namespace autofuse::runtime {

// A column mean, then a row sum of the centred values (it reads the first
// kernel's output: a later launch phase), and a column max of another input
// (beside the first): one group of three members by default, three kernels
// with --disable=group; with many rows the column reductions split into
// launches with a workspace.
inline constexpr const char* kColumnThenRowReductions =
    R"(graph dep(x: f32[N, D], z: f32[N, D]) {
  cm = reduce_mean(x, axes=[0], keepdims=true)
  xc = sub(x, cm)
  rs = reduce_sum(xc, axes=[1], keepdims=true)
  y = mul(xc, rs)
  zm = reduce_max(z, axes=[0])
  return y, zm
})";

}  // namespace autofuse::runtime
