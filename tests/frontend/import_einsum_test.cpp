// Einsum (convert_einsum.cpp) against a brute-force evaluation of the
// equation in double (every assignment of every label summed into the
// output): the matmul path, the product path, diagonals, implicit outputs,
// ellipses with broadcasting, integers; symbolic batch dims compiled on
// several shapes; errors naming what is wrong.
#include <map>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace import_einsum_test_local {

using ::testing::HasSubstr;

/// Brute force over explicit-output equations of letters only.
std::vector<double> brute_einsum(const std::string& equation, const std::vector<HostTensor>& in,
                                 std::vector<int64_t>& out_shape) {
  const size_t arrow = equation.find("->");
  std::vector<std::string> terms;
  std::string lhs = equation.substr(0, arrow), cur;
  for (char c : lhs + ",") {
    if (c == ',') {
      terms.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  const std::string out = equation.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t d = 0; d < terms[i].size(); ++d)
      size[terms[i][d]] = in[i].shape()[d];
  std::vector<char> labels;
  for (const auto& [l, n] : size)
    labels.push_back(l);
  out_shape.clear();
  for (char l : out)
    out_shape.push_back(size[l]);
  std::vector<double> result(static_cast<size_t>(numel_of(out_shape)), 0.0);
  std::map<char, int64_t> at;
  for (char l : labels)
    at[l] = 0;
  while (true) {
    double p = 1;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t flat = 0;
      for (size_t d = 0; d < terms[i].size(); ++d)
        flat = flat * in[i].shape()[d] + at[terms[i][d]];
      p *= in[i].get_f64(flat);
    }
    int64_t o = 0;
    for (char l : out)
      o = o * size[l] + at[l];
    result[static_cast<size_t>(o)] += p;
    size_t k = labels.size();
    while (k > 0 && ++at[labels[k - 1]] == size[labels[k - 1]])
      at[labels[--k]] = 0;
    if (k == 0) break;
  }
  return result;
}

struct Case {
  std::string equation;
  std::vector<std::vector<int64_t>> shapes;
};

TEST(ImportEinsum, MatchesBruteForce) {
  const Case cases[] = {
      {"ij,jk->ik", {{3, 5}, {5, 4}}},                    // matmul
      {"bij,bjk->bik", {{2, 3, 5}, {2, 5, 4}}},           // batched
      {"bhqd,bhkd->bhqk", {{2, 3, 4, 5}, {2, 3, 6, 5}}},  // attention scores
      {"ikj,jlk->li", {{2, 3, 4}, {4, 5, 3}}},            // two summed labels
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}},         // three operands
      {"i,j->ij", {{3}, {4}}},                            // outer product
      {"ij,ij->ij", {{3, 4}, {3, 4}}},                    // elementwise
      {"ij->ji", {{3, 4}}},                               // transpose
      {"ij->", {{3, 4}}},                                 // total sum
      {"i,i->", {{7}, {7}}},                              // inner product
      {"ii->i", {{4, 4}}},                                // diagonal
      {"iij,jk->ik", {{3, 3, 2}, {2, 5}}},                // diagonal, then a matmul
      {"abc,cd->", {{2, 3, 4}, {4, 5}}},                  // everything summed
  };
  uint64_t seed = 1;
  for (size_t ci = 0; ci < std::size(cases); ++ci) {
    const Case& c = cases[ci];
    for (DType dt : {DType::f32, DType::i32}) {
      // Integers take the product path: a few cases suffice (each compiles).
      if (dt == DType::i32 && ci != 0 && ci != 4 && ci != 10) continue;
      OneNode n{"Einsum"};
      for (const auto& s : c.shapes)
        n.inputs.push_back(dt == DType::i32 ? random_host(dt, s, seed++, -5, 5)
                                            : random_host(dt, s, seed++));
      n.attrs = {attr("equation", c.equation.c_str())};
      std::vector<int64_t> shape;
      const std::vector<double> want = brute_einsum(c.equation, n.inputs, shape);
      const std::string what = fmt::format("{} {}", c.equation, dtype_name(dt));
      const double tol = dt == DType::f32 ? 1e-5 : 0;
      expect_close(n.run()[0], shape, want, tol, tol, what + " (reference)");
      expect_close(compile_two_threads(n.import())->run(n.graph_inputs())[0], shape, want, tol, tol,
                   what + " (compiled)");
    }
  }
}

