// Shared by the AscGraph printer and parser (private to ascir). The grammar:
//
//   graph  := header node* '}'
//   header := 'kernel' IDENT 'axes(' [axis (',' axis)*] ')'
//             'inputs(' [INT (',' INT)*] ')' 'outputs(' [INT (',' INT)*] ')' '{'
//   axis   := IDENT ':' EXPR ['reduced']
//   node   := '%' INT IDENT '=' WORD '(' [arg (',' arg)*] ')' ':' DTYPE
//             'repeats[' [EXPR (',' EXPR)*] ']' ['strides[' EXPR* ']' 'offset' EXPR]
//   arg    := '%' INT | 'arg=' INT | 'axis=' INT | NUMBER | 'saturate=false'
//             | 'stride=' EXPR | 'size=' EXPR
//
// One header or node per line; blank lines and lines starting with '#' are
// skipped. WORD is a kind in lower case (data, load, gather, scalar, index,
// cast, broadcast, store, output) or, for Compute and Reduce, the op name
// (add, reduce_mean). Node ids are dense and in order; EXPR is
// sym::parse_expr syntax; `inputs`/`outputs` list graph value ids. Strides
// and offset are written for Load, Gather and Store (and only for them); a
// Gather's args are its two inputs, then `stride=` (gather_stride) and
// `size=` (gather_size), both required:
//   %5 e = gather(%0, %4, stride=H, size=V) : f32 repeats[N, H] strides[0, 1] offset 0
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
