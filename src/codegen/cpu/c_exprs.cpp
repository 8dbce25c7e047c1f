// C++ spellings of values, conversions and ops (see c_exprs.h).
#include "codegen/cpu/c_exprs.h"

#include <cmath>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "codegen/cpu/c_literals.h"

namespace autofuse::codegen::cpu {

std::string c_compute_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
    case DType::f8e4m3fn:
    case DType::f8e4m3fnuz:
    case DType::f8e5m2:
    case DType::f8e5m2fnuz:
      return "float";
    case DType::f64:
      return "double";
    case DType::i4:
    case DType::i8:
      return "int8_t";
    case DType::u4:
    case DType::u8:
      return "uint8_t";
    case DType::i16:
      return "int16_t";
    case DType::u16:
      return "uint16_t";
    case DType::i32:
      return "int32_t";
    case DType::u32:
      return "uint32_t";
    case DType::i64:
      return "int64_t";
    case DType::u64:
      return "uint64_t";
    case DType::boolean:
      return "bool";
  }
  AF_CHECK(false, "unknown dtype {}", static_cast<int>(dtype));
  return {};
}

std::string c_storage_type(DType dtype) {
  switch (dtype) {
    case DType::f16:
    case DType::bf16:
      return "uint16_t";
    case DType::boolean:
      return "uint8_t";
    default:
      return is_float8(dtype) ? "uint8_t" : c_compute_type(dtype);
  }
}

std::string load_expr(DType dtype, const std::string& element) {
  switch (dtype) {
    case DType::f16:
      return fmt::format("af_f16_to_f32({})", element);
    case DType::bf16:
      return fmt::format("af_bf16_to_f32({})", element);
    case DType::boolean:
      return fmt::format("({} != 0)", element);
    default:
      if (is_float8(dtype)) return fmt::format("af_{}_to_f32({})", float8_name(dtype), element);
      return element;
  }
}

std::string half_store_value(DType value_dtype, DType storage_dtype, const std::string& value) {
  return is_f32_computed(value_dtype) ? value : cast_expr(value_dtype, storage_dtype, value);
}

std::string store_expr(DType value_dtype, DType storage_dtype, const std::string& value) {
  if (storage_dtype == DType::bf16)
    return fmt::format("af_f32_to_bf16({})", half_store_value(value_dtype, DType::bf16, value));
  std::string v = value;
  if (!(is_f32_computed(value_dtype) && is_f32_computed(storage_dtype)))
    v = cast_expr(value_dtype, storage_dtype, value);
  switch (storage_dtype) {
    case DType::f16:
      return fmt::format("af_f32_to_f16({})", v);
    case DType::boolean:
      return fmt::format("(uint8_t)({} ? 1 : 0)", v);
    default:
      if (is_float8(storage_dtype))
        return fmt::format("af_f32_to_{}({})", float8_name(storage_dtype), v);
      return v;
  }
}

std::string cast_expr(DType from, DType to, const std::string& v, bool saturate) {
  AF_CHECK(saturate || is_float8(to), "cast to {} with saturate=false", dtype_name(to));
  if (from == to) return v;
  if (to == DType::boolean) return fmt::format("({} != 0)", v);
  if (from == DType::boolean) {
    if (is_f32_computed(to)) return fmt::format("({} ? 1.0f : 0.0f)", v);
    if (to == DType::f64) return fmt::format("({} ? 1.0 : 0.0)", v);
    return fmt::format("({})({} ? 1 : 0)", c_compute_type(to), v);
  }
  // A float rounded to a narrower float type, as a float.
  const auto to_narrow = [&](const std::string& as_f32) {
    if (is_float8(to))
      return fmt::format("af_round_{}({}, {})", float8_name(to), as_f32, saturate ? "1" : "0");
    return fmt::format("{}({})", to == DType::f16 ? "af_round_f16" : "af_round_bf16", as_f32);
  };
  if (is_float(from)) {
    if (!is_float(to)) return fmt::format("{}({})", f2i_helper(to), v);  // i4/u4 round
    if (to == DType::f64) return fmt::format("(double)({})", v);
    if (from == DType::f64) {
      if (to == DType::f32) return fmt::format("(float)({})", v);
      return to_narrow(fmt::format("af_f64_to_f32_odd({})", v));
    }
    // f32/f16/bf16/float8 all hold a float: only a narrower target rounds.
    if (to == DType::f32) return v;
    return to_narrow(v);
  }
  // From an integer.
  if (is_int4(to))  // saturates (ONNX), comparing in the source's type
    return fmt::format("{}<{}>({})", to == DType::i4 ? "af_sat_i4" : "af_sat_u4",
                       c_compute_type(from), v);
  if (!is_float(to)) return fmt::format("({})({})", c_compute_type(to), v);
  if (to == DType::f64) return fmt::format("(double)({})", v);
  if (to == DType::f32) return fmt::format("(float)({})", v);
  // Narrower floats: integers up to 16 bits are exact in float; wider ones
  // round to odd first.
  if (dtype_size(from) <= 2) return to_narrow(fmt::format("(float)({})", v));
  if (from == DType::u64) return to_narrow(fmt::format("af_u64_to_f32_odd({})", v));
  return to_narrow(fmt::format("af_i64_to_f32_odd((int64_t)({}))", v));
}