TEST(ImportEinsum, ImplicitOutputAndEllipsis) {
  // Implicit: the labels used once, sorted: "ij,jk" is "ij,jk->ik".
  OneNode n{"Einsum"};
  n.inputs = {random_host(DType::f32, {3, 5}, 1), random_host(DType::f32, {5, 2}, 2)};
  n.attrs = {attr("equation", "ij,jk")};
  std::vector<int64_t> shape;
  std::vector<double> want = brute_einsum("ij,jk->ik", n.inputs, shape);
  expect_close(n.run()[0], shape, want, 1e-5, 1e-5, "implicit");
  // "...ij,...jk->...ik" with batch [2, 1] against [3]: broadcast to [2, 3].
  OneNode e{"Einsum"};
  e.inputs = {random_host(DType::f32, {2, 1, 3, 4}, 3), random_host(DType::f32, {3, 4, 5}, 4)};
  e.attrs = {attr("equation", "...ij,...jk->...ik")};
  const HostTensor got = e.run()[0];
  ASSERT_EQ(got.shape(), (std::vector<int64_t>{2, 3, 3, 5}));
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t q = 0; q < 3; ++q) {
      HostTensor a(DType::f32, {3, 4}), b(DType::f32, {4, 5});
      for (int64_t i = 0; i < 12; ++i)
        a.set_f64(i, e.inputs[0].get_f64(p * 12 + i));
      for (int64_t i = 0; i < 20; ++i)
        b.set_f64(i, e.inputs[1].get_f64(q * 20 + i));
      want = brute_einsum("ij,jk->ik", {a, b}, shape);
      for (int64_t i = 0; i < 15; ++i)
        EXPECT_NEAR(got.get_f64((p * 3 + q) * 15 + i), want[static_cast<size_t>(i)], 1e-5);
    }
}

TEST(ImportEinsum, SymbolicBatchIsOneLibraryMatmul) {
  ModelBuilder m(17);
  m.input("q", kF32, {"B", 4, "S", 8})
      .input("k", kF32, {"B", 4, "S", 8})
      .node("Einsum", {"q", "k"}, {"y"}, {attr("equation", "bhqd,bhkd->bhqk")})
      .output("y");
  const OnnxModel model = m.import();
  auto exe = compile_two_threads(model);
  uint64_t seed = 50;
  for (auto [batch, s] : {std::pair<int64_t, int64_t>{1, 1}, {2, 7}, {3, 16}}) {
    const HostTensor q = random_host(DType::f32, {batch, 4, s, 8}, seed++);
    const HostTensor k = random_host(DType::f32, {batch, 4, s, 8}, seed++);
    std::vector<int64_t> shape;
    const std::vector<double> want = brute_einsum("bhqd,bhkd->bhqk", {q, k}, shape);
    expect_close(exe->run(std::vector<HostTensor>{q, k})[0], shape, want, 1e-5, 1e-5,
                 fmt::format("B={} S={}", batch, s));
  }
  // One library matmul between views: nothing to generate.
  EXPECT_EQ(exe->report().kernels, 0) << fuse::print_fused_graph(exe->fused());
}

std::string einsum_error(const std::string& equation, const std::vector<std::vector<Dim>>& dims) {
  ModelBuilder m(17);
  std::vector<std::string> names;
  for (size_t i = 0; i < dims.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    m.input(names.back(), kF32, dims[i]);
  }
  m.node("Einsum", names, {"y"}, {attr("equation", equation.c_str())}).output("y");
  return import_error(m);
}

TEST(ImportEinsum, BadEquationsAreClearErrors) {
  EXPECT_THAT(einsum_error("ij,jk->ik", {{2, 3}}), HasSubstr("has 2 operands, the node 1 inputs"));
  EXPECT_THAT(einsum_error("ijk->i", {{2, 3}}), HasSubstr("term 'ijk' has 3 labels for input 0"));
  EXPECT_THAT(einsum_error("ij->iz", {{2, 3}}), HasSubstr("output label 'z' is in no operand"));
  EXPECT_THAT(einsum_error("i1->i", {{2, 3}}), HasSubstr("has the character '1'"));
  EXPECT_THAT(einsum_error("ii->i", {{"N", "N"}}), HasSubstr("unsupported: "));
  EXPECT_THAT(einsum_error("ii->i", {{"N", "N"}}), HasSubstr("the diagonal of label 'i'"));
}

}  // namespace import_einsum_test_local
}  // namespace autofuse::frontend::testing
