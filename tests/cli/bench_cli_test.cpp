// `autofuse stream` and the STREAM figures and --threads of `autofuse bench`
// (bench/run builds on both): every figure present and plausible, the
// thread count honoured, the read/write-mix reference chosen as documented,
// the bare kernel call time and runtime overhead reported, and bad arguments
// rejected with exit code 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace bench_cli_test_local {

using ::testing::HasSubstr;
using ::testing::Not;

// A bandwidth in GB/s a real machine can show (not 0, inf or NaN).
void expect_bandwidth(const nlohmann::json& doc, const char* key) {
  SCOPED_TRACE(key);
  ASSERT_TRUE(doc.contains(key));
  const double v = doc[key].get<double>();
  EXPECT_TRUE(std::isfinite(v));
  EXPECT_GT(v, 0.1);
  EXPECT_LT(v, 100000.0);
}

TEST(CliStream, JsonHasEachKernelWithBothStoresAndTheComputeProbe) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    CliResult r = run_cli(
        {"stream", "--threads", std::to_string(threads), "--mib", "3", "--reps", "2", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["threads"].get<int>(), threads);
    EXPECT_DOUBLE_EQ(doc["array_mib"].get<double>(), 3.0);
    EXPECT_EQ(doc["reps"].get<int>(), 2);
    for (const char* key : {"triad_gbps", "copy_gbps", "triad_nt_gbps", "copy_nt_gbps", "fill_gbps",
                            "fill_nt_gbps", "fma_gflops"})
      expect_bandwidth(doc, key);
  }
}

TEST(CliStream, OddArraySizesAndTextOutput) {
  // 1 MiB + 8 bytes: a tail after the vector loop in the non-temporal kernels.
  CliResult r = run_cli({"stream", "--threads", "2", "--mib", "1.00000763", "--reps", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("triad"));
  EXPECT_THAT(r.out, HasSubstr("non-temporal"));
}

TEST(CliStream, RejectsBadArguments) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"stream", "--threads", "-1"}, {"stream", "--mib", "0"}, {"stream", "--reps", "0"}}) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[1];
    EXPECT_THAT(r.err, HasSubstr(args[1]));
  }
}

