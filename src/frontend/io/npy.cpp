// NumPy `.npy` files (format versions 1.0, 2.0 and 3.0; see numpy.lib.format):
// the magic "\x93NUMPY", a major and minor version byte, the header length
// (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0), then a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded
// with spaces and a newline, then the raw elements.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autofuse/error.h"
#include "autofuse/frontend/tensor_io.h"
#include "frontend/io/tensor_proto.h"

namespace autofuse::frontend {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

[[noreturn]] void fail(const std::string& path, const std::string& message) {
  SourceLocation where;
  where.file = path;
  throw UserError(where, message);
}

// A parser for the restricted Python literal NumPy writes as the header.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = string_literal();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (peek() == '[')
          error("structured dtypes (a list as 'descr') are not supported; save a plain array");
        header.descr = string_literal();
        seen_descr = true;
      } else if (key == "fortran_order") {
        header.fortran_order = boolean();
        seen_order = true;
      } else if (key == "shape") {
        header.shape = shape_tuple();
        seen_shape = true;
      } else {
        error(fmt::format("unexpected key '{}'", key));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') error("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) error("unexpected text after the header dict");
    if (!seen_descr || !seen_order || !seen_shape)
      error("the header must have the keys 'descr', 'fortran_order' and 'shape'");
    return header;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail(path_, fmt::format("malformed .npy header at offset {}: {} (header: {})", pos_, what,
                            text_.substr(0, 200)));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) error(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') error("expected a string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) error("unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  bool boolean() {
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (text_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    error("expected True or False");
  }
  std::vector<int64_t> shape_tuple() {
    std::vector<int64_t> shape;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) error("expected a dimension");
      int64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (__builtin_mul_overflow(d, 10, &d) || __builtin_add_overflow(d, peek() - '0', &d))
          error("dimension too large");
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 long literals
      shape.push_back(d);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') error("expected ',' or ')' in the shape");
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

struct NpyType {
  DType dtype;
  bool swap;  // big-endian data
};

NpyType parse_descr(const std::string& descr, const std::string& path) {
  if (descr.size() < 2) fail(path, fmt::format(".npy dtype '{}' is not understood", descr));
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order != '<' && order != '>' && order != '|' && order != '=')
    fail(path, fmt::format(".npy dtype '{}' is not understood", descr));
  struct Known {
    const char* code;
    DType dtype;
  };
  static constexpr Known kKnown[] = {
      {"f4", DType::f32}, {"f2", DType::f16}, {"f8", DType::f64}, {"i1", DType::i8},
      {"u1", DType::u8},  {"i2", DType::i16}, {"u2", DType::u16}, {"i4", DType::i32},
      {"u4", DType::u32}, {"i8", DType::i64}, {"u8", DType::u64}, {"b1", DType::boolean}};
  for (const Known& k : kKnown)
    if (code == k.code) {
      bool multi_byte = dtype_size(k.dtype) > 1;
      if (multi_byte && order == '|')
        fail(path, fmt::format(".npy dtype '{}' has no byte order", descr));
      return {k.dtype, multi_byte && order == '>'};
    }
  if (code == "V2")
    fail(path, fmt::format(".npy dtype '{}' (raw 2-byte values, as ml_dtypes' bfloat16 is saved) "
                           "is not supported: NumPy has no standard bfloat16; save as float32 "
                           "(or as an ONNX TensorProto .pb, which has BFLOAT16)",
                           descr));
  if (code == "V1")
    fail(path, fmt::format(".npy dtype '{}' (raw 1-byte values, as ml_dtypes' float8 and int4 "
                           "are saved) is not supported: NumPy has no float8 or int4; save as "
                           "float32 / int8 (or as an ONNX TensorProto .pb, which has them)",
                           descr));
  fail(path, fmt::format(".npy dtype '{}' is not supported: autofuse reads float32 (<f4), "
                         "float16 (<f2), float64 (<f8), int8/16/32/64 (|i1, <i2, <i4, <i8), "
                         "uint8/16/32/64 (|u1, <u2, <u4, <u8) and bool (|b1)",
                         descr));
}

uint32_t read_le(const std::string& bytes, size_t offset, int size) {
  uint32_t v = 0;
  for (int i = size - 1; i >= 0; --i)
    v = v << 8 | static_cast<unsigned char>(bytes[offset + static_cast<size_t>(i)]);
  return v;
}

void byte_swap(HostTensor& t) {
  const size_t item = static_cast<size_t>(dtype_size(t.dtype()));
  auto* p = static_cast<unsigned char*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i, p += item)
    std::reverse(p, p + item);
}

