// What the compile pipeline (pipeline.cpp) hands to the Executable: the
// partitioned graph, the loaded kernels with their ABI entry points, and the
// report. Kept separate so that the Executable can be tested with
// hand-written programs and kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autofuse/codegen/kernel_abi.h"
#include "autofuse/fuse/fusion.h"
#include "autofuse/jit/compiler.h"
#include "autofuse/runtime/executable.h"

namespace autofuse::runtime {

using TilingDataSizeFn = int64_t (*)();
using TilingFn = void (*)(const int64_t* symbols, const af_machine* machine, void* tiling_data);
using KernelFn = void (*)(const void* tiling_data, void* const* args, int64_t block_idx);

/// One launch of the program: the code of one Kernel region, or of a
/// kernel group (fuse::KernelGroup) of several.
struct LoadedKernel {
  int region = 0;                    ///< index into FusedGraph::regions: the (first) member
  std::string name;                  ///< prefix of its ABI functions
  std::vector<ValueId> inputs;       ///< graph values behind the Data args, in order
  std::vector<ValueId> outputs;      ///< graph values behind the Output args, in order
  std::vector<std::string> symbols;  ///< the tiling function's symbols, in order
  /// codegen::KernelSource::gathers: not empty, the kernel reports bad
  /// gather indices in an af_status (kernel_abi.h), checked after each launch.
  std::vector<std::string> gathers;
  TilingDataSizeFn tiling_data_size = nullptr;
  TilingFn tiling = nullptr;
  KernelFn kernel = nullptr;
};

struct Program {
  fuse::FusedGraph fused;
  std::vector<LoadedKernel> kernels;    ///< one per kernel group, in region order
  std::shared_ptr<jit::Module> module;  ///< keeps the kernels' code loaded
  CompileReport report;
};

/// The ABI entry points `<name>_tiling_data_size`, `<name>_tiling` and
/// `<name>_kernel` of a loaded module.
void resolve_kernel_symbols(const jit::Module& module, LoadedKernel& kernel);

/// Builds the runtime around a compiled program (see executable.h).
/// `threads` 0: one per core.
std::unique_ptr<Executable> make_executable(Program program, int threads);

}  // namespace autofuse::runtime
