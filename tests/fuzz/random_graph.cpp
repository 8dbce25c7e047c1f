// The generator's frame: base shapes, inputs and operands, the subgraph
// loop, whole graphs and shape bindings. The ops are in random_ops.cpp, the
// steps that combine them in random_steps.cpp.
#include "fuzz/random_graph.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "fuzz/subgraph_gen.h"

namespace autofuse::fuzz {

uint64_t mix_seed(uint64_t seed, uint64_t index) {
  Rng rng(seed ^ (0xd1b54a32d192ed03ull * (index + 1)));
  rng.next();
  return rng.next();
}

namespace detail {

namespace {

const std::vector<std::string> kSymbols = {"A", "B", "C", "D", "E", "F"};

int coarseness(DType t) {
  return t == DType::bf16 ? 2 : t == DType::f16 ? 1 : 0;
}

}  // namespace

DType coarser(DType a, DType b) {
  return coarseness(a) >= coarseness(b) ? a : b;
}

bool broadcasts(const Shape& a, const Shape& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 1; i <= n; ++i) {
    const sym::Expr& x = a[a.size() - i];
    const sym::Expr& y = b[b.size() - i];
    if (!(x == y || x.as_const() == 1 || y.as_const() == 1)) return false;
  }
  return true;
}

Shape broadcast_shape(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  const size_t offset = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i)
    if (out[offset + i].as_const() == 1) out[offset + i] = shorter[i];
  return out;
}

SubgraphGen::SubgraphGen(GraphBuilder& b, uint64_t seed, const GenOptions& options, int index)
    : b_(b), rng_(mix_seed(seed, static_cast<uint64_t>(index))), options_(options), index_(index) {
  const int rank = rng_.between(1, 5);
  std::vector<std::string> unused = kSymbols;
  for (int d = 0; d < rank; ++d) {
    if (rng_.chance(0.15)) {
      base_.push_back(rng_.pick(std::vector<int64_t>{1, 2, 3, 4, 8}));
    } else if (!symbols_.empty() && rng_.chance(0.1)) {
      base_.push_back(sym::Expr::symbol(rng_.pick(symbols_)));  // e.g. [A, A]
    } else {
      const int i = rng_.below(static_cast<int>(unused.size()));
      symbols_.push_back(unused[static_cast<size_t>(i)]);
      unused.erase(unused.begin() + i);
      base_.push_back(sym::Expr::symbol(symbols_.back()));
    }
  }
  home_ = rng_.chance(0.4) ? DType::f32 : (rng_.chance(0.5) ? DType::f16 : DType::bf16);
  wide_static_rows(seed);
}

void SubgraphGen::wide_static_rows(uint64_t seed) {
  // From its own stream, so that every other draw (and so the rest of the
  // CI graphs) stays as it was.
  Rng rng(mix_seed(seed ^ 0x57a71c0ull, static_cast<uint64_t>(index_)));
  if (options_.elementwise_only || !rng.chance(0.2)) return;
  const sym::Expr last = base_.back();
  base_.back() = sym::Expr(rng.pick(std::vector<int64_t>{64, 96, 100, 128, 384, 768, 1000, 1024}));
  if (last.is_symbol() && std::find(base_.begin(), base_.end(), last) == base_.end())
    std::erase(symbols_, last.symbol_name());
}

DType SubgraphGen::random_float_dtype() {
  static const std::vector<DType> kFloats = {DType::f32, DType::f16, DType::bf16};
  return rng_.chance(0.7) ? home_ : rng_.pick(kFloats);
}

Val SubgraphGen::input(DType dtype, Shape shape) {
  Val v;
  v.t = b_.input(fmt::format("s{}_in{}", index_, next_input_++), dtype, std::move(shape));
  // random_inputs: uniform in [-1, 1), narrow types rounded toward zero.
  v.lo = -1;
  v.hi = 1;
  v.exact = true;
  v.fmt = dtype;
  v.is_input = true;
  return v;
}

Val SubgraphGen::integer_input(DType dtype, Shape shape) {
  Val v;
  v.t = b_.input(fmt::format("s{}_idx{}", index_, next_input_++), dtype, std::move(shape));
  v.is_input = true;
  return v;
}

