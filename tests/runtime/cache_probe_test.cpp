#include "runtime/cache_probe.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "autofuse/error.h"
#include "runtime/machine.h"
#include "scoped_env.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace cache_probe_test_local {

TEST(CacheProbe, ParsesByteSizes) {
  EXPECT_EQ(parse_byte_size("0"), 0);
  EXPECT_EQ(parse_byte_size("33554432"), 33554432);
  EXPECT_EQ(parse_byte_size("512K"), 512 << 10);
  EXPECT_EQ(parse_byte_size("32M"), int64_t{32} << 20);
  EXPECT_EQ(parse_byte_size("2g"), int64_t{2} << 30);
  EXPECT_EQ(parse_byte_size(""), -1);
  EXPECT_EQ(parse_byte_size("-5"), -1);
  EXPECT_EQ(parse_byte_size("32MB"), -1);
  EXPECT_EQ(parse_byte_size("M"), -1);
  EXPECT_EQ(parse_byte_size("99999999999G"), -1);
  EXPECT_EQ(parse_byte_size(nullptr), -1);
}

TEST(CacheProbe, MeasuresBothKindsOfStore) {
  const StreamingProbe p = probe_streaming(4 << 20, 4);
#if defined(__x86_64__)
  EXPECT_GT(p.ordinary_gbps, 0.1);
  EXPECT_GT(p.streaming_gbps, 0.1);
  const double ratio = p.streaming_gbps / p.ordinary_gbps;  // the verdict's margin is 1.3x
  if (ratio > 1.31) {
    EXPECT_TRUE(p.streaming_wins) << ratio;
  }
  if (ratio < 1.29) {
    EXPECT_FALSE(p.streaming_wins) << ratio;
  }
  std::cout << "copy of 2 x 4 MiB: ordinary " << p.ordinary_gbps << " GB/s, streaming "
            << p.streaming_gbps << " GB/s\n";
#else
  EXPECT_FALSE(p.streaming_wins);
#endif
}

TEST(CacheProbe, EnvironmentSetsTheL3) {
  {
    ScopedEnv env("AUTOFUSE_L3_BYTES", "8M");
    EXPECT_EQ(effective_l3_bytes(int64_t{260} << 20, 2 << 20, 2), int64_t{8} << 20);
    EXPECT_EQ(detect_machine(2).l3_bytes, int64_t{8} << 20);
  }
  {
    ScopedEnv env("AUTOFUSE_L3_BYTES", "lots");
    EXPECT_THROW(effective_l3_bytes(int64_t{260} << 20, 2 << 20, 2), UserError);
  }
}

TEST(CacheProbe, SmallL3IsKeptWithoutAProbe) {
  // An L3 no larger than twice the private L2s has nothing to decide.
  EXPECT_EQ(effective_l3_bytes(4 << 20, 1 << 20, 2), 4 << 20);
  EXPECT_EQ(effective_l3_bytes(0, 1 << 20, 1), 0);
}

TEST(CacheProbe, EffectiveL3IsTheReportedOneOrThePrivateCaches) {
  const int64_t l3 = int64_t{260} << 20, l2 = 2 << 20;
  const int64_t e = effective_l3_bytes(l3, l2, 2);
  EXPECT_TRUE(e == l3 || e == 2 * l2 * 2) << e;
  // The probe ran once: the same answer for another core count.
  EXPECT_EQ(effective_l3_bytes(l3, l2, 1) == l3, e == l3);
}

}  // namespace cache_probe_test_local
}  // namespace autofuse::runtime
