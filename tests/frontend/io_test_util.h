// Helpers for the tensor I/O tests: per-test temp files and exception checks.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autofuse/error.h"
#include "autofuse/ref/tensor.h"

namespace autofuse::testing {

/// A fresh folder for the current test (removed at the end of the test).
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // One level only: a parameterized test's names hold '/', which would
    // leave the outer folders behind.
    std::string name = "autofuse-io-" + std::to_string(::getpid()) + "-" + info->test_suite_name() +
                       "-" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  /// Writes raw bytes to `name` and returns the path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::string p = file(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

 private:
  std::filesystem::path path_;
};

/// Runs `fn`, expects a UserError and returns its message (what()).
template <typename Fn>
std::string user_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a UserError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a UserError, nothing was thrown";
  return {};
}

/// Same dtype, shape and bytes.
inline void expect_same_tensor(const HostTensor& got, const HostTensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.nbytes(), want.nbytes());
  if (want.nbytes() > 0) {
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.nbytes()));
  }
}

/// A tensor with distinct, dtype-representable values (i * 3 - 7 pattern).
inline HostTensor patterned(DType dtype, std::vector<int64_t> shape) {
  HostTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set_f64(i, is_bool(dtype) ? (i % 3 == 0) : static_cast<double>(i % 50) * 1.5 - 7);
  if (dtype == DType::u8)
    for (int64_t i = 0; i < t.numel(); ++i)
      t.set_f64(i, static_cast<double>(i % 200));
  return t;
}

}  // namespace autofuse::testing
