#include "frontend/io/tensor_proto.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/error.h"
#include "autofuse/frontend/tensor_io.h"

namespace autofuse::frontend {

namespace {

// TensorProto.DataType values (onnx.proto). Listed here rather than taken
// from the generated enum because Debian's libonnx predates the float8 and
// 4-bit types that newer models use, and errors should still name them.
enum OnnxType : int32_t {
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBfloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
};
constexpr const char* kOnnxTypeNames[] = {
    "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
    "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
    "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
    "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",     "FLOAT4E2M1"};

SourceLocation at(const std::string& source) {
  SourceLocation where;
  where.file = source;
  return where;
}

std::string dims_string(const onnx::TensorProto& proto) {
  return fmt::format("[{}]", fmt::join(proto.dims(), ", "));
}

// ONNX packs 4-bit integers two to a byte, the first element in the low
// nibble; autofuse keeps one per byte (i4 sign-extended).
int64_t packed_int4_bytes(int64_t numel) {
  return (numel + 1) / 2;
}
void unpack_int4(const uint8_t* packed, HostTensor& t) {
  const bool is_signed = t.dtype() == DType::i4;
  auto* out = t.data_as<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const unsigned nibble = (packed[i / 2] >> (4 * (i % 2))) & 15u;
    out[i] = static_cast<uint8_t>(is_signed && nibble >= 8 ? nibble | 0xf0u : nibble);
  }
}
std::string pack_int4(const HostTensor& t) {
  std::string packed(static_cast<size_t>(packed_int4_bytes(t.numel())), '\0');
  const auto* in = t.data_as<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    packed[static_cast<size_t>(i / 2)] |= static_cast<char>((in[i] & 15u) << (4 * (i % 2)));
  return packed;
}

// Copies a typed repeated field into the tensor, converting each value with
// `store(index, value)` after checking the count.
template <typename Field, typename Store>
void copy_typed(const Field& field, const char* field_name, const HostTensor& tensor,
                const std::string& source, Store store) {
  if (field.size() != tensor.numel())
    throw UserError(at(source),
                    fmt::format("{} has {} value(s) but the shape {} needs {}", field_name,
                                field.size(), tensor.type_string(), tensor.numel()));
  for (int64_t i = 0; i < tensor.numel(); ++i)
    store(i, field.Get(static_cast<int>(i)));
}

void fill_from_int32_data(const onnx::TensorProto& proto, HostTensor& t,
                          const std::string& source) {
  // Narrow types keep one value per int32 entry; a value that does not fit
  // is a malformed file, not something to wrap silently.
  auto check_range = [&](int32_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      throw UserError(at(source), fmt::format("int32_data value {} is out of range for {}", v,
                                              onnx_type_name(proto.data_type())));
  };
  const auto& field = proto.int32_data();
  if (is_int4(t.dtype())) {  // one packed byte (two elements) per entry
    const int64_t bytes = packed_int4_bytes(t.numel());
    if (field.size() != bytes)
      throw UserError(at(source),
                      fmt::format("int32_data has {} value(s) but the shape {} needs {} (two "
                                  "4-bit elements per value)",
                                  field.size(), t.type_string(), bytes));
    std::vector<uint8_t> packed(static_cast<size_t>(bytes));
    for (int64_t i = 0; i < bytes; ++i) {
      check_range(field.Get(static_cast<int>(i)), 0, 255);
      packed[static_cast<size_t>(i)] = static_cast<uint8_t>(field.Get(static_cast<int>(i)));
    }
    unpack_int4(packed.data(), t);
    return;
  }
  if (is_float8(t.dtype())) {  // the 8-bit patterns, zero-extended
    copy_typed(field, "int32_data", t, source, [&](int64_t i, int32_t v) {
      check_range(v, 0, 255);
      t.data_as<uint8_t>()[i] = static_cast<uint8_t>(v);
    });
    return;
  }
  switch (t.dtype()) {
    case DType::i32:
      copy_typed(field, "int32_data", t, source,
                 [&](int64_t i, int32_t v) { t.data_as<int32_t>()[i] = v; });
      break;
    case DType::i8:
      copy_typed(field, "int32_data", t, source, [&](int64_t i, int32_t v) {
        check_range(v, -128, 127);
        t.data_as<int8_t>()[i] = static_cast<int8_t>(v);
      });
      break;
    case DType::u8:
      copy_typed(field, "int32_data", t, source, [&](int64_t i, int32_t v) {
        check_range(v, 0, 255);
        t.data_as<uint8_t>()[i] = static_cast<uint8_t>(v);
      });
      break;
    case DType::i16:
      copy_typed(field, "int32_data", t, source, [&](int64_t i, int32_t v) {
        check_range(v, -32768, 32767);
        t.data_as<int16_t>()[i] = static_cast<int16_t>(v);
      });
      break;
    case DType::u16:
      copy_typed(field, "int32_data", t, source, [&](int64_t i, int32_t v) {
        check_range(v, 0, 65535);
        t.data_as<uint16_t>()[i] = static_cast<uint16_t>(v);
      });
      break;
    case DType::boolean:
      copy_typed(field, "int32_data", t, source,
                 [&](int64_t i, int32_t v) { t.data_as<uint8_t>()[i] = v != 0; });
      break;
    case DType::f16:
    case DType::bf16:
      // The 16-bit patterns, zero-extended.
      copy_typed(field, "int32_data", t, source, [&](int64_t i, int32_t v) {
        check_range(v, 0, 65535);
        t.data_as<uint16_t>()[i] = static_cast<uint16_t>(v);
      });
      break;
    default:
      AF_CHECK(false, "int32_data for {}", dtype_name(t.dtype()));
  }
}

// The (ONNX type, dtype) pairs autofuse has; the others (STRING, COMPLEX*,
// FLOAT4E2M1, ...) are unsupported.
struct TypePair {
  OnnxType onnx;
  DType dtype;
};
constexpr TypePair kTypePairs[] = {
    {kFloat, DType::f32},
    {kUint8, DType::u8},
    {kInt8, DType::i8},
    {kUint16, DType::u16},
    {kInt16, DType::i16},
    {kInt32, DType::i32},
    {kInt64, DType::i64},
    {kBool, DType::boolean},
    {kFloat16, DType::f16},
    {kDouble, DType::f64},
    {kUint32, DType::u32},
    {kUint64, DType::u64},
    {kBfloat16, DType::bf16},
    {kFloat8E4M3FN, DType::f8e4m3fn},
    {kFloat8E4M3FNUZ, DType::f8e4m3fnuz},
    {kFloat8E5M2, DType::f8e5m2},
    {kFloat8E5M2FNUZ, DType::f8e5m2fnuz},
    {kUint4, DType::u4},
    {kInt4, DType::i4},
};

static_assert(std::size(kTypePairs) == std::size(kAllDTypes), "every dtype has an ONNX type");

}  // namespace

