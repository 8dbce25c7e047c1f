// Whether the shared L3 keeps a kernel's output for us, measured on the host.
//
// The tiling functions stream (non-temporal stores, software prefetches:
// tiling key 1) only outputs larger than half of af_machine::l3_bytes. The
// L3 that /sys reports is not always a cache a process can count on: on an
// Intel Xeon (Emerald Rapids) VM with 2 vCPUs it reports the socket's 260
// MiB, yet ordinary copies slow down from 16 MiB per array on, and streaming
// stores beat ordinary ones 2x already at 1-4 MiB per array (session 16:
// `autofuse stream --mib 1..128`). On the AMD EPYC VMs of earlier sessions
// the L3 (32 MiB per CCX) is a real cache there, and streaming stores were
// 3-10x slower while the data fit (cpu-facts.md). A short probe tells the two
// kinds apart.
#pragma once

#include <cstdint>

namespace autofuse::runtime {

struct StreamingProbe {
  double ordinary_gbps = 0;   ///< copy with ordinary stores, best rep
  double streaming_gbps = 0;  ///< the same copy with non-temporal stores
  /// Streaming stores clearly faster (>= 1.3x) on a working set that the
  /// private caches cannot hold but the reported L3 could.
  bool streaming_wins = false;
};

/// One thread copies `array_bytes` from one array to another, `reps` times
/// with each kind of store, interleaved; best rep of each. About 10 ms for
/// 4 MiB arrays (most of it the first touch of the pages). Without
/// non-temporal stores on this target: both rates 0, streaming_wins false.
StreamingProbe probe_streaming(int64_t array_bytes, int reps = 6);

/// The L3 bytes the cost model should count on (af_machine::l3_bytes): the
/// AUTOFUSE_L3_BYTES environment variable when set (bytes, or with a K/M/G
/// suffix); else `reported_l3`, unless the probe (run once per process, over
/// arrays twice the L2) finds streaming stores faster there: then
/// 2 * l2_bytes * cores, so that tiling functions stream every output that
/// the cores' private caches cannot hold.
int64_t effective_l3_bytes(int64_t reported_l3, int64_t l2_bytes, int64_t cores);

/// Parses "1048576", "512K", "32M", "1G" (binary units); -1 when malformed.
int64_t parse_byte_size(const char* text);

}  // namespace autofuse::runtime