Val SubgraphGen::scalar(double value, DType dtype) {
  Val v;
  v.t = b_.scalar(value, dtype);
  v.lo = v.hi = value;
  v.exact = true;  // the values used are exact in every float type
  v.fmt = dtype;
  return v;
}

Val SubgraphGen::keep(Val v) {
  pool_.push_back(v);
  if (!v.is_input) head_ = static_cast<int>(pool_.size()) - 1;
  return v;
}

Val SubgraphGen::pick_operand() {
  if (options_.elementwise_only || rng_.chance(0.55)) return pool_.at(static_cast<size_t>(head_));
  return pool_[static_cast<size_t>(rng_.below(static_cast<int>(pool_.size())))];
}

Shape SubgraphGen::partner_shape(const Shape& shape) {
  Shape out = shape;
  if (!out.empty() && rng_.chance(0.2))
    out.erase(out.begin(), out.begin() + rng_.between(1, static_cast<int>(out.size())));
  for (sym::Expr& d : out)
    if (rng_.chance(0.25)) d = 1;
  return out;
}

Val SubgraphGen::partner(const Val& a, bool allow_scalar, const Shape* also) {
  if (allow_scalar && rng_.chance(0.25))
    return scalar(rng_.pick(std::vector<double>{0.5, 0.25, 1, 2, -1.5, 0.75, 3}), a.dtype());
  // Shapes that broadcast with a (and with *also: a where's condition).
  const Shape target = also ? broadcast_shape(a.shape(), *also) : a.shape();
  if (rng_.chance(0.06)) {
    // Positions: iota (exact in f32 below 2^24) scaled by 2^-10 into [0, 128].
    Shape shape = partner_shape(target);
    if (shape.empty()) shape = {1};
    const int64_t axis = shape.empty() ? 0 : rng_.below(static_cast<int>(shape.size()));
    Val pos;
    pos.t = b_.iota(DType::f32, shape, axis);
    pos.lo = 0;
    pos.hi = static_cast<double>(kMaxElements);
    pos.exact = true;
    return keep(binary(OpKind::Mul, pos, scalar(0x1p-10, DType::f32)));
  }
  if (rng_.chance(0.4)) {
    std::vector<const Val*> fits;
    for (const Val& v : pool_)
      if (broadcasts(v.shape(), target)) fits.push_back(&v);
    if (!fits.empty()) return *rng_.pick(fits);
  }
  return keep(input(random_float_dtype(), partner_shape(target)));
}

Val SubgraphGen::exact_operand(const Shape& shape) {
  std::vector<const Val*> fits;
  for (const Val& v : pool_)
    if (v.exact && v.mag() <= 16 && broadcasts(v.shape(), shape)) fits.push_back(&v);
  if (!fits.empty() && rng_.chance(0.6)) return *rng_.pick(fits);
  return keep(input(random_float_dtype(), partner_shape(shape)));
}

