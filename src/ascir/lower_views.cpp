// compose_leaf_view: coordinates of a view leaf's elements, carried back
// through transpose, broadcast_to, reshape, slice, split and gather to the
// buffer of a region input (see lower_views.h).
#include "ascir/lower_views.h"

#include <variant>

#include "autofuse/error.h"

namespace autofuse::ascir::detail {

namespace {

const sym::Expr kZero(0);

/// One coordinate of a value: offset + sum(coef[a] * i_a) + sum(gather[j] *
/// k_j), where i_a are the loop indices and k_j the gathered indices.
struct Coord {
  sym::Expr offset{0};
  std::vector<sym::Expr> coef;
  std::vector<sym::Expr> gather;
};
using Coords = std::vector<Coord>;

bool is_one(const sym::ShapeEnv& env, const sym::Expr& e) {
  return env.canonicalize(e).as_const() == 1;
}

class Composer {
 public:
  Composer(const Graph& graph, const fuse::Region& region, const fuse::RegionViews& views)
      : graph_(graph), env_(graph.shape_env()), region_(region), views_(views) {}

  LeafView run(const Node& leaf, int output_index) {
    // The chain, leaf first; the gathers are numbered from the buffer's side.
    std::vector<std::pair<const Node*, int>> chain{{&leaf, output_index}};
    for (ValueId v = leaf.inputs.at(0);;) {
      const NodeId producer = graph_.value(v).producer;
      if (producer == kNoNode || !views_.in_region(producer)) break;
      const Node& p = graph_.node(producer);
      int index = 0;
      while (p.outputs.at(static_cast<size_t>(index)) != v)
        ++index;
      chain.emplace_back(&p, index);
      v = p.inputs.at(0);
    }
    for (const auto& step : chain)
      if (op_info(step.first->op).op_class == OpClass::Gather) ++num_gathers_;
    next_gather_ = num_gathers_;
    LeafView view;
    view.gathers.resize(static_cast<size_t>(num_gathers_));
    Coords coords = leaf_coords(leaf.outputs.at(static_cast<size_t>(output_index)));
    for (const auto& [node, index] : chain) {
      coords = apply(*node, index, coords, view);
      if (done_) break;
    }
    if (!done_) address_in(chain.back().first->inputs.at(0), coords);
    view.buffer = buffer_;
    view.offset = offset_;
    view.strides = strides_;
    for (size_t j = 0; j < view.gathers.size(); ++j)
      view.gathers[j].stride = gather_strides_.at(j);
    return view;
  }

 private:
  int num_axes() const { return static_cast<int>(region_.loop_axes.sizes.size()); }

  Coord zero() const {
    return Coord{kZero, std::vector<sym::Expr>(static_cast<size_t>(num_axes()), kZero),
                 std::vector<sym::Expr>(static_cast<size_t>(num_gathers_), kZero)};
  }

  Coords leaf_coords(ValueId w) const {
    auto it = region_.loop_axes.value_axes.find(w);
    AF_CHECK(it != region_.loop_axes.value_axes.end(), "view leaf '{}' has no loop axes",
             graph_.value(w).name);
    const Shape& shape = graph_.value(w).type.shape;
    Coords coords;
    for (size_t d = 0; d < shape.size(); ++d) {
      Coord c = zero();
      if (!is_one(env_, shape[d])) c.coef[static_cast<size_t>(it->second[d])] = sym::Expr(1);
      coords.push_back(std::move(c));
    }
    return coords;
  }

  static Coord scaled(const Coord& c, int64_t step, const sym::Expr& first) {
    Coord out = c;
    out.offset = first + c.offset * step;
    for (sym::Expr& k : out.coef)
      k = k * step;
    for (sym::Expr& k : out.gather)
      k = k * step;
    return out;
  }

