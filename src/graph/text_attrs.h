// Attribute values of the `.af` text format. The parser reads each attribute
// into a small untyped literal tree; convert_attrs() then turns the literals of
// one statement into the op's typed Attrs struct, so that every type error
// names the attribute, what it expects and what was written, at its position.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autofuse/error.h"
#include "autofuse/graph/ops.h"
#include "graph/text_lexer.h"

namespace autofuse::text {

struct Literal {
  enum class Kind : uint8_t {
    Int,    // an integer, e.g. `3` or `-1`
    Float,  // a float, e.g. `1.5`, `-2e-5`, `inf`, `-nan`
    Ident,  // a lone identifier: true, false, end, a dtype or a symbol
    Expr,   // any other dim expression, e.g. `N*D` or `floordiv(N, 2)`
    List,   // `[...]`
  };
  Kind kind = Kind::Int;
  int64_t int_value = 0;       ///< Int
  bool negative = false;       ///< Int: written with a '-' sign (keeps `-0` a float -0.0)
  double float_value = 0;      ///< Float
  sym::Expr expr;              ///< Expr
  std::vector<Literal> items;  ///< List
  std::string text;            ///< source text (Ident: the name)
  int line = 0;
  int column = 0;
};

struct NamedAttr {
  std::string name;
  int line = 0;
  int column = 0;
  Literal value;
};

/// Attribute names of an attribute kind, in canonical (printing) order.
struct AttrSpec {
  std::string_view name;
  bool required;
};
std::vector<AttrSpec> attr_specs(AttrKind kind);

/// Converts the attributes written for `op` into its typed struct.
/// UserError (at the attribute, or at `op_where` for a missing one) on an
/// unknown, duplicate, missing or ill-typed attribute.
Attrs convert_attrs(OpKind op, const std::vector<NamedAttr>& attrs, const std::string& file,
                    const SourceLocation& op_where);

}  // namespace autofuse::text
