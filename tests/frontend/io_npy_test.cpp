// .npy reading and writing: round trips for every dtype and rank, files as
// NumPy writes them (versions 1.0-3.0, big-endian), and every malformed case
// giving a UserError that names the file and the problem.
#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/frontend/tensor_io.h"
#include "frontend/io/tensor_proto.h"
#include "frontend/io_test_util.h"

namespace autofuse::testing {
// File-local helpers and tests, in a namespace named after the file (not an
// anonymous one): the unity build compiles several test files as one unit.
namespace io_npy_test_local {

using frontend::read_npy;
using frontend::read_tensor_file;
using frontend::write_npy;
using ::testing::HasSubstr;

// A .npy file: magic, version, header length, `dict` (padded with spaces to
// a multiple of 64 bytes, newline-terminated), then `data`.
std::string npy_bytes(const std::string& dict, const std::string& data, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  return out + header + data;
}

template <typename T>
std::string raw(std::initializer_list<T> values) {
  std::string s;
  for (T v : values)
    s.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return s;
}

TEST(IoNpy, RoundTripsEveryDtypeAndRank) {
  TempDir dir;
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {7}, {2, 3}, {2, 0, 4}, {2, 1, 3, 5}};
  for (DType dtype : kAllDTypes) {
    // NumPy has no bf16, float8 or int4 (io_narrow_types_test.cpp).
    if (dtype == DType::bf16 || is_float8(dtype) || is_int4(dtype)) continue;
    for (const auto& shape : shapes) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " rank " + std::to_string(shape.size()));
      HostTensor t = patterned(dtype, shape);
      std::string path = dir.file("t.npy");
      write_npy(path, t);
      expect_same_tensor(read_npy(path), t);
      expect_same_tensor(read_tensor_file(path), t);
    }
  }
}

TEST(IoNpy, WritesTheCanonicalVersion1Header) {
  TempDir dir;
  HostTensor t = patterned(DType::f32, {2, 3});
  write_npy(dir.file("a.npy"), t);
  std::string bytes = frontend::read_binary_file(dir.file("a.npy"), "test");
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len = static_cast<unsigned char>(bytes[8]) |
                      static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);  // the data starts aligned
  std::string header = bytes.substr(10, header_len);
  EXPECT_THAT(header,
              ::testing::StartsWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(bytes.size(), 10 + header_len + 24);

  write_npy(dir.file("b.npy"), patterned(DType::i64, {5}));
  EXPECT_THAT(frontend::read_binary_file(dir.file("b.npy"), "test"),
              HasSubstr("'descr': '<i8', 'fortran_order': False, 'shape': (5,), }"));
  write_npy(dir.file("c.npy"), patterned(DType::boolean, {}));
  EXPECT_THAT(frontend::read_binary_file(dir.file("c.npy"), "test"),
              HasSubstr("'descr': '|b1', 'fortran_order': False, 'shape': (), }"));
}

TEST(IoNpy, ReadsVersions2And3AndOtherKeyOrders) {
  TempDir dir;
  for (int major : {1, 2, 3}) {
    SCOPED_TRACE(major);
    std::string path =
        dir.write("v.npy", npy_bytes("{'shape': (3,), 'fortran_order': False, 'descr': '<i4'}",
                                     raw<int32_t>({1, -2, 3}), major));
    HostTensor t = read_npy(path);
    ASSERT_EQ(t.dtype(), DType::i32);
    ASSERT_EQ(t.shape(), std::vector<int64_t>{3});
    EXPECT_EQ(t.get_i64(1), -2);
  }
}

TEST(IoNpy, ReadsBigEndianByteSwapped) {
  TempDir dir;
  const std::string be("\x3f\x80\x00\x00\xc0\x00\x00\x00", 8);  // 1.0f, -2.0f big-endian
  HostTensor t = read_npy(dir.write(
      "be.npy", npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be)));
  EXPECT_EQ(t.get_f64(0), 1.0);
  EXPECT_EQ(t.get_f64(1), -2.0);
}

TEST(IoNpy, NormalizesBoolBytes) {
  TempDir dir;
  HostTensor t = read_npy(
      dir.write("b.npy", npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                   std::string("\x00\x07\x01", 3))));
  EXPECT_EQ(t.get_i64(0), 0);
  EXPECT_EQ(t.data_as<uint8_t>()[1], 1);
  EXPECT_EQ(t.get_i64(2), 1);
}

struct BadNpy {
  const char* name;
  std::string bytes;
  const char* expect;  // substring of the message
};

