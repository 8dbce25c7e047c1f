// MatMul (NumPy semantics, 1-D operands, broadcast batches, integers) and
// Gemm (transposes, alpha, beta, C broadcast) against products computed in
// double; and a small model through the whole compile pipeline, where
// MatMul runs in oneDNN and LayerNorm/Gelu fuse around it.
#include <cstdlib>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/runtime/executable.h"
#include "composite_util.h"

namespace autofuse::frontend::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace composite_library_test_local {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// NumPy matmul in double (1-D operands promoted and their unit dim removed).
std::pair<std::vector<int64_t>, std::vector<double>> numpy_matmul(const HostTensor& a,
                                                                  const HostTensor& b) {
  std::vector<int64_t> sa = a.shape(), sb = b.shape();
  const bool vec_a = sa.size() == 1, vec_b = sb.size() == 1;
  if (vec_a) sa.insert(sa.begin(), 1);
  if (vec_b) sb.push_back(1);
  const size_t ra = sa.size(), rb = sb.size(), ro = std::max(ra, rb);
  const int64_t m = sa[ra - 2], k = sa[ra - 1], n = sb[rb - 1];
  std::vector<int64_t> batch(ro - 2);
  for (size_t d = 0; d + 2 < ro; ++d) {
    const int64_t da = d + ra >= ro ? sa[d + ra - ro] : 1;
    const int64_t db = d + rb >= ro ? sb[d + rb - ro] : 1;
    batch[d] = std::max(da, db);
  }
  std::vector<double> out;
  const int64_t batches = numel_of(batch);
  for (int64_t bi = 0; bi < batches; ++bi) {
    // Offsets of this batch in a and b (broadcast dims contribute nothing).
    int64_t rem = bi, oa = 0, ob = 0, stride_a = 1, stride_b = 1;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t i = rem % batch[d];
      rem /= batch[d];
      if (d + ra >= ro) {
        const int64_t da = sa[d + ra - ro];
        if (da != 1) oa += i * stride_a;
        stride_a *= da;
      }
      if (d + rb >= ro) {
        const int64_t db = sb[d + rb - ro];
        if (db != 1) ob += i * stride_b;
        stride_b *= db;
      }
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          s += a.get_f64(oa * m * k + i * k + kk) * b.get_f64(ob * k * n + kk * n + j);
        out.push_back(s);
      }
  }
  std::vector<int64_t> shape = batch;
  if (!vec_a) shape.push_back(m);
  if (!vec_b) shape.push_back(n);
  return {shape, out};
}

TEST(CompositeMatMul, NumpySemantics) {
  struct Case {
    std::vector<int64_t> a, b;
  };
  const std::vector<Case> cases = {
      {{3, 4}, {4, 5}},       {{1, 1}, {1, 1}},          {{7}, {7}},
      {{7}, {7, 3}},          {{2, 5, 7}, {7}},          {{7}, {2, 7, 3}},
      {{2, 3, 5, 7}, {7, 4}}, {{2, 1, 5, 7}, {3, 7, 4}}, {{5, 33}, {2, 33, 17}},
  };
  uint64_t seed = 70;
  for (DType dt : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    for (const Case& c : cases) {
      const std::string what =
          fmt::format("{} [{}] @ [{}]", dtype_name(dt), fmt::join(c.a, ","), fmt::join(c.b, ","));
      OneNode n("MatMul");
      const double lo = is_float(dt) ? -1 : -9, hi = is_float(dt) ? 1 : 9;
      n.inputs = {random_host(dt, c.a, seed++, lo, hi), random_host(dt, c.b, seed++, lo, hi)};
      const auto [shape, want] = numpy_matmul(n.inputs[0], n.inputs[1]);
      const double k = static_cast<double>(c.a.back());
      expect_close(n.run()[0], shape, want, 0, is_float(dt) ? 1e-6 * k : 0, what);
    }
  }
}

TEST(CompositeMatMul, MismatchedInnerDimsAreClearErrors) {
  for (DType dt : {DType::f32, DType::i64}) {
    OneNode n("MatMul");
    n.inputs = {HostTensor(dt, {2, 1}), HostTensor(dt, {3, 4})};  // K 1 vs 3: no broadcasting
    EXPECT_THROW(n.import(), UserError) << dtype_name(dt);
    OneNode s("MatMul");
    s.inputs = {HostTensor(dt, {}), HostTensor(dt, {3, 4})};
    EXPECT_THROW(s.import(), UserError) << dtype_name(dt);
  }
}

