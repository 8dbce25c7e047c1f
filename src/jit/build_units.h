// A shared object built from several translation units: each compiled to an
// object file by its own compiler process, a few at once, then one link. A
// graph's module then compiles in about the time of its largest unit
// instead of the sum of all (jit::compile_and_load, codegen's
// split_translation_units).
#pragma once

#include <string>
#include <vector>

namespace autofuse::jit {

struct UnitsBuild {
  std::string cxx;                      ///< the compiler's path
  std::vector<std::string> flags;       ///< for every compile and the link
  std::vector<std::string> link_flags;  ///< after the object files
  int jobs = 1;                         ///< compiler processes at once
  std::string dir;                      ///< temporaries and kept failing units go here
  std::string stem;                     ///< their names' prefix
  std::string kept_module;              ///< where the whole module's source is kept (for errors)
};

/// Compiles `units` into the shared object `out_so`. Temporary sources and
/// objects are removed. UserError with the compiler's command and output when
/// a unit fails (its source then kept at `<dir>/<stem>.unit<i>.cpp`; the
/// first failing unit in order is reported) or the link fails.
void build_from_units(const UnitsBuild& build, const std::vector<std::string>& units,
                      const std::string& out_so);

}  // namespace autofuse::jit
