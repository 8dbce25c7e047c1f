// Shared by the AscGraph printer and parser (private to ascir). The grammar:
//
//   graph  := header node* '}'
//   header := 'kernel' IDENT 'axes(' [axis (',' axis)*] ')'
//             'inputs(' [INT (',' INT)*] ')' 'outputs(' [INT (',' INT)*] ')' '{'
//   axis   := IDENT ':' EXPR ['reduced']
//   node   := '%' INT IDENT '=' WORD '(' [arg (',' arg)*] ')' ':' DTYPE
//             'repeats[' [EXPR (',' EXPR)*] ']' ['strides[' EXPR* ']' 'offset' EXPR]
//   arg    := '%' INT | 'arg=' INT | 'axis=' INT | NUMBER | 'saturate=false'
//             | 'stride=' EXPR | 'size=' EXPR | 'name=' IDENT
//
// One header or node per line; blank lines and lines starting with '#' are
// skipped. WORD is a kind in lower case (data, load, gather, scalar, index,
// cast, broadcast, store, output) or, for Compute and Reduce, the op name
// (add, reduce_mean). Node ids are dense and in order; EXPR is
// sym::parse_expr syntax; `inputs`/`outputs` list graph value ids. Strides
// and offset are written for Load, Gather and Store (and only for them); a
// Gather's args are its inputs (the Data, one index per gathered dim), then
// per gathered dim, in order, `stride=` and `size=` (both required) and
// `name=` (the gather a bad index is reported as; written when it is not
// the node's own name):
//   %5 e = gather(%0, %4, stride=H, size=V) : f32 repeats[N, H] strides[0, 1] offset 0
//   %9 p = gather(%0, %4, %8, stride=7, size=3, name=rows, stride=1, size=7) : ...
// An Output lists its Stores: `%9 out = output(%7, %8, arg=0)`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "autofuse/ascir/asc_graph.h"

namespace autofuse::ascir::text {

/// "data", "broadcast", ...: the kind name in lower case.
std::string kind_keyword(AscKind kind);

}  // namespace autofuse::ascir::text