std::string scalar_literal(DType dtype, double value) {
  if (dtype == DType::boolean) return value != 0 || std::isnan(value) ? "true" : "false";
  if (is_float(dtype)) return float_literal(round_to_dtype(dtype, value), dtype != DType::f64);
  return int_literal(dtype, value);
}

std::string index_expr(DType dtype, const std::string& index) {
  // The reference stores an index like any int64: i4/u4 wrap and float8
  // does not saturate, where a cast would saturate.
  if (is_int4(dtype)) return wrap_int4(dtype, index);
  return cast_expr(DType::i64, dtype, index, /*saturate=*/!is_float8(dtype));
}

std::string compute_expr(OpKind op, DType operand_dtype, const std::vector<std::string>& args) {
  using enum OpKind;
  const OpInfo& info = op_info(op);
  const size_t arity = info.op_class == OpClass::Where   ? 3
                       : info.op_class == OpClass::Unary ? 1
                                                         : 2;
  AF_CHECK(args.size() == arity, "{} with {} operands", info.name, args.size());
  const std::string& a = args[0];
  const std::string b = arity > 1 ? args[1] : std::string();
  if (op == Where) {
    // A float select as a blend: g++ may sink an operand's computation into
    // a ternary's arm and then not vectorize the loop.
    if (is_float(operand_dtype)) return fmt::format("af_sel({}, {}, {})", a, b, args[2]);
    if (operand_dtype == DType::boolean)
      return fmt::format("(({0} & {1}) | (!{0} & {2}))", a, b, args[2]);
    return fmt::format("({} ? {} : {})", a, b, args[2]);
  }
  switch (op) {  // comparisons: every dtype
    case Eq:
      return fmt::format("({} == {})", a, b);
    case Ne:
      return fmt::format("({} != {})", a, b);
    case Lt:
      return fmt::format("({} < {})", a, b);
    case Le:
      return fmt::format("({} <= {})", a, b);
    case Gt:
      return fmt::format("({} > {})", a, b);
    case Ge:
      return fmt::format("({} >= {})", a, b);
    default:
      break;
  }
  const auto call = [&](const char* fn) {
    return arity == 1 ? fmt::format("{}({})", fn, a) : fmt::format("{}({}, {})", fn, a, b);
  };
  if (operand_dtype == DType::boolean) {
    switch (op) {
      case Not:
        return fmt::format("(!{})", a);
      case And:
        return fmt::format("({} && {})", a, b);
      case Or:
        return fmt::format("({} || {})", a, b);
      case Xor:
        return fmt::format("({} != {})", a, b);
      default:
        break;
    }
  } else if (is_float8(operand_dtype)) {
    // Computed in f32 like f16, but each result is rounded to the type as
    // the reference does: with 2-3 mantissa bits, skipping that rounding
    // would change most results, compares and casts downstream.
    const std::string f32 = compute_expr(op, DType::f32, args);
    if (op == IsNan || op == IsInf) return f32;  // bool
    return fmt::format("af_round_{}({}, 0)", float8_name(operand_dtype), f32);
  } else if (is_float(operand_dtype)) {
    const char* one = operand_dtype == DType::f64 ? "1.0" : "1.0f";
    switch (op) {
      case Neg:
        return fmt::format("(-{})", a);
      case Abs:
        return call("af_abs");
      case Exp:
        return call("af_exp");
      case Log:
        return call("af_log");
      case Sqrt:
        return call("af_sqrt");
      case Rsqrt:
        return call("af_rsqrt");
      case Reciprocal:
        return fmt::format("({} / {})", one, a);
      case Sin:
        return call("af_sin");
      case Cos:
        return call("af_cos");
      case Tanh:
        return call("af_tanh");
      case Sigmoid:
        return call("af_sigmoid");
      case Relu:
        return call("af_frelu");
      case Erf:
        return call("af_erf");
      case Floor:
        return call("af_floor");
      case Ceil:
        return call("af_ceil");
      case Round:
        return call("af_round");
      case Sign:
        return call("af_fsign");
      case IsNan:
        return call("af_isnan");
      case IsInf:
        return call("af_isinf");
      case Add:
        return fmt::format("({} + {})", a, b);
      case Sub:
        return fmt::format("({} - {})", a, b);
      case Mul:
        return fmt::format("({} * {})", a, b);
      case Div:
        return fmt::format("({} / {})", a, b);
      case Pow:
        return call("af_pow");
      case Max:
        return call("af_fmax");
      case Min:
        return call("af_fmin");
      case Mod:
        return call("af_fmod");
      default:
        break;
    }
  } else if (is_int4(operand_dtype)) {
    // Computed in 8 bits, then wrapped to 4 like the reference's store
    // (compares, max, min, and, or and xor never leave the range; not and
    // the rest may).
    if (op == Max || op == Min || op == Relu || op == Sign || op == And || op == Or || op == Xor)
      return compute_expr(op, operand_dtype == DType::i4 ? DType::i8 : DType::u8, args);
    return wrap_int4(operand_dtype,
                     compute_expr(op, operand_dtype == DType::i4 ? DType::i8 : DType::u8, args));
  } else {
    switch (op) {
      case Neg:
        return call("af_wneg");
      case Abs:
        return call("af_iabs");
      case Relu:
        return call("af_irelu");
      case Sign:
        return call("af_isign");
      case Add:
        return call("af_wadd");
      case Sub:
        return call("af_wsub");
      case Mul:
        return call("af_wmul");
      case Div:
        return call("af_idiv");
      case Mod:
        return call("af_imod");
      case Pow:
        return call("af_ipow");
      case Not:  // bitwise on integers; the cast drops int promotion's high bits
        return fmt::format("(({})~{})", c_compute_type(operand_dtype), a);
      case And:
        return fmt::format("(({})({} & {}))", c_compute_type(operand_dtype), a, b);
      case Or:
        return fmt::format("(({})({} | {}))", c_compute_type(operand_dtype), a, b);
      case Xor:
        return fmt::format("(({})({} ^ {}))", c_compute_type(operand_dtype), a, b);
      case Max:
        return fmt::format("({0} > {1} ? {0} : {1})", a, b);
      case Min:
        return fmt::format("({0} < {1} ? {0} : {1})", a, b);
      default:
        break;
    }
  }
  AF_CHECK(false, "op {} on {} in a kernel", info.name, dtype_name(operand_dtype));
  return {};
}

