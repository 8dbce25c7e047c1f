// Round trips of the `.af` format: print(parse(print(g))) == print(g) for
// every op, the exact canonical text for a few graphs, and the examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

#include "graph/text_test_util.h"

namespace autofuse {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace text_roundtrip_test_local {

using testing::expect_round_trip;

// One small graph per op, with symbolic dims wherever the op allows them.
std::string graph_text_for(OpKind op) {
  const OpInfo& info = op_info(op);
  const std::string name(info.name);
  auto wrap = [&](const std::string& params, const std::string& body) {
    return fmt::format("graph g_{}({}) {{\n{}\n  return y\n}}\n", name, params, body);
  };
  auto elementwise_dtype = [&]() -> std::string {
    switch (info.dtype_rule) {
      case DTypeRule::BoolOrIntSame:
        return "bool";
      default:
        return "f32";
    }
  };
  switch (info.op_class) {
    case OpClass::Unary: {
      const std::string t = elementwise_dtype();
      return wrap(fmt::format("x: {}[N, D]", t), fmt::format("  y = {}(x)", name));
    }
    case OpClass::Binary: {
      const std::string t = elementwise_dtype();
      // y broadcasts along the first axis.
      return wrap(fmt::format("x: {}[N, D], z: {}[D]", t, t), fmt::format("  y = {}(x, z)", name));
    }
    case OpClass::Where:
      return wrap("c: bool[N, D], a: f32[N, D], b: f32[D]", "  y = where(c, a, b)");
    case OpClass::Cast:
      return wrap("x: f32[N, D]", "  y = cast(x, to=f16)");
    case OpClass::BroadcastTo:
      return wrap("x: f32[1, D]", "  y = broadcast_to(x, shape=[N, D])");
    case OpClass::Reduce:
      return wrap("x: f32[N, D]", fmt::format("  y = {}(x, axes=[-1], keepdims=true)", name));
    case OpClass::Transpose:
      return wrap("x: f32[N, D, K]", "  y = transpose(x, perm=[2, 0, 1])");
    case OpClass::Reshape:
      return wrap("x: f32[N, D]", "  y = reshape(x, shape=[N*D])");
    case OpClass::Slice:
      // `end`, a negative start and a negative step.
      return wrap("x: f32[N, D]",
                  "  y = slice(x, axes=[1, 0], starts=[1, -1], ends=[end, end], steps=[2, -1])");
    case OpClass::Concat:
      return wrap("a: f32[N, D], b: f32[N, M], c: f32[N, 4]", "  y = concat(a, b, c, axis=1)");
    case OpClass::Split:
      return wrap("x: f32[N, 2*D + 3]",
                  "  a, b, y = split(x, axis=1, sizes=[D, 3, D])\n  z = add(a, y)");
    case OpClass::Gather:
      return wrap("data: f32[V, D], idx: i64[N, K]", "  y = gather(data, idx, axis=0)");
    case OpClass::Constant:
      return wrap("",
                  "  y = constant(dtype=f32, shape=[2, 4], "
                  "value=[1, -2.5, 1e-5, -0.0, inf, -inf, nan, 3.0000000000000004])");
    case OpClass::Iota:
      return wrap("", "  y = iota(shape=[N, 3], axis=1)");
    case OpClass::MatMul:
      return wrap("a: f32[B, N, K], b: f32[K, M]", "  y = matmul(a, b)");
    case OpClass::Conv:
      // Symbolic spatial dims: floordiv in the output type.
      return wrap("x: f32[N, 4, H, W], w: f32[6, 2, 3, 2], b: f32[6]",
                  "  y = conv(x, w, b, strides=[2, 1], dilations=[1, 3], pads=[1, 0, 2, 1], "
                  "group=2)");
  }
  return "";
}

class OpRoundTrip : public ::testing::TestWithParam<OpKind> {};

TEST_P(OpRoundTrip, PrintParsePrintIsStable) {
  const std::string text = graph_text_for(GetParam());
  ASSERT_FALSE(text.empty()) << "no test graph for op " << op_name(GetParam());
  Graph g = [&] {
    try {
      return parse_graph(text, "case.af");
    } catch (const UserError& e) {
      ADD_FAILURE() << e.what() << "\n" << text;
      throw;
    }
  }();
  ASSERT_FALSE(g.nodes().empty());
  EXPECT_EQ(g.nodes().front().op, GetParam());
  const std::string printed = expect_round_trip(g);
  // The canonical text names the op and types every target.
  EXPECT_NE(printed.find(fmt::format(" = {}(", op_name(GetParam()))), std::string::npos) << printed;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpRoundTrip, ::testing::ValuesIn(all_ops()),
                         [](const ::testing::TestParamInfo<OpKind>& info) {
                           return std::string(op_name(info.param));
                         });

TEST(TextRoundTrip, CanonicalTextOfLayerNorm) {
  Graph g = parse_graph(R"(# comment
graph ln(x: f32[N, D], gamma: f32[D]) {  # trailing comment
  mean: f32[N, 1] = reduce_mean(x, axes=[-1], keepdims=true)
  xc = sub(x, mean)
  eps = constant(dtype=f32, value=1e-5)
  sq = mul(xc, xc)
  var = reduce_sum(sq, axes=[1])
  y = mul(xc, gamma)
  return y, var
})");
  EXPECT_EQ(print_graph(g),
            "graph ln(x: f32[N, D], gamma: f32[D]) {\n"
            "  mean: f32[N, 1] = reduce_mean(x, axes=[1], keepdims=true)\n"
            "  xc: f32[N, D] = sub(x, mean)\n"
            "  eps: f32[] = constant(dtype=f32, shape=[], value=1e-05)\n"
            "  sq: f32[N, D] = mul(xc, xc)\n"
            "  var: f32[N] = reduce_sum(sq, axes=[1], keepdims=false)\n"
            "  y: f32[N, D] = mul(xc, gamma)\n"
            "  return y, var\n"
            "}\n");
  expect_round_trip(g);
}

TEST(TextRoundTrip, SplitPrintsEveryTargetWithItsType) {
  Graph g = parse_graph(
      "graph s(x: f32[N, 2*D]) {\n  a, b = split(x, axis=-1, sizes=[D, D])\n  return b, a\n}");
  const std::string printed = print_graph(g);
  EXPECT_NE(printed.find("  a: f32[N, D], b: f32[N, D] = split(x, axis=1, sizes=[D, D])\n"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("  return b, a\n"), std::string::npos) << printed;
  expect_round_trip(g);
}

TEST(TextRoundTrip, DefaultsArePrintedExplicitly) {
  Graph g = parse_graph(R"(graph d(x: f32[N, D]) {
  s = slice(x, axes=[0], starts=[1], ends=[-1])
  i = iota(shape=[D], axis=0)
  c = constant(dtype=i32, value=[1, 2, 3], shape=[3])
  return s, i, c
})");
  const std::string printed = print_graph(g);
  EXPECT_NE(printed.find("slice(x, axes=[0], starts=[1], ends=[-1], steps=[1])"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("iota(dtype=i64, shape=[D], axis=0)"), std::string::npos) << printed;
  EXPECT_NE(printed.find("constant(dtype=i32, shape=[3], value=[1, 2, 3])"), std::string::npos)
      << printed;
  expect_round_trip(g);
}

TEST(TextRoundTrip, SliceEndAndNegativeSteps) {
  Graph g = parse_graph(R"(graph r(x: f32[N, 8]) {
  rev = slice(x, axes=[1], starts=[-1], ends=[end], steps=[-1])
  odd = slice(x, axes=[1, 0], starts=[1, 0], ends=[end, end], steps=[2, 1])
  return rev, odd
})");
  const auto& rev = std::get<SliceAttrs>(g.nodes()[0].attrs);
  EXPECT_EQ(rev.ends, std::vector<int64_t>{kSliceEnd});
  EXPECT_EQ(rev.steps, std::vector<int64_t>{-1});
  const std::string printed = expect_round_trip(g);
  EXPECT_NE(printed.find("ends=[end], steps=[-1]"), std::string::npos) << printed;
  // With a static dim the output sizes are known exactly.
  EXPECT_EQ(g.value(g.outputs()[0]).type.shape[1], sym::Expr(8));
  EXPECT_EQ(g.value(g.outputs()[1]).type.shape[1], sym::Expr(4));
}

TEST(TextRoundTrip, FloatConstantsRoundTripBitExactly) {
  const std::vector<double> values = {0.1,
                                      1.0 / 3.0,
                                      -2e-5,
                                      1e-300,
                                      5e-324,
                                      std::numeric_limits<double>::max(),
                                      -std::numeric_limits<double>::max(),
                                      -0.0,
                                      0.0,
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(),
                                      1e20,
                                      9007199254740992.0,
                                      123456.789};
  ConstantAttrs attrs{DType::f64, {static_cast<int64_t>(values.size())}, values};
  Graph g("consts");
  auto out = g.add_node(OpKind::Constant, {}, attrs, {"c"});
  g.set_outputs(out);
  expect_round_trip(g);
  Graph back = parse_graph(print_graph(g));
  const auto& parsed = std::get<ConstantAttrs>(back.nodes()[0].attrs).values;
  ASSERT_EQ(parsed.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(parsed[i]), std::bit_cast<uint64_t>(values[i]))
        << "value " << i << " = " << values[i];
  }
}

TEST(TextRoundTrip, FloatLiteralSpellings) {
  Graph g = parse_graph(R"(graph f() {
  a = constant(dtype=f32, value=1)
  b = constant(dtype=f32, value=1.5)
  c = constant(dtype=f32, value=-2e-5)
  d = constant(dtype=f32, value=inf)
  e = constant(dtype=f32, value=-inf)
  n = constant(dtype=f32, value=nan)
  h = constant(dtype=f32, value=2.5E+3)
  return a, b, c, d, e, n, h
})");
  auto value = [&](int node) {
    return std::get<ConstantAttrs>(g.nodes()[node].attrs).values.at(0);
  };
  EXPECT_EQ(value(0), 1.0);
  EXPECT_EQ(value(1), 1.5);
  EXPECT_EQ(value(2), -2e-5);
  EXPECT_EQ(value(3), std::numeric_limits<double>::infinity());
  EXPECT_EQ(value(4), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(value(5)));
  EXPECT_EQ(value(6), 2500.0);
  expect_round_trip(g);
}

