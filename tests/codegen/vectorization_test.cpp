// Every `#pragma omp simd` loop of a kernel must vectorize, on AVX2 and on
// AVX-512 alike, whatever the machine running the tests: the module is
// compiled for -march=x86-64-v3 and -march=x86-64-v4 (compile only) with
// g++'s vectorizer report, and no loop after a pragma may be reported as
// not vectorized. A scalar loop is still correct, so the other tests do not
// see it; it is only 5-10x slower. Found on a Zen 3 (AVX2) machine: max, min
// and relu written as a ternary left chain30's loop scalar there (g++ moved
// the arithmetic after relu(x) into the ternary's arms and, without mask
// registers, could not if-convert them), while AVX-512 machines vectorized it.
// And with the JIT's own flags, on Intel AVX-512 targets, the loops use the
// whole 64-byte registers (LoopsFillAvx512RegistersOnIntelTargets).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "autofuse/graph/text.h"
#include "codegen_test_util.h"
#include "jit/process.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace vectorization_test_local {

/// chain30's kinds of steps: relu, max and min against constants and a
/// per-column operand, followed by arithmetic; abs, sqrt, a reciprocal.
std::string chain_text(const char* dtype) {
  std::ostringstream s;
  s << "graph chain(x: " << dtype << "[N, D], b: " << dtype << "[D]) {\n"
    << "  two = constant(dtype=" << dtype << ", value=2)\n"
    << "  four = constant(dtype=" << dtype << ", value=4)\n"
    << R"(  a1 = mul(x, two)
  a2 = relu(a1)
  a3 = mul(a2, four)
  a4 = max(a3, b)
  a5 = min(a4, four)
  a6 = mul(a5, a5)
  a7 = max(a6, two)
  a8 = sub(a7, x)
  a9 = abs(a8)
  a10 = sqrt(a9)
  a11 = reciprocal(a10)
  a12 = min(a11, two)
  y = relu(a12)
  return y
}
)";
  return s.str();
}

/// The lines of `code` (1-based) that follow a `#pragma omp simd` within
/// three lines: where g++ reports on the loop.
std::vector<bool> simd_loop_lines(const std::string& code) {
  std::vector<bool> near = {false};
  std::istringstream in(code);
  std::string line;
  int since_pragma = 99;
  while (std::getline(in, line)) {
    near.push_back(since_pragma >= 1 && since_pragma <= 3);
    since_pragma = line.find("#pragma omp simd") != std::string::npos ? 1 : since_pragma + 1;
  }
  return near;
}

/// g++'s vectorizer report (`report`, an -fopt-info option) on `code`
/// compiled with `flags` (compile only), and the file name it names.
struct VecReport {
  std::string output;
  std::string file;
};
VecReport vectorizer_report(const std::string& code, const std::string& tag,
                            const std::vector<std::string>& flags, const std::string& report) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string path =
      (dir / ("af_vectorization_" + std::to_string(::getpid()) + "_" + tag + ".cpp")).string();
  {
    std::ofstream out(path);
    out << code;
  }
  const std::string gxx = jit::find_program("g++");
  EXPECT_FALSE(gxx.empty()) << "no g++";
  if (gxx.empty()) return {};
  std::vector<std::string> argv = {gxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const std::string obj = path + ".o";
  argv.insert(argv.end(), {"-fPIC", "-c", "-o", obj, report, path});
  const jit::ProcessResult c = jit::run_process(argv);
  std::remove(obj.c_str());
  std::remove(path.c_str());
  EXPECT_EQ(c.exit_code, 0) << c.output;
  return {c.output, std::filesystem::path(path).filename().string()};
}

/// g++'s reports of loops after a pragma that it did not vectorize, when
/// compiling `code` for `march`.
std::vector<std::string> scalar_simd_loops(const std::string& code, const std::string& march) {
  const VecReport r =
      vectorizer_report(code, march, {"-O3", "-march=" + march, "-fno-math-errno", "-fopenmp-simd"},
                        "-fopt-info-vec-all");
  // Not vacuous: the kernels have vector loops, and g++ reports on them.
  EXPECT_NE(code.find("#pragma omp simd"), std::string::npos);
  EXPECT_NE(r.output.find("loop vectorized"), std::string::npos) << march;
  const std::vector<bool> near = simd_loop_lines(code);
  std::vector<std::string> scalar;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    // "<file>:<line>:<col>: missed: couldn't vectorize loop"
    if (line.find("couldn't vectorize loop") == std::string::npos) continue;
    const size_t at = line.find(r.file + ":");
    if (at == std::string::npos) continue;
    const size_t n = std::stoul(line.substr(at + r.file.size() + 1));
    if (n < near.size() && near[n]) scalar.push_back(line);
  }
  return scalar;
}

