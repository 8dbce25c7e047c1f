// compile_and_load: compiler discovery, the content-addressed disk cache and
// dlopen. A cache entry is `af_<key>.so` with its checksum `af_<key>.sum`
// (size and hash of the .so, checked before every dlopen), plus the source
// `af_<key>.cpp` kept for debugging and compiler errors. A per-key lock file
// makes concurrent threads and processes compile a module once, and every
// file appears atomically by rename().
#include "autofuse/jit/compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "autofuse/error.h"
#include "jit/build_units.h"
#include "jit/files.h"
#include "jit/hash.h"
#include "jit/process.h"

namespace autofuse::jit {

namespace {

/// Bumped when the cache layout or the compile command changes shape.
constexpr std::string_view kCacheFormat = "autofuse-jit-1";

class SharedObject final : public Module {
 public:
  SharedObject(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~SharedObject() override { ::dlclose(handle_); }
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  void* symbol(const std::string& name) const override {
    void* p = ::dlsym(handle_, name.c_str());
    AF_CHECK(p != nullptr, "symbol '{}' is missing from {}", name, path_);
    return p;
  }

 private:
  void* handle_;
  std::string path_;
};

/// Holds an exclusive flock() on a lock file while alive.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw UserError(fmt::format("cannot create the lock file '{}': {}", path, strerror(errno)));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int err = errno;
        ::close(fd_);
        throw UserError(fmt::format("cannot lock '{}': {}", path, strerror(err)));
      }
    }
  }
  ~FileLock() { ::close(fd_); }  // closing releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

std::string resolve_compiler(const CompilerOptions& options) {
  std::string requested = options.cxx;
  const char* origin = "CompilerOptions::cxx";
  if (requested.empty()) {
    const char* env = std::getenv("CXX");
    if (env != nullptr && *env != '\0') {
      requested = env;
      origin = "$CXX";
    }
  }
  if (!requested.empty()) {
    std::string path = find_program(requested);
    if (path.empty())
      throw UserError(fmt::format("C++ compiler '{}' (from {}) was not found or is not executable",
                                  requested, origin));
    return path;
  }
  for (const char* name : {"g++", "c++", "clang++"}) {
    std::string path = find_program(name);
    if (!path.empty()) return path;
  }
  throw UserError("no C++ compiler found: set CXX or install g++");
}

/// `<cxx> --version`, run once per compiler path per process.
std::string compiler_version(const std::string& cxx) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = versions.find(cxx);
    if (it != versions.end()) return it->second;
  }
  ProcessResult r = run_process({cxx, "--version"});
  if (r.exit_code != 0)
    throw UserError(fmt::format("'{} --version' failed (exit {}): {}", cxx, r.exit_code, r.output));
  std::lock_guard<std::mutex> lock(mutex);
  return versions.emplace(cxx, std::move(r.output)).first->second;
}

/// mkdir -p; UserError naming the folder when it cannot be made or written.
void make_cache_dir(const std::string& dir) {
  std::string prefix;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    prefix = dir.substr(0, pos);
    if (prefix.empty()) continue;
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      throw UserError(fmt::format("compile cache folder '{}' is unusable: cannot create '{}': {}",
                                  dir, prefix, strerror(errno)));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw UserError(fmt::format("compile cache folder '{}' is unusable: not a folder", dir));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw UserError(fmt::format("compile cache folder '{}' is unusable: {}", dir, strerror(errno)));
}

std::string cache_dir(const CompilerOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* d = std::getenv("AUTOFUSE_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d != nullptr && *d != '\0')
    return std::string(d) + "/autofuse";
  if (const char* d = std::getenv("HOME"); d != nullptr && *d != '\0')
    return std::string(d) + "/.cache/autofuse";
  throw UserError(
      "no compile cache folder: set AUTOFUSE_CACHE_DIR (or HOME), or pass a cache folder");
}

std::shared_ptr<Module> open_module(const std::string& path, std::string* error) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    if (error != nullptr) *error = e != nullptr ? e : "unknown dlopen error";
    return nullptr;
  }
  return std::make_shared<SharedObject>(handle, path);
}

/// The checksum file's text for a shared object's bytes.
std::string checksum_text(const std::string& bytes) {
  ContentHash h;
  h.add(bytes);
  return fmt::format("{} {}\n", bytes.size(), h.hex());
}

enum class CacheLookup { Missing, Corrupt, Loaded };

