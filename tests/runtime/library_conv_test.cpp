// library_conv through oneDNN (f64: the direct loop) against the reference
// interpreter: 1-3 spatial axes, odd and prime sizes, strides, dilations,
// asymmetric pads, groups (depthwise included), with and without bias,
// degenerate problems, every float dtype, and the primitive cache.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "autofuse/graph/builder.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "runtime/library.h"
#include "runtime/machine.h"

namespace autofuse::runtime {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace library_conv_test_local {

using sym::Expr;

struct ConvEnv {
  ThreadPool pool{3};
  Scratch scratch;
  DnnlCache cache;
  LibraryContext ctx{pool, scratch, kMinBlockBytes, &cache};
};

struct Case {
  std::vector<int64_t> x, w;  ///< [N, C, D...], [M, C/group, K...]
  ConvAttrs attrs;            ///< empty lists: defaults
  bool bias = true;
};

Shape dims(const std::vector<int64_t>& v) {
  Shape s;
  for (int64_t d : v)
    s.push_back(Expr(d));
  return s;
}

Graph conv_graph(DType dt, const Case& c) {
  GraphBuilder g("conv");
  std::vector<Tensor> in{g.input("x", dt, dims(c.x)), g.input("w", dt, dims(c.w))};
  if (c.bias) in.push_back(g.input("b", dt, {Expr(c.w[0])}));
  return std::move(g).build({g.op(OpKind::Conv, in, c.attrs)});
}

TensorView view_of(const HostTensor& t) {
  return {const_cast<void*>(t.data()), t.dtype(), t.shape()};
}

/// Runs library_conv on the graph's inputs into a fresh, poisoned output.
HostTensor run_conv(const Graph& g, const std::vector<HostTensor>& in, LibraryContext& ctx) {
  const Node& node = g.node(0);
  const TensorType& t = g.value(g.outputs()[0]).type;
  std::vector<int64_t> shape;
  for (const Expr& d : t.shape)
    shape.push_back(*d.as_const());
  HostTensor out(t.dtype, shape);
  if (out.nbytes() > 0) std::memset(out.data(), 0x7f, out.nbytes());
  const TensorView bias = in.size() == 3 ? view_of(in[2]) : TensorView{};
  library_conv(view_of(in[0]), view_of(in[1]), in.size() == 3 ? &bias : nullptr,
               std::get<ConvAttrs>(node.attrs), view_of(out), ctx);
  return out;
}

/// |got - want| within the accumulation bound (inputs in [-1, 1): the sum
/// of |x||w| is at most the taps per output, C/group * prod(K), plus the
/// bias) plus one rounding of the storage type.
void check(DType dt, const Case& c, LibraryContext& ctx, uint64_t seed) {
  SCOPED_TRACE(fmt::format("{} x [{}] w [{}] strides [{}] dilations [{}] pads [{}] group {}{}",
                           dtype_name(dt), fmt::join(c.x, ","), fmt::join(c.w, ","),
                           fmt::join(c.attrs.strides, ","), fmt::join(c.attrs.dilations, ","),
                           fmt::join(c.attrs.pads, ","), c.attrs.group, c.bias ? " bias" : ""));
  Graph g = conv_graph(dt, c);
  std::vector<HostTensor> in = random_inputs(g, {}, seed);
  const HostTensor want = run_reference(g, in)[0];
  const HostTensor got = run_conv(g, in, ctx);
  ASSERT_EQ(got.shape(), want.shape());
  double taps = 1;
  for (size_t i = 1; i < c.w.size(); ++i)
    taps *= static_cast<double>(c.w[i]);
  const double acc_eps = dt == DType::f64 ? 2.3e-16 : 1.2e-7;
  const double store_eps = dt == DType::f16 ? 1.0 / 1024 : dt == DType::bf16 ? 1.0 / 128 : 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.get_f64(i), v = got.get_f64(i);
    ASSERT_LE(std::abs(v - w), acc_eps * (taps + 1) * 4 + store_eps * std::abs(w) + 1e-30)
        << "element " << i << " of " << want.type_string();
  }
}

ConvAttrs attrs2(std::vector<int64_t> strides, std::vector<int64_t> dilations,
                 std::vector<int64_t> pads, int64_t group = 1) {
  return ConvAttrs{std::move(strides), std::move(dilations), std::move(pads), group};
}

const std::vector<Case>& geometries() {
  static const std::vector<Case> cases = {
      {{1, 1, 5, 5}, {1, 1, 3, 3}, {}},                                         // plain 3x3
      {{2, 3, 7, 13}, {5, 3, 3, 3}, attrs2({1, 1}, {1, 1}, {1, 1, 1, 1})},      // same-size pads
      {{1, 4, 11, 9}, {6, 2, 3, 2}, attrs2({2, 3}, {1, 1}, {0, 1, 2, 0}, 2)},   // groups, odd pads
      {{3, 6, 10, 10}, {6, 1, 3, 3}, attrs2({1, 1}, {2, 2}, {2, 2, 2, 2}, 6)},  // depthwise
      {{1, 5, 17, 17}, {7, 5, 1, 1}, attrs2({2, 2}, {1, 1}, {0, 0, 0, 0}), false},  // 1x1, no bias
      {{2, 3, 4, 4}, {2, 3, 5, 5}, attrs2({1, 1}, {1, 1}, {1, 2, 1, 2})},  // kernel > input
      {{1, 2, 31}, {3, 2, 4}, attrs2({3}, {2}, {1, 3})},                   // 1-D
      {{1, 2, 5, 6, 7}, {4, 1, 2, 3, 2}, attrs2({1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 1}, 2)},
      {{2, 16, 33, 31}, {32, 16, 3, 3}, attrs2({1, 1}, {1, 1}, {1, 1, 1, 1})},  // larger
  };
  return cases;
}

TEST(OneDnnConv, GeometriesEveryDtype) {
  ConvEnv env;
  uint64_t seed = 1;
  for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64})
    for (const Case& c : geometries())
      check(dt, c, env.ctx, seed++);
}

