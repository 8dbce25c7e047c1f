// compile_and_load: compiling, the disk cache (same process, another
// process, corrupt entries, concurrent compiles) and the error paths.
#include "autofuse/jit/compiler.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "jit/jit_test_util.h"
#include "jit/process.h"
#include "scoped_env.h"

namespace autofuse::jit {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace compiler_test_local {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

/// A module exporting `int af_test_f(int)` that returns x * 3 + `k`.
std::string module_source(int k) {
  return "extern \"C\" int af_test_f(int x) { return x * 3 + " + std::to_string(k) + "; }\n";
}

int call_f(const Module& m, int x) {
  auto* f = reinterpret_cast<int (*)(int)>(m.symbol("af_test_f"));
  return f(x);
}

TEST(Jit, CompilesLoadsAndRuns) {
  TempDir dir;
  CompileStats stats;
  auto m = compile_and_load(module_source(7), options_in(dir.path()), stats);
  EXPECT_EQ(call_f(*m, 5), 22);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.cache_hits, 0);
  EXPECT_GT(stats.compile_seconds, 0);
  EXPECT_TRUE(fs::exists(stats.shared_object)) << stats.shared_object;
  EXPECT_EQ(fs::path(stats.shared_object).parent_path(), fs::path(dir.path()));
  // The source is kept next to the entry.
  fs::path kept = fs::path(stats.shared_object).replace_extension(".cpp");
  EXPECT_TRUE(fs::exists(kept));
}

TEST(Jit, SecondCallHitsTheCache) {
  TempDir dir;
  CompileStats first, second;
  auto a = compile_and_load(module_source(1), options_in(dir.path()), first);
  auto b = compile_and_load(module_source(1), options_in(dir.path()), second);
  EXPECT_EQ(first.compiles, 1);
  EXPECT_EQ(second.compiles, 0);
  EXPECT_EQ(second.cache_hits, 1);
  EXPECT_EQ(first.shared_object, second.shared_object);
  EXPECT_EQ(call_f(*b, 1), 4);
  a.reset();
  EXPECT_EQ(call_f(*b, 2), 7);  // b holds its own reference to the library
}

TEST(Jit, KeyCoversSourceAndFlags) {
  TempDir dir;
  CompileStats stats;
  compile_and_load(module_source(1), options_in(dir.path()), stats);
  compile_and_load(module_source(2), options_in(dir.path()), stats);
  CompilerOptions other = options_in(dir.path());
  other.flags = {"-O2"};
  compile_and_load(module_source(1), other, stats);
  CompilerOptions other_link = options_in(dir.path());
  other_link.link_flags = {};
  compile_and_load(module_source(1), other_link, stats);
  EXPECT_EQ(stats.compiles, 4);
  EXPECT_EQ(stats.cache_hits, 0);
  EXPECT_EQ(count_files(dir.path(), ".so"), 4);
}

// Run in a child process by SecondProcessHitsTheCache (disabled otherwise).
TEST(JitHelper, DISABLED_CompileForOtherProcess) {
  const char* dir = std::getenv("AF_JIT_TEST_CACHE");
  ASSERT_NE(dir, nullptr) << "only runs as the helper of SecondProcessHitsTheCache";
  CompileStats stats;
  auto m = compile_and_load(module_source(42), options_in(dir), stats);
  ASSERT_EQ(call_f(*m, 1), 45);
  std::printf("AF_STATS compiles=%d hits=%d\n", stats.compiles, stats.cache_hits);
}

TEST(Jit, SecondProcessHitsTheCache) {
  TempDir dir;
  CompileStats stats;
  compile_and_load(module_source(42), options_in(dir.path()), stats);
  ASSERT_EQ(stats.compiles, 1);

  ScopedEnv env("AF_JIT_TEST_CACHE", dir.path().c_str());
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  ProcessResult r = run_process({self, "--gtest_also_run_disabled_tests",
                                 "--gtest_filter=JitHelper.DISABLED_CompileForOtherProcess"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("AF_STATS compiles=0 hits=1")) << r.output;
}

TEST(Jit, TruncatedEntryIsRecompiled) {
  TempDir dir;
  std::string so;
  {
    CompileStats stats;
    auto m = compile_and_load(module_source(3), options_in(dir.path()), stats);
    so = stats.shared_object;
  }  // unloaded, so the next load really opens the file
  const auto size = fs::file_size(so);
  fs::resize_file(so, size / 2);

  CompileStats stats;
  auto m = compile_and_load(module_source(3), options_in(dir.path()), stats);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.cache_hits, 0);
  EXPECT_EQ(call_f(*m, 1), 6);
  EXPECT_GT(fs::file_size(so), size / 2);
}

TEST(Jit, EntryWithoutChecksumIsRecompiled) {
  TempDir dir;
  std::string so;
  {
    CompileStats stats;
    compile_and_load(module_source(5), options_in(dir.path()), stats);
    so = stats.shared_object;
  }
  fs::remove(fs::path(so).replace_extension(".sum"));
  CompileStats stats;
  auto m = compile_and_load(module_source(5), options_in(dir.path()), stats);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(call_f(*m, 1), 8);
  CompileStats again;
  compile_and_load(module_source(5), options_in(dir.path()), again);
  EXPECT_EQ(again.cache_hits, 1);
}

TEST(Jit, GarbageEntryIsRecompiled) {
  TempDir dir;
  std::string so;
  {
    CompileStats stats;
    compile_and_load(module_source(4), options_in(dir.path()), stats);
    so = stats.shared_object;
  }
  std::ofstream(so, std::ios::trunc) << "not an ELF file";
  CompileStats stats;
  auto m = compile_and_load(module_source(4), options_in(dir.path()), stats);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(call_f(*m, 0), 4);
}

TEST(Jit, MissingCompilerIsAUserError) {
  TempDir dir;
  CompileStats stats;
  CompilerOptions o = options_in(dir.path());
  o.cxx = "/nonexistent/g++";
  try {
    compile_and_load(module_source(1), o, stats);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/g++"));
  }
}

TEST(Jit, CxxFromTheEnvironment) {
  TempDir dir;
  CompileStats stats;
  {
    ScopedEnv env("CXX", "/nonexistent");
    try {
      compile_and_load(module_source(1), options_in(dir.path()), stats);
      FAIL() << "expected a UserError";
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("'/nonexistent' (from $CXX)"));
    }
  }
  // A compiler named without a path is looked up on PATH.
  ScopedEnv env("CXX", "g++");
  auto m = compile_and_load(module_source(5), options_in(dir.path()), stats);
  EXPECT_EQ(call_f(*m, 0), 5);
}