std::optional<DType> dtype_from_onnx(int32_t onnx_type) {
  for (const TypePair& p : kTypePairs)
    if (p.onnx == onnx_type) return p.dtype;
  return std::nullopt;
}

int32_t onnx_from_dtype(DType dtype) {
  for (const TypePair& p : kTypePairs)
    if (p.dtype == dtype) return p.onnx;
  AF_CHECK(false, "dtype {}", static_cast<int>(dtype));
}

std::string onnx_type_name(int32_t onnx_type) {
  if (onnx_type >= 0 && onnx_type < static_cast<int32_t>(std::size(kOnnxTypeNames)))
    return kOnnxTypeNames[onnx_type];
  return fmt::format("type {}", onnx_type);
}

HostTensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& source) {
  if (proto.has_segment())
    throw UserError(at(source), "segmented TensorProto data is not supported");
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.external_data_size() > 0)
    throw UserError(at(source), "tensors with external data are not supported");
  std::optional<DType> dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    throw UnsupportedError(at(source),
                           fmt::format("tensor data type {} is not supported (autofuse has the "
                                       "float, float8, integer (4 to 64 bits) and bool types)",
                                       onnx_type_name(proto.data_type())));
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  // Size the data before allocating: a corrupt dims field must not turn
  // into a huge allocation.
  int64_t numel = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw UserError(at(source),
                      fmt::format("tensor dims {} has a negative dim", dims_string(proto)));
    if (__builtin_mul_overflow(numel, d, &numel) || numel > std::numeric_limits<int64_t>::max() / 8)
      throw UserError(at(source), fmt::format("tensor dims {} are too large", dims_string(proto)));
  }
  const int64_t item = dtype_size(*dtype);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    const int64_t want = is_int4(*dtype) ? packed_int4_bytes(numel) : numel * item;
    if (static_cast<int64_t>(raw.size()) != want)
      throw UserError(at(source),
                      fmt::format("raw_data has {} bytes but {} {} needs {}", raw.size(),
                                  onnx_type_name(proto.data_type()), dims_string(proto), want));
    HostTensor t(*dtype, std::move(shape));
    if (is_int4(*dtype)) {
      unpack_int4(reinterpret_cast<const uint8_t*>(raw.data()), t);
      return t;
    }
    if (!raw.empty()) std::memcpy(t.data(), raw.data(), raw.size());
    if (*dtype == DType::boolean)
      for (int64_t i = 0; i < numel; ++i)
        t.data_as<uint8_t>()[i] = t.data_as<uint8_t>()[i] != 0;
    return t;
  }
  // Typed fields hold one entry per element (per two for int4), so their
  // size bounds numel.
  int64_t available =
      std::max({proto.float_data_size(), proto.int32_data_size(), proto.int64_data_size(),
                proto.double_data_size(), proto.uint64_data_size()});
  if (is_int4(*dtype)) available *= 2;
  if (numel > available)
    throw UserError(at(source), fmt::format("tensor {} {} has {} value(s), needs {}",
                                            onnx_type_name(proto.data_type()), dims_string(proto),
                                            available, numel));
  HostTensor t(*dtype, std::move(shape));
  switch (*dtype) {
    case DType::f32:
      copy_typed(proto.float_data(), "float_data", t, source,
                 [&](int64_t i, float v) { t.data_as<float>()[i] = v; });
      break;
    case DType::f64:
      copy_typed(proto.double_data(), "double_data", t, source,
                 [&](int64_t i, double v) { t.data_as<double>()[i] = v; });
      break;
    case DType::i64:
      copy_typed(proto.int64_data(), "int64_data", t, source,
                 [&](int64_t i, int64_t v) { t.data_as<int64_t>()[i] = v; });
      break;
    case DType::u64:
      copy_typed(proto.uint64_data(), "uint64_data", t, source,
                 [&](int64_t i, uint64_t v) { t.data_as<uint64_t>()[i] = v; });
      break;
    case DType::u32:
      copy_typed(proto.uint64_data(), "uint64_data", t, source, [&](int64_t i, uint64_t v) {
        if (v > 0xffffffffu)
          throw UserError(at(source),
                          fmt::format("uint64_data value {} is out of range for UINT32", v));
        t.data_as<uint32_t>()[i] = static_cast<uint32_t>(v);
      });
      break;
    default:
      fill_from_int32_data(proto, t, source);
  }
  return t;
}

