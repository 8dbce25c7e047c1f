// A short row's reducing pass as 16-lane vector code (vector_pass.cpp): rows
// of a static length from 64 to 1024 whose pass only does arithmetic on
// float values (row buffers, contiguous f32, bf16 and f16 loads, gathered rows,
// row-level scalars). Against the reference: layernorm (its variance pass),
// skip-layernorm (its sum kept in a row buffer), rmsnorm (a widened bf16
// load), division and negation, two sums in one pass, an embedding lookup's
// layernorm, random passes; rows whose length leaves every tail of the
// 16-lane vectors and 64-element runs, with NaN and infinities; f32, bf16
// and f16. A static short row's storing pass as vector code too (its f32,
// bf16 and f16 stores by af_put*): ordinary and streaming stores, outputs not
// 64-byte aligned, subnormal bf16 and f16 results. Max and min passes (f32,
// bf16 and f16, static and symbolic rows, rows in groups; NaN and infinities redone
// by the loop), softmax's exp pass (static and symbolic rows: the
// MaxPasses cases), and a symbolic row's storing pass. And which passes get
// them.
#include <cmath>
#include <random>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "asc_case_util.h"
#include "autofuse/graph/dtype.h"
#include "autofuse/graph/text.h"
#include "autofuse/ref/interpreter.h"
#include "autofuse/ref/random.h"
#include "reduction_test_util.h"

namespace autofuse::codegen_test {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace vector_pass_test_local {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kVectorPass = "the pass as 16-lane vectors";
const std::string kStoringPass = "a storing pass as 16-lane vectors";

std::string layernorm_text(const std::string& dtype, const std::string& d) {
  return fmt::format("graph ln(x: {0}[N, {1}], gamma: {0}[{1}]) {{\n", dtype, d) +
         normalized_text(dtype, "x", 1) + "  y = mul(xn, gamma)\n  return y\n}\n";
}

/// h = x + skip + bias (stored, and kept in a row buffer), layernorm of h.
std::string skip_layernorm_text(const std::string& dtype, const std::string& d) {
  return fmt::format(
             "graph sk(x: {0}[N, {1}], skip: {0}[N, {1}], bias: {0}[{1}]) {{\n"
             "  t = add(x, skip)\n  h = add(t, bias)\n",
             dtype, d) +
         normalized_text(dtype, "h", 1) + "  return h, xn\n}\n";
}

/// rmsnorm, its result times `scale` when given (1e-39: every bf16 and f32
/// result subnormal).
std::string rmsnorm_text(const std::string& dtype, const std::string& d,
                         const std::string& scale = "") {
  const std::string y = scale.empty() ? "  y = mul(x, inv)\n"
                                      : fmt::format(
                                            "  k = constant(dtype={}, value={})\n"
                                            "  t = mul(x, inv)\n  y = mul(t, k)\n",
                                            dtype, scale);
  return fmt::format(R"(graph rms(x: {0}[N, {1}]) {{
  sq = mul(x, x)
  ms = reduce_mean(sq, axes=[1], keepdims=true)
  eps = constant(dtype={0}, value=1e-6)
  ve = add(ms, eps)
  inv = rsqrt(ve)
)",
                     dtype, d) +
         y + "  return y\n}\n";
}

/// Two sums in one pass, with a division and a negation: sum(-x / 3) and
/// sum(x * x - x).
std::string two_sums_text(const std::string& dtype, const std::string& d) {
  return fmt::format(R"(graph two(x: {0}[N, {1}]) {{
  three = constant(dtype={0}, value=3)
  nx = neg(x)
  q = div(nx, three)
  a = reduce_sum(q, axes=[1])
  sq = mul(x, x)
  r = sub(sq, x)
  b = reduce_sum(r, axes=[1])
  return a, b
}})",
                     dtype, d);
}

/// An embedding lookup (word + position rows) and its layernorm, as in BERT's
/// embeddings.
std::string embed_layernorm_text(const std::string& dtype, const std::string& d) {
  return fmt::format(
             "graph emb(ids: i64[N], word: {0}[V, {1}], pos: {0}[N, {1}]) {{\n"
             "  w = gather(word, ids, axis=0)\n  e = add(w, pos)\n",
             dtype, d) +
         normalized_text(dtype, "e", 1) + "  return xn\n}\n";
}

double tol(const std::string& dtype) {
  return tolerance(dtype_from_name(dtype).value());
}