TEST(TextRoundTrip, SymbolicDimExpressionsWithCommas) {
  Graph g = parse_graph(R"(graph e(x: f32[N, floordiv(N, 2) + 1, max(M, 3)]) {
  y = reshape(x, shape=[N*(floordiv(N, 2) + 1), max(M, 3)])
  b = broadcast_to(x, shape=[2, N, floordiv(N, 2) + 1, max(M, 3)])
  return y, b
})");
  EXPECT_EQ(g.value(g.inputs()[0]).type.shape[1], sym::floordiv(sym::Expr::symbol("N"), 2) + 1);
  expect_round_trip(g);
}

TEST(TextRoundTrip, KeywordsAreValidNames) {
  // Any identifier may name a graph, value or symbol, so every valid graph
  // prints as parseable text.
  Graph g = parse_graph(R"(graph graph(x: f32[end, inf], true: f32[nan]) {
  return: f32[end, inf] = neg(x)
  graph, end = split(x, axis=1, sizes=[floordiv(inf, 2), inf - floordiv(inf, 2)])
  inf = reshape(true, shape=[nan])
  nan = broadcast_to(return, shape=[end, inf])
  false = iota(dtype=i32, shape=[end, true, false], axis=2)
  return return, graph, end, inf, nan, false
})");
  EXPECT_EQ(g.name(), "graph");
  EXPECT_EQ(g.outputs().size(), 6u);
  expect_round_trip(g);
}

