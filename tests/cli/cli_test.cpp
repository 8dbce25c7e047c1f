// End-to-end tests of the `autofuse` binary: success paths on the bundled
// examples and a clear error (exit code 2, message naming the problem) for
// every kind of bad input. Under the asan preset these run the sanitized
// binary, so "no crash" is checked with ASan/UBSan too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_runner.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace cli_test_local {

using ::testing::HasSubstr;

const char* const kExamples[] = {"layernorm.af", "softmax.af", "gelu.af", "chain10.af",
                                 "rmsnorm.af"};

TEST(CliPrint, EveryExamplePrintsAndReprintsIdentically) {
  for (const char* example : kExamples) {
    SCOPED_TRACE(example);
    CliResult first = run_cli({"print", example_path(example)});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_THAT(first.out, HasSubstr("graph "));
    EXPECT_THAT(first.out, HasSubstr("return "));
    CliResult second = run_cli({"print", write_temp_file("again.af", first.out)});
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.out, first.out);
  }
}

TEST(CliPrint, ShowsInferredTypes) {
  CliResult r = run_cli({"print", example_path("layernorm.af")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("f32[N, 1] = reduce_mean(x"));
  EXPECT_THAT(r.out, HasSubstr("y: f32[N, D] = add("));
}

TEST(CliRun, RunsEveryExampleOnSeveralShapes) {
  for (const char* example : kExamples) {
    SCOPED_TRACE(example);
    CliResult r = run_cli({"run", example_path(example), "--ref", "--shape", "N=1,D=1", "--shape",
                           "N=17,D=7", "--shape", "N=3,D=768", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["runs"].size(), 3u);
    EXPECT_EQ(doc["runs"][1]["shape"]["N"], 17);
    EXPECT_EQ(doc["runs"][1]["outputs"][0]["shape"], nlohmann::json::array({17, 7}));
    EXPECT_EQ(doc["runs"][2]["outputs"][0]["dtype"], "f32");
  }
}

TEST(CliRun, SameSeedSameChecksumOtherSeedDifferent) {
  auto run = [](const std::string& seed) {
    CliResult r = run_cli({"run", example_path("softmax.af"), "--ref", "--shape", "N=5,D=9",
                           "--seed", seed, "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["runs"][0]["outputs"][0];
  };
  auto a = run("1"), b = run("1"), c = run("2");
  EXPECT_EQ(a["hash"], b["hash"]);
  EXPECT_NE(a["hash"], c["hash"]);
  // Softmax rows sum to 1: 5 rows.
  EXPECT_NEAR(a["sum"].get<double>(), 5.0, 1e-4);
}

TEST(CliRun, TextSummaryNamesOutputsAndShapes) {
  CliResult r = run_cli({"run", example_path("rmsnorm.af"), "--ref", "--shape", "N=2,D=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("run [N=2, D=3]"));
  EXPECT_THAT(r.out, HasSubstr("y: f32[2, 3]"));
}

TEST(CliRun, GraphWithoutSymbolsNeedsNoShape) {
  std::string path = write_temp_file("static.af", R"(graph s(x: f32[2, 3]) {
  y = exp(x)
  return y
}
)");
  CliResult r = run_cli({"run", path, "--ref", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["runs"].size(), 1u);
}

struct BadInput {
  const char* name;
  std::string text;                 // graph text (empty: use `args` as is)
  std::vector<std::string> args;    // after "run <file> --ref" when text is given
  std::vector<std::string> expect;  // substrings of stderr
};

void PrintTo(const BadInput& c, std::ostream* os) {
  *os << c.name;
}

class CliBadInput : public ::testing::TestWithParam<BadInput> {};

TEST_P(CliBadInput, ExitsWithCode2AndSaysWhy) {
  const BadInput& c = GetParam();
  std::vector<std::string> args;
  if (!c.text.empty()) {
    args = {"run", write_temp_file("bad.af", c.text), "--ref"};
    args.insert(args.end(), c.args.begin(), c.args.end());
  } else {
    args = c.args;
  }
  CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  for (const std::string& s : c.expect)
    EXPECT_THAT(r.err, HasSubstr(s));
}

const std::string kAddGraph = "graph g(x: f32[N], y: f32[M]) {\n  z = add(x, y)\n  return z\n}\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, CliBadInput,
    ::testing::Values(
        BadInput{"missing_file", "", {"print", "/nonexistent/g.af"}, {"/nonexistent/g.af"}},
        BadInput{"malformed",
                 "graph g(x: f32[N]) {\n  y = exp(x\n  return y\n}\n",
                 {"--shape", "N=2"},
                 {":3:"}},
        BadInput{"unknown_op",
                 "graph g(x: f32[N]) {\n  y = frobnicate(x)\n  return y\n}\n",
                 {"--shape", "N=2"},
                 {":2:", "frobnicate"}},
        BadInput{"wrong_attribute",
                 "graph g(x: f32[N]) {\n  y = reduce_sum(x, axes=[0], bogus=1)\n  return y\n}\n",
                 {"--shape", "N=2"},
                 {"bogus"}},
        BadInput{"incompatible_shapes",
                 "graph g(x: f32[3], y: f32[4]) {\n  z = add(x, y)\n  return z\n}\n",
                 {},
                 {"'z'", "add"}},
        BadInput{"wrong_input_count",
                 "graph g(x: f32[N]) {\n  y = exp(x, x)\n  return y\n}\n",
                 {"--shape", "N=2"},
                 {"'y'", "exp"}},
        BadInput{"missing_symbol", kAddGraph, {"--shape", "N=2"}, {"M"}},
        BadInput{"unknown_symbol", kAddGraph, {"--shape", "N=2,M=2,Q=3"}, {"Q"}},
        BadInput{"no_shape", kAddGraph, {}, {"--shape"}},
        BadInput{"malformed_shape", kAddGraph, {"--shape", "N=two,M=2"}, {"N"}},
        BadInput{"negative_shape", kAddGraph, {"--shape", "N=-1,M=2"}, {"N"}},
        BadInput{"guard_violation", kAddGraph, {"--shape", "N=3,M=4"}, {"guard", "N", "M"}},
        BadInput{"ref_with_check",
                 "",
                 {"run", example_path("softmax.af"), "--ref", "--check", "--shape", "N=2,D=2"},
                 {"--ref"}},
        BadInput{"no_subcommand", "", {}, {}},
        BadInput{"unknown_flag",
                 "",
                 {"print", example_path("softmax.af"), "--frobnicate"},
                 {"frobnicate"}}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });

}  // namespace cli_test_local
}  // namespace autofuse::testing
