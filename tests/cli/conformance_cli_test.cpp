// `autofuse conformance` on hand-made ONNX node-test folders: passing,
// failing, skipped and unclaimed tests, inputs frozen for the importer, the
// bf16-as-uint16 test-data convention, the table, the closing line and the
// exit codes. One test runs a few real suites of the onnx package when
// scripts/setup-python.sh has installed it.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "autofuse/support/half.h"
#include "cli/cli_runner.h"
#include "cli/onnx_files.h"
#include "frontend/io/tensor_proto.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace conformance_cli_test_local {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

onnx::TensorProto pb(const HostTensor& t, const std::string& name) {
  return frontend::tensor_to_proto(t, name);
}

// A suite of seven tests: 4 pass (two need frozen inputs, one has bf16
// data as uint16 and inputs named unlike the model's), 1 fails, 1 is
// skipped (Softmax-11, which autofuse does not read), 1 is not claimed (an
// op autofuse lacks).
std::string make_suite() {
  fs::path dir = make_temp_dir();
  HostTensor x = host_tensor(DType::f32, {2, 3}, {-1, 2, -3, 4, -5, 6});
  HostTensor relu = host_tensor(DType::f32, {2, 3}, {0, 2, 0, 4, 0, 6});
  onnx::ModelProto relu_model =
      make_model({{"x", kFloat, {int64_t{2}, int64_t{3}}}},
                 {{"y", kFloat, {int64_t{2}, int64_t{3}}}}, {{"Relu", {"x"}, {"y"}}});
  write_node_test(dir / "test_relu", relu_model, {pb(x, "x")}, {pb(relu, "y")});

  HostTensor wrong = relu;
  wrong.set_f64(3, 4.01);  // beyond rtol 1e-3
  write_node_test(dir / "test_relu_wrong", relu_model, {pb(x, "x")}, {pb(wrong, "y")});

  onnx::ModelProto reshape_model = make_model({{"data", kFloat, {int64_t{2}, int64_t{3}}},
                                               {"shape", onnx::TensorProto::INT64, {int64_t{2}}}},
                                              {{"reshaped", kFloat, {int64_t{3}, int64_t{2}}}},
                                              {{"Reshape", {"data", "shape"}, {"reshaped"}}});
  HostTensor shape = host_tensor(DType::i64, {2}, {3, 2});
  HostTensor reshaped = host_tensor(DType::f32, {3, 2}, {-1, 2, -3, 4, -5, 6});
  write_node_test(dir / "test_reshape", reshape_model, {pb(x, "data"), pb(shape, "shape")},
                  {pb(reshaped, "reshaped")});

  // The shape reaches Reshape through Identity: the importer's error names
  // the Identity output, so the runner freezes every freezable input.
  onnx::ModelProto indirect = make_model(
      {{"data", kFloat, {int64_t{2}, int64_t{3}}},
       {"shape", onnx::TensorProto::INT64, {int64_t{2}}}},
      {{"reshaped", kFloat, {int64_t{3}, int64_t{2}}}},
      {{"Identity", {"shape"}, {"shape_copy"}}, {"Reshape", {"data", "shape_copy"}, {"reshaped"}}});
  write_node_test(dir / "test_reshape_via_identity", indirect, {pb(x, "data"), pb(shape, "shape")},
                  {pb(reshaped, "reshaped")});

  // FLOAT -> BFLOAT16 with the expected output as UINT16 bit patterns made
  // by truncation (as the onnx package writes them): 1 + 2^-8 + 2^-9
  // truncates to 1.0 but rounds to 1 + 2^-7, one ulp apart.
  onnx::ModelProto cast_model = make_model({{"input", kFloat, {int64_t{3}}}},
                                           {{"output", onnx::TensorProto::BFLOAT16, {int64_t{3}}}},
                                           {{"Cast", {"input"}, {"output"}, {[] {
                                               onnx::AttributeProto to;
                                               to.set_name("to");
                                               to.set_type(onnx::AttributeProto::INT);
                                               to.set_i(onnx::TensorProto::BFLOAT16);
                                               return to;
                                             }()}}});
  HostTensor cast_in = host_tensor(DType::f32, {3}, {0.5, -3.0, 1.0 + 1.0 / 256 + 1.0 / 512});
  onnx::TensorProto cast_out;
  cast_out.set_data_type(onnx::TensorProto::UINT16);
  cast_out.add_dims(3);
  for (float v : {0.5f, -3.0f, 1.0f + 1.0f / 256 + 1.0f / 512})
    cast_out.add_int32_data(float_bits(v) >> 16);
  write_node_test(dir / "test_cast_FLOAT_to_BFLOAT16", cast_model, {pb(cast_in, "x")}, {cast_out});

  onnx::ModelProto old_softmax =
      make_model({{"a", kFloat, {int64_t{2}}}}, {{"c", kFloat, {int64_t{2}}}},
                 {{"Softmax", {"a"}, {"c"}}}, /*opset=*/11);
  HostTensor two = host_tensor(DType::f32, {2}, {1, 2});
  write_node_test(dir / "test_softmax_opset11", old_softmax, {pb(two, "a")},
                  {pb(host_tensor(DType::f32, {2}, {0.268941, 0.731059}), "c")});

  onnx::ModelProto frob = make_model({{"x", kFloat, {int64_t{2}}}}, {{"y", kFloat, {int64_t{2}}}},
                                     {{"Frobnicate", {"x"}, {"y"}}});
  write_node_test(dir / "test_frobnicate", frob, {pb(two, "x")}, {pb(two, "y")});
  return dir.string();
}

