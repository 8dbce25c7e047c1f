// Helpers for the reduction tests: kernels run the way the runtime runs
// them when it offers phased launches (kernel_abi.h: header.max_phases set
// before the tiling function, a workspace, the launches in order), and the
// machines that make the tiling split reductions across blocks.
#pragma once

#include <string>
#include <vector>

#include "codegen_test_util.h"

namespace autofuse::codegen_test {

/// What the tiling function chose for a run.
struct PhasedRun {
  std::vector<HostTensor> outputs;
  int64_t block_dim = 0;
  int64_t phases = 0;
  int64_t workspace_bytes = 0;
  int64_t split = 0;    ///< tiling data field `split`
  int64_t tile = 0;     ///< tiling data field `tile`
  int64_t fold = 0;     ///< tiling data field `fold`
  int64_t pf_rows = 0;  ///< tiling data field `pf_rows`
  af_status status{};   ///< what the kernel reported over all launches
};

/// Like run_kernel, offering `max_phases` launches: the tiling function may
/// split; every launch runs its blocks in reverse order (they must be
/// independent); the workspace starts filled with garbage.
PhasedRun run_phased(const jit::Module& module, const codegen::KernelSource& k,
                     const ascir::AscGraph& asc, const Graph& graph,
                     const std::vector<HostTensor>& inputs, const sym::Binding& binding,
                     const af_machine& machine, int64_t max_phases = 64);

/// Machines whose cost model splits small reductions: `cores` cores, blocks
/// worth any bytes, vectors of `vector_bytes`.
af_machine split_machine(int64_t cores, int64_t vector_bytes);

/// check_cases, plus every case run with run_phased on machines that split
/// (and with max_phases 0, which must not split). Returns the module source.
/// `expect_split`: at least one run of each case must have split. `prefix`
/// as check_cases'.
std::string check_split_cases(std::vector<GraphCase>& cases, bool expect_split, uint64_t seed = 1,
                              const std::string& prefix = {});

}  // namespace autofuse::codegen_test
