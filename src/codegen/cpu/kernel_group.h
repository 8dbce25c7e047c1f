// The wrapper of a kernel group (codegen::KernelGroupSpec): the three ABI
// functions of one launch around its members' own (already emitted) ones.
#pragma once

#include <string>
#include <vector>

#include "autofuse/codegen/cpu_codegen.h"

namespace autofuse::codegen::cpu {

/// What the wrapper needs of an emitted member kernel.
struct GroupMemberCode {
  std::string name;                  ///< its ABI prefix
  std::vector<std::string> symbols;  ///< its tiling function's symbols, in order
  int num_inputs = 0;
  int num_outputs = 0;
};

/// The wrapper named `name` over `members` (parallel to spec.members);
/// `symbols`: the wrapper's tiling symbols (every member's and those of the
/// members' output_elements); `has_gathers`: some member has gathers (the
/// wrapper then passes the status slot on).
std::string emit_kernel_group(const KernelGroupSpec& spec, const std::string& name,
                              const std::vector<GroupMemberCode>& members,
                              const std::vector<std::string>& symbols, bool has_gathers);

}  // namespace autofuse::codegen::cpu