struct Suite {
  std::string dir = make_suite();
  std::string cache = "AUTOFUSE_CACHE_DIR=" + make_temp_dir();
};

TEST(ConformanceCli, TableSkipsFailuresAndClosingLine) {
  Suite s;
  CliResult r = run_cli({"conformance", s.dir}, {s.cache});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // one failure
  EXPECT_THAT(r.out, EndsWith("\n4 passed, 1 failed, 1 skipped\n"));
  EXPECT_THAT(r.out, HasSubstr("6 claimed, 1 not claimed"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nRelu +1 +1 +0\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nReshape +1 +0 +0\n"));
  // Several op types and no _expanded twin: counted under their joined names.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nIdentity\\+Reshape +1 +0 +0\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nCast +1 +0 +0\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nSoftmax +0 +0 +1\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\ntotal +4 +1 +1\n"));
  EXPECT_THAT(r.out, HasSubstr("skipped:\n  test_softmax_opset11 (Softmax): import: model.onnx: "));
  EXPECT_THAT(r.out, HasSubstr("opset 11"));
  EXPECT_THAT(r.out, HasSubstr("Softmax-11 (nodes: #0)"));
  EXPECT_THAT(r.out, HasSubstr("test_relu_wrong (Relu): test_data_set_0: output 'y'"));
  EXPECT_THAT(r.out, HasSubstr("first at [1, 0]: got 4, expected 4.01"));
  EXPECT_THAT(r.out, HasSubstr("2 test(s) ran with inputs frozen"));
  EXPECT_THAT(r.out, Not(HasSubstr("Frobnicate +")));
}

TEST(ConformanceCli, JsonVerboseAndFilters) {
  Suite s;
  CliResult r = run_cli({"conformance", s.dir, "--json"}, {s.cache});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["passed"], 4);
  EXPECT_EQ(doc["failed"], 1);
  EXPECT_EQ(doc["skipped"], 1);
  EXPECT_EQ(doc["not_claimed"], 1);
  EXPECT_EQ(doc["ops"]["Relu"]["failed"], 1);
  EXPECT_THAT(r.err, HasSubstr("4 passed, 1 failed, 1 skipped"));
  for (const auto& t : doc["tests"]) {
    if (t["name"] == "test_reshape") {
      EXPECT_EQ(t["frozen_inputs"], nlohmann::json({"shape"}));
    }
    if (t["name"] == "test_reshape_via_identity") {
      EXPECT_EQ(t["status"], "passed");
      EXPECT_EQ(t["frozen_inputs"], nlohmann::json({"shape"}));
    }
    if (t["name"] == "test_frobnicate") {
      EXPECT_EQ(t["status"], "not claimed");
      EXPECT_THAT(t["detail"].get<std::string>(), HasSubstr("Frobnicate"));
    }
  }

  CliResult verbose = run_cli({"conformance", s.dir, "--verbose", "--op", "Reshape"}, {s.cache});
  EXPECT_EQ(verbose.exit_code, 0) << verbose.err;
  EXPECT_THAT(verbose.out,
              HasSubstr("passed  test_reshape (Reshape, 1 data set(s), frozen: shape"));
  EXPECT_THAT(verbose.out, EndsWith("\n1 passed, 0 failed, 0 skipped\n"));

  CliResult filtered = run_cli({"conformance", s.dir, "--filter", "relu"}, {s.cache});
  EXPECT_EQ(filtered.exit_code, 3);
  EXPECT_THAT(filtered.out, EndsWith("\n1 passed, 1 failed, 0 skipped\n"));

  CliResult env =
      run_cli({"conformance", "--op", "Cast"}, {s.cache, "AUTOFUSE_ONNX_NODE_TESTS=" + s.dir});
  EXPECT_EQ(env.exit_code, 0) << env.out << env.err;
  EXPECT_THAT(env.out, EndsWith("\n1 passed, 0 failed, 0 skipped\n"));
}

TEST(ConformanceCli, JobsGiveTheSameResultsInNameOrder) {
  Suite s;
  auto tests_of = [&](const std::string& jobs) {
    CliResult r = run_cli({"conformance", s.dir, "--json", "--jobs", jobs}, {s.cache});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    nlohmann::json tests = nlohmann::json::parse(r.out)["tests"];
    for (auto& t : tests)
      t.erase("seconds");
    return tests;
  };
  const nlohmann::json one = tests_of("1");
  ASSERT_EQ(one.size(), 7u);
  for (size_t i = 1; i < one.size(); ++i)
    EXPECT_LT(one[i - 1]["name"].get<std::string>(), one[i]["name"].get<std::string>());
  EXPECT_EQ(tests_of("3"), one);
  EXPECT_EQ(tests_of("0"), one);
  // Progress lines come in name order too, however the tests finish.
  CliResult verbose = run_cli({"conformance", s.dir, "--verbose", "--jobs", "4"}, {s.cache});
  std::vector<std::string> order;
  for (const auto& t : one)
    if (t["status"] != "not claimed") order.push_back(" " + t["name"].get<std::string>() + " (");
  size_t at = 0;
  for (const std::string& name : order) {
    const size_t found = verbose.out.find(name, at);
    ASSERT_NE(found, std::string::npos) << name << "\n" << verbose.out;
    at = found;
  }
  CliResult bad = run_cli({"conformance", s.dir, "--jobs", "-2"}, {s.cache});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--jobs"));
}

TEST(ConformanceCli, BadArgumentsAreUserErrors) {
  Suite s;
  CliResult no_dir = run_cli({"conformance", "/nonexistent/node"});
  EXPECT_EQ(no_dir.exit_code, 2);
  EXPECT_THAT(no_dir.err, HasSubstr("/nonexistent/node"));
  CliResult bad_env = run_cli({"conformance"}, {"AUTOFUSE_ONNX_NODE_TESTS=/nonexistent/node"});
  EXPECT_EQ(bad_env.exit_code, 2);
  EXPECT_THAT(bad_env.err, HasSubstr("AUTOFUSE_ONNX_NODE_TESTS"));
  CliResult bad_op = run_cli({"conformance", s.dir, "--op", "Frobnicate"});
  EXPECT_EQ(bad_op.exit_code, 2);
  EXPECT_THAT(bad_op.err, HasSubstr("--op Frobnicate"));
  CliResult empty = run_cli({"conformance", make_temp_dir()});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_THAT(empty.err, HasSubstr("no node tests"));
}

TEST(ConformanceCli, MalformedTestDataIsAFailureNotACrash) {
  fs::path dir = make_temp_dir();
  HostTensor x = host_tensor(DType::f32, {2}, {1, -1});
  onnx::ModelProto model = make_model({{"x", kFloat, {int64_t{2}}}}, {{"y", kFloat, {int64_t{2}}}},
                                      {{"Neg", {"x"}, {"y"}}});
  write_node_test(dir / "test_neg_truncated", model, {pb(x, "x")}, {pb(x, "y")});
  std::string bytes = frontend::read_binary_file(
      (dir / "test_neg_truncated/test_data_set_0/input_0.pb").string(), "test");
  std::ofstream((dir / "test_neg_truncated/test_data_set_0/input_0.pb").string(),
                std::ios::binary | std::ios::trunc)
      << bytes.substr(0, bytes.size() - 3);
  write_node_test(dir / "test_neg_bad_model", model, {pb(x, "x")}, {pb(x, "y")});
  std::ofstream((dir / "test_neg_bad_model/model.onnx").string(), std::ios::trunc) << "\xff\xff";
  CliResult r = run_cli({"conformance", dir.string()}, {"AUTOFUSE_CACHE_DIR=" + make_temp_dir()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.out, HasSubstr("input_0.pb"));
  EXPECT_THAT(r.out, HasSubstr("test_neg_bad_model (?): model.onnx is not a valid ONNX model"));
  EXPECT_THAT(r.out, EndsWith("\n0 passed, 2 failed, 0 skipped\n"));
}

// Skips come from the importer's UnsupportedError, not from what a message
// says: a random-mask Dropout (reached after freezing the inputs its errors
// quote; no "not supported" in its text) is skipped, and a wrong declared
// shape of an output named "not_supported" is a failure.
TEST(ConformanceCli, SkipsAreClassifiedByTheErrorTypeNotItsText) {
  fs::path dir = make_temp_dir();
  HostTensor x = host_tensor(DType::f32, {2, 2}, {1, -2, 3, -4});
  auto dropout = [](const std::string& mask) {
    std::vector<OnnxValue> outputs = {{"y", kFloat, {int64_t{2}, int64_t{2}}}};
    std::vector<std::string> names = {"y"};
    if (!mask.empty()) {
      outputs.push_back({mask, onnx::TensorProto::BOOL, {int64_t{2}, int64_t{2}}});
      names.push_back(mask);
    }
    return make_model({{"x", kFloat, {int64_t{2}, int64_t{2}}},
                       {"r", kFloat, {}},
                       {"t", onnx::TensorProto::BOOL, {}}},
                      outputs, {{"Dropout", {"x", "r", "t"}, names}}, /*opset=*/22);
  };
  HostTensor yes = host_tensor(DType::boolean, {}, {1});
  write_node_test(dir / "test_training_dropout_random", dropout(""),
                  {pb(x, "x"), pb(host_tensor(DType::f32, {}, {0.5}), "r"), pb(yes, "t")},
                  {pb(x, "y")});
  write_node_test(dir / "test_training_dropout_zero_ratio_mask", dropout("z"),
                  {pb(x, "x"), pb(host_tensor(DType::f32, {}, {0}), "r"), pb(yes, "t")},
                  {pb(x, "y"), pb(host_tensor(DType::boolean, {2, 2}, {1, 1, 1, 1}), "z")});
  onnx::ModelProto misdeclared =
      make_model({{"x", kFloat, {int64_t{2}, int64_t{2}}}},
                 {{"not_supported", kFloat, {int64_t{3}}}}, {{"Relu", {"x"}, {"not_supported"}}});
  write_node_test(dir / "test_relu_misdeclared", misdeclared, {pb(x, "x")}, {pb(x, "y")});

  CliResult r =
      run_cli({"conformance", dir.string(), "--json"}, {"AUTOFUSE_CACHE_DIR=" + make_temp_dir()});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["passed"], 1);
  EXPECT_EQ(doc["failed"], 1);
  EXPECT_EQ(doc["skipped"], 1);
  for (const auto& t : doc["tests"]) {
    const std::string detail = t["detail"].get<std::string>();
    if (t["name"] == "test_training_dropout_random") {
      EXPECT_EQ(t["status"], "skipped") << detail;
      EXPECT_THAT(detail, HasSubstr("draws a random mask"));
      EXPECT_THAT(detail, Not(HasSubstr("supported")));
      EXPECT_EQ(t["frozen_inputs"], nlohmann::json({"r", "t"}));
    } else if (t["name"] == "test_training_dropout_zero_ratio_mask") {
      EXPECT_EQ(t["status"], "passed") << detail;
      EXPECT_EQ(t["frozen_inputs"], nlohmann::json({"r", "t"}));
    } else {
      EXPECT_EQ(t["status"], "failed") << detail;
      EXPECT_THAT(detail, HasSubstr("graph output 'not_supported' is declared"));
    }
  }
}

// Unsupported is a kind of user error: the CLI's exit code stays 2.
TEST(ConformanceCli, UnsupportedModelsExitWithTheUserErrorCode) {
  std::string dir = make_temp_dir();
  std::string path =
      save_proto(make_model({{"x", kFloat, {int64_t{2}}}}, {{"y", kFloat, {int64_t{2}}}},
                            {{"Frobnicate", {"x"}, {"y"}}}),
                 dir + "/frob.onnx");
  CliResult r = run_cli({"print", path});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("unsupported ONNX ops: Frobnicate"));
}

// The real suite, when scripts/setup-python.sh has installed it: a few ops
// whose tests are all expected to pass.
TEST(ConformanceCli, RealOnnxNodeTestsOfSomeOps) {
  fs::path venv_lib = fs::path(AUTOFUSE_SOURCE_DIR) / ".venv" / "lib";
  std::error_code ec;
  if (!fs::is_directory(venv_lib, ec)) GTEST_SKIP() << "no .venv: run scripts/setup-python.sh";
  CliResult r = run_cli({"conformance", "--json", "--op", "Relu", "--op", "Softmax", "--op",
                         "LayerNormalization", "--op", "Gemm"},
                        {shared_cache_env()});
  if (r.exit_code == 2 && r.err.find("setup-python.sh") != std::string::npos) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_GE(doc["passed"].get<int>(), 80);
  EXPECT_EQ(doc["failed"], 0);
}

}  // namespace conformance_cli_test_local
}  // namespace autofuse::testing
