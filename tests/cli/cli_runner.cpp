#include "cli/cli_runner.h"

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>

#include "test_kernel_cache.h"

namespace autofuse::testing {

namespace {

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The folders made for this process's tests, removed at its exit (ctest
/// runs one test per process; a folder may hold a compile cache).
class MadeFolders {
 public:
  ~MadeFolders() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::filesystem::path& dir : dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }
  void add(const std::filesystem::path& dir) {
    std::lock_guard<std::mutex> lock(mutex_);
    dirs_.push_back(dir);
  }

 private:
  std::mutex mutex_;
  std::vector<std::filesystem::path> dirs_;
};

MadeFolders& made_folders() {
  static MadeFolders folders;
  return folders;
}

std::filesystem::path temp_dir() {
  static std::atomic<int> counter{0};
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "none";
  std::replace(name.begin(), name.end(), '/', '_');  // one level (parameterized names)
  auto dir =
      std::filesystem::temp_directory_path() /
      ("autofuse-cli-" + std::to_string(::getpid()) + "-" + name + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  made_folders().add(dir);
  return dir;
}

}  // namespace

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  auto dir = temp_dir();
  std::string cmd = "env";
  for (const auto& e : env)
    cmd += " " + quote(e);
  cmd += " " + quote(AUTOFUSE_CLI_PATH);
  for (const auto& a : args)
    cmd += " " + quote(a);
  cmd += " >" + quote((dir / "out").string()) + " 2>" + quote((dir / "err").string());
  int status = std::system(cmd.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(dir / "out");
  result.err = read_file(dir / "err");
  std::filesystem::remove_all(dir);
  return result;
}

std::string make_temp_dir() {
  return temp_dir().string();
}

std::string shared_cache_env() {
  return "AUTOFUSE_CACHE_DIR=" + shared_test_cache();
}

std::string write_temp_file(const std::string& name, const std::string& text) {
  auto path = temp_dir() / name;
  std::ofstream(path) << text;
  return path.string();
}

std::string example_path(const std::string& name) {
  return (std::filesystem::path(AUTOFUSE_SOURCE_DIR) / "examples" / name).string();
}

}  // namespace autofuse::testing