TEST(CompositeGemm, TransposesScalesAndBias) {
  uint64_t seed = 90;
  struct Case {
    int64_t m, k, n;
    int trans_a, trans_b;
    float alpha, beta;
    std::vector<int64_t> c;  ///< empty: no C
    bool constant_b;
  };
  const std::vector<Case> cases = {
      {3, 4, 5, 0, 0, 1, 1, {3, 5}, false}, {3, 4, 5, 1, 0, 0.5f, 2, {5}, false},
      {1, 1, 1, 0, 1, 1, 1, {}, false},     {6, 7, 3, 1, 1, -1, 0.25f, {1, 3}, true},
      {5, 9, 2, 0, 1, 2, 1, {5, 1}, true},  {2, 3, 4, 0, 0, 1, 1, {}, true},
  };
  for (const Case& c : cases) {
    const std::string what =
        fmt::format("{}x{}x{} tA {} tB {} C [{}]{}", c.m, c.k, c.n, c.trans_a, c.trans_b,
                    fmt::join(c.c, ","), c.constant_b ? " B constant" : "");
    OneNode n("Gemm");
    const std::vector<int64_t> sa =
        c.trans_a ? std::vector<int64_t>{c.k, c.m} : std::vector<int64_t>{c.m, c.k};
    const std::vector<int64_t> sb =
        c.trans_b ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n};
    n.inputs = {random_host(DType::f32, sa, seed++, -1, 1),
                random_host(DType::f32, sb, seed++, -1, 1)};
    if (!c.c.empty()) n.inputs.push_back(random_host(DType::f32, c.c, seed++, -1, 1));
    if (c.constant_b) n.initializer_inputs = {1};
    n.attrs = {attr("transA", c.trans_a), attr("transB", c.trans_b), attr("alpha", c.alpha),
               attr("beta", c.beta)};
    n.opset = 13;
    const OnnxModel model = n.import();
    // A constant B^T is folded at import: only A's transpose stays an op.
    int transposes = 0;
    for (const Node& node : model.graph->nodes())
      transposes += node.op == OpKind::Transpose;
    EXPECT_EQ(transposes, c.trans_a + (c.constant_b ? 0 : c.trans_b)) << what;
    std::vector<double> want;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          const double av = n.inputs[0].get_f64(c.trans_a ? kk * c.m + i : i * c.k + kk);
          const double bv = n.inputs[1].get_f64(c.trans_b ? j * c.k + kk : kk * c.n + j);
          s += av * bv;
        }
        double v = c.alpha * s;
        if (!c.c.empty()) {
          const int64_t ci =
              (c.c.size() == 2 && c.c[0] != 1 ? i * c.c.back() : 0) + (c.c.back() != 1 ? j : 0);
          v += c.beta * n.inputs[2].get_f64(ci);
        }
        want.push_back(v);
      }
    expect_close(run(model, n.graph_inputs())[0], {c.m, c.n}, want, 1e-5, 1e-5, what);
  }
}

TEST(CompositeGemm, BadShapesAreClearErrors) {
  OneNode n("Gemm");
  n.inputs = {HostTensor(DType::f32, {2, 3, 4}), HostTensor(DType::f32, {4, 5})};
  try {
    n.import();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank-2"));
  }
  OneNode c("Gemm");
  c.inputs = {HostTensor(DType::f32, {2, 3}), HostTensor(DType::f32, {3, 4}),
              HostTensor(DType::f32, {3, 2, 4})};  // C larger than (M, N)
  EXPECT_THROW(c.import(), UserError);
}

TEST(CompositePipeline, DenseLayerNormGeluBlockCompilesOnceAndMatches) {
  // y = Gelu(LayerNorm(x @ W + b)) @ W2, with a symbolic row count: two
  // matmuls in oneDNN, LayerNorm and Gelu fused between them.
  const int64_t d = 24, h = 40;
  ModelBuilder m(20);
  m.input("x", kF32, {"N", d});
  const HostTensor w = random_host(DType::f32, {d, h}, 1, -0.3, 0.3);
  const HostTensor bias = random_host(DType::f32, {h}, 2);
  const HostTensor gamma = random_host(DType::f32, {h}, 3, 0.5, 1.5);
  const HostTensor w2 = random_host(DType::f32, {h, 7}, 4, -0.3, 0.3);
  m.initializer(tensor("w", kF32, {d, h}, values_of(w)))
      .initializer(tensor("bias", kF32, {h}, values_of(bias)))
      .initializer(tensor("gamma", kF32, {h}, values_of(gamma)))
      .initializer(tensor("w2", kF32, {h, 7}, values_of(w2)))
      .node("MatMul", {"x", "w"}, {"xw"})
      .node("Add", {"xw", "bias"}, {"pre"})
      .node("LayerNormalization", {"pre", "gamma"}, {"ln"})
      .node("Gelu", {"ln"}, {"act"}, {attr("approximate", "tanh")})
      .node("MatMul", {"act", "w2"}, {"y"})
      .output("y");
  const OnnxModel model = m.import();
  runtime::CompileOptions options;
  options.compiler.cache_dir = shared_test_cache();
  options.threads = 2;
  auto exe = runtime::Executable::build(model.graph, options);
  // Add + LayerNorm + Gelu: one kernel between the two library matmuls.
  EXPECT_EQ(exe->report().kernels, 1) << fuse::print_fused_graph(exe->fused());
  uint64_t seed = 10;
  for (int64_t rows : {1, 5, 67}) {
    const HostTensor x = random_host(DType::f32, {rows, d}, seed++);
    const std::vector<HostTensor> want = run(model, {x});
    const std::vector<HostTensor> got = exe->run(std::vector<HostTensor>{x});
    expect_close(got[0], {rows, 7}, values_of(want[0]), 1e-4, 1e-4, fmt::format("N={}", rows));
  }
  // One module for every shape (compiled, or loaded from the shared cache).
  EXPECT_EQ(exe->report().jit.compiles + exe->report().jit.cache_hits, 1);
}