TEST(CliBench, ThreadsStreamFiguresAndReadWriteMix) {
  // layernorm reads x, gamma, beta and writes y: about 1 byte read per byte
  // written, so its reference is copy (the better of ordinary and
  // non-temporal); mse reads two tensors and writes a scalar: read only;
  // swiglu reads both halves of x and writes one: triad; bert_embeddings
  // [4, 512] writes 6 MiB from tables of 1.5 MiB: fill.
  enum class Mix { Copy, Triad, Read, Fill };
  struct Case {
    const char* file;
    const char* shape;
    Mix mix;
  };
  const std::string dir = make_temp_dir();
  for (const Case& c : {Case{"layernorm.af", "N=37,D=256", Mix::Copy},
                        Case{"patterns/mse.af", "N=13,D=96", Mix::Read},
                        Case{"patterns/swiglu.af", "B=1,S=3", Mix::Triad},
                        Case{"patterns/bert_embeddings.af", "B=4,S=512,V=2", Mix::Fill}}) {
    SCOPED_TRACE(c.file);
    // 1 MiB STREAM arrays: the test checks the fields, not the machine
    // (128 MiB arrays took most of its time under ASan).
    CliResult r = run_cli({"bench", example_path(c.file), "--shape", c.shape, "--threads", "1",
                           "--reps", "3", "--stream-mib", "1", "--json"},
                          {"AUTOFUSE_CACHE_DIR=" + dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["threads"].get<int>(), 1);
    ASSERT_EQ(doc["results"].size(), 1u);
    const nlohmann::json& res = doc["results"][0];
    for (const char* key :
         {"stream_gbps", "stream_copy_gbps", "stream_triad_nt_gbps", "stream_copy_nt_gbps",
          "stream_read_gbps", "stream_fill_gbps", "stream_fill_nt_gbps", "stream_mix_gbps", "gbps",
          "fma_gflops", "fma_gflops_low"})
      expect_bandwidth(res, key);
    const double read = res["read_bytes"].get<double>(),
                 written = res["written_bytes"].get<double>();
    EXPECT_DOUBLE_EQ(read + written, res["bytes"].get<double>());
    const double expected_mix =
        c.mix == Mix::Copy ? std::max(res["stream_copy_gbps"].get<double>(),
                                      res["stream_copy_nt_gbps"].get<double>())
        : c.mix == Mix::Triad
            ? std::max(res["stream_gbps"].get<double>(), res["stream_triad_nt_gbps"].get<double>())
        : c.mix == Mix::Fill ? std::max(res["stream_fill_gbps"].get<double>(),
                                        res["stream_fill_nt_gbps"].get<double>())
                             : res["stream_read_gbps"].get<double>();
    EXPECT_DOUBLE_EQ(res["stream_mix_gbps"].get<double>(), expected_mix);
    const char* kernel = c.mix == Mix::Copy    ? "copy"
                         : c.mix == Mix::Triad ? "triad"
                         : c.mix == Mix::Fill  ? "fill"
                                               : "read";
    EXPECT_EQ(res["stream_mix_kernel"].get<std::string>(), kernel);
    EXPECT_NEAR(res["pct_of_stream_mix"].get<double>(),
                100.0 * res["gbps"].get<double>() / expected_mix, 1e-9);
    EXPECT_LE(res["fma_gflops_low"].get<double>(), res["fma_gflops"].get<double>());
    EXPECT_EQ(res["reps"].get<int>(), 3);
  }
  // The byte counts of layernorm [37, 256]: x and y in f32, gamma and beta.
  CliResult r = run_cli({"bench", example_path("layernorm.af"), "--shape", "N=37,D=256",
                         "--threads", "1", "--reps", "3", "--stream-mib", "1", "--json"},
                        {"AUTOFUSE_CACHE_DIR=" + dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json res = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_DOUBLE_EQ(res["read_bytes"].get<double>(), 4.0 * (37 * 256 + 2 * 256));
  EXPECT_DOUBLE_EQ(res["written_bytes"].get<double>(), 4.0 * 37 * 256);
}

TEST(CliBench, BareCallTimeAndRuntimeOverhead) {
  // Per shape: bare_ms (the fused kernels called directly, timed like the
  // others) and overhead_us = fused - bare, in JSON and in the text line.
  // Timings are not compared with each other (noise); the arithmetic is.
  const std::string dir = make_temp_dir();
  for (const char* threads : {"1", "2"}) {
    SCOPED_TRACE(threads);
    CliResult r =
        run_cli({"bench", example_path("layernorm.af"), "--shape", "N=37,D=256", "--shape",
                 "N=4,D=8", "--threads", threads, "--reps", "3", "--stream-mib", "1", "--json"},
                {"AUTOFUSE_CACHE_DIR=" + dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["results"].size(), 2u);
    for (const nlohmann::json& res : doc["results"]) {
      ASSERT_TRUE(res.contains("bare_ms") && res.contains("overhead_us")) << res.dump();
      const double bare = res["bare_ms"].get<double>(), fused = res["fused_ms"].get<double>();
      const double overhead = res["overhead_us"].get<double>();
      EXPECT_TRUE(std::isfinite(bare) && std::isfinite(overhead));
      EXPECT_GT(bare, 0.0);
      EXPECT_LT(bare, 1000.0);  // a few hundred floats: nowhere near a second
      EXPECT_NEAR(overhead, (fused - bare) * 1e3, 1e-9 * std::max(1.0, std::abs(overhead)));
    }
  }
  CliResult text = run_cli({"bench", example_path("layernorm.af"), "--shape", "N=4,D=8",
                            "--threads", "1", "--reps", "3", "--stream-mib", "1"},
                           {"AUTOFUSE_CACHE_DIR=" + dir});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("bare kernel calls"));
  EXPECT_THAT(text.out, HasSubstr("runtime overhead"));
}

TEST(CliBench, DumpsTheFusedProgramAndTheUnfusedInASubfolder) {
  // The unfused program compiles second; in the same folder its dumps
  // replaced the fused program's.
  const std::string dir = make_temp_dir();
  CliResult r = run_cli({"bench", example_path("patterns/attention_transpose.af"), "--shape",
                         "B=1,S=8", "--threads", "1", "--reps", "3", "--stream-mib", "1"},
                        {"AUTOFUSE_CACHE_DIR=" + dir + "/cache", "AUTOFUSE_DUMP=" + dir + "/dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string fused = read(dir + "/dump/01_fused.txt");
  const std::string unfused = read(dir + "/dump/unfused/01_fused.txt");
  EXPECT_THAT(fused, HasSubstr("# kernels: 1"));
  EXPECT_THAT(fused, Not(HasSubstr("library_transpose")));
  EXPECT_THAT(unfused, HasSubstr("library_transpose"));
}

TEST(CliBench, RejectsBadThreadsMinTimeAndStreamSize) {
  for (const auto& flag : std::vector<std::pair<std::string, std::string>>{
           {"--threads", "-2"}, {"--min-time", "0"}, {"--stream-mib", "0"}}) {
    CliResult r = run_cli(
        {"bench", example_path("layernorm.af"), "--shape", "N=4,D=8", flag.first, flag.second});
    EXPECT_EQ(r.exit_code, 2) << flag.first;
    EXPECT_THAT(r.err, HasSubstr(flag.first));
  }
}

}  // namespace bench_cli_test_local
}  // namespace autofuse::testing
