// What the tiling cost model knows about the host (af_machine, see
// codegen/kernel_abi.h), detected once when an Executable is built.
#pragma once

#include <cstdint>
#include <string>

#include "autofuse/codegen/kernel_abi.h"

namespace autofuse::runtime {

/// Least bytes a block should move to pay for waking another core. Waking a
/// sleeping or spinning worker costs ~0.3-0.5 us (cpu-facts.md; an empty
/// 2-block launch 0.5 us on a Zen 5 VM); one core streams ~30-40 GB/s from
/// L3/DRAM, so the wake-up costs as much as moving ~12-20 KB. But a small
/// kernel's data is in the other core's L2 (the last kernel ran there), and
/// fetching it from there costs more: dlrm_concat B=64 (213 KB) on 2 cores
/// of that VM took 2.9 us in 2 blocks of 64+ KiB, 1.7 in one (one core: 1.7);
/// 128 KiB blocks changed no other pattern's small or medium shape by more
/// than noise (session 32, docs/benchmarks.md).
inline constexpr int64_t kMinBlockBytes = 128 * 1024;

/// Streaming stores pay only in a memory-bound loop (af_machine::
/// stream_max_ops_per_kib; tiling::loop_traffic counts a kernel's vector
/// instructions per element). A core issues ~2.2 vector instructions per
/// cycle on these loops and moves ~7-8 bytes per cycle from memory (22-25
/// GB/s at ~3 GHz): from a few hundred instructions per KiB moved the loop is
/// compute-bound, the traffic streaming saves no longer sets its time, and
/// ordinary stores leave the output in the cache for its consumer. Measured
/// on the suite's large rows (session 12, AMD Zen 3 AVX2, 1 and 2 threads,
/// interleaved A/B of the two keys): ordinary stores 2-29% faster at 528 and
/// above (chain30 f32; every bf16 output, whose rounding costs 13
/// instructions per 8 lanes: attention_transpose, rotary, rmsnorm,
/// skip_layernorm, softmax), streaming 6-85% faster at 267 and below (f32
/// transposes, norms, swiglu, batch-norm) and 0-8% at 432 (softmax f32).
/// 480 per KiB = 3.75 instructions per byte at 8 lanes.
inline constexpr int64_t kStreamMaxOpsPerKiB = 480;
/// With 64-byte vectors (AVX-512) streaming pays further: on an Ice Lake
/// without AVX512-BF16 (session 41; one thread, the keys interleaved in one
/// process), softmax_mask bf16 [8, 12, 384, 384] (688 per KiB: its passes
/// compute and stream in turn, so the saved traffic still sets part of the
/// time) 0.88-0.89x the time with streaming stores; erf- and tanh-GELU bf16
/// (624-640) 0.98-1.02x, chain30 bf16 (784) 0.98-1.02x: no loss up to 800.
inline constexpr int64_t kStreamMaxOpsPerKiB512 = 800;

/// Detects the host: cores this process may run on (sched_getaffinity),
/// per-core L1d/L2 and shared L3 sizes (/sys, else sysconf, else typical
/// values; the L3 as effective_l3_bytes in cache_probe.h decides), vector
/// width (64 bytes with AVX-512F, 32 with AVX, else 16).
/// `threads` > 0 replaces the detected core count (blocks that can run at
/// once are the thread pool's threads).
af_machine detect_machine(int threads = 0);

/// "cores=2 l1=32K l2=1M l3=32M vector=64 min_block=128K stream_max=480/KiB"
std::string machine_to_string(const af_machine& machine);

}  // namespace autofuse::runtime