const char* descr_of(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "<f4";
    case DType::f16:
      return "<f2";
    case DType::f64:
      return "<f8";
    case DType::i8:
      return "|i1";
    case DType::u8:
      return "|u1";
    case DType::i16:
      return "<i2";
    case DType::u16:
      return "<u2";
    case DType::i32:
      return "<i4";
    case DType::u32:
      return "<u4";
    case DType::i64:
      return "<i8";
    case DType::u64:
      return "<u8";
    case DType::boolean:
      return "|b1";
    case DType::bf16:  // NumPy has no standard type for these
    case DType::i4:
    case DType::u4:
    case DType::f8e4m3fn:
    case DType::f8e4m3fnuz:
    case DType::f8e5m2:
    case DType::f8e5m2fnuz:
      return nullptr;
  }
  return nullptr;
}

std::string shape_literal(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer assume a little-endian host");

HostTensor read_npy(const std::string& path) {
  std::string bytes = read_binary_file(path, ".npy");
  if (bytes.size() < kMagicSize || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    fail(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
  if (bytes.size() < kMagicSize + 2) fail(path, "truncated .npy file (no version)");
  int major = static_cast<unsigned char>(bytes[6]), minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(path, fmt::format(".npy format version {}.{} is not supported (1.0, 2.0, 3.0 are)", major,
                           minor));
  const int len_size = major == 1 ? 2 : 4;
  const size_t header_start = kMagicSize + 2 + static_cast<size_t>(len_size);
  if (bytes.size() < header_start) fail(path, "truncated .npy file (no header length)");
  const size_t header_len = read_le(bytes, kMagicSize + 2, len_size);
  if (bytes.size() - header_start < header_len)
    fail(path, fmt::format("truncated .npy file: the header needs {} bytes, the file has {}",
                           header_len, bytes.size() - header_start));
  NpyHeader header =
      HeaderParser(std::string_view(bytes).substr(header_start, header_len), path).parse();
  NpyType type = parse_descr(header.descr, path);
  int64_t numel = 1;
  for (int64_t d : header.shape)
    if (__builtin_mul_overflow(numel, d, &numel) || numel > std::numeric_limits<int64_t>::max() / 8)
      fail(path, fmt::format(".npy shape {} is too large", shape_literal(header.shape)));
  // NumPy marks only arrays that are not C-contiguous as Fortran order: their
  // bytes are column-major, and reading them as ours would transpose them.
  if (header.fortran_order)
    fail(path,
         "Fortran-order .npy arrays are not supported; save a C-contiguous array "
         "(numpy.ascontiguousarray)");
  const size_t data_start = header_start + header_len;
  const int64_t want = numel * dtype_size(type.dtype);
  const int64_t have = static_cast<int64_t>(bytes.size() - data_start);
  if (have != want)
    fail(path, fmt::format(".npy data size mismatch: shape {} of '{}' needs {} bytes, the file "
                           "has {}{}",
                           shape_literal(header.shape), header.descr, want, have,
                           have < want ? " (truncated)" : ""));
  HostTensor t(type.dtype, std::move(header.shape));
  if (want > 0) std::memcpy(t.data(), bytes.data() + data_start, static_cast<size_t>(want));
  if (type.swap) byte_swap(t);
  if (t.dtype() == DType::boolean)
    for (int64_t i = 0; i < numel; ++i)
      t.data_as<uint8_t>()[i] = t.data_as<uint8_t>()[i] != 0;
  return t;
}

void write_npy(const std::string& path, const HostTensor& tensor) {
  const char* descr = descr_of(tensor.dtype());
  if (!descr)
    fail(path, fmt::format("cannot write a {} tensor as .npy: NumPy has no standard {} type; "
                           "cast it to {} first (or write an ONNX TensorProto .pb)",
                           dtype_name(tensor.dtype()),
                           is_int4(tensor.dtype())     ? "4-bit integer"
                           : is_float8(tensor.dtype()) ? "float8"
                                                       : "bfloat16",
                           is_int4(tensor.dtype()) ? "i8/u8" : "f32"));
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr,
                                 shape_literal(tensor.shape()));
  // Pad with spaces so that magic + version + length + header is a multiple
  // of 64 bytes (the data then starts aligned), ending in a newline.
  int major = dict.size() + 1 + 10 > 65535 ? 2 : 1;
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<char>((dict.size() >> (8 * i)) & 0xff));
  out += dict;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) fail(path, "cannot open the .npy file for writing");
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.write(static_cast<const char*>(tensor.data()),
             static_cast<std::streamsize>(tensor.nbytes()));
  file.close();
  if (!file) fail(path, "cannot write the .npy file");
}

}  // namespace autofuse::frontend