/// Loads a cache entry after checking its bytes against its checksum file:
/// dlopen() of a truncated object can crash the process (SIGBUS on a mapped
/// page past the end of the file), so a damaged entry must never reach it.
CacheLookup load_cached(const std::string& so_path, const std::string& sum_path,
                        std::shared_ptr<Module>& module) {
  if (!file_exists(so_path)) return CacheLookup::Missing;
  const std::optional<std::string> bytes = read_file(so_path);
  const std::optional<std::string> sum = read_file(sum_path);
  if (!bytes || !sum || *sum != checksum_text(*bytes)) return CacheLookup::Corrupt;
  module = open_module(so_path, nullptr);
  return module != nullptr ? CacheLookup::Loaded : CacheLookup::Corrupt;
}

/// Puts the freshly built `tmp_so` in place as `so_path`, after its checksum
/// file `sum_path` (none when empty): whoever sees the entry also sees its
/// checksum. Removes `tmp_so` on failure.
void publish(const std::string& tmp_so, const std::string& dir, const std::string& stem,
             const std::string& so_path, const std::string& sum_path) {
  if (!sum_path.empty()) {
    const std::optional<std::string> bytes = read_file(tmp_so);
    if (!bytes) {
      ::unlink(tmp_so.c_str());
      throw UserError(fmt::format("cannot read the compiled module '{}'", tmp_so));
    }
    const std::string tmp_sum = make_temp_file(dir + "/" + stem + ".XXXXXX.sum", 4);
    try {
      write_file(tmp_sum, checksum_text(*bytes));
    } catch (...) {
      ::unlink(tmp_sum.c_str());
      ::unlink(tmp_so.c_str());
      throw;
    }
    if (::rename(tmp_sum.c_str(), sum_path.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp_sum.c_str());
      ::unlink(tmp_so.c_str());
      throw UserError(fmt::format("cannot write '{}': {}", sum_path, strerror(err)));
    }
  }
  if (::rename(tmp_so.c_str(), so_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_so.c_str());
    throw UserError(
        fmt::format("cannot move the compiled module into '{}': {}", so_path, strerror(err)));
  }
}

