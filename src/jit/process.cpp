#include "jit/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "autofuse/error.h"

extern char** environ;

namespace autofuse::jit {

namespace {

/// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

/// Spawn file actions, destroyed when they go out of scope.
struct FileActions {
  posix_spawn_file_actions_t actions;
  FileActions() { posix_spawn_file_actions_init(&actions); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv) {
  AF_CHECK(!argv.empty(), "run_process without a program");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw UserError(fmt::format("cannot create a pipe to run '{}': {}", argv[0], strerror(errno)));
  Fd read_end(pipe_fds[0]);
  Fd write_end(pipe_fds[1]);

  // The child writes stdout and stderr to the pipe and reads nothing.
  FileActions fa;
  posix_spawn_file_actions_addopen(&fa.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa.actions, write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa.actions, write_end.get(), STDERR_FILENO);

  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &fa.actions, nullptr, args.data(), environ);
  if (rc != 0) throw UserError(fmt::format("cannot run '{}': {}", argv[0], strerror(rc)));
  write_end.reset();  // so that read() sees end-of-file when the child exits

  ProcessResult result;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(read_end.get(), buf, sizeof buf);
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw UserError(fmt::format("waiting for '{}' failed: {}", argv[0], strerror(errno)));
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  } else {
    result.exit_code = 255;
  }
  return result;
}

std::string find_program(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  while (begin <= dirs.size()) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    // An empty PATH entry means the current folder.
    std::string candidate =
        (end == begin ? std::string(".") : dirs.substr(begin, end - begin)) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return {};
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string command;
  for (const std::string& a : argv)
    command += (command.empty() ? "" : " ") + a;
  return command;
}

}  // namespace autofuse::jit
