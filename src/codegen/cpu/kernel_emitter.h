// The kernel function of one scheduled kernel (the part of the module after
// its tiling data; see cpu_codegen.h for the module).
//
// Shape of the code: a loop nest whose levels are -1 (the whole block: once
// per kernel call), 0 (one row: the outer axes' multi-index) and 1.. (the
// inner loops: Elementwise has one, the vectorized last axis; Reduction has
// one per reduced axis, the last one vectorized). Each node is computed at
// the shallowest level where its value is fixed: a node that does not vary
// along an inner loop's axis is hoisted out of it (a broadcast operand is
// loaded once per row, a scalar once per call). Values are SSA temporaries
// `v<id>` of the node's compute type.
//
// The innermost loop (inner_loop.cpp) has a second variant for tiling_key
// kStreamingStoresKey: stores that tiling::streams() go through an aligned
// local chunk buffer and non-temporal stores.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autofuse/schedule/schedule.h"

namespace autofuse::codegen::cpu {

class KernelEmitter {
 public:
  KernelEmitter(const schedule::ScheduledKernel& kernel, std::string name,
                std::string tiling_struct);

  /// The `extern "C" void <name>_kernel(...)` function.
  std::string emit();

 private:
  using AscNode = ascir::AscNode;

  std::string emit_elementwise();
  std::string emit_reduction();

  // Shared pieces.
  std::string prologue() const;  // tiling data, symbols, sizes, buffers
  std::string decompose_row(const std::string& row, const std::string& indent) const;
  std::string advance_row(const std::string& indent) const;
  /// Appends the code for node `n` (a definition or a store) at `indent`.
  /// `to_buffer`: a streamed store writes its chunk buffer instead.
  void emit_node(const AscNode& n, const std::string& indent, std::string& out,
                 bool to_buffer = false) const;
  /// The element index of a Load or Store; with `axis` >= 0, at `axis`
  /// index `at` instead of the loop variable.
  std::string address(const AscNode& n, int axis = -1, const std::string& at = {}) const;
  /// The innermost loop over `axis` from `lo` to `hi`: the `pragma` line,
  /// then per index `nodes` in order and `updates(indent)` (statements after
  /// them; null: none). With streamed stores among `nodes` and no updates,
  /// both store variants, chosen per call by tiling_key (inner_loop.cpp).
  void emit_inner_loop(int axis, const std::string& lo, const std::string& hi,
                       const std::vector<int>& nodes, const std::string& pragma,
                       const std::function<std::string(const std::string&)>& updates,
                       const std::string& indent, std::string& out) const;
  /// `if (key is streaming) af_nt_fence();` when some store streams, else empty.
  std::string fence_if_streamed(const std::string& indent) const;
  std::string row_base(const AscNode& n) const;
  std::string size(int axis) const;  // an int64_t expression for the axis size
  std::string expr(const sym::Expr& e) const;
  bool varies(const AscNode& n, int axis) const;
  std::string value(int id) const;  // the temporary holding node `id`
  const AscNode& node(int id) const { return graph_.node(id); }

  // Reduction pieces.
  void emit_stage(int stage, const std::string& indent, std::string& out) const;
  void emit_pass(int pass, const std::string& indent, std::string& out) const;
  int accumulate_level(const AscNode& reduce) const;
  std::string reduce_count(const AscNode& reduce) const;

  const schedule::ScheduledKernel& kernel_;
  const ascir::AscGraph& graph_;
  std::string name_;
  std::string tiling_struct_;
  int num_inputs_ = 0;
  std::vector<int> axis_level_;       ///< per axis: its loop level (0 = row)
  std::vector<int> level_;            ///< per node: the level computing it (-1 .. depth)
  std::vector<bool> live_;            ///< per node: reaches a Store
  std::vector<int> output_of_store_;  ///< per node: the Output arg a Store writes, else -1
  std::vector<bool> streamed_;        ///< per node: a Store that streams under key 1
  int depth_ = 0;                     ///< number of inner loop levels
};

}  // namespace autofuse::codegen::cpu
