// Einsum: the equation's operands labelled (an ellipsis stands for the
// leading dims an operand has beyond its letters, right-aligned and
// broadcast across operands), labels summed that no other operand and not
// the output has summed first; then two float operands that still share a
// summed label become one matmul (batch labels kept as dims, the others
// merged into M, N and K by reshapes), and anything else a broadcast product
// of all operands in one label order, summed over the labels the output
// lacks (a fused reduction). A label repeated within one operand takes
// that operand's diagonal first (a strided slice of the two dims merged).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/converter_util.h"

namespace autofuse::frontend::onnx_import {

namespace {

using sym::Expr;

/// An operand: its tensor and the label of each dim (letters as their
/// char code; ellipsis dims as -1, -2, ... counted from the last).
struct Term {
  Tensor t;
  std::vector<int> labels;
};

/// The labels of one side of the equation; `ellipsis_dims` dims for "...".
std::vector<int> parse_labels(NodeContext& ctx, const std::string& text, int ellipsis_dims,
                              bool* has_ellipsis) {
  std::vector<int> labels;
  *has_ellipsis = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (text.compare(i, 3, "...") != 0 || *has_ellipsis)
        ctx.fail(fmt::format("bad ellipsis in equation term '{}'", text));
      *has_ellipsis = true;
      for (int d = ellipsis_dims; d >= 1; --d)
        labels.push_back(-d);
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)))
      ctx.fail(fmt::format("equation term '{}' has the character '{}'", text, c));
    labels.push_back(c);
  }
  return labels;
}