TEST(OneDnnConv, DegenerateProblems) {
  ConvEnv env;
  uint64_t seed = 50;
  for (DType dt : {DType::f32, DType::f16, DType::f64}) {
    check(dt, {{0, 2, 5, 5}, {3, 2, 3, 3}, {}}, env.ctx, seed++);         // no batch
    check(dt, {{2, 0, 5, 5}, {3, 0, 3, 3}, {}}, env.ctx, seed++);         // no input channel: bias
    check(dt, {{2, 0, 5, 5}, {3, 0, 3, 3}, {}, false}, env.ctx, seed++);  // ... or zero
    check(dt, {{1, 2, 4, 4}, {0, 2, 3, 3}, {}}, env.ctx, seed++);         // no output channel
  }
}

TEST(OneDnnConv, WorksWithoutACacheAndOnOneThread) {
  ThreadPool pool(1);
  Scratch scratch;
  LibraryContext ctx{pool, scratch, kMinBlockBytes};
  check(DType::f32, geometries()[2], ctx, 70);
  check(DType::bf16, geometries()[3], ctx, 71);
  check(DType::f64, geometries()[7], ctx, 72);
}

TEST(OneDnnConv, CacheReusesPrimitivesPerGeometry) {
  ConvEnv env;
  Graph g = conv_graph(DType::f32, geometries()[1]);
  Graph h = conv_graph(DType::f32, geometries()[2]);
  std::vector<HostTensor> in_g = random_inputs(g, {}, 1), in_h = random_inputs(h, {}, 2);
  const HostTensor first = run_conv(g, in_g, env.ctx);
  EXPECT_EQ(env.cache.size(), 1);
  run_conv(h, in_h, env.ctx);
  EXPECT_EQ(env.cache.size(), 2);
  const HostTensor again = run_conv(g, in_g, env.ctx);
  EXPECT_EQ(env.cache.size(), 2);  // nothing new for a geometry seen before
  ASSERT_EQ(std::memcmp(first.data(), again.data(), first.nbytes()), 0);
}

}  // namespace library_conv_test_local
}  // namespace autofuse::runtime