/// x with a NaN in row 1, +inf in row 3 and -inf in row 5 (when they
/// exist), each in the row's last element (a tail lane when the length is
/// not a multiple of 16).
std::vector<HostTensor> with_specials(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = random_inputs(graph, binding, 5);
  HostTensor& x = inputs[0];
  const int64_t d = x.numel() / binding.at("N");
  set_row_elements(x, d, d - 1, {{1, NAN}, {3, INFINITY}, {5, -INFINITY}});
  return inputs;
}

TEST(VectorPass, MatchesTheReference) {
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> rows = {{{"N", 1}}, {{"N", 6}}, {{"N", 37}}};
  for (const char* dt : {"f32", "bf16", "f16"}) {
    // 64: one run; 100, 127: 16-lane steps and a tail; 257: a tail of one
    // after whole runs; 768, 1024: the common hidden sizes, the longest.
    for (const char* d : {"64", "100", "127", "257", "768", "1024"}) {
      const double atol = std::string(dt) == "f32" ? 1e-4 : tol(dt);
      cases.push_back({fmt::format("layernorm {} D={}", dt, d), parse_graph(layernorm_text(dt, d)),
                       rows, tol(dt), atol});
      cases.push_back({fmt::format("skip layernorm {} D={}", dt, d),
                       parse_graph(skip_layernorm_text(dt, d)), rows, tol(dt), atol});
      cases.push_back({fmt::format("rmsnorm {} D={}", dt, d), parse_graph(rmsnorm_text(dt, d)),
                       rows, tol(dt), 1e-4});
      GraphCase two{fmt::format("two sums {} D={}", dt, d), parse_graph(two_sums_text(dt, d)), rows,
                    tol(dt), std::string(dt) == "f32" ? 1e-3 : 0.5};
      cases.push_back(std::move(two));
    }
    for (const char* d : {"100", "768"}) {
      const bool f32 = std::string(dt) == "f32";
      const std::tuple<const char*, std::string, double> graphs[] = {
          {"layernorm", layernorm_text(dt, d), f32 ? 1e-4 : tol(dt)},
          {"rmsnorm", rmsnorm_text(dt, d), 1e-4},
          {"two sums", two_sums_text(dt, d), f32 ? 1e-3 : 0.5}};
      for (const auto& [name, text, atol] : graphs) {
        GraphCase c{fmt::format("{} {} D={} with NaN and infinities", name, dt, d),
                    parse_graph(text), rows, tol(dt), atol};
        c.make_inputs = with_specials;
        cases.push_back(std::move(c));
      }
    }
  }
  // An embedding lookup's gathered rows (row offsets found outside the loop).
  for (const char* dt : {"f32", "bf16", "f16"}) {
    const double atol = std::string(dt) == "f32" ? 1e-4 : tol(dt);
    std::vector<sym::Binding> tokens;
    for (int64_t n : {1, 3, 17})
      tokens.push_back({{"N", n}, {"V", 11}});
    for (const char* d : {"100", "768"})
      cases.push_back({fmt::format("embedding layernorm {} D={}", dt, d),
                       parse_graph(embed_layernorm_text(dt, d)), tokens, tol(dt), atol});
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/false);
  EXPECT_THAT(code, HasSubstr(kVectorPass));
  // (The module's code starts with the prelude: match the calls' form.)
  EXPECT_THAT(code, HasSubstr("af_load16_bf16(&v"));
  EXPECT_THAT(code, HasSubstr("af_load16_f16(&v"));
  // A gathered row in a vector pass: a 16-lane load at the row's offset.
  EXPECT_THAT(
      code,
      ContainsRegex(R"(af_load16(_bf16|_f16)?\(&v[0-9]+, &p[0-9]+\[[^]]* \+ go[0-9]+\], n_\))"));
}

