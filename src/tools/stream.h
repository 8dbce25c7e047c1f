// A STREAM-style bandwidth measurement, run in the same process as the
// benchmark it is compared with (machines are noisy; only ratios from one
// run mean much).
#pragma once

namespace autofuse::tools {

struct StreamResult {
  double triad_gbps = 0;     ///< a[i] = b[i] + s*c[i], 24 bytes per element, best rep
  double copy_gbps = 0;      ///< a[i] = b[i], 16 bytes per element, best rep
  double triad_nt_gbps = 0;  ///< triad with non-temporal (streaming) stores
  double copy_nt_gbps = 0;   ///< copy with non-temporal (streaming) stores
  /// Read only (STREAM2's SUM): b[i] and c[i] folded into a register, 16
  /// bytes per element; the figure for kernels that write next to nothing
  /// (reductions), whose mix neither triad nor copy has.
  double read_gbps = 0;
  /// Write only (STREAM2's FILL): a[i] = s, 8 bytes per element; the figure
  /// for kernels that read next to nothing. Ordinary stores also read each
  /// line first (write-allocate, not counted, as copy does not count it).
  double fill_gbps = 0;
  double fill_nt_gbps = 0;  ///< fill with non-temporal stores
  /// Not bandwidth: the compute probe's speed (compute_probe.h) on the same
  /// threads, GFLOP/s, so a report can tell a slow phase of the cores.
  double fma_gflops = 0;
  int threads = 0;       ///< the thread count it ran on
  double array_mib = 0;  ///< MiB per array

  /// Elementwise best of two measurements (bench measures before and after).
  StreamResult best(const StreamResult& other) const;
};

/// Runs triad, copy and fill, each with ordinary and with non-temporal stores, read and the FMA
/// probe, over arrays of `elements` doubles each (default: 16M doubles = 128 MiB per array, well
/// beyond the L3) on `threads` threads (0: one per core), `reps` times; reports the best rep of
/// each. Ordinary stores also read the destination line first (write-allocate), which non-temporal
/// stores skip: the pair brackets what a kernel's stores can reach.
StreamResult measure_stream(int threads = 0, long elements = 16L << 20, int reps = 10);

}  // namespace autofuse::tools
