// What the tiling cost model knows about the host (af_machine, see
// codegen/kernel_abi.h), detected once when an Executable is built.
#pragma once

#include <cstdint>
#include <string>

#include "autofuse/codegen/kernel_abi.h"

namespace autofuse::runtime {

/// Least bytes a block should move to pay for waking another core. Waking a
/// sleeping or spinning worker costs ~0.3-0.5 us (cpu-facts.md); one core
/// streams ~30-40 GB/s from L3/DRAM, so the wake-up costs as much as moving
/// ~12-20 KB. Blocks of >= 64 KiB keep that overhead under ~25%.
inline constexpr int64_t kMinBlockBytes = 64 * 1024;

/// Detects the host: cores this process may run on (sched_getaffinity),
/// per-core L1d/L2 and shared L3 sizes (sysconf, else /sys, else typical
/// values), vector width (64 bytes with AVX-512F, 32 with AVX, else 16).
/// `threads` > 0 replaces the detected core count (blocks that can run at
/// once are the thread pool's threads).
af_machine detect_machine(int threads = 0);

/// "cores=2 l1=32K l2=1M l3=32M vector=64 min_block=64K"
std::string machine_to_string(const af_machine& machine);

}  // namespace autofuse::runtime
