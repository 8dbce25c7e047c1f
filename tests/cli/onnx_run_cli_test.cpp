// `autofuse run` on ONNX models with real data: --input NAME=FILE (.npy and
// .pb) under the model's original input names, symbols bound from the input
// shapes, --output-dir with the original output names, and a clear error
// (exit code 2) for every wrong input.
#include <filesystem>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autofuse/frontend/tensor_io.h"
#include "cli/cli_runner.h"
#include "cli/onnx_files.h"
#include "frontend/io/tensor_proto.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace onnx_run_cli_test_local {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

// sum = input.1 + bias; out/relu = relu(sum); input.1 is [batch, 4]. The
// names are PyTorch-export style: not C identifiers, one with a '/'.
struct AddReluModel {
  std::string dir = make_temp_dir();
  std::string path = save_proto(
      make_model(
          {{"input.1", kFloat, {"batch", int64_t{4}}}, {"bias", kFloat, {int64_t{4}}}},
          {{"sum", kFloat, {"batch", int64_t{4}}}, {"out/relu", kFloat, {"batch", int64_t{4}}}},
          {{"Add", {"input.1", "bias"}, {"sum"}}, {"Relu", {"sum"}, {"out/relu"}}}),
      dir + "/add_relu.onnx");

  std::string npy(const std::string& name, const HostTensor& t) const {
    std::string p = dir + "/" + name;
    frontend::write_npy(p, t);
    return p;
  }
};

HostTensor x_values(int64_t batch) {
  std::vector<double> v;
  for (int64_t i = 0; i < batch * 4; ++i)
    v.push_back(static_cast<double>(i % 7) - 3.25);
  return host_tensor(DType::f32, {batch, 4}, v);
}

const HostTensor kBias = host_tensor(DType::f32, {4}, {0.5, -1, 2, 0});

// The expected outputs, in f32 like the model.
void expect_outputs(const std::string& out_dir, const HostTensor& x) {
  HostTensor sum = frontend::read_npy(out_dir + "/sum.npy");
  HostTensor relu = frontend::read_npy(out_dir + "/out_relu.npy");
  ASSERT_EQ(sum.type_string(), "f32" + fmt::format("[{}, 4]", x.shape()[0]));
  ASSERT_EQ(relu.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    float s = x.data_as<float>()[i] + kBias.data_as<float>()[i % 4];
    EXPECT_EQ(sum.data_as<float>()[i], s) << i;
    EXPECT_EQ(relu.data_as<float>()[i], s > 0 ? s : 0.0f) << i;
  }
}

TEST(OnnxRunCli, NpyInputsOutputDirEveryExecutor) {
  AddReluModel m;
  HostTensor x = x_values(3);
  std::string x_npy = m.npy("x.npy", x), b_npy = m.npy("b.npy", kBias);
  std::string cache = "AUTOFUSE_CACHE_DIR=" + make_temp_dir();
  for (std::string mode : {"--ref", "--check", ""}) {
    SCOPED_TRACE(mode);
    std::string out = make_temp_dir() + "/outputs";  // created by the CLI
    std::vector<std::string> args = {"run",     m.path,          "--input", "input.1=" + x_npy,
                                     "--input", "bias=" + b_npy, "--json",  "--output-dir",
                                     out};
    if (!mode.empty()) args.push_back(mode);
    CliResult r = run_cli(args, {cache});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["runs"].size(), 1u);
    EXPECT_EQ(doc["runs"][0]["shape"], nlohmann::json({{"batch", 3}}));
    EXPECT_EQ(doc["runs"][0]["outputs"][0]["name"], "sum");
    EXPECT_EQ(doc["runs"][0]["outputs"][1]["name"], "out/relu");
    if (mode == "--check") {
      EXPECT_EQ(doc["ok"], true);
    }
    expect_outputs(out, x);
  }
}

