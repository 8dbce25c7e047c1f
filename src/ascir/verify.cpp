// The AscGraph verifier: every invariant the passes and codegen rely on.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "autofuse/ascir/asc_graph.h"

namespace autofuse::ascir {

namespace {

/// The repeat of an axis a value does not vary along.
const sym::Expr kNoRepeat(1);

bool is_buffer(AscKind kind) {
  return kind == AscKind::Data || kind == AscKind::Output || kind == AscKind::Store;
}

bool is_strided(AscKind kind) {
  return kind == AscKind::Load || kind == AscKind::Gather || kind == AscKind::Store;
}

// Expected input count per kind (Compute: by the op's arity); -1 for an
// Output (one or more Stores).
int expected_arity(const AscNode& n) {
  switch (n.kind) {
    case AscKind::Data:
    case AscKind::Scalar:
    case AscKind::Index:
      return 0;
    case AscKind::Compute:
      return op_info(n.op).min_inputs;
    case AscKind::Gather:
      return 1 + static_cast<int>(n.gather.size());  // the Data, one index per gathered dim
    case AscKind::Output:
      return -1;
    default:
      return 1;
  }
}

std::string text_kind(const AscNode& n) {
  std::string word(asc_kind_name(n.kind));
  for (char& c : word)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

class Verifier {
 public:
  explicit Verifier(const AscGraph& g) : g_(g) {}

  void run() {
    std::set<std::string> axis_names;
    for (const Axis& axis : g_.axes)
      AF_CHECK(!axis.name.empty() && axis_names.insert(axis.name).second, "bad axis name '{}'",
               axis.name);
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      check_node(g_.nodes[i], static_cast<int>(i));
    check_dense(AscKind::Data, g_.inputs.size());
    check_dense(AscKind::Output, g_.outputs.size());
    // Every Store writes exactly one Output, and nothing else reads it.
    const auto users = g_.users();
    for (const AscNode& n : g_.nodes)
      if (n.kind == AscKind::Store)
        AF_CHECK(users[static_cast<size_t>(n.id)].size() == 1, "store {} has {} readers", n.name,
                 users[static_cast<size_t>(n.id)].size());
  }

 private:
  const AscNode& in(const AscNode& n, size_t i) const { return g_.node(n.inputs.at(i)); }

  void check_node(const AscNode& n, int index) {
    AF_CHECK(n.id == index, "node at index {} has id {}", index, n.id);
    AF_CHECK(!n.name.empty(), "node {} has no name", n.id);
    AF_CHECK(names_.insert(n.name).second, "duplicate node name '{}'", n.name);
    if (expected_arity(n) >= 0) {
      AF_CHECK(static_cast<int>(n.inputs.size()) == expected_arity(n),
               "node {} ({}) has {} inputs, expected {}", n.name, asc_kind_name(n.kind),
               n.inputs.size(), expected_arity(n));
    } else {
      AF_CHECK(!n.inputs.empty(), "node {} ({}) has no inputs", n.name, asc_kind_name(n.kind));
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int input = n.inputs[i];
      AF_CHECK(input >= 0 && input < n.id, "node {} reads {}: not an earlier node", n.name, input);
      const AscKind k = g_.node(input).kind;
      if (n.kind == AscKind::Load || (n.kind == AscKind::Gather && i == 0)) {
        AF_CHECK(k == AscKind::Data, "{} {} reads a {}, not a Data", text_kind(n), n.name,
                 asc_kind_name(k));
      } else if (n.kind == AscKind::Output) {
        AF_CHECK(k == AscKind::Store, "output {} reads a {}, not a Store", n.name,
                 asc_kind_name(k));
      } else {
        AF_CHECK(!is_buffer(k), "node {} reads buffer node {}", n.name, g_.node(input).name);
      }
    }
    check_view(n);
    check_fields(n);
    check_semantics(n);
  }

  void check_view(const AscNode& n) {
    const size_t rank = g_.axes.size();
    AF_CHECK(n.view.repeats.size() == rank, "node {} has {} repeats for {} axes", n.name,
             n.view.repeats.size(), rank);
    for (size_t a = 0; a < rank; ++a) {
      const sym::Expr& r = n.view.repeats[a];
      AF_CHECK(r == kNoRepeat || r == g_.axes[a].size,
               "node {}: repeat {} on axis {} is neither 1 nor the axis size {}", n.name,
               r.to_string(), g_.axes[a].name, g_.axes[a].size.to_string());
    }
    if (!is_strided(n.kind)) {
      AF_CHECK(n.view.strides.empty(), "node {} ({}) has strides", n.name, asc_kind_name(n.kind));
      AF_CHECK(n.view.offset == sym::Expr(0), "node {} ({}) has an offset", n.name,
               asc_kind_name(n.kind));
      return;
    }
    AF_CHECK(n.view.strides.size() == rank, "node {} has {} strides for {} axes", n.name,
             n.view.strides.size(), rank);
    for (size_t a = 0; a < rank; ++a)
      AF_CHECK(n.view.repeats[a] != kNoRepeat || n.view.strides[a] == sym::Expr(0),
               "node {}: stride {} on repeat-1 axis {}", n.name, n.view.strides[a].to_string(),
               g_.axes[a].name);
  }

  // Fields that only some kinds use hold their defaults elsewhere, so the
  // text form (which prints them by kind) loses nothing.
  void check_fields(const AscNode& n) {
    const bool has_arg = n.kind == AscKind::Data || n.kind == AscKind::Output;
    AF_CHECK(has_arg == (n.arg_index >= 0), "node {} ({}): arg_index {}", n.name,
             asc_kind_name(n.kind), n.arg_index);
    const bool has_axis = n.kind == AscKind::Index;
    AF_CHECK(has_axis == (n.axis >= 0), "node {} ({}): axis {}", n.name, asc_kind_name(n.kind),
             n.axis);
    if (has_axis) AF_CHECK(n.axis < g_.num_axes(), "index {} on axis {}", n.name, n.axis);
    AF_CHECK(n.saturate || (n.kind == AscKind::Cast && is_float8(n.dtype)),
             "node {} ({}): saturate=false off a cast to float8", n.name, asc_kind_name(n.kind));
    if (n.kind != AscKind::Gather)
      AF_CHECK(n.gather.empty(), "node {} ({}) has gather fields", n.name, asc_kind_name(n.kind));
    else
      AF_CHECK(!n.gather.empty(), "gather {} gathers no dim", n.name);
    for (const GatherDim& d : n.gather)
      AF_CHECK(!d.name.empty(), "gather {}: a gathered dim has no name", n.name);
  }

  void same_repeats(const AscNode& n, const AscNode& input) {
    AF_CHECK(n.view.repeats == input.view.repeats, "node {}: repeats differ from input {}", n.name,
             input.name);
  }

  void same_compute_type(const AscNode& n, const AscNode& input) {
    AF_CHECK(compute_dtype(n.dtype) == compute_dtype(input.dtype),
             "node {} ({}) reads {} ({}) of another compute type", n.name, dtype_name(n.dtype),
             input.name, dtype_name(input.dtype));
  }

  void check_semantics(const AscNode& n) {
    const auto& reps = n.view.repeats;
    switch (n.kind) {
      case AscKind::Data:
        break;
      case AscKind::Cast:
        same_repeats(n, in(n, 0));
        break;
      case AscKind::Load:
        // A buffer read through several views (slices of one input) has one
        // Data node and Loads of different repeats: no repeats check here.
        AF_CHECK(n.dtype == in(n, 0).dtype, "node {} and its buffer {} differ in dtype", n.name,
                 in(n, 0).name);
        break;
      case AscKind::Gather:
        AF_CHECK(n.dtype == in(n, 0).dtype, "node {} and its buffer {} differ in dtype", n.name,
                 in(n, 0).name);
        for (size_t i = 1; i < n.inputs.size(); ++i) {
          same_repeats(n, in(n, i));
          AF_CHECK(is_integer(in(n, i).dtype), "gather {}: index {} is {}, not an integer", n.name,
                   in(n, i).name, dtype_name(in(n, i).dtype));
        }
        break;
      case AscKind::Output:
        check_output(n);
        break;
      case AscKind::Store:
        same_repeats(n, in(n, 0));
        same_compute_type(n, in(n, 0));
        break;
      case AscKind::Scalar:
        for (const sym::Expr& r : reps)
          AF_CHECK(r == kNoRepeat, "scalar {} varies", n.name);
        break;
      case AscKind::Index:
        for (int a = 0; a < g_.num_axes(); ++a) {
          const sym::Expr want = a == n.axis ? g_.axes[static_cast<size_t>(a)].size : kNoRepeat;
          AF_CHECK(reps[static_cast<size_t>(a)] == want, "index {}: bad repeat on axis {}", n.name,
                   a);
        }
        break;
      case AscKind::Broadcast: {
        const AscNode& x = in(n, 0);
        same_compute_type(n, x);
        for (size_t a = 0; a < reps.size(); ++a)
          AF_CHECK(x.view.repeats[a] == reps[a] || x.view.repeats[a] == kNoRepeat,
                   "broadcast {} shrinks axis {}", n.name, g_.axes[a].name);
        break;
      }
      case AscKind::Reduce: {
        const AscNode& x = in(n, 0);
        AF_CHECK(op_info(n.op).op_class == OpClass::Reduce, "reduce {} has op {}", n.name,
                 op_name(n.op));
        AF_CHECK(
            std::any_of(g_.axes.begin(), g_.axes.end(), [](const Axis& a) { return a.reduced; }),
            "reduce {} in a graph without reduced axes", n.name);
        same_compute_type(n, x);
        for (size_t a = 0; a < reps.size(); ++a) {
          const sym::Expr want = g_.axes[a].reduced ? kNoRepeat : x.view.repeats[a];
          AF_CHECK(reps[a] == want, "reduce {}: bad repeat on axis {}", n.name, g_.axes[a].name);
        }
        break;
      }
      case AscKind::Compute:
        check_compute(n);
        break;
    }
  }

  // The pieces (Stores) of an Output: its dtype; its repeats are their
  // union (the axis size where some piece varies), so one Store has the
  // Output's repeats.
  void check_output(const AscNode& n) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      AF_CHECK(std::count(n.inputs.begin(), n.inputs.end(), n.inputs[i]) == 1,
               "output {} lists store {} twice", n.name, in(n, i).name);
      AF_CHECK(n.dtype == in(n, i).dtype, "node {} and its store {} differ in dtype", n.name,
               in(n, i).name);
    }
    for (size_t a = 0; a < g_.axes.size(); ++a) {
      bool varies = false;
      for (size_t i = 0; i < n.inputs.size(); ++i)
        varies = varies || in(n, i).view.repeats[a] != kNoRepeat;
      AF_CHECK(n.view.repeats[a] == (varies ? g_.axes[a].size : kNoRepeat),
               "output {}: repeat on axis {} is not that of its stores", n.name, g_.axes[a].name);
    }
  }