ReduceCode reduce_code(OpKind op, DType dtype) {
  using enum OpKind;
  ReduceCode r;
  if (is_float(dtype)) {
    const bool f = dtype != DType::f64;
    r.acc_type = c_compute_type(dtype);
    switch (op) {
      case ReduceSum:
      case ReduceMean:
        r.identity = f ? "0.0f" : "0.0";
        r.clause = "+";
        return r;
      case ReduceProd:
        r.identity = f ? "1.0f" : "1.0";
        r.clause = "*";
        return r;
      case ReduceMax:
        r.identity = float_literal(-INFINITY, f);
        r.clause = "max";
        r.tracks_nan = true;
        return r;
      case ReduceMin:
        r.identity = float_literal(INFINITY, f);
        r.clause = "min";
        r.tracks_nan = true;
        return r;
      default:
        break;
    }
  } else if (is_integer(dtype)) {
    switch (op) {
      case ReduceSum:  // the low bits of the sum: accumulate in the unsigned type
        r.acc_type = unsigned_type(dtype);
        r.identity = "0";
        r.clause = "+";
        return r;
      case ReduceMean:  // the mean divides the full int64 sum
        r.acc_type = "uint64_t";
        r.identity = "0";
        r.clause = "+";
        return r;
      case ReduceProd:
        r.acc_type = unsigned_type(dtype);
        r.identity = "1";
        r.clause = "*";
        return r;
      case ReduceMax:
        r.acc_type = c_compute_type(dtype);
        r.identity = int_lowest(dtype);
        r.clause = "max";
        return r;
      case ReduceMin:
        r.acc_type = c_compute_type(dtype);
        r.identity = int_highest(dtype);
        r.clause = "min";
        return r;
      default:
        break;
    }
  }
  AF_CHECK(false, "reduction {} of {}", op_name(op), dtype_name(dtype));
  return r;
}

