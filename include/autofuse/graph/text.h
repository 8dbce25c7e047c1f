// The `.af` text format. Example:
//
//   # LayerNorm over the last axis.
//   graph layernorm(x: f32[N, D], gamma: f32[D], beta: f32[D]) {
//     mean: f32[N, 1] = reduce_mean(x, axes=[1], keepdims=true)
//     xc = sub(x, mean)
//     ...
//     return y
//   }
//
// Grammar (comments run from `#` to end of line):
//   graph      := 'graph' IDENT '(' [param (',' param)*] ')' '{' stmt* 'return' IDENT (',' IDENT)*
//   '}' param      := IDENT ':' type type       := DTYPE '[' [dim (',' dim)*] ']'          dims are
//   sym expressions (parse_expr syntax) stmt       := target (',' target)* '=' OP '(' [arg (','
//   arg)*] ')' target     := IDENT [':' type]                       a given type must equal the
//   inferred one arg        := IDENT                                   an input value (positional,
//   first)
//               | IDENT '=' attr                          an attribute (after the inputs)
//   attr       := INT | FLOAT | 'true' | 'false' | 'end' | DTYPE | dim | '[' [attr (',' attr)*] ']'
// Attribute names per attribute kind:
//   cast(x, to=f16); broadcast_to(x, shape=[N, D]); reshape(x, shape=[N*D]);
//   reduce_*(x, axes=[1], keepdims=false); transpose(x, perm=[1, 0]);
//   slice(x, axes=[1], starts=[0], ends=[end], steps=[1]) (`end` = to the end);
//   concat(a, b, axis=1); gather(data, idx, axis=0); split(x, axis=1, sizes=[D, D]);
//   constant(dtype=f32, shape=[2], value=[1.0, 2.5]) or value=1e-5 (splat);
//   iota(dtype=i64, shape=[N], axis=0);
//   conv(x, w[, bias], strides=[1, 1], dilations=[1, 1], pads=[0, 0, 0, 0], group=1).
// Optional attributes may be left out (keepdims=false, steps all 1; conv's
// all of them: strides and dilations 1, pads 0, group 1).
//
// The printer writes every statement with its inferred type, attributes in
// the fixed order above, and the graph's guards as trailing comments, so
// print(parse(print(g))) == print(g).
#pragma once

#include <string>
#include <string_view>

#include "autofuse/graph/graph.h"

namespace autofuse {

/// Parses a graph. UserError with file:line:col and what was expected on
/// malformed text; with the node name and op on a verification error.
Graph parse_graph(std::string_view text, const std::string& file_name = "");
/// Reads and parses a file; UserError if it cannot be read.
Graph parse_graph_file(const std::string& path);
/// Canonical text of a graph.
std::string print_graph(const Graph& graph);

}  // namespace autofuse