TEST(TextRoundTrip, GuardsArePrintedAsCommentsAndRecreated) {
  Graph g = parse_graph(R"(graph gd(x: f32[N], y: f32[M]) {
  z = add(x, y)
  return z
})");
  ASSERT_FALSE(g.shape_env().guards().empty());
  const std::string printed = expect_round_trip(g);
  EXPECT_NE(printed.find("}\n# guard: "), std::string::npos) << printed;
  EXPECT_NE(printed.find(g.shape_env().guards()[0].condition_text()), std::string::npos);
}

TEST(TextRoundTrip, GraphsBuiltInCodeRoundTrip) {
  auto N = sym::Expr::symbol("N");
  auto D = sym::Expr::symbol("D");
  Graph g("built");
  ValueId x = g.add_input("x", TensorType{DType::f32, {N, 2 * D}});
  ValueId idx = g.add_input("idx", TensorType{DType::i32, {N}});
  ValueId rows = g.add_node(OpKind::Gather, {x, idx}, AxisAttrs{0}, {"rows"})[0];
  auto parts = g.add_node(OpKind::Split, {rows}, SplitAttrs{-1, {D, D}}, {"lo", "hi"});
  ValueId hi_t = g.add_node(OpKind::Transpose, {parts[1]}, TransposeAttrs{{1, 0}}, {"hi_t"})[0];
  ValueId mm = g.add_node(OpKind::MatMul, {parts[0], hi_t}, NoAttrs{}, {"mm"})[0];
  ValueId pos = g.add_node(OpKind::Iota, {}, IotaAttrs{DType::i32, {N}, 0}, {"pos"})[0];
  ValueId pos_f = g.add_node(OpKind::Cast, {pos}, CastAttrs{DType::f32}, {"pos_f"})[0];
  ValueId zero =
      g.add_node(OpKind::Constant, {}, ConstantAttrs{DType::f32, {}, {0.0}}, {"zero"})[0];
  ValueId pos_col =
      g.add_node(OpKind::Reshape, {pos_f}, ShapeAttrs{{N, sym::Expr(1)}}, {"pos_col"})[0];
  ValueId mask = g.add_node(OpKind::Gt, {pos_col, zero}, NoAttrs{}, {"mask"})[0];
  ValueId sel = g.add_node(OpKind::Where, {mask, mm, zero}, NoAttrs{}, {"sel"})[0];
  g.set_outputs({sel, parts[1]});
  const std::string printed = expect_round_trip(g);
  EXPECT_NE(printed.find("pos: i32[N] = iota(dtype=i32, shape=[N], axis=0)"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("sel: f32[N, N] = where(mask, mm, zero)"), std::string::npos) << printed;
}

TEST(TextRoundTrip, Examples) {
  const std::filesystem::path dir = std::filesystem::path(AUTOFUSE_SOURCE_DIR) / "examples";
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".af") files.push_back(entry.path());
    }
  }
  if (files.empty()) GTEST_SKIP() << "no examples in " << dir;
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    try {
      Graph g = parse_graph_file(file.string());
      expect_round_trip(g);
    } catch (const UserError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(TextRoundTrip, ParseGraphFileReportsTheFileName) {
  EXPECT_THROW(parse_graph_file("/nonexistent/dir/model.af"), UserError);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("autofuse_text_test_{}.af", ::getpid());
  {
    std::ofstream out(path);
    out << "graph g(x: f32[N]) {\n  y = frob(x)\n  return y\n}\n";
  }
  try {
    parse_graph_file(path.string());
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().file, path.string());
    EXPECT_EQ(e.where().line, 2);
    EXPECT_EQ(e.where().column, 7);
    EXPECT_NE(std::string(e.what()).find(path.string() + ":2:7: unknown op 'frob'"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

}  // namespace text_roundtrip_test_local
}  // namespace autofuse
