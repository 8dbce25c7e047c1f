#include "runtime/machine.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "runtime/cache_probe.h"

namespace autofuse::runtime {

namespace {

int64_t detect_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1;
}

/// Size in bytes of cpu0's cache at `level` of `type` ("Data"/"Unified")
/// from /sys; 0 when unknown. Sizes there read like "32K" or "1024K".
int64_t sys_cache_size(int level, bool data_or_unified) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int l = 0;
    std::string type, size;
    if (!(level_file >> l) || !(type_file >> type) || !(size_file >> size)) break;
    if (l != level) continue;
    if (data_or_unified && type != "Data" && type != "Unified") continue;
    int64_t value = 0;
    size_t i = 0;
    while (i < size.size() && size[i] >= '0' && size[i] <= '9')
      value = value * 10 + (size[i++] - '0');
    if (i < size.size() && (size[i] == 'K' || size[i] == 'k')) value *= 1024;
    if (i < size.size() && (size[i] == 'M' || size[i] == 'm')) value *= 1024 * 1024;
    return value;
  }
  return 0;
}

/// /sys first: it describes the cache this CPU shares. glibc's sysconf
/// reports the L3 of the whole package on AMD EPYC (384 MiB on the
/// project's VM against 32 MiB per CCX in /sys and lscpu), which kept
/// streaming stores (used above half the L3) off.
int64_t cache_size(int sysconf_name, int level, int64_t fallback) {
  const int64_t s = sys_cache_size(level, true);
  if (s > 0) return s;
  const long v = sysconf(sysconf_name);
  return v > 0 ? v : fallback;
}

int64_t detect_vector_bytes() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 64;
  if (__builtin_cpu_supports("avx")) return 32;
#endif
  return 16;
}

std::string bytes_text(int64_t b) {
  if (b >= (1 << 20) && b % (1 << 20) == 0) return fmt::format("{}M", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{}K", b >> 10);
  return fmt::format("{}", b);
}

}  // namespace

af_machine detect_machine(int threads) {
  af_machine m{};
  m.cores = threads > 0 ? threads : detect_cores();
  m.l1_bytes = cache_size(_SC_LEVEL1_DCACHE_SIZE, 1, 32 << 10);
  m.l2_bytes = cache_size(_SC_LEVEL2_CACHE_SIZE, 2, 1 << 20);
  // No L3 (some VMs and small cores): the L2 is the last level.
  m.l3_bytes = cache_size(_SC_LEVEL3_CACHE_SIZE, 3, m.l2_bytes);
  // What the outputs can count on (cache_probe.h): less than reported where
  // a probe finds streaming stores faster past the private caches.
  m.l3_bytes = effective_l3_bytes(m.l3_bytes, m.l2_bytes, m.cores);
  m.vector_bytes = detect_vector_bytes();
  m.min_block_bytes = kMinBlockBytes;
  m.stream_max_ops_per_kib = m.vector_bytes >= 64 ? kStreamMaxOpsPerKiB512 : kStreamMaxOpsPerKiB;
  return m;
}

std::string machine_to_string(const af_machine& m) {
  return fmt::format("cores={} l1={} l2={} l3={} vector={} min_block={} stream_max={}/KiB", m.cores,
                     bytes_text(m.l1_bytes), bytes_text(m.l2_bytes), bytes_text(m.l3_bytes),
                     m.vector_bytes, bytes_text(m.min_block_bytes), m.stream_max_ops_per_kib);
}

}  // namespace autofuse::runtime
