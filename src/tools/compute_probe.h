// A compute-speed probe run beside STREAM (stream.h): independent chains of
// fused multiply-adds at the widest vector width the CPU has. A VM's vCPU
// can run at very different speeds minutes apart (a host's other guests on
// the same physical core) while its memory bandwidth stays put; the probe in
// the same run tells a slow phase of the cores from a slow kernel (session
// 45: the same loop took 0.56 and 0.88 s on one vCPU, STREAM within 10%).
#pragma once

namespace autofuse::tools {

/// Runs `iterations` rounds of 8 independent FMA chains on this thread and
/// returns the floating-point operations done (2 per lane per FMA); the
/// caller times it. The chains' values stay finite and normal.
double fma_probe(long iterations);

}  // namespace autofuse::tools
