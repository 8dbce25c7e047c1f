// Printers: the parseable text syntax (to_string) and C++ (to_cpp). Both
// print sums as `a*b - 2*c + 1`: negative terms with " - ", constant last.
#include "sym/internal.h"

namespace autofuse::sym {

namespace {

std::string_view function_name(Kind kind) {
  switch (kind) {
    case Kind::FloorDiv:
      return "floordiv";
    case Kind::CeilDiv:
      return "ceildiv";
    case Kind::Mod:
      return "mod";
    case Kind::Min:
      return "min";
    case Kind::Max:
      return "max";
    default:
      return "";
  }
}

class Printer {
 public:
  Printer(bool cpp, std::string (*symbol_to_cpp)(const std::string&))
      : cpp_(cpp), symbol_to_cpp_(symbol_to_cpp) {}

  void print(const Expr& e, std::string& out) const {
    switch (e.kind()) {
      case Kind::Const:
        print_const(*e.as_const(), out);
        return;
      case Kind::Symbol:
        out +=
            (cpp_ && symbol_to_cpp_ != nullptr) ? symbol_to_cpp_(e.symbol_name()) : e.symbol_name();
        return;
      case Kind::Add: {
        bool first = true;
        for (const Expr& term : e.operands()) {
          print_term(term, first, out);
          first = false;
        }
        return;
      }
      case Kind::Mul:
        print_term(e, true, out);
        return;
      default: {
        if (cpp_) out += "af_";
        out += function_name(e.kind());
        out += '(';
        print(e.operands()[0], out);
        out += ", ";
        print(e.operands()[1], out);
        out += ')';
        return;
      }
    }
  }

 private:
  void print_const(int64_t v, std::string& out) const {
    if (cpp_) {
      out += v == INT64_MIN ? std::string("INT64_MIN") : fmt::format("INT64_C({})", v);
    } else {
      // -2^63 has no literal of its own.
      out += v == INT64_MIN ? std::string("(-9223372036854775807 - 1)") : fmt::format("{}", v);
    }
  }

  /// A term of a sum (or a lone product): coefficient, then atoms. `first`
  /// prints a negative coefficient as a leading '-', later terms as " - ".
  void print_term(const Expr& term, bool first, std::string& out) const {
    int64_t coef = 1;
    std::span<const Expr> atoms;
    Expr single;
    if (term.kind() == Kind::Mul) {
      atoms = term.operands();
      if (auto c = atoms.front().as_const()) {
        coef = *c;
        atoms = atoms.subspan(1);
      }
    } else if (auto c = term.as_const()) {
      coef = *c;
    } else {
      single = term;
      atoms = std::span<const Expr>(&single, 1);
    }
    bool negative = coef < 0 && coef != INT64_MIN;
    if (!first)
      out += negative ? " - " : " + ";
    else if (negative)
      out += '-';
    int64_t magnitude = negative ? -coef : coef;
    if (atoms.empty()) {
      print_const(magnitude, out);
      return;
    }
    bool need_star = false;
    if (magnitude != 1) {
      print_const(magnitude, out);
      need_star = true;
    }
    for (const Expr& atom : atoms) {
      if (need_star) out += '*';
      print(atom, out);
      need_star = true;
    }
  }

  bool cpp_;
  std::string (*symbol_to_cpp_)(const std::string&);
};

}  // namespace

std::string Expr::to_string() const {
  std::string out;
  Printer(false, nullptr).print(*this, out);
  return out;
}

std::string to_cpp(const Expr& e, std::string (*symbol_to_cpp)(const std::string&)) {
  std::string out;
  Printer(true, symbol_to_cpp).print(e, out);
  return out;
}

}  // namespace autofuse::sym
