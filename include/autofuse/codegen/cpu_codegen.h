// C++ code generation for the CPU: one source module holding every kernel
// of a graph (one compiler run amortizes its start-up), each with its tiling
// data struct, tiling function and kernel function (ABI in kernel_abi.h).
// The source starts with the kernel prelude (vector math, f16/bf16
// conversion, floor-div helpers, the tiling cost model) and is otherwise
// self-contained, so its text alone keys the compile cache.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "autofuse/schedule/schedule.h"

namespace autofuse::codegen {

struct KernelSource {
  std::string name;                  ///< C identifier; prefix of the three ABI functions
  std::vector<std::string> symbols;  ///< order of the tiling function's `symbols`
  int num_inputs = 0;
  int num_outputs = 0;
  /// The graph gathers behind the kernel's gathered dims (one per dim of
  /// each Gather node, in node order; a group's members one after the
  /// other): af_status::which indexes it. Not empty: the kernel takes an
  /// af_status* (kernel_abi.h) and the caller checks it after each launch.
  std::vector<std::string> gathers;
};

struct ModuleSource {
  std::string code;  ///< the whole module as one translation unit
  /// One per launch: a kernel, or a group's wrapper (in the order given).
  std::vector<KernelSource> kernels;
  /// Per launch (as `kernels`), its code without the prelude: the kernel,
  /// or a group's members and wrapper. Launches share nothing but the
  /// prelude, so any of them compile apart (split_translation_units).
  std::vector<std::string> launch_code;
};

/// Several kernels run as one launch (fuse::KernelGroup): a wrapper with
/// the kernel ABI whose tiling function tiles every member and lays out
/// their launches (af_group_schedule in the prelude), and whose kernel
/// function runs the members' blocks (cpu/kernel_group.cpp). Its args are
/// the group's inputs, then its outputs (every value a member writes, also
/// those only other members read), then the workspace and status slots.
struct KernelGroupSpec {
  struct Member {
    int kernel = 0;  ///< index into generate_cpu_module's `kernels`
    /// Per Data node, then per Output node of the member (in arg order):
    /// its index among the group's args (inputs first, then outputs).
    std::vector<int> args;
    /// 0: reads no other member's output; else 1 + the highest level of
    /// the members it reads.
    int level = 0;
    /// Elements of all its outputs together (graph shapes): 0 at run time
    /// means nothing to write, and the member is skipped.
    sym::Expr output_elements;
  };
  std::string name;
  std::vector<Member> members;  ///< in dependency order
  int num_inputs = 0;
  int num_outputs = 0;
};

/// Generates the module. Kernel names come from each AscGraph's name (made
/// unique). Deterministic: the same kernels give the same text. Without
/// groups every kernel is a launch of its own; with them, each launch is
/// one group (a kernel in no group of several is a group of one).
ModuleSource generate_cpu_module(const std::vector<schedule::ScheduledKernel>& kernels,
                                 const std::vector<KernelGroupSpec>& groups = {});

/// The module as at most `max_units` translation units for compilers run in
/// parallel (jit::compile_and_load), each the prelude followed by whole
/// launches: the costliest launch first, each to the unit with the least
/// cost so far, a launch's cost estimated from its vector loops and the
/// vector math inlined into them (what g++ spends its time on). One unit,
/// `module.code` itself, when max_units <= 1 or there is one launch.
/// Deterministic.
std::vector<std::string> split_translation_units(const ModuleSource& module, int max_units);

/// The prelude text embedded at the top of every module.
std::string_view kernel_prelude();

}  // namespace autofuse::codegen
