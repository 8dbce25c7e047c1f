#include "jit/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "autofuse/error.h"

namespace autofuse::jit {

void write_file(const std::string& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UserError(fmt::format("cannot write '{}': {}", path, strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      throw UserError(fmt::format("cannot write '{}': {}", path, strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0)
    throw UserError(fmt::format("cannot write '{}': {}", path, strerror(errno)));
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

std::string make_temp_file(std::string pattern, int suffix_len) {
  const int fd = ::mkstemps(pattern.data(), suffix_len);
  if (fd < 0)
    throw UserError(fmt::format("cannot create a file like '{}': {}", pattern, strerror(errno)));
  ::close(fd);
  return pattern;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string first_lines(const std::string& text, int max_lines) {
  size_t pos = 0;
  for (int i = 0; i < max_lines; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return text;
    ++pos;
  }
  return text.substr(0, pos) + "[... more compiler output cut ...]\n";
}

}  // namespace autofuse::jit