/// A new file in `dir` named after `stem` holding `source`; its path.
std::string write_temp_source(const std::string& dir, const std::string& stem,
                              const std::string& source) {
  const std::string path = make_temp_file(dir + "/" + stem + ".XXXXXX.cpp", 4);
  try {
    write_file(path, source);
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
  return path;
}

/// Compiles `source` (one translation unit) into the existing file `tmp_so`,
/// keeping the source at `kept_source`. UserError with the compiler's output
/// on failure.
void compile_one_unit(const std::string& cxx, const CompilerOptions& options,
                      const std::string& source, const std::string& dir, const std::string& stem,
                      const std::string& tmp_so, const std::string& kept_source) {
  const std::string tmp_src = write_temp_source(dir, stem, source);
  std::vector<std::string> argv = {cxx};
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  argv.insert(argv.end(), {"-fPIC", "-shared", "-o", tmp_so, tmp_src});
  argv.insert(argv.end(), options.link_flags.begin(), options.link_flags.end());
  ProcessResult r;
  try {
    r = run_process(argv);
  } catch (...) {
    ::unlink(tmp_src.c_str());
    throw;
  }
  // Keep the source next to the entry (readable and reproducible by hand).
  if (::rename(tmp_src.c_str(), kept_source.c_str()) != 0) ::unlink(tmp_src.c_str());
  if (r.exit_code != 0)
    throw UserError(
        fmt::format("the C++ compiler failed (exit {}) on the generated module; "
                    "source kept at {}\ncommand: {}\n{}",
                    r.exit_code, kept_source, command_line(argv), first_lines(r.output)));
}

/// Compiles the module into `so_path` (atomically renamed into place, after
/// its checksum file `sum_path` unless that is empty), keeping `source` at
/// `kept_source`: from `source` itself, or from `units` (several translation
/// units, compiled in parallel and linked) when there are more than one.
void compile_to(const std::string& cxx, const CompilerOptions& options, const std::string& source,
                const std::vector<std::string>& units, const std::string& dir,
                const std::string& stem, const std::string& so_path, const std::string& sum_path,
                const std::string& kept_source, CompileStats& stats) {
  const std::string tmp_so = make_temp_file(dir + "/" + stem + ".XXXXXX.so", 3);
  const auto start = std::chrono::steady_clock::now();
  const auto add_time = [&] {
    stats.compile_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ++stats.compiles;  // a compile that fails counts too
  stats.units = static_cast<int>(std::max<size_t>(units.size(), 1));
  try {
    if (units.size() <= 1) {
      compile_one_unit(cxx, options, source, dir, stem, tmp_so, kept_source);
    } else {
      const std::string tmp_src = write_temp_source(dir, stem, source);
      if (::rename(tmp_src.c_str(), kept_source.c_str()) != 0) ::unlink(tmp_src.c_str());
      const UnitsBuild build{cxx, options.flags, options.link_flags, compile_jobs(options),
                             dir, stem,          kept_source};
      build_from_units(build, units, tmp_so);
    }
  } catch (...) {
    add_time();
    ::unlink(tmp_so.c_str());
    throw;
  }
  add_time();
  publish(tmp_so, dir, stem, so_path, sum_path);
}

std::shared_ptr<Module> load_fresh(const std::string& so_path, const std::string& kept_source) {
  std::string error;
  std::shared_ptr<Module> module = open_module(so_path, &error);
  if (module == nullptr)
    throw UserError(fmt::format("the compiled module '{}' does not load: {} (source: {})", so_path,
                                error, kept_source));
  return module;
}

}  // namespace

int compile_jobs(const CompilerOptions& options) {
  if (options.jobs > 0) return options.jobs;
  if (const char* env = std::getenv("AUTOFUSE_COMPILE_JOBS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    errno = 0;
    const long jobs = std::strtol(env, &end, 10);
    if (errno != 0 || *end != '\0' || jobs < 0 || jobs > 4096)
      throw UserError(fmt::format(
          "AUTOFUSE_COMPILE_JOBS={}: expected a number of compiler processes (0: one per "
          "hardware thread)",
          env));
    if (jobs > 0) return static_cast<int>(jobs);
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::shared_ptr<Module> compile_and_load(const std::string& source, const CompilerOptions& options,
                                         CompileStats& stats) {
  return compile_and_load(source, {}, options, stats);
}

std::shared_ptr<Module> compile_and_load(const std::string& source,
                                         const std::vector<std::string>& units,
                                         const CompilerOptions& options, CompileStats& stats) {
  const std::string cxx = resolve_compiler(options);
  const std::string version = compiler_version(cxx);

  ContentHash hash;
  hash.add(kCacheFormat);
  hash.add(source);
  hash.add(cxx);
  hash.add(version);
  for (const std::string& f : options.flags)
    hash.add(f);
  hash.add("--link--");
  for (const std::string& f : options.link_flags)
    hash.add(f);
  const std::string stem = "af_" + hash.hex();

  const std::string dir = cache_dir(options);
  make_cache_dir(dir);
  if (!options.dump_source_path.empty()) write_file(options.dump_source_path, source);

  const std::string so_path = dir + "/" + stem + ".so";
  const std::string sum_path = dir + "/" + stem + ".sum";
  const std::string kept_source = dir + "/" + stem + ".cpp";

  if (!options.use_cache) {
    // A private file that nobody else loads: unlink it once it is mapped.
    const std::string private_so = make_temp_file(dir + "/" + stem + ".nocache.XXXXXX.so", 3);
    compile_to(cxx, options, source, units, dir, stem, private_so, "", kept_source, stats);
    std::shared_ptr<Module> module;
    try {
      module = load_fresh(private_so, kept_source);
    } catch (...) {
      ::unlink(private_so.c_str());
      throw;
    }
    ::unlink(private_so.c_str());
    stats.shared_object = private_so;
    return module;
  }

  std::shared_ptr<Module> module;
  if (load_cached(so_path, sum_path, module) == CacheLookup::Loaded) {
    ++stats.cache_hits;
    stats.shared_object = so_path;
    return module;
  }
  // Another thread or process may be compiling the same module: wait for it
  // and look again. Only a lock holder deletes a damaged entry, so a
  // half-written one from a concurrent writer is never mistaken for damage.
  FileLock lock(dir + "/" + stem + ".lock");
  switch (load_cached(so_path, sum_path, module)) {
    case CacheLookup::Loaded:
      ++stats.cache_hits;
      stats.shared_object = so_path;
      return module;
    case CacheLookup::Corrupt:
      ::unlink(so_path.c_str());
      ::unlink(sum_path.c_str());
      break;
    case CacheLookup::Missing:
      break;
  }
  compile_to(cxx, options, source, units, dir, stem, so_path, sum_path, kept_source, stats);
  module = load_fresh(so_path, kept_source);
  stats.shared_object = so_path;
  return module;
}

}  // namespace autofuse::jit