TEST(Jit, NoCompilerOnPath) {
  TempDir dir;
  ScopedEnv cxx("CXX", nullptr);
  ScopedEnv path("PATH", dir.path().c_str());  // an empty folder
  CompileStats stats;
  try {
    compile_and_load(module_source(1), options_in(dir.path()), stats);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no C++ compiler found: set CXX or install g++"));
  }
}

TEST(Jit, SyntaxErrorReportsTheCompilerMessage) {
  TempDir dir;
  CompileStats stats;
  const std::string bad = "extern \"C\" int af_test_f(int x) { return x +; }\n";
  try {
    compile_and_load(bad, options_in(dir.path()), stats);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("compiler failed"));
    EXPECT_THAT(msg, HasSubstr("error"));             // the compiler's own diagnostic
    EXPECT_THAT(msg, HasSubstr("expected primary"));  // g++ and clang++ both say this
    // The kept source is named and exists.
    const size_t at = msg.find("source kept at ");
    ASSERT_NE(at, std::string::npos);
    const size_t begin = at + std::string("source kept at ").size();
    const std::string path = msg.substr(begin, msg.find('\n', begin) - begin);
    EXPECT_TRUE(fs::exists(path)) << path;
  }
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(count_files(dir.path(), ".so"), 0);  // no broken entry left behind
}