/// Per `#pragma omp simd` line of `code` without simdlen: the widest vectors
/// (bytes) g++ reports using for its loop, compiled with the JIT's default
/// flags for `march` instead of native (0: not reported as vectorized).
std::map<size_t, int> widest_vectors(const std::string& code, const std::string& march) {
  std::vector<std::string> flags;
  for (const std::string& flag : jit::CompilerOptions{}.flags)
    flags.push_back(flag == "-march=native" ? "-march=" + march : flag);
  const VecReport r = vectorizer_report(code, "widths_" + march, flags, "-fopt-info-vec-optimized");
  // The loops, by their pragma's line: omp simd without simdlen (a
  // simdlen(16) loop over 16-bit data is reported as 32-byte vectors). g++
  // reports a loop at one of the three lines after its pragma.
  std::map<size_t, int> widest;
  std::map<size_t, size_t> pragma_of;
  {
    std::istringstream in(code);
    std::string line;
    for (size_t n = 1; std::getline(in, line); ++n) {
      if (line.find("#pragma omp simd") == std::string::npos ||
          line.find("simdlen") != std::string::npos)
        continue;
      widest[n] = 0;
      for (size_t k = 1; k <= 3; ++k)
        pragma_of[n + k] = n;
    }
  }
  // "<file>:<line>:<col>: optimized: loop vectorized using 64 byte vectors"
  const std::string name = r.file + ":";
  const std::string using_ = "loop vectorized using ";
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    const size_t at = line.find(name);
    const size_t u = line.find(using_);
    if (at == std::string::npos || u == std::string::npos) continue;
    const auto it = pragma_of.find(std::stoul(line.substr(at + name.size())));
    if (it != pragma_of.end())
      widest[it->second] = std::max(widest[it->second], std::stoi(line.substr(u + using_.size())));
  }
  return widest;
}

TEST(Vectorization, ChainsOfMaxMinReluVectorizeOnAvx2AndAvx512) {
  std::vector<schedule::ScheduledKernel> kernels;
  for (const char* dtype : {"f32", "bf16"})
    kernels.push_back(schedule_graph(parse_graph(chain_text(dtype))));
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  for (const std::string march : {"x86-64-v3", "x86-64-v4"}) {
    const std::vector<std::string> scalar = scalar_simd_loops(module.code, march);
    EXPECT_TRUE(scalar.empty()) << march << ": " << scalar.size() << " loops not vectorized, first "
                                << (scalar.empty() ? "" : scalar.front());
  }
}

// The loop variants of the row kernels (streaming chunks, prefetching
// chunks, bf16 chunks, head-and-tail loops, short rows) on f32 and bf16:
// Reductions and Elementwise kernels of the examples (chain30's with g++'s
// scheduling, AF_SCHEDULED).
TEST(Vectorization, ExampleKernelsVectorizeOnAvx2AndAvx512) {
  std::vector<schedule::ScheduledKernel> kernels;
  for (const char* example :
       {"layernorm_bf16.af", "softmax.af", "gelu.af", "patterns/swiglu.af", "patterns/chain30.af"})
    kernels.push_back(schedule_graph(
        parse_graph_file(fmt::format("{}/examples/{}", AUTOFUSE_SOURCE_DIR, example))));
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  for (const std::string march : {"x86-64-v3", "x86-64-v4"}) {
    const std::vector<std::string> scalar = scalar_simd_loops(module.code, march);
    EXPECT_TRUE(scalar.empty()) << march << ": " << scalar.size() << " loops not vectorized, first "
                                << (scalar.empty() ? "" : scalar.front());
  }
}

// The JIT's flags make g++ fill the AVX-512 registers on Intel targets too,
// whose tuning prefers 256-bit loops: a 16-bit loop then wrote its f32 row
// buffer in 32-byte halves that the prelude's 64-byte code read back, each
// load waiting for two stores (session 39, an Ice Lake: swiglu bf16 took
// 2.6x the time in L2). Every vectorized omp simd loop (without simdlen)
// uses 64-byte vectors for icelake-server and skylake-avx512.
TEST(Vectorization, LoopsFillAvx512RegistersOnIntelTargets) {
  std::vector<schedule::ScheduledKernel> kernels;
  for (const char* example : {"softmax.af", "patterns/swiglu.af", "layernorm_bf16.af"})
    kernels.push_back(schedule_graph(
        parse_graph_file(fmt::format("{}/examples/{}", AUTOFUSE_SOURCE_DIR, example))));
  kernels.push_back(schedule_graph(parse_graph(chain_text("bf16"))));
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  for (const std::string march : {"icelake-server", "skylake-avx512"}) {
    const std::map<size_t, int> widest = widest_vectors(module.code, march);
    int vectorized = 0;
    for (const auto& [line, bytes] : widest) {
      if (bytes == 0) continue;  // not reported as vectorized (the test above covers that)
      ++vectorized;
      EXPECT_EQ(bytes, 64) << march << ": the loop after line " << line << " uses " << bytes
                           << "-byte vectors";
    }
    EXPECT_GE(vectorized, 10) << march;  // not vacuous
  }
}

}  // namespace vectorization_test_local
}  // namespace autofuse::codegen_test
