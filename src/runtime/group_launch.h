// The launch of a kernel group (fuse::KernelGroup): its args and how each
// member reads them (codegen::KernelGroupSpec). Pipeline glue between the
// fused graph and the code generator.
#pragma once

#include <vector>

#include "autofuse/codegen/cpu_codegen.h"
#include "autofuse/fuse/fusion.h"

namespace autofuse::runtime {

/// One kernel (loop nest) of the program before grouping: its args.
struct NestArgs {
  std::vector<ValueId> inputs;   ///< behind its Data args, in order
  std::vector<ValueId> outputs;  ///< behind its Output args, in order
};

struct GroupLaunch {
  codegen::KernelGroupSpec spec;
  std::vector<ValueId> inputs;   ///< read from outside the group, first use order
  std::vector<ValueId> outputs;  ///< every value a member writes, in member order
};

/// `nests[kernel_of_region[r]]` are the args of Kernel region r. A member
/// reading a value another member writes (directly or through a reshape
/// view) gets the writer's output arg (same bytes) and a higher level; its
/// other inputs are the group's inputs. A group of one keeps its kernel's args.
GroupLaunch plan_group_launch(const fuse::FusedGraph& fused, const fuse::KernelGroup& group,
                              const std::vector<int>& kernel_of_region,
                              const std::vector<NestArgs>& nests);

}  // namespace autofuse::runtime
