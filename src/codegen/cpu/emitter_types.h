// The values and constants KernelEmitter's passes share (kernel_emitter.h):
// limits of the prelude's buffers, which values and ops the 16-lane code
// takes, and the small plans its emitters pass around.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autofuse/graph/dtype.h"
#include "autofuse/graph/ops.h"

namespace autofuse::codegen::cpu {

/// Writable elements after a buffer that a prelude af_row_* function reduces
/// (it pads the last vector with the identity; kernel_prelude_rows.h).
constexpr int64_t kRowReducePad = 8;
/// The longest row that runs in groups of 8 (row_groups.cpp); longer ones,
/// up to tiling::kShortReduceRow, in groups of 4 or 2.
constexpr int64_t kGroupRowMax = 64;
/// The shortest row whose pass is a vector pass (vector_pass.cpp): a 16-bit
/// loop stores its f32 row buffers as 32-byte halves, and a short row's
/// 64-byte loads of them would wait for store forwarding.
constexpr int64_t kVectorPassMinRow = 64;
/// The flag a max or min vector pass sets when its row must run the
/// buffered loop instead (a NaN probe; short_row_reduce.cpp declares it).
constexpr const char* kVectorPassRedo = "redo_";
/// Vector passes (vector_pass.cpp, column_vectors.cpp): a value the kernel
/// computes as a float (16-bit types too: they are rounded where stored;
/// float8 is rounded after every op), and the ops they write on af_f32x16
/// values (arithmetic, or the prelude's 16-lane overloads).
bool vector_float_value(DType dtype);
bool vector_arithmetic(OpKind op);
/// Its +, -, *, / and negation (lane_loops.cpp's ops).
bool float_arithmetic(OpKind op);
/// The prelude's suffix for a 16-bit float's 16-lane loads and stores
/// (af_load16_bf16, af_put16_f16 from kernel_prelude_f16.h, ...); "" for
/// other dtypes.
const char* half_suffix(DType dtype);
/// The longest row-invariant narrow Load converted to an f32 copy once per
/// call (row_invariant_: 16 KiB of stack each at most).
constexpr int64_t kInvariantMax = 4096;

/// Where a Store in a vector loop writes: its output; its chunk buffer
/// t<id>[i - nt_k]; or its row span's buffer t<first>[offset + i - nt_k]
/// (a whole row; tiling::row_span, inner_loop.cpp).
enum class StoreTo { Output, Chunk, Span };
/// Whether a loop over `axis` with `nodes` also needs a 16-lane copy for
/// rows shorter than 32 (16-bit loads or stores; inner_loop.cpp): no, only
/// that copy (a static extent below 32), or both behind a branch.
enum class ShortLoops { None, Only, Branch };
/// A loop over `axis` with `nodes` as 16 lanes (lane_loops.cpp): AVX2's
/// register pairs, or one AVX-512 register for 16-lane rows of 16-bit data.
enum class LaneForm { Pairs, Register };

/// How a Reduce accumulates (reduction_pass.cpp).
enum class Acc : uint8_t {
  Plain,        // the op's update into one accumulator (vector loop: per-lane partials)
  Cascade,      // float sum in the row layout's vector loop: chunk sums, pairwise
  Chunked,      // float sum of a tile vector (column layout): chunk sums per column,
                // added to the total with Kahan's compensated sum
  Compensated,  // float sum elsewhere: Kahan's compensated sum of every element
};

/// What one pass computes: the nodes it needs, its accumulating Reduces,
/// its deepest loop level and how many loops above the vector loop.
struct PassPlan {
  std::vector<bool> need;  ///< per node: computed inside the pass's loops
  std::vector<int> reduces;
  std::vector<int> chunked;  ///< the Acc::Chunked ones
  int deepest = 0;
  int scalar_levels = 0;
  bool folded = false;  ///< the tile loop covers `fold` rows of the last reduced loop
  /// Reduces of a short row (short_row_reduce.cpp): all of the vector
  /// loop's, or empty.
  std::vector<int> short_row;
  /// Centered moments computed in this pass (their own loop per block).
  std::vector<int> moments;
};

/// Column layout (column_vectors.cpp): one sum of a loop over rows, the
/// tile array element it adds into ("a6c[i1 - t0]") and the node added.
struct ColumnSum {
  std::string element;
  int value = -1;
};
/// The rows such a loop runs, its chunk counter and the flush (at an
/// indent) that runs when the counter reaches tiling::kColumnChunk
/// (which zeroes it first); `when`: the condition for the vector form (a
/// folding pass: fold == 1), empty for always.
struct ColumnRows {
  std::string lo, hi, counter;
  std::function<std::string(const std::string&)> flush;
  std::string when;
};

}  // namespace autofuse::codegen::cpu