TEST(OnnxRunCli, PbInputAndAnotherBatchBindsTheSymbolAgain) {
  AddReluModel m;
  HostTensor x = x_values(6);
  std::string x_pb = save_proto(frontend::tensor_to_proto(x, "input.1"), m.dir + "/x.pb");
  std::string out = make_temp_dir();
  CliResult r = run_cli({"run", m.path, "--ref", "--input", "bias=" + m.npy("b.npy", kBias),
                         "--input", "input.1=" + x_pb, "--output-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("run [batch=6]"));
  EXPECT_THAT(r.out, HasSubstr("out/relu: f32[6, 4]"));
  EXPECT_THAT(r.out, HasSubstr("wrote 2 output(s)"));
  expect_outputs(out, x);
}

TEST(OnnxRunCli, ShapeGivenWithInputsIsChecked) {
  AddReluModel m;
  std::vector<std::string> args = {"run",
                                   m.path,
                                   "--ref",
                                   "--input",
                                   "input.1=" + m.npy("x.npy", x_values(3)),
                                   "--input",
                                   "bias=" + m.npy("b.npy", kBias)};
  args.insert(args.end(), {"--shape", "batch=3"});
  EXPECT_EQ(run_cli(args).exit_code, 0);
  args.back() = "batch=4";
  CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("batch = 4 (from --shape), got 3"));
}

TEST(OnnxRunCli, RandomInputsPrintAndFuseWorkOnOnnx) {
  AddReluModel m;
  CliResult run = run_cli({"run", m.path, "--check", "--shape", "batch=5"},
                          {"AUTOFUSE_CACHE_DIR=" + make_temp_dir()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("check: ok"));
  CliResult print = run_cli({"print", m.path});
  EXPECT_EQ(print.exit_code, 0) << print.err;
  EXPECT_THAT(print.out, HasSubstr("f32[batch, 4]"));
  CliResult fuse = run_cli({"fuse", m.path, "--json"});
  ASSERT_EQ(fuse.exit_code, 0) << fuse.err;
  EXPECT_EQ(nlohmann::json::parse(fuse.out)["kernels"], 1);
}

TEST(OnnxRunCli, Bf16OutputIsWrittenAsF32WithANote) {
  std::string graph = write_temp_file("bf.af", R"(graph g(x: f32[N]) {
  y = cast(x, to=bf16)
  return y
}
)");
  std::string dir = make_temp_dir();
  std::string x_npy = dir + "/x.npy";
  frontend::write_npy(x_npy, host_tensor(DType::f32, {3}, {1.0, -2.5, 1.00390625}));
  CliResult r = run_cli({"run", graph, "--ref", "--input", "x=" + x_npy, "--output-dir", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("bf16"));
  HostTensor y = frontend::read_npy(dir + "/y.npy");
  ASSERT_EQ(y.type_string(), "f32[3]");
  EXPECT_EQ(y.get_f64(0), 1.0);
  EXPECT_EQ(y.get_f64(1), -2.5);
  EXPECT_EQ(y.get_f64(2), 1.0);  // rounded to bf16 (8 significant bits), then widened exactly
}

struct BadInputCase {
  const char* name;
  std::vector<std::string> args;    // after "run <model> --ref"; $X, $B: good files, $D: a dir
  std::vector<std::string> expect;  // substrings of stderr
};

void PrintTo(const BadInputCase& c, std::ostream* os) {
  *os << c.name;
}

class OnnxRunBadInput : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(OnnxRunBadInput, ExitsWithCode2AndSaysWhy) {
  AddReluModel m;
  std::map<std::string, std::string> files = {
      {"$X", m.npy("x.npy", x_values(3))},
      {"$B", m.npy("b.npy", kBias)},
      {"$X64", m.npy("x64.npy", host_tensor(DType::f64, {3, 4}, std::vector<double>(12, 1.0)))},
      {"$B5", m.npy("b5.npy", host_tensor(DType::f32, {5}, {1, 2, 3, 4, 5}))},
      {"$X3", m.npy("x3.npy", host_tensor(DType::f32, {3}, {1, 2, 3}))},
      {"$BAD", write_temp_file("bad.npy", "not an npy file")},
      {"$D", m.dir},
  };
  std::vector<std::string> args = {"run", m.path, "--ref"};
  for (std::string a : GetParam().args) {
    for (const auto& [key, path] : files)
      if (auto pos = a.find(key);
          pos != std::string::npos && (pos + key.size() == a.size() || a[pos + key.size()] == '/'))
        a.replace(pos, key.size(), path);
    args.push_back(a);
  }
  CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  for (const std::string& s : GetParam().expect)
    EXPECT_THAT(r.err, HasSubstr(s));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, OnnxRunBadInput,
    ::testing::Values(
        BadInputCase{"wrong_dtype",
                     {"--input", "input.1=$X64", "--input", "bias=$B"},
                     {"--input input.1", "wrong dtype", "expected f32[batch, 4], got f64[3, 4]"}},
        BadInputCase{"wrong_size",
                     {"--input", "input.1=$X", "--input", "bias=$B5"},
                     {"--input bias", "dim 0 must be 4", "expected f32[4], got f32[5]"}},
        BadInputCase{"wrong_rank",
                     {"--input", "input.1=$X3", "--input", "bias=$B"},
                     {"--input input.1", "wrong rank"}},
        BadInputCase{"missing_input", {"--input", "input.1=$X"}, {"missing bias: f32[4]"}},
        BadInputCase{"unknown_name",
                     {"--input", "input.1=$X", "--input", "bias=$B", "--input", "nope=$B"},
                     {"no input 'nope'", "input.1, bias"}},
        BadInputCase{"repeated_name",
                     {"--input", "input.1=$X", "--input", "bias=$B", "--input", "bias=$B"},
                     {"bias is given more than once"}},
        BadInputCase{"no_equals", {"--input", "input.1"}, {"expected NAME=FILE"}},
        BadInputCase{"malformed_npy",
                     {"--input", "input.1=$BAD", "--input", "bias=$B"},
                     {"bad.npy", "bad magic"}},
        BadInputCase{
            "missing_file", {"--input", "input.1=$D/none.npy", "--input", "bias=$B"}, {"none.npy"}},
        BadInputCase{"unknown_extension",
                     {"--input", "input.1=$D/x.txt", "--input", "bias=$B"},
                     {".npy or .pb"}},
        BadInputCase{"two_shapes_with_inputs",
                     {"--input", "input.1=$X", "--input", "bias=$B", "--shape", "batch=3",
                      "--shape", "batch=4"},
                     {"at most one --shape"}},
        BadInputCase{"output_dir_with_two_runs",
                     {"--shape", "batch=3", "--shape", "batch=4", "--output-dir", "$D/o"},
                     {"--output-dir", "one run"}}),
    [](const ::testing::TestParamInfo<BadInputCase>& info) {
      return std::string(info.param.name);
    });

TEST(OnnxRunCli, InputsDisagreeingOnASymbol) {
  std::string dir = make_temp_dir();
  std::string model =
      save_proto(make_model({{"x", kFloat, {"n", int64_t{2}}}, {"y", kFloat, {"n", int64_t{2}}}},
                            {{"z", kFloat, {"n", int64_t{2}}}}, {{"Add", {"x", "y"}, {"z"}}}),
                 dir + "/m.onnx");
  frontend::write_npy(dir + "/x.npy", HostTensor(DType::f32, {2, 2}));
  frontend::write_npy(dir + "/y.npy", HostTensor(DType::f32, {3, 2}));
  CliResult r = run_cli(
      {"run", model, "--ref", "--input", "x=" + dir + "/x.npy", "--input", "y=" + dir + "/y.npy"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--input y: dim 0 is n = 2 (from input x), got 3"));
}

TEST(OnnxRunCli, MalformedModelIsAClearError) {
  std::string path = write_temp_file("bad.onnx", "this is not a protobuf \xff\xff");
  CliResult r = run_cli({"run", path, "--ref"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("bad.onnx"));
}

TEST(OnnxRunCli, OutputFileNamesAreSanitized) {
  // Checked through the CLI above for '/'; the rule itself covers the rest.
  std::string dir = make_temp_dir();
  std::string model =
      save_proto(make_model({{"x", kFloat, {int64_t{2}}}},
                            {{"..", kFloat, {int64_t{2}}}, {"a/b/c", kFloat, {int64_t{2}}}},
                            {{"Relu", {"x"}, {".."}}, {"Neg", {"x"}, {"a/b/c"}}}),
                 dir + "/m.onnx");
  frontend::write_npy(dir + "/x.npy", host_tensor(DType::f32, {2}, {1, -1}));
  std::string out = dir + "/out";
  CliResult r =
      run_cli({"run", model, "--ref", "--input", "x=" + dir + "/x.npy", "--output-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(frontend::read_npy(out + "/_...npy").get_f64(0), 1.0);
  EXPECT_EQ(frontend::read_npy(out + "/a_b_c.npy").get_f64(0), -1.0);
}

}  // namespace onnx_run_cli_test_local
}  // namespace autofuse::testing