std::vector<std::pair<Tensor, OutputSpec>> SubgraphGen::build() {
  keep(input(home_, base_));
  head_ = 0;
  const int steps = rng_.between(options_.min_steps, options_.max_steps);
  for (int s = 0; s < steps; ++s) {
    // Weights of the step kinds; reductions and data movement can be off.
    const int unary_w = 22, binary_w = 24, where_w = 10, cast_w = 8, quantize_w = 8;
    const int reduce_w = options_.reductions && !options_.elementwise_only ? 14 : 0;
    const int pattern_w = options_.reductions && !options_.elementwise_only ? 6 : 0;
    const int movement_w = options_.data_movement && !options_.elementwise_only ? 16 : 0;
    int r = rng_.below(unary_w + binary_w + where_w + cast_w + quantize_w + reduce_w + pattern_w +
                       movement_w);
    if ((r -= unary_w) < 0)
      step_unary();
    else if ((r -= binary_w) < 0)
      step_binary();
    else if ((r -= where_w) < 0)
      step_where();
    else if ((r -= cast_w) < 0)
      step_cast();
    else if ((r -= quantize_w) < 0)
      step_quantize();
    else if ((r -= reduce_w) < 0)
      step_reduce();
    else if ((r -= pattern_w) < 0)
      step_pattern();
    else
      step_movement();
  }
  if (pool_[static_cast<size_t>(head_)].is_input) step_unary();
  Val head = pool_[static_cast<size_t>(head_)];
  if (options_.elementwise_only && head.shape() != base_)
    head = keep(binary(OpKind::Max, head, pool_[0]));  // spans the whole shape
  // The head, most leaves (so little goes unchecked) and sometimes an
  // intermediate value; an elementwise-only subgraph returns only values of
  // its full shape (anything smaller would be a kernel output of its own).
  std::vector<Val> outs = {head};
  const std::vector<int> uses = b_.graph().use_counts();
  std::vector<const Val*> used;
  for (const Val& v : pool_) {
    if (v.is_input || v.t.id == head.t.id || (options_.elementwise_only && v.shape() != base_))
      continue;
    if (std::any_of(outs.begin(), outs.end(), [&](const Val& o) { return o.t.id == v.t.id; }))
      continue;  // kept twice
    if (uses[static_cast<size_t>(v.t.id)] > 0)
      used.push_back(&v);
    else if (outs.size() < 4 && rng_.chance(0.6))
      outs.push_back(v);
  }
  if (!used.empty() && rng_.chance(0.35)) outs.push_back(*rng_.pick(used));
  std::vector<std::pair<Tensor, OutputSpec>> result;
  for (const Val& v : outs)
    result.push_back({v.t, OutputSpec{index_, v.rounding, std::max(1.0, v.scale), v.exact}});
  return result;
}

}  // namespace detail

RandomGraph random_graph(uint64_t seed, const GenOptions& options, int only_subgraph) {
  GraphBuilder b(fmt::format("fuzz_{}", seed));
  RandomGraph out;
  std::vector<Tensor> outputs;
  for (int k = 0; k < options.subgraphs; ++k) {
    if (only_subgraph >= 0 && k != only_subgraph) continue;
    detail::SubgraphGen gen(b, seed, options, k);
    for (auto& [t, spec] : gen.build()) {
      outputs.push_back(t);
      out.outputs.push_back(spec);
    }
    out.base_shapes.push_back(gen.base());
  }
  out.graph = std::make_shared<const Graph>(std::move(b).build(outputs));
  return out;
}

sym::Binding random_binding(const RandomGraph& graph, uint64_t seed, int64_t max_elements) {
  static const std::vector<int64_t> kSizes = {1,  2,  3,  5,   7,   13,   16,  31,
                                              64, 65, 97, 128, 256, 1023, 4096};
  max_elements = std::min(max_elements, kMaxElements);
  Rng rng(seed);
  sym::Binding binding;
  for (const std::string& s : graph.graph->symbols())
    binding[s] = rng.chance(0.15) ? 1 : rng.pick(kSizes);
  // Shrink the largest symbol of the largest value until every value fits.
  for (;;) {
    const Shape* worst = nullptr;
    double worst_count = 0;
    for (const Value& v : graph.graph->values()) {
      double count = 1;  // double: no overflow before the shrinking
      for (const sym::Expr& d : v.type.shape)
        count *= static_cast<double>(std::max<int64_t>(sym::evaluate(d, binding), 1));
      if (count > worst_count) {
        worst_count = count;
        worst = &v.type.shape;
      }
    }
    if (worst_count <= static_cast<double>(max_elements)) return binding;
    std::set<std::string> names;
    for (const sym::Expr& d : *worst)
      sym::collect_symbols(d, names);
    std::string largest;
    for (const std::string& n : names)
      if (largest.empty() || binding[n] > binding[largest]) largest = n;
    if (largest.empty() || binding[largest] == 1) return binding;  // literal dims alone exceed it
    std::vector<int64_t> smaller;
    for (int64_t s : kSizes)
      if (s < binding[largest]) smaller.push_back(s);
    binding[largest] = rng.pick(smaller);
  }
}

}  // namespace autofuse::fuzz