onnx::TensorProto tensor_to_proto(const HostTensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  if (!name.empty()) proto.set_name(name);
  proto.set_data_type(onnx_from_dtype(tensor.dtype()));
  for (int64_t d : tensor.shape())
    proto.add_dims(d);
  if (is_int4(tensor.dtype()))
    proto.set_raw_data(pack_int4(tensor));
  else
    proto.set_raw_data(static_cast<const char*>(tensor.data()), tensor.nbytes());
  return proto;
}

std::string read_binary_file(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(at(path), fmt::format("cannot open {} file", what));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw UserError(at(path), fmt::format("cannot read {} file", what));
  return std::move(bytes).str();
}

onnx::TensorProto read_tensor_proto_file(const std::string& path) {
  std::string bytes = read_binary_file(path, "tensor");
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    throw UserError(at(path), "not a valid serialized onnx.TensorProto (malformed or truncated)");
  return proto;
}

HostTensor read_tensor_pb(const std::string& path) {
  return tensor_from_proto(read_tensor_proto_file(path), path);
}

HostTensor read_tensor_file(const std::string& path) {
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".npy")) return read_npy(path);
  if (ends_with(".pb")) return read_tensor_pb(path);
  throw UserError(at(path), "unknown tensor file type: expected a .npy or .pb file");
}

}  // namespace autofuse::frontend
