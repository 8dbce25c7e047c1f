// A STREAM-style bandwidth measurement, run in the same process as the
// benchmark it is compared with (machines are noisy; only ratios from one
// run mean much).
#pragma once

namespace autofuse::tools {

struct StreamResult {
  double triad_gbps = 0;  ///< a[i] = b[i] + s*c[i], 24 bytes per element, best rep
  double copy_gbps = 0;   ///< a[i] = b[i], 16 bytes per element, best rep
};

/// Runs triad and copy over arrays of `elements` doubles each (default: 16M
/// doubles = 128 MiB per array, well beyond the L3) on `threads` threads
/// (0: one per core), with ordinary stores, `reps` times; reports the best.
StreamResult measure_stream(int threads = 0, long elements = 16L << 20, int reps = 10);

}  // namespace autofuse::tools