std::string reduce_update(OpKind op, DType dtype, const std::string& acc, const std::string& nan,
                          const std::string& value) {
  using enum OpKind;
  const ReduceCode code = reduce_code(op, dtype);
  switch (op) {
    case ReduceSum:
    case ReduceMean:
      if (is_float(dtype)) return fmt::format("{} += {};", acc, value);
      if (op == ReduceMean)
        return fmt::format("{} += (uint64_t)(int64_t){};", acc, value);  // sign-extends
      return fmt::format("{} = ({})({} + ({}){});", acc, code.acc_type, acc, code.acc_type, value);
    case ReduceProd:
      if (is_float(dtype)) return fmt::format("{} *= {};", acc, value);
      return fmt::format("{} = ({})({} * ({}){});", acc, code.acc_type, acc, code.acc_type, value);
    case ReduceMax:
    case ReduceMin: {
      const char* cmp = op == ReduceMax ? ">" : "<";
      std::string s = fmt::format("{0} = {1} {2} {0} ? {1} : {0};", acc, value, cmp);
      if (code.tracks_nan) s += fmt::format(" {} |= ({} != {});", nan, value, value);
      return s;
    }
    default:
      AF_CHECK(false, "not a reduction: {}", op_name(op));
  }
  return {};
}

std::string reduce_result(OpKind op, DType dtype, const std::string& acc, const std::string& nan,
                          const std::string& count) {
  using enum OpKind;
  if (is_float8(dtype))  // rounded to the type, like every float8 result (compute_expr)
    return fmt::format("af_round_{}({}, 0)", float8_name(dtype),
                       reduce_result(op, DType::f32, acc, nan, count));
  const std::string type = c_compute_type(dtype);
  if (is_float(dtype)) {
    switch (op) {
      case ReduceSum:
      case ReduceProd:
        return acc;
      case ReduceMean:  // count 0: 0 / 0 is NaN, as ops.h wants
        return fmt::format("({} / ({})({}))", acc, type, count);
      case ReduceMax:
      case ReduceMin:
        return fmt::format("({} ? {} : {})", nan, float_literal(NAN, dtype != DType::f64), acc);
      default:
        break;
    }
  } else {
    switch (op) {
      case ReduceSum:
      case ReduceProd:
        return wrap_int4(dtype, fmt::format("({})({})", type, acc));
      case ReduceMean:  // integer mean truncates; empty: 0 (u64: the sum is unsigned)
        return wrap_int4(
            dtype, fmt::format("({1} == 0 ? ({2})0 : ({2})(({3}){0} / {1}))", acc, count, type,
                               dtype == DType::u64 ? "uint64_t" : "int64_t"));
      case ReduceMax:
      case ReduceMin:
        return acc;
      default:
        break;
    }
  }
  AF_CHECK(false, "not a reduction: {}", op_name(op));
  return {};
}

std::string min_max_with_constant(OpKind op, int constant, const std::string& a,
                                  const std::string& b) {
  AF_CHECK(op == OpKind::Max || op == OpKind::Min, "min_max_with_constant of {}", op_info(op).name);
  return fmt::format("{}_{}({}, {})", op == OpKind::Max ? "af_fmax" : "af_fmin",
                     constant == 0 ? "kv" : "vk", a, b);
}

}  // namespace autofuse::codegen::cpu