  // Coordinates of node.inputs[0] from those of its output `index`.
  Coords apply(const Node& node, int index, const Coords& y, LeafView& view) {
    const ValueId in = node.inputs.at(0);
    const Shape& x_shape = graph_.value(in).type.shape;
    const size_t rx = x_shape.size();
    switch (op_info(node.op).op_class) {
      case OpClass::Transpose: {
        const auto& perm = std::get<TransposeAttrs>(node.attrs).perm;
        Coords x(rx);
        for (size_t i = 0; i < perm.size(); ++i)
          x[static_cast<size_t>(perm[i])] = y[i];
        return x;
      }
      case OpClass::BroadcastTo: {
        const size_t shift = y.size() - rx;
        Coords x;
        for (size_t d = 0; d < rx; ++d)
          x.push_back(is_one(env_, x_shape[d]) ? zero() : y[d + shift]);
        return x;
      }
      case OpClass::Reshape: {
        if (fuse::is_squeeze_reshape(graph_, node)) {
          Coords x;
          size_t next = 0;
          const Shape& y_shape = graph_.value(node.outputs[0]).type.shape;
          for (size_t d = 0; d < rx; ++d) {
            if (is_one(env_, x_shape[d])) {
              x.push_back(zero());
              continue;
            }
            while (is_one(env_, y_shape.at(next)))
              ++next;
            x.push_back(y[next++]);
          }
          return x;
        }
        if (fuse::is_splitting_reshape(graph_, node)) {
          // Each input dim is the row-major combination of its group's
          // output dims: affine.
          const Shape& y_shape = graph_.value(node.outputs[0]).type.shape;
          const auto groups = fuse::reshape_groups(env_, x_shape, y_shape);
          AF_CHECK(groups.has_value(), "reshape '{}' has no groups",
                   graph_.value(node.outputs[0]).name);
          Coords x(rx, zero());
          for (const fuse::ReshapeGroup& g : *groups) {
            Coord c = zero();
            sym::Expr stride(1);
            for (size_t k = g.out_dims.size(); k-- > 0;) {
              const Coord& o = y[static_cast<size_t>(g.out_dims[k])];
              c.offset = c.offset + o.offset * stride;
              for (size_t a = 0; a < c.coef.size(); ++a)
                c.coef[a] = c.coef[a] + o.coef[a] * stride;
              for (size_t j = 0; j < c.gather.size(); ++j)
                c.gather[j] = c.gather[j] + o.gather[j] * stride;
              stride = stride * env_.canonicalize(y_shape[static_cast<size_t>(g.out_dims[k])]);
            }
            x[static_cast<size_t>(g.in_dims.at(0))] = std::move(c);
          }
          return x;
        }
        // A reshape that merges dims, over a dense chain (fuse checked it):
        // the buffer is read at the row-major position of its output.
        address_in(node.outputs[0], y);
        ValueId v = in;
        for (;;) {
          const NodeId producer = graph_.value(v).producer;
          if (producer == kNoNode || !views_.in_region(producer)) break;
          v = graph_.node(producer).inputs.at(0);
        }
        buffer_ = v;
        done_ = true;
        return {};
      }
      case OpClass::Slice: {
        const auto& attrs = std::get<SliceAttrs>(node.attrs);
        Coords x = y;
        for (size_t i = 0; i < attrs.axes.size(); ++i) {
          const auto axis = static_cast<size_t>(attrs.axes[i]);
          const sym::Expr first = slice_first_index(env_, env_.canonicalize(x_shape[axis]),
                                                    attrs.starts[i], attrs.steps[i]);
          x[axis] = scaled(y[axis], attrs.steps[i], first);
        }
        return x;
      }
      case OpClass::Split: {
        const auto& attrs = std::get<SplitAttrs>(node.attrs);
        const auto axis = static_cast<size_t>(attrs.axis);
        sym::Expr start(0);
        for (int k = 0; k < index; ++k)
          start = start + attrs.sizes.at(static_cast<size_t>(k));
        Coords x = y;
        x[axis] = scaled(y[axis], 1, start);
        return x;
      }
      case OpClass::Gather: {
        const auto axis = static_cast<size_t>(std::get<AxisAttrs>(node.attrs).axis);
        const size_t q = graph_.value(node.inputs.at(1)).type.rank();
        // Its indices are read at the loop point (fuse checked the chain):
        // no other gather moves the positions they are read at.
        for (size_t d = axis; d < axis + q; ++d)
          for (const sym::Expr& k : y.at(d).gather)
            AF_CHECK(k == kZero, "gather '{}': indices read at gathered positions",
                     graph_.value(node.outputs[0]).name);
        const auto j = static_cast<size_t>(--next_gather_);
        LeafGather& g = view.gathers.at(j);
        g.gather = node.outputs.at(0);
        g.index = node.inputs.at(1);
        g.size = env_.canonicalize(x_shape[axis]);
        Coords x;
        for (size_t d = 0; d < rx; ++d) {
          if (d < axis) {
            x.push_back(y[d]);
          } else if (d == axis) {
            Coord c = zero();
            c.gather[j] = sym::Expr(1);
            x.push_back(std::move(c));
          } else {
            x.push_back(y[d + q - 1]);
          }
        }
        return x;
      }
      default:
        AF_CHECK(false, "{} '{}' in a view chain", op_name(node.op),
                 graph_.value(node.outputs.at(0)).name);
        return {};
    }
  }

  // The address of `coords` in the row-major buffer of value `v`.
  void address_in(ValueId v, const Coords& coords) {
    const std::vector<sym::Expr> s = row_major_strides(env_, graph_.value(v).type.shape);
    AF_CHECK(s.size() == coords.size(), "view of '{}': rank mismatch", graph_.value(v).name);
    buffer_ = v;
    offset_ = kZero;
    strides_.assign(static_cast<size_t>(num_axes()), kZero);
    gather_strides_.assign(static_cast<size_t>(num_gathers_), kZero);
    for (size_t d = 0; d < coords.size(); ++d) {
      offset_ = offset_ + coords[d].offset * s[d];
      for (size_t a = 0; a < strides_.size(); ++a)
        strides_[a] = strides_[a] + coords[d].coef[a] * s[d];
      for (size_t j = 0; j < gather_strides_.size(); ++j)
        gather_strides_[j] = gather_strides_[j] + coords[d].gather[j] * s[d];
    }
  }

  const Graph& graph_;
  const sym::ShapeEnv& env_;
  const fuse::Region& region_;
  const fuse::RegionViews& views_;
  bool done_ = false;
  ValueId buffer_ = 0;
  sym::Expr offset_{0};
  std::vector<sym::Expr> strides_;
  std::vector<sym::Expr> gather_strides_;
  int num_gathers_ = 0;
  int next_gather_ = 0;  // the gathers met so far are numbered next_gather_..num_gathers_-1
};

}  // namespace

std::vector<sym::Expr> row_major_strides(const sym::ShapeEnv& env, const Shape& shape) {
  std::vector<sym::Expr> strides(shape.size(), sym::Expr(1));
  sym::Expr stride(1);
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride = stride * env.canonicalize(shape[d]);
  }
  return strides;
}

LeafView compose_leaf_view(const Graph& graph, const fuse::Region& region,
                           const fuse::RegionViews& views, const Node& node, int output_index) {
  return Composer(graph, region, views).run(node, output_index);
}

}  // namespace autofuse::ascir::detail
