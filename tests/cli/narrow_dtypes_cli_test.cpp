// `run --check` (compiled kernels against the reference) on small graphs in
// each of the integer widths and float8 types beyond the original set:
// integer arithmetic with wraparound and division by zero, a reduction,
// casts both ways; float8 quantization (saturating and not, of values
// beyond the range), arithmetic in float8 and a reduction. Fused and unfused, on shapes with block
// and vector tails.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace narrow_dtypes_cli_test_local {

std::string int_graph(const char* t) {
  return fmt::format(R"(graph ints(x: {0}[N, D], y: {0}[D]) {{
  a = add(x, y)
  m = mul(a, x)
  d = div(m, y)
  r = mod(m, y)
  mx = max(d, r)
  s = reduce_sum(mx, axes=[1], keepdims=true)
  z = sub(mx, s)
  n = neg(z)
  c = cast(n, to=f32)
  back = cast(c, to={0})
  return z, c, back
}}
)",
                     t);
}

std::string float8_graph(const char* t) {
  return fmt::format(R"(graph f8(x: f32[N, D], w: {0}[D]) {{
  q = cast(x, to={0})
  h = mul(q, w)
  a = add(h, q)
  e = exp(a)
  s = reduce_sum(a, axes=[1])
  o = cast(e, to=f32)
  big = constant(dtype=f32, value=1e5)
  xb = mul(x, big)
  sat = cast(xb, to={0})
  nosat = cast(xb, to={0}, saturate=false)
  return a, s, o, sat, nosat
}}
)",
                     t);
}

void expect_check_passes(const std::string& name, const std::string& text, bool fused) {
  SCOPED_TRACE(name + (fused ? " fused" : " unfused"));
  const std::string path = write_temp_file(name + ".af", text);
  std::vector<std::string> args = {"run",     path,      "--check", "--json",
                                   "--shape", "N=3,D=5", "--shape", "N=37,D=130"};
  if (!fused) args.push_back("--unfused");
  const CliResult r = run_cli(args, {shared_cache_env()});
  ASSERT_EQ(r.exit_code, 0) << "stderr: " << r.err << "\nstdout: " << r.out;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ok"], true) << r.out;
  for (const auto& run : doc["runs"])
    EXPECT_EQ(run["ok"], true) << run.dump();
}

TEST(NarrowDTypesCli, RunCheckOnEveryNewIntegerWidth) {
  for (const char* t : {"i4", "u4", "i16", "u16", "u32", "u64"})
    for (bool fused : {true, false})
      expect_check_passes(fmt::format("ints_{}", t), int_graph(t), fused);
}

TEST(NarrowDTypesCli, RunCheckOnEveryFloat8Type) {
  for (const char* t : {"f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz"})
    for (bool fused : {true, false})
      expect_check_passes(fmt::format("f8_{}", t), float8_graph(t), fused);
}

}  // namespace narrow_dtypes_cli_test_local
}  // namespace autofuse::testing