TEST(Jit, UnusableCacheFolder) {
  TempDir dir;
  const std::string file = dir.path() + "/plain_file";
  std::ofstream(file) << "x";
  CompileStats stats;
  CompilerOptions o = options_in(file + "/cache");
  try {
    compile_and_load(module_source(1), o, stats);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr(file + "/cache"));
  }
}

TEST(Jit, CreatesNestedCacheFolder) {
  TempDir dir;
  CompileStats stats;
  auto m = compile_and_load(module_source(9), options_in(dir.path() + "/a/b/c"), stats);
  EXPECT_EQ(call_f(*m, 1), 12);
  EXPECT_TRUE(fs::is_directory(dir.path() + "/a/b/c"));
}

TEST(Jit, CacheFolderFromTheEnvironment) {
  TempDir dir;
  ScopedEnv env("AUTOFUSE_CACHE_DIR", dir.path().c_str());
  CompilerOptions o;
  o.flags = {"-O1"};
  CompileStats stats;
  compile_and_load(module_source(11), o, stats);
  EXPECT_EQ(fs::path(stats.shared_object).parent_path(), fs::path(dir.path()));
}

TEST(Jit, WithoutTheCacheEveryCallCompiles) {
  TempDir dir;
  CompilerOptions o = options_in(dir.path());
  o.use_cache = false;
  CompileStats stats;
  auto a = compile_and_load(module_source(6), o, stats);
  auto b = compile_and_load(module_source(6), o, stats);
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_EQ(stats.cache_hits, 0);
  EXPECT_EQ(call_f(*a, 1), 9);
  EXPECT_EQ(call_f(*b, 1), 9);
  EXPECT_EQ(count_files(dir.path(), ".so"), 0);  // loaded, then unlinked
}

TEST(Jit, DumpsTheSource) {
  TempDir dir;
  CompilerOptions o = options_in(dir.path());
  o.dump_source_path = dir.path() + "/dumped.cpp";
  CompileStats stats;
  compile_and_load(module_source(8), o, stats);
  std::ifstream in(o.dump_source_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, module_source(8));
}

TEST(Jit, MissingSymbolIsAnInternalError) {
  TempDir dir;
  CompileStats stats;
  auto m = compile_and_load(module_source(1), options_in(dir.path()), stats);
  EXPECT_THROW(m->symbol("no_such_function"), InternalError);
}

TEST(Jit, ConcurrentCompilesOfTheSameSource) {
  TempDir dir;
  constexpr int kThreads = 4;
  std::vector<CompileStats> stats(kThreads);
  std::vector<int> results(kThreads, -1);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto m = compile_and_load(module_source(77), options_in(dir.path()), stats[t]);
        results[t] = call_f(*m, 1);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads)
    th.join();
  int compiles = 0, hits = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "");
    EXPECT_EQ(results[t], 80);
    compiles += stats[t].compiles;
    hits += stats[t].cache_hits;
  }
  EXPECT_EQ(compiles, 1);  // the lock makes the others wait and hit
  EXPECT_EQ(hits, kThreads - 1);
  EXPECT_EQ(count_files(dir.path(), ".so"), 1);
  EXPECT_EQ(count_files(dir.path(), ".cpp"), 1);  // no temporaries left
}

TEST(Process, CapturesOutputAndExitCode) {
  ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.output, HasSubstr("out\n"));
  EXPECT_THAT(r.output, HasSubstr("err\n"));
}

TEST(Process, ArgumentsAreNotInterpretedByAShell) {
  ProcessResult r = run_process({"/bin/echo", "$(touch /tmp/af_injected)", ";", "ls"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "$(touch /tmp/af_injected) ; ls\n");
}

TEST(Process, FindProgram) {
  EXPECT_NE(find_program("sh"), "");
  EXPECT_EQ(find_program("surely_no_such_program_af"), "");
  EXPECT_EQ(find_program("/bin/sh"), "/bin/sh");
  EXPECT_EQ(find_program("/nonexistent/x"), "");
  EXPECT_THROW(run_process({"/nonexistent/x"}), UserError);
}

}  // namespace compiler_test_local
}  // namespace autofuse::jit