void PrintTo(const BadNpy& c, std::ostream* os) {
  *os << c.name;
}

class IoNpyMalformed : public ::testing::TestWithParam<BadNpy> {};

TEST_P(IoNpyMalformed, IsAUserErrorNamingFileAndProblem) {
  TempDir dir;
  std::string path = dir.write("bad.npy", GetParam().bytes);
  std::string message = user_error_of([&] { read_npy(path); });
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr(GetParam().expect));
}

const std::string kF4x2 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
const std::string kTwoFloats = raw<float>({1.0f, 2.0f});

INSTANTIATE_TEST_SUITE_P(
    Cases, IoNpyMalformed,
    ::testing::Values(
        BadNpy{"empty", "", "bad magic"},
        BadNpy{"bad_magic", "PK\x03\x04 a zip file, not an array", "bad magic"},
        BadNpy{"magic_only", "\x93NUMPY", "truncated"},
        BadNpy{"no_header_length", std::string("\x93NUMPY\x01\x00\x10", 9), "truncated"},
        BadNpy{"truncated_header", npy_bytes(kF4x2, kTwoFloats).substr(0, 30), "truncated"},
        BadNpy{"version_9", std::string("\x93NUMPY\x09\x00", 8) + npy_bytes(kF4x2, "").substr(8),
               "version 9.0"},
        BadNpy{"header_not_a_dict", npy_bytes("[1, 2, 3]", kTwoFloats), "malformed .npy header"},
        BadNpy{"unterminated_dict", npy_bytes("{'descr': '<f4', 'shape': (2,)", kTwoFloats),
               "malformed .npy header"},
        BadNpy{"missing_shape", npy_bytes("{'descr': '<f4', 'fortran_order': False}", kTwoFloats),
               "'shape'"},
        BadNpy{"unknown_key",
               npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
                         kTwoFloats),
               "unexpected key 'x'"},
        BadNpy{"bad_dim",
               npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", kTwoFloats),
               "expected a dimension"},
        BadNpy{"huge_shape",
               npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
                         "4294967296, 4294967296)}",
                         kTwoFloats),
               "too large"},
        BadNpy{"fortran_order",
               npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }", kTwoFloats),
               "Fortran"},
        BadNpy{"unsupported_f16",  // long double
               npy_bytes("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }",
                         "abcdefghabcdefgh"),
               "'<f16' is not supported"},
        BadNpy{"unsupported_complex",
               npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", kTwoFloats),
               "'<c8' is not supported"},
        BadNpy{"bf16_as_void",
               npy_bytes("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }", "abcd"),
               "bfloat16"},
        BadNpy{"structured",
               npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                         kTwoFloats),
               "structured"},
        BadNpy{"no_byte_order",
               npy_bytes("{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }", kTwoFloats),
               "no byte order"},
        BadNpy{"data_truncated", npy_bytes(kF4x2, kTwoFloats.substr(0, 5)), "truncated"},
        BadNpy{"data_too_long", npy_bytes(kF4x2, kTwoFloats + "xyz"), "size mismatch"},
        BadNpy{"shape_mismatch",
               npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", kTwoFloats),
               "needs 24 bytes, the file has 8"}),
    [](const ::testing::TestParamInfo<BadNpy>& info) { return std::string(info.param.name); });

TEST(IoNpy, MissingFileNamesThePath) {
  EXPECT_THAT(user_error_of([] { read_npy("/nonexistent/dir/x.npy"); }),
              HasSubstr("/nonexistent/dir/x.npy"));
}

TEST(IoNpy, ADirectoryIsAUserError) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("sub.npy"));
  EXPECT_THAT(user_error_of([&] { read_npy(dir.file("sub.npy")); }), HasSubstr("sub.npy"));
}

TEST(IoNpy, WritingBf16IsAClearError) {
  TempDir dir;
  EXPECT_THAT(user_error_of([&] { write_npy(dir.file("x.npy"), HostTensor(DType::bf16, {2})); }),
              HasSubstr("bfloat16"));
}

TEST(IoNpy, UnwritablePathIsAUserError) {
  EXPECT_THAT(
      user_error_of([] { write_npy("/nonexistent/dir/x.npy", HostTensor(DType::f32, {2})); }),
      HasSubstr("/nonexistent/dir/x.npy"));
}

TEST(IoTensorFile, UnknownExtensionIsAUserError) {
  EXPECT_THAT(user_error_of([] { read_tensor_file("/tmp/x.txt"); }), HasSubstr(".npy or .pb"));
}

}  // namespace io_npy_test_local
}  // namespace autofuse::testing