/// A random pass over a static row of `d`: terms from x, y, the row's mean m
/// of x (a row-level scalar) and a constant, combined by add, sub, mul, neg
/// and a division by 1 + v * v (never by zero); the last term plus x summed, and
/// that sum used by a later pass.
std::string random_pass_text(std::mt19937& rng, const std::string& dtype, int64_t d) {
  std::string text = fmt::format(R"(graph rnd(x: {0}[N, {1}], y: {0}[N, {1}]) {{
  m = reduce_mean(x, axes=[1], keepdims=true)
  c = constant(dtype={0}, value=0.75)
  one = constant(dtype={0}, value=1)
)",
                                 dtype, d);
  std::vector<std::string> terms = {"x", "y", "m", "c"};
  std::vector<bool> varies = {true, true, false, false};  // along the row
  std::string summed;                                     // the last term that varies along the row
  const auto pick = [&] { return rng() % terms.size(); };
  const int ops = 2 + static_cast<int>(rng() % 5);
  for (int k = 0; k < ops; ++k) {
    const std::string t = fmt::format("t{}", k);
    // The first op takes x or y, so some term varies along the row.
    const size_t ia = k == 0 ? rng() % 2 : pick(), ib = pick();
    const std::string a = terms[ia], b = terms[ib], last = k == 0 ? a : terms.back();
    bool v = varies[ia] || varies[ib];
    switch (rng() % 5) {
      case 0:
        text += fmt::format("  {} = add({}, {})\n", t, a, b);
        break;
      case 1:
        text += fmt::format("  {} = sub({}, {})\n", t, a, b);
        break;
      case 2:
        text += fmt::format("  {} = mul({}, {})\n", t, a, b);
        break;
      case 3:
        text += fmt::format("  {} = neg({})\n", t, last);
        v = k == 0 || varies.back();
        break;
      default:
        text += fmt::format("  {0}q = mul({1}, {1})\n  {0}d = add({0}q, one)\n", t, b);
        text += fmt::format("  {0} = div({1}, {0}d)\n", t, last);
        v = varies[ib] || k == 0 || varies.back();
    }
    varies.push_back(v);
    if (v) summed = t;
    terms.push_back(t);
  }
  // (+ x: the sum shares m's input, so the graph is one kernel as scheduled
  // here; a sum of y alone beside a dead mean of x would not be.)
  return text + fmt::format(R"(  u = add({0}, x)
  s = reduce_sum(u, axes=[1], keepdims=true)
  z = sub(u, s)
  return s, z
}})",
                            summed);
}

TEST(VectorPass, RandomPassesMatchTheReference) {
  std::mt19937 rng(34);
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> rows = {{{"N", 1}}, {{"N", 5}}, {{"N", 19}}};
  for (const char* dt : {"f32", "bf16", "f16"}) {
    for (int g = 0; g < 12; ++g) {
      const int64_t d = std::vector<int64_t>{64, 80, 100, 129, 256, 768, 1000}[rng() % 7];
      const std::string text = random_pass_text(rng, dt, d);
      // (16-bit: the reference rounds every op; the sums' terms cancel.)
      cases.push_back({fmt::format("random {} {}: {}", dt, g, text), parse_graph(text), rows,
                       tol(dt), std::string(dt) == "f32" ? 1e-3 : 1.0});
    }
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/false);
  EXPECT_THAT(code, HasSubstr(kVectorPass));
}

/// softmax(x * 0.125 + mask) over rows of `d`, as attention's scores.
std::string masked_softmax_text(const std::string& d, const std::string& dtype = "f32") {
  return fmt::format(R"(graph msm(x: {1}[N, {0}], mask: {1}[{0}]) {{
  k = constant(dtype={1}, value=0.125)
  t = mul(x, k)
  z = add(t, mask)
  m = reduce_max(z, axes=[1], keepdims=true)
  u = sub(z, m)
  e = exp(u)
  s = reduce_sum(e, axes=[1], keepdims=true)
  y = div(e, s)
  return y
}})",
                     d, dtype);
}

/// The row min of x * y and the row max of x - y (two extremes in one pass).
std::string min_max_text(const std::string& d, const std::string& dtype = "f32") {
  return fmt::format(R"(graph mm(x: {1}[N, {0}], y: {1}[N, {0}]) {{
  p = mul(x, y)
  lo = reduce_min(p, axes=[1])
  q = sub(x, y)
  hi = reduce_max(q, axes=[1])
  return lo, hi
}})",
                     d, dtype);
}

/// x with NaN, +inf and -inf in the last element of rows 1, 3 and 5, +inf
/// first and -inf last in row 7 (a NaN probe without a NaN), and NaN first
/// in row 9 (a whole run's lane).
std::vector<HostTensor> with_max_specials(const Graph& graph, const sym::Binding& binding) {
  std::vector<HostTensor> inputs = with_specials(graph, binding);
  HostTensor& x = inputs[0];
  const int64_t d = x.numel() / binding.at("N");
  set_row_elements(x, d, 0, {{7, INFINITY}, {9, NAN}});
  set_row_elements(x, d, d - 1, {{7, -INFINITY}});
  return inputs;
}