/// `term` with every label repeated within it reduced to its diagonal: the
/// two dims moved last, merged, and every (n + 1)-th element kept (n must
/// be known at import).
Term diagonals(NodeContext& ctx, Term term, const std::string& text) {
  GraphBuilder& b = ctx.builder();
  for (size_t i = 0; i < term.labels.size(); ++i) {
    for (size_t j = i + 1; j < term.labels.size(); ++j) {
      if (term.labels[j] != term.labels[i]) continue;
      const Shape shape = term.t.shape();
      const std::optional<int64_t> n = shape[i].as_const();
      if (!n || !sym::proven_eq(shape[i], shape[j]))
        ctx.unsupported(fmt::format("the diagonal of label '{}' in term '{}' over dims {} and {}",
                                    static_cast<char>(term.labels[i]), text, shape[i].to_string(),
                                    shape[j].to_string()));
      std::vector<int64_t> perm;
      std::vector<int> labels;
      Shape merged;
      for (size_t d = 0; d < shape.size(); ++d)
        if (d != i && d != j) {
          perm.push_back(static_cast<int64_t>(d));
          labels.push_back(term.labels[d]);
          merged.push_back(shape[d]);
        }
      perm.push_back(static_cast<int64_t>(i));
      perm.push_back(static_cast<int64_t>(j));
      merged.push_back(Expr(*n * *n));
      Tensor flat = b.reshape(b.transpose(term.t, perm), merged);
      const auto last = static_cast<int64_t>(merged.size()) - 1;
      term.t = b.slice(flat, SliceAttrs{{last}, {0}, {kSliceEnd}, {*n + 1}});
      labels.push_back(term.labels[i]);
      term.labels = std::move(labels);
      return diagonals(ctx, std::move(term), text);  // any further repeats
    }
  }
  return term;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

/// `t` with its dims ordered and placed as `order` lists labels (absent
/// labels become size-1 dims).
Tensor aligned(GraphBuilder& b, const Term& term, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  Shape shape;
  for (int label : order) {
    const auto it = std::find(term.labels.begin(), term.labels.end(), label);
    if (it == term.labels.end()) {
      shape.push_back(Expr(1));
      continue;
    }
    const auto d = static_cast<int64_t>(it - term.labels.begin());
    perm.push_back(d);
    shape.push_back(term.t.shape()[static_cast<size_t>(d)]);
  }
  Tensor t = term.t;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  if (!identity) t = b.transpose(t, perm);
  return t.shape() == shape ? t : b.reshape(t, shape);
}

/// Sums `term` over the labels in `drop` (removing them).
Term summed(GraphBuilder& b, const Term& term, const std::set<int>& drop) {
  std::vector<int64_t> axes;
  Term out;
  for (size_t d = 0; d < term.labels.size(); ++d) {
    if (drop.count(term.labels[d]))
      axes.push_back(static_cast<int64_t>(d));
    else
      out.labels.push_back(term.labels[d]);
  }
  out.t = axes.empty() ? term.t : b.reduce_sum(term.t, axes, /*keepdims=*/false);
  return out;
}

Expr product(const Shape& dims) {
  Expr p(1);
  for (const Expr& d : dims)
    p = p * d;
  return p;
}

/// Two float operands sharing summed labels `k`: one matmul.
Tensor matmul_of(GraphBuilder& b, const Term& x, const Term& y, const std::vector<int>& out) {
  std::vector<int> batch, m, n, k;
  auto in = [](const Term& t, int l) {
    return std::find(t.labels.begin(), t.labels.end(), l) != t.labels.end();
  };
  for (int l : out)
    (in(x, l) && in(y, l) ? batch : in(x, l) ? m : n).push_back(l);
  for (int l : x.labels)
    if (in(y, l) && std::find(out.begin(), out.end(), l) == out.end()) k.push_back(l);
  auto dims_of = [](const Tensor& t, size_t from, size_t count) {
    return Shape(t.shape().begin() + static_cast<std::ptrdiff_t>(from),
                 t.shape().begin() + static_cast<std::ptrdiff_t>(from + count));
  };
  std::vector<int> xo = batch, yo = batch;
  xo.insert(xo.end(), m.begin(), m.end());
  xo.insert(xo.end(), k.begin(), k.end());
  yo.insert(yo.end(), k.begin(), k.end());
  yo.insert(yo.end(), n.begin(), n.end());
  Tensor xa = aligned(b, x, xo), ya = aligned(b, y, yo);
  const size_t nb = batch.size();
  Shape xs = dims_of(xa, 0, nb), ys = dims_of(ya, 0, nb);
  const Shape mdims = dims_of(xa, nb, m.size()), ndims = dims_of(ya, nb + k.size(), n.size());
  xs.push_back(product(mdims));
  xs.push_back(product(dims_of(xa, nb + m.size(), k.size())));
  ys.push_back(product(dims_of(ya, nb, k.size())));
  ys.push_back(product(ndims));
  Tensor z = b.matmul(b.reshape(xa, xs), b.reshape(ya, ys));
  // [batch..., M, N] -> [batch..., m..., n...] -> the output's order.
  Shape zs = dims_of(z, 0, nb);
  zs.insert(zs.end(), mdims.begin(), mdims.end());
  zs.insert(zs.end(), ndims.begin(), ndims.end());
  Term result{b.reshape(z, zs), batch};
  result.labels.insert(result.labels.end(), m.begin(), m.end());
  result.labels.insert(result.labels.end(), n.begin(), n.end());
  return aligned(b, result, out);
}

void convert_einsum(NodeContext& ctx) {
  GraphBuilder& b = ctx.builder();
  const std::string equation = ctx.attr_string("equation");
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> texts;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    texts.push_back(trim(lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(texts.size()) != ctx.num_inputs())
    ctx.fail(fmt::format("equation '{}' has {} operands, the node {} inputs", equation,
                         texts.size(), ctx.num_inputs()));
  std::vector<Term> terms;
  int ellipsis_rank = 0;
  std::map<int, int> uses;
  for (size_t i = 0; i < texts.size(); ++i) {
    Tensor t = ctx.input(static_cast<int>(i));
    if (!is_numeric(t.dtype()) || t.dtype() != ctx.input(0).dtype())
      ctx.fail(fmt::format("inputs must share one numeric dtype, got {} and {}",
                           dtype_name(ctx.input(0).dtype()), dtype_name(t.dtype())));
    int letters = 0;
    for (char c : texts[i])
      letters += std::isalpha(static_cast<unsigned char>(c)) ? 1 : 0;
    bool has_ellipsis = false;
    Term term{t, parse_labels(ctx, texts[i], t.rank() - letters, &has_ellipsis)};
    if (!has_ellipsis && letters != t.rank())
      ctx.fail(fmt::format("term '{}' has {} labels for input {} of rank {}", texts[i], letters, i,
                           t.rank()));
    if (has_ellipsis && t.rank() < letters)
      ctx.fail(fmt::format("term '{}' needs rank >= {}, input {} has {}", texts[i], letters, i,
                           t.rank()));
    if (has_ellipsis) ellipsis_rank = std::max(ellipsis_rank, t.rank() - letters);
    term = diagonals(ctx, term, texts[i]);
    for (int l : term.labels)
      ++uses[l];
    terms.push_back(std::move(term));
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    bool has_ellipsis = false;
    out = parse_labels(ctx, trim(equation.substr(arrow + 2)), ellipsis_rank, &has_ellipsis);
    for (int l : out)
      if (!uses.count(l))
        ctx.fail(fmt::format("output label '{}' is in no operand", static_cast<char>(l)));
  } else {  // implicit: the ellipsis dims, then the letters used once, sorted
    for (int d = ellipsis_rank; d >= 1; --d)
      out.push_back(-d);
    for (const auto& [l, count] : uses)
      if (l > 0 && count == 1) out.push_back(l);
  }

  // Sum labels that only one operand has and the output lacks.
  const std::set<int> kept(out.begin(), out.end());
  for (Term& term : terms) {
    std::set<int> drop;
    for (int l : term.labels)
      if (uses[l] == 1 && !kept.count(l)) drop.insert(l);
    term = summed(b, term, drop);
  }
  std::vector<int> contracted;
  for (const auto& [l, count] : uses)
    if (count > 1 && !kept.count(l)) contracted.push_back(l);
  // The matmul needs each summed label's extent equal in both operands (an
  // ellipsis dim may be 1 in one and broadcast: the product path then).
  bool equal_extents = true;
  for (int l : contracted) {
    auto extent = [&](const Term& t) {
      const auto it = std::find(t.labels.begin(), t.labels.end(), l);
      return t.t.shape()[static_cast<size_t>(it - t.labels.begin())];
    };
    equal_extents =
        equal_extents && terms.size() == 2 && sym::proven_eq(extent(terms[0]), extent(terms[1]));
  }
  if (terms.size() == 2 && !contracted.empty() && equal_extents && is_float(terms[0].t.dtype())) {
    ctx.set_output(0, matmul_of(b, terms[0], terms[1], out));
    return;
  }
  // A broadcast product over [output labels..., contracted labels...].
  std::vector<int> order = out;
  order.insert(order.end(), contracted.begin(), contracted.end());
  std::optional<Tensor> prod;
  for (const Term& term : terms) {
    Tensor t = aligned(b, term, order);
    prod = prod ? b.mul(*prod, t) : t;
  }
  Tensor y = *prod;
  std::vector<int64_t> axes;
  for (size_t i = out.size(); i < order.size(); ++i)
    axes.push_back(static_cast<int64_t>(i));
  if (!axes.empty()) y = b.reduce_sum(y, axes, /*keepdims=*/false);
  ctx.set_output(0, y);
}

}  // namespace

void register_einsum_ops(ConverterTable& table) {
  table["Einsum"] = convert_einsum;
}

}  // namespace autofuse::frontend::onnx_import