  void check_compute(const AscNode& n) {
    const OpInfo& info = op_info(n.op);
    AF_CHECK(info.op_class == OpClass::Unary || info.op_class == OpClass::Binary ||
                 info.op_class == OpClass::Where,
             "compute {} has non-elementwise op {}", n.name, info.name);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      same_repeats(n, in(n, i));
    const DType out = compute_dtype(n.dtype);
    if (info.op_class == OpClass::Where) {
      AF_CHECK(in(n, 0).dtype == DType::boolean, "where {}: condition is not bool", n.name);
      same_compute_type(n, in(n, 1));
      same_compute_type(n, in(n, 2));
      return;
    }
    const DType x = compute_dtype(in(n, 0).dtype);
    if (info.op_class == OpClass::Binary)
      AF_CHECK(compute_dtype(in(n, 1).dtype) == x, "compute {}: operand types differ", n.name);
    const bool to_bool =
        info.dtype_rule == DTypeRule::AnyToBool || info.dtype_rule == DTypeRule::FloatToBool;
    AF_CHECK(to_bool ? out == DType::boolean : out == x, "compute {} ({}): result type {}", n.name,
             info.name, dtype_name(n.dtype));
  }

  void check_dense(AscKind kind, size_t count) {
    std::vector<int> seen(count, 0);
    for (const AscNode& n : g_.nodes) {
      if (n.kind != kind) continue;
      AF_CHECK(n.arg_index >= 0 && static_cast<size_t>(n.arg_index) < count,
               "{} {} has arg_index {} of {}", asc_kind_name(kind), n.name, n.arg_index, count);
      ++seen[static_cast<size_t>(n.arg_index)];
    }
    for (size_t i = 0; i < count; ++i)
      AF_CHECK(seen[i] == 1, "{} arg {} appears {} times", asc_kind_name(kind), i, seen[i]);
  }

  const AscGraph& g_;
  std::set<std::string> names_;
};

}  // namespace

void verify(const AscGraph& graph) {
  Verifier(graph).run();
}

}  // namespace autofuse::ascir