// Max and min passes as vector code (f32 and widened bf16), on static and
// symbolic rows, one by one and in groups (bf16 softmax: pairs); a row with
// a NaN, or infinities of both signs, is redone by the buffered loop;
// symbolic rows shorter than 64 or longer than 1024 run the loops.
TEST(VectorPass, MaxPassesMatchTheReference) {
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> rows = {{{"N", 1}}, {{"N", 6}}, {{"N", 11}}};
  std::vector<sym::Binding> symbolic;
  for (int64_t d : {1, 17, 63, 64, 65, 100, 127, 384, 1024, 1025, 1500})
    for (int64_t n : {1, 11})
      symbolic.push_back({{"N", n}, {"D", d}});
  for (const char* dt : {"f32", "bf16", "f16"}) {
    const bool f32 = std::string(dt) == "f32";
    const double rtol = f32 ? 1e-5 : tol(dt), atol = f32 ? 1e-6 : tol(dt);
    for (const char* d : {"64", "100", "127", "384", "1024", "D"}) {
      const std::vector<sym::Binding>& bindings = std::string(d) == "D" ? symbolic : rows;
      cases.push_back({fmt::format("masked softmax {} D={}", dt, d),
                       parse_graph(masked_softmax_text(d, dt)), bindings, rtol, atol,
                       with_max_specials});
      cases.push_back({fmt::format("min and max {} D={}", dt, d), parse_graph(min_max_text(d, dt)),
                       bindings, f32 ? 1e-6 : tol(dt), atol, with_max_specials});
    }
    cases.push_back({fmt::format("softmax {}, symbolic D", dt), parse_graph(softmax_text(dt, "D")),
                     symbolic, rtol, atol});
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/false);
  EXPECT_THAT(code, HasSubstr("af_extreme_lanes(&m"));
  EXPECT_THAT(code, HasSubstr("if (redo_)"));
}

// Passes with abs, relu, max, min (of two values, against a constant on
// either side and against a row-level value), sqrt and reciprocal as 16-lane
// vector code (kernel_prelude_lane_ops.h's overloads), with NaN, infinities and
// signed zeros; rows with every tail, static and symbolic.
TEST(VectorPass, SelectsAndRootsMatchTheReference) {
  std::vector<GraphCase> cases;
  const std::vector<sym::Binding> rows = {{{"N", 1}}, {{"N", 8}}, {{"N", 19}}};
  std::vector<sym::Binding> symbolic;
  for (int64_t d : {1, 15, 16, 17, 64, 100, 1025})
    symbolic.push_back({{"N", 9}, {"D", d}});
  for (const char* dt : {"f32", "bf16", "f16"}) {
    const bool f32 = std::string(dt) == "f32";
    for (const char* d : {"64", "100", "768", "D"})
      cases.push_back({fmt::format("selects {} D={}", dt, d), parse_graph(selects_pass_text(dt, d)),
                       std::string(d) == "D" ? symbolic : rows, f32 ? 1e-5 : tol(dt),
                       f32 ? 1e-4 : 0.5, selects_inputs});
  }
  const std::string code = check_split_cases(cases, /*expect_split=*/false);
  // The ops in vector code: `const auto` values of the lambdas (loops name
  // their values `const float`; against a constant a vector pass calls
  // af_fmax / af_fmin where a loop calls af_fmin_vk and the like).
  for (const char* call : {"af_abs", "af_frelu", "af_fmax", "af_fmin", "af_sqrt"})
    EXPECT_THAT(code, ContainsRegex(fmt::format(R"(const auto v[0-9]+ = {}\(v)", call))) << call;
  EXPECT_THAT(code, ContainsRegex(R"(const auto v[0-9]+ = \(1.0f / v)"));
}

