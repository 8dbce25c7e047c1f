#include "jit/build_units.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>

#include <fmt/format.h>

#include "autofuse/error.h"
#include "jit/files.h"
#include "jit/process.h"

namespace autofuse::jit {

namespace {

/// Unlinks the temporary files it holds when it goes out of scope.
class TempFiles {
 public:
  TempFiles() = default;
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;
  ~TempFiles() {
    for (const std::string& path : paths_)
      ::unlink(path.c_str());
  }
  std::string make(const std::string& pattern, int suffix_len) {
    paths_.push_back(make_temp_file(pattern, suffix_len));
    return paths_.back();
  }
  /// Keeps `path` (one of these) when the object goes.
  void release(const std::string& path) {
    const auto it = std::find(paths_.begin(), paths_.end(), path);
    if (it != paths_.end()) paths_.erase(it);
  }

 private:
  std::vector<std::string> paths_;
};

/// One unit's compile: its command and what came of it.
struct UnitCompile {
  std::vector<std::string> argv;
  ProcessResult result;
  std::exception_ptr error;  ///< the compiler could not be started
};

/// Runs the commands, `jobs` at a time, each on a thread of its own that waits
/// for its compiler process.
void run_all(std::vector<UnitCompile>& compiles, int jobs) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < compiles.size(); i = next++) {
      try {
        compiles[i].result = run_process(compiles[i].argv);
      } catch (...) {
        compiles[i].error = std::current_exception();
      }
    }
  };
  const size_t threads = std::min(compiles.size(), static_cast<size_t>(std::max(jobs, 1)));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();  // this thread is one of them
  for (std::thread& t : pool)
    t.join();
}

}  // namespace

void build_from_units(const UnitsBuild& build, const std::vector<std::string>& units,
                      const std::string& out_so) {
  TempFiles temps;
  std::vector<std::string> sources, objects;
  const std::string prefix = build.dir + "/" + build.stem;
  for (size_t i = 0; i < units.size(); ++i) {
    sources.push_back(temps.make(fmt::format("{}.XXXXXX.u{}.cpp", prefix, i),
                                 static_cast<int>(fmt::format(".u{}.cpp", i).size())));
    write_file(sources.back(), units[i]);
    objects.push_back(temps.make(prefix + ".XXXXXX.o", 2));
  }
  std::vector<UnitCompile> compiles(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    std::vector<std::string>& argv = compiles[i].argv;
    argv = {build.cxx};
    argv.insert(argv.end(), build.flags.begin(), build.flags.end());
    argv.insert(argv.end(), {"-fPIC", "-c", "-o", objects[i], sources[i]});
  }
  run_all(compiles, build.jobs);

  for (size_t i = 0; i < units.size(); ++i) {
    if (compiles[i].error) std::rethrow_exception(compiles[i].error);
    const ProcessResult& r = compiles[i].result;
    if (r.exit_code == 0) continue;
    // Keep the failing unit (readable and reproducible by hand).
    const std::string kept = fmt::format("{}.unit{}.cpp", prefix, i);
    std::string shown = sources[i];
    if (::rename(sources[i].c_str(), kept.c_str()) == 0) {
      temps.release(sources[i]);
      shown = kept;
    }
    throw UserError(fmt::format(
        "the C++ compiler failed (exit {}) on translation unit {} of {} of the generated "
        "module; unit kept at {} (the whole module at {})\ncommand: {}\n{}",
        r.exit_code, i, units.size(), shown, build.kept_module, command_line(compiles[i].argv),
        first_lines(r.output)));
  }

  std::vector<std::string> link = {build.cxx};
  link.insert(link.end(), build.flags.begin(), build.flags.end());
  link.insert(link.end(), {"-fPIC", "-shared", "-o", out_so});
  link.insert(link.end(), objects.begin(), objects.end());
  link.insert(link.end(), build.link_flags.begin(), build.link_flags.end());
  const ProcessResult r = run_process(link);
  if (r.exit_code != 0)
    throw UserError(fmt::format(
        "linking the {} translation units of the generated module failed (exit {}); the whole "
        "module is kept at {}\ncommand: {}\n{}",
        units.size(), r.exit_code, build.kept_module, command_line(link), first_lines(r.output)));
}

}  // namespace autofuse::jit
