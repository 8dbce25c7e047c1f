// compile_and_load of a module given as several translation units: compiled
// in parallel and linked into one entry keyed by the whole source; a failing
// unit or link is reported and leaves nothing behind.
#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "autofuse/jit/compiler.h"
#include "jit/jit_test_util.h"
#include "scoped_env.h"

namespace autofuse::jit {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace build_units_test_local {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// A unit exporting `int af_unit_<k>(int)`, returning x * 10 + k.
std::string unit(int k) {
  return "extern \"C\" int af_unit_" + std::to_string(k) + "(int x) { return x * 10 + " +
         std::to_string(k) + "; }\n";
}

/// Units 0..n-1 and their concatenation (one translation unit doing the same).
struct Split {
  std::string whole;
  std::vector<std::string> units;
};
Split split_of(int n) {
  Split s;
  for (int k = 0; k < n; ++k) {
    s.units.push_back(unit(k));
    s.whole += s.units.back();
  }
  return s;
}

int call_unit(const Module& m, int k, int x) {
  auto* f = reinterpret_cast<int (*)(int)>(m.symbol("af_unit_" + std::to_string(k)));
  return f(x);
}

/// Nothing but finished entries (.so, .sum, kept sources, locks) in `dir`.
void expect_no_temporaries(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".XXXXXX"), std::string::npos) << name;
    EXPECT_FALSE(name.ends_with(".o")) << name;
    EXPECT_EQ(name.find(".u"), name.find(".unit")) << name;  // no unit temporaries
  }
}

TEST(JitUnits, SeveralUnitsBecomeOneModule) {
  for (int jobs : {1, 2, 5}) {
    TempDir dir;
    CompilerOptions options = options_in(dir.path());
    options.jobs = jobs;
    const Split s = split_of(5);
    CompileStats stats;
    auto m = compile_and_load(s.whole, s.units, options, stats);
    for (int k = 0; k < 5; ++k)
      EXPECT_EQ(call_unit(*m, k, 3), 30 + k) << "jobs " << jobs;
    EXPECT_EQ(stats.compiles, 1);
    EXPECT_EQ(stats.units, 5);
    EXPECT_EQ(count_files(dir.path(), ".so"), 1);
    EXPECT_EQ(count_files(dir.path(), ".sum"), 1);
    // The whole module is kept beside the entry, as for one unit.
    const fs::path kept = fs::path(stats.shared_object).replace_extension(".cpp");
    EXPECT_TRUE(fs::exists(kept));
    expect_no_temporaries(dir.path());
  }
}

TEST(JitUnits, TheWholeSourceKeysTheCache) {
  TempDir dir;
  const Split s = split_of(3);
  CompileStats first, second, third;
  compile_and_load(s.whole, s.units, options_in(dir.path()), first);
  // The same module in one unit, or split otherwise: the same entry.
  auto again = compile_and_load(s.whole, options_in(dir.path()), second);
  auto split2 = compile_and_load(s.whole, {s.units[0] + s.units[1], s.units[2]},
                                 options_in(dir.path()), third);
  EXPECT_EQ(first.compiles, 1);
  EXPECT_EQ(second.cache_hits, 1);
  EXPECT_EQ(third.cache_hits, 1);
  EXPECT_EQ(second.compiles + third.compiles, 0);
  EXPECT_EQ(call_unit(*again, 2, 1), 12);
  EXPECT_EQ(call_unit(*split2, 0, 1), 10);
}

TEST(JitUnits, OneUnitCompilesTheSourceItself) {
  TempDir dir;
  CompileStats stats;
  // The unit list is ignored when it has one unit: the source is compiled.
  auto m = compile_and_load(unit(4), {"this is not C++"}, options_in(dir.path()), stats);
  EXPECT_EQ(call_unit(*m, 4, 2), 24);
  EXPECT_EQ(stats.units, 1);
}

TEST(JitUnits, AFailingUnitIsNamedAndKept) {
  TempDir dir;
  Split s = split_of(3);
  s.units[1] = "extern \"C\" int af_unit_1(int x) { return x +; }\n";
  s.whole = s.units[0] + s.units[1] + s.units[2];
  CompileStats stats;
  try {
    compile_and_load(s.whole, s.units, options_in(dir.path()), stats);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("translation unit 1 of 3"));
    EXPECT_THAT(msg, HasSubstr("expected primary"));  // the compiler's own diagnostic
    const std::string key = "unit kept at ";
    const size_t at = msg.find(key);
    ASSERT_NE(at, std::string::npos) << msg;
    const size_t begin = at + key.size();
    const std::string path = msg.substr(begin, msg.find(' ', begin) - begin);
    EXPECT_TRUE(fs::exists(path)) << path;
    EXPECT_TRUE(path.ends_with(".unit1.cpp")) << path;
  }
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(count_files(dir.path(), ".so"), 0);  // no broken entry left behind
  EXPECT_EQ(count_files(dir.path(), ".sum"), 0);
  expect_no_temporaries(dir.path());
}

TEST(JitUnits, AFailingLinkIsReported) {
  TempDir dir;
  // Each unit compiles, but both define af_unit_0.
  const std::vector<std::string> units = {unit(0), unit(0)};
  CompileStats stats;
  try {
    compile_and_load(units[0] + "// twice\n" + units[1], units, options_in(dir.path()), stats);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("linking the 2 translation units"));
    EXPECT_THAT(e.what(), HasSubstr("af_unit_0"));  // the linker names the symbol
  }
  EXPECT_EQ(count_files(dir.path(), ".so"), 0);
  expect_no_temporaries(dir.path());
}

TEST(JitUnits, JobsFromTheOptionsTheEnvironmentOrTheHardware) {
  CompilerOptions options;
  {
    ScopedEnv unset("AUTOFUSE_COMPILE_JOBS", nullptr);
    EXPECT_GE(compile_jobs(options), 1);
    EXPECT_EQ(compile_jobs(options),
              static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  {
    ScopedEnv env("AUTOFUSE_COMPILE_JOBS", "5");
    EXPECT_EQ(compile_jobs(options), 5);
    options.jobs = 3;  // the options win
    EXPECT_EQ(compile_jobs(options), 3);
    options.jobs = 0;
  }
  {
    ScopedEnv zero("AUTOFUSE_COMPILE_JOBS", "0");
    EXPECT_EQ(compile_jobs(options),
              static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  }
  for (const char* bad : {"two", "-1", "3x", "99999999999999999999"}) {
    ScopedEnv env("AUTOFUSE_COMPILE_JOBS", bad);
    try {
      compile_jobs(options);
      FAIL() << bad;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("AUTOFUSE_COMPILE_JOBS")) << bad;
    }
  }
}

}  // namespace build_units_test_local
}  // namespace autofuse::jit