// The storing pass under every tiling key (1: streaming stores), with
// outputs at and off 64-byte boundaries, on one core and on blocks that
// split the rows unevenly.
TEST(VectorPass, StoringPassMatchesTheReference) {
  struct Case {
    std::string label;
    Graph graph;
    double rtol, atol;
    bool specials;
  };
  std::vector<Case> cases;
  for (const char* dt : {"f32", "bf16", "f16"}) {
    for (const char* d : {"64", "100", "127", "768", "1024"}) {
      cases.push_back({fmt::format("rmsnorm {} D={}", dt, d), parse_graph(rmsnorm_text(dt, d)),
                       tol(dt), 1e-4, false});
      // Two stores: h (f32 or bf16) and the normalized row.
      cases.push_back({fmt::format("skip layernorm {} D={}", dt, d),
                       parse_graph(skip_layernorm_text(dt, d)), tol(dt),
                       std::string(dt) == "f32" ? 1e-4 : tol(dt), false});
    }
    cases.push_back({fmt::format("rmsnorm {} D symbolic", dt), parse_graph(rmsnorm_text(dt, "D")),
                     tol(dt), 1e-4, false});
    cases.push_back({fmt::format("rmsnorm {} D=768 with NaN and infinities", dt),
                     parse_graph(rmsnorm_text(dt, "768")), tol(dt), 1e-4, true});
    // Subnormal results (~1e-39): vcvtne2ps2bf16 would read them as zero,
    // which the atol tells from them (bf16: 3 of its subnormal steps of
    // 2^-133, as the reference rounds each op).
    cases.push_back({fmt::format("subnormal rmsnorm {} D=100", dt),
                     parse_graph(rmsnorm_text(dt, "100", "1e-39")), tol(dt),
                     std::string(dt) == "f32" ? 0 : 3e-40, false});
  }
  std::vector<schedule::ScheduledKernel> kernels;
  for (const Case& c : cases)
    kernels.push_back(schedule_graph(c.graph));
  const codegen::ModuleSource module = codegen::generate_cpu_module(kernels);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_THAT(kernel_text(module.code, module.kernels[i].name), HasSubstr(kStoringPass))
        << cases[i].label;
  const std::shared_ptr<jit::Module> so = compile(module);
  const RunOptions options[] = {RunOptions{}, RunOptions{1, 0}, RunOptions{1, 1}, RunOptions{1, 16},
                                RunOptions{2, 3}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::vector<sym::Binding> bindings;
    for (int64_t n : {1, 6, 37}) {
      if (c.label.find("symbolic") == std::string::npos) {
        bindings.push_back({{"N", n}});
        continue;
      }
      // Vector passes for rows of 64-1024, the loop for the others.
      for (int64_t d : {1, 63, 64, 100, 384, 1024, 1025})
        bindings.push_back({{"N", n}, {"D", d}});
    }
    for (const sym::Binding& binding : bindings) {
      const int64_t n = binding.at("N");
      std::vector<HostTensor> inputs =
          c.specials ? with_specials(c.graph, binding) : random_inputs(c.graph, binding, 7);
      const std::vector<HostTensor> want = run_reference(c.graph, inputs, binding);
      for (const af_machine& m : {one_core(), many_tiny_blocks(3, 1)}) {
        for (const RunOptions& o : options) {
          const KernelRun run =
              run_kernel(*so, module.kernels[i], kernels[i].graph, c.graph, inputs, binding, m, o);
          for (size_t k = 0; k < want.size(); ++k)
            EXPECT_TRUE(tensors_close(run.outputs.at(k), want[k], c.rtol, c.atol))
                << c.label << " N=" << n << " D=" << (binding.count("D") ? binding.at("D") : 0)
                << ", cores " << m.cores << ", key " << o.force_key << ", output offset "
                << o.output_offset << ", output " << k;
        }
      }
    }
  }
}