/// Relu(ConstantPad(x, value) * 2) of an [N, C, H, W] tensor, computed
/// directly (independent of the importer's iota/gather/where form).
std::vector<double> padded_mul_relu(const HostTensor& x, const std::vector<int64_t>& pads,
                                    double value, std::vector<int64_t>& shape) {
  const std::vector<int64_t> in = x.shape();
  const size_t rank = in.size();
  shape.assign(rank, 0);
  for (size_t d = 0; d < rank; ++d)
    shape[d] = pads[d] + in[d] + pads[d + rank];
  std::vector<double> out;
  std::vector<int64_t> at(rank, 0);
  for (int64_t e = 0; e < numel_of(shape); ++e) {
    int64_t rest = e, source = 0, stride = 1;
    bool inside = true;
    for (size_t d = rank; d-- > 0;) {
      at[d] = rest % shape[d];
      rest /= shape[d];
      const int64_t p = at[d] - pads[d];
      inside = inside && p >= 0 && p < in[d];
      source += p * stride;
      stride *= in[d];
    }
    out.push_back(std::max(0.0, 2 * (inside ? x.get_f64(source) : value)));
  }
  return out;
}

TEST(CompositePipeline, ConstantPadFusesWithItsNeighbours) {
  // Relu(Pad(x, constant 0.5) * 2) over static C, H, W with a symbolic batch:
  // padding is iota/compare/where around one gather of x per padded axis,
  // the gathers chained directly on x (one view of its buffer), so the pad
  // joins its neighbours' kernel (no library concat) however many axes it
  // pads. Negative pads crop (a slice, part of the same view).
  struct Case {
    std::vector<int64_t> pads;
    int kernels;
  };
  for (const Case& c : {Case{{0, 0, 0, 2, 0, 0, 0, 1}, 1}, Case{{0, 0, 1, 2, 0, 0, 2, 1}, 1},
                        Case{{0, 1, 1, 2, 0, 3, 2, 1}, 1}, Case{{0, 2, -1, 1, 0, 0, 1, -2}, 1}}) {
    ModelBuilder m(21);
    m.input("x", kF32, {"N", 4, 3, 5})
        .initializer(ints("pads", c.pads))
        .initializer(tensor("half", kF32, {}, {0.5}))
        .initializer(tensor("two", kF32, {}, {2.0}))
        .node("Pad", {"x", "pads", "half"}, {"p"})
        .node("Mul", {"p", "two"}, {"p2"})
        .node("Relu", {"p2"}, {"y"})
        .output("y");
    const OnnxModel model = m.import();
    runtime::CompileOptions options;
    options.compiler.cache_dir = shared_test_cache();
    auto exe = runtime::Executable::build(model.graph, options);
    const std::string what = fmt::format("pads {}", fmt::join(c.pads, ","));
    EXPECT_EQ(exe->report().kernels, c.kernels) << what << fuse::print_fused_graph(exe->fused());
    EXPECT_EQ(exe->fused().regions.size(), static_cast<size_t>(c.kernels))
        << what << fuse::print_fused_graph(exe->fused());
    uint64_t seed = 3;
    for (int64_t n : {1, 2, 7}) {
      const HostTensor x = random_host(DType::f32, {n, 4, 3, 5}, seed++);
      const std::vector<HostTensor> got = exe->run(std::vector<HostTensor>{x});
      std::vector<int64_t> crop = c.pads, shape;
      for (int64_t& p : crop)  // the crop first: then only padding is left
        p = std::max<int64_t>(p, 0);
      HostTensor cropped = x;
      if (c.pads[2] < 0 || c.pads[7] < 0) {  // the case cropping H at the start, W at the end
        cropped = HostTensor(DType::f32, {n, 4, 2, 3});
        for (int64_t e = 0; e < cropped.numel(); ++e) {
          const int64_t w = e % 3, h = e / 3 % 2, nc = e / 6;
          cropped.set_f64(e, x.get_f64(nc * 15 + (h + 1) * 5 + w));
        }
      }
      const std::vector<double> want = padded_mul_relu(cropped, crop, 0.5, shape);
      expect_close(got[0], shape, want, 0, 0, fmt::format("{} N={}", what, n));
      expect_close(got[0], shape, values_of(run(model, {x})[0]), 0, 0,
                   fmt::format("{} N={} (reference)", what, n));
    }
  }
}

}  // namespace composite_library_test_local
}  // namespace autofuse::frontend::testing