TEST(VectorPass, SourceStructure) {
  const auto source = kernel_code;
  // Layernorm: the variance pass over the row buffer (f32 and 16-bit),
  // four accumulators per sum.
  const std::string ln = source(skip_layernorm_text("f32", "768"));
  EXPECT_THAT(ln, HasSubstr(kVectorPass));
  EXPECT_THAT(ln, HasSubstr("af_load16(&v"));
  EXPECT_THAT(ln, HasSubstr("(row buffer)"));
  EXPECT_THAT(ln, HasSubstr("lanes_(i1 + 48, 3, 16);"));
  EXPECT_THAT(ln, HasSubstr("= af_row_sum16x4(s"));
  EXPECT_THAT(source(skip_layernorm_text("bf16", "768")), HasSubstr(kVectorPass));
  // Layernorm's variance pass: f32 recomputes x - mean from the input; bf16
  // writes it to its row buffer (a cost buffer) from the vector pass.
  const std::string plain = source(layernorm_text("f32", "100"));
  EXPECT_THAT(plain, HasSubstr(kVectorPass));
  EXPECT_THAT(plain, Not(HasSubstr("af_store16(")));
  const std::string plain_bf16 = source(layernorm_text("bf16", "100"));
  EXPECT_THAT(plain_bf16, HasSubstr("af_load16_bf16(&v1, &p0["));
  EXPECT_THAT(plain_bf16, HasSubstr("af_store16(&ub"));
  // rmsnorm's input: f32 in place, bf16 and f16 widened.
  EXPECT_THAT(source(rmsnorm_text("f32", "1024")), HasSubstr("af_load16(&v1, &p0["));
  EXPECT_THAT(source(rmsnorm_text("bf16", "1024")), HasSubstr("af_load16_bf16(&v1, &p0["));
  EXPECT_THAT(source(rmsnorm_text("f16", "1024")), HasSubstr("af_load16_f16(&v1, &p0["));
  // Static rows shorter than 64 or longer than 1024: none either.
  EXPECT_THAT(source(layernorm_text("f32", "63")), Not(HasSubstr(kVectorPass)));
  EXPECT_THAT(source(layernorm_text("f32", "64")), HasSubstr(kVectorPass));
  EXPECT_THAT(source(layernorm_text("f32", "1025")), Not(HasSubstr(kVectorPass)));
  // Symbolic rows' sums: the buffered loop (see vector_pass.cpp why).
  EXPECT_THAT(source(layernorm_text("f32", "D")), Not(HasSubstr(kVectorPass)));
  // Max passes: f32, static or symbolic rows, the loop after them for a
  // row to redo (or, symbolic, a row shorter than 64 or longer than 1024).
  const std::string max_pass = R"(graph g(x: f32[N, D]) {
  t = mul(x, x)
  s = reduce_max(t, axes=[1])
  return s
})";
  const std::string max768 = source(R"(graph g(x: f32[N, 768]) {
  t = mul(x, x)
  s = reduce_max(t, axes=[1])
  return s
})");
  EXPECT_THAT(max768, HasSubstr(kVectorPass));
  EXPECT_THAT(max768, HasSubstr("bool redo_ = true;"));
  EXPECT_THAT(max768, HasSubstr("if (redo_)\n#endif\n"));
  const std::string max_sym = source(max_pass);
  EXPECT_THAT(max_sym, HasSubstr(kVectorPass));
  EXPECT_THAT(max_sym, HasSubstr("if (hi - lo >= 64) {"));
  // bf16 and f16 too (widened).
  EXPECT_THAT(source(R"(graph g(x: bf16[N, 768]) {
  s = reduce_max(x, axes=[1])
  return s
})"),
              HasSubstr("af_extreme_lanes(&m"));
  EXPECT_THAT(source(R"(graph g(x: f16[N, 768]) {
  s = reduce_max(x, axes=[1])
  return s
})"),
              HasSubstr("af_load16_f16(&v"));
  // Not for a max and a sum in one pass. Softmax's max, exp and storing
  // passes are vectors (bf16 rows in pairs too: row_groups.cpp); the exp
  // pass (af_exp_nonpos_x16: AVX-512 only) also for a symbolic row, the
  // loop after it for rows outside 64-1024 or without AVX-512, and it
  // prefetches the rows ahead.
  EXPECT_THAT(source(R"(graph g(x: f32[N, 768]) {
  t = mul(x, x)
  s = reduce_max(t, axes=[1])
  u = reduce_sum(t, axes=[1])
  return s, u
})"),
              Not(HasSubstr(kVectorPass)));
  const std::string softmax_sym = source(softmax_text("f32", "D"));
  EXPECT_THAT(softmax_sym, HasSubstr(kVectorPass));
  EXPECT_THAT(softmax_sym, HasSubstr(kStoringPass));
  EXPECT_THAT(softmax_sym, HasSubstr("af_exp_nonpos_row("));
  const std::string softmax_bf16 = source(masked_softmax_text("D", "bf16"));
  EXPECT_THAT(softmax_bf16, HasSubstr("for (int g_ = 0; g_ < 2; ++g_) {"));
  EXPECT_THAT(softmax_bf16, HasSubstr(kVectorPass));
  EXPECT_THAT(softmax_bf16, HasSubstr(kStoringPass));
  for (const std::string& softmax : {softmax_sym, softmax_bf16, source(masked_softmax_text("768")),
                                     source(masked_softmax_text("D"))}) {
    const size_t exp_pass =
        softmax.find("#if AF_VECTOR_PASS && AF_EXP_ROW_X16  // exp as 16 lanes");
    ASSERT_NE(exp_pass, std::string::npos) << softmax;
    const std::string pass = softmax.substr(exp_pass, softmax.find("#endif", exp_pass) - exp_pass);
    EXPECT_THAT(pass, ContainsRegex("const auto v[0-9]+ = af_exp_nonpos_x16\\(v[0-9]+\\);"));
    EXPECT_THAT(pass, HasSubstr("= af_row_sum16x4(s"));
  }
  // A symbolic row's exp pass: the loop only where it did not run.
  EXPECT_THAT(softmax_sym, ContainsRegex("= af_row_sum16x4\\(s[0-9]+\\);\n *redo_ = false;"));
  // The rows ahead prefetched in the exp pass of attention's masked softmax
  // (what pass 0 reads from memory: x).
  const std::string masked = source(masked_softmax_text("D"));
  const size_t exp_pass = masked.find("exp as 16 lanes");
  EXPECT_THAT(masked.substr(exp_pass, masked.find("#endif", exp_pass) - exp_pass),
              HasSubstr("__builtin_prefetch(&p0["));
  // A pass that also stores: its loop.
  EXPECT_THAT(source(R"(graph g(x: f32[N, 768]) {
  t = mul(x, x)
  s = reduce_sum(t, axes=[1])
  return t, s
})"),
              Not(HasSubstr(kVectorPass)));
  // Storing passes: rmsnorm's last pass, its stores by the prelude (f32,
  // and bf16 rounded by the vector); streaming ones under key 1.
  const std::string rms = source(rmsnorm_text("f32", "1024"));
  EXPECT_THAT(rms, HasSubstr(kStoringPass));
  EXPECT_THAT(rms, HasSubstr("af_put16_f32(&q0["));
  EXPECT_THAT(rms, HasSubstr("const bool nt_ = AF_NT_STORES && td->header.tiling_key == 1;"));
  // Vector passes only with AVX-512 or AVX2, the loops in the `#else`.
  EXPECT_THAT(rms, HasSubstr("#if AF_VECTOR_PASS\n"));
  EXPECT_THAT(rms, HasSubstr("#else\n"));
  EXPECT_THAT(rms, HasSubstr("#pragma omp simd"));
  const std::string rms_bf16 = source(rmsnorm_text("bf16", "1024"));
  EXPECT_THAT(rms_bf16, HasSubstr("#if AF_VECTOR_PASS\n"));
  EXPECT_THAT(rms_bf16, HasSubstr("af_put32_bf16(&q0["));
  EXPECT_THAT(rms_bf16, HasSubstr("af_put16_bf16(&q0["));
  // Softmax's last pass (exps from the row buffer, times 1 / sum).
  EXPECT_THAT(source(softmax_text("f32", "768")), HasSubstr(kStoringPass));
  // A symbolic row's: rows of 64-1024 (the loop for the others).
  for (const char* dt : {"f32", "bf16", "f16"}) {
    const std::string rms_sym = source(rmsnorm_text(dt, "D"));
    EXPECT_THAT(rms_sym, HasSubstr(kStoringPass));
    EXPECT_THAT(rms_sym, HasSubstr("if (hi - lo >= 64 && hi - lo <= 1024) {"));
  }
  // f16 stores by F16C (kernel_prelude_f16.h); not for short rows or a
  // stored exp.
  const std::string rms_f16 = source(rmsnorm_text("f16", "1024"));
  EXPECT_THAT(rms_f16, HasSubstr(kStoringPass));
  EXPECT_THAT(rms_f16, HasSubstr("af_put32_f16(&q0["));
  EXPECT_THAT(rms_f16, HasSubstr("af_put16_f16(&q0["));
  EXPECT_THAT(source(rmsnorm_text("f32", "63")), Not(HasSubstr(kStoringPass)));
  EXPECT_THAT(source(R"(graph g(x: f32[N, 768]) {
  m = reduce_max(x, axes=[1], keepdims=true)
  t = sub(x, m)
  e = exp(t)
  return e
})"),
              Not(HasSubstr(kStoringPass)));
}

}  // namespace vector_pass_test_local
}  // namespace autofuse::codegen_test
