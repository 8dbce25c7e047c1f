// Comparing an Executable's outputs with the reference interpreter's.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "autofuse/ref/tensor.h"

namespace autofuse::runtime {

/// Same count and types, and |got - want| <= rtol * (1 + |want|) per
/// element; `what` names the case in a failure.
inline void expect_outputs_near(const std::vector<HostTensor>& got,
                                const std::vector<HostTensor>& want, double rtol,
                                const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got[k].type_string(), want[k].type_string()) << what << ": output " << k;
    for (int64_t i = 0; i < want[k].numel(); ++i) {
      const double w = want[k].get_f64(i);
      ASSERT_NEAR(got[k].get_f64(i), w, rtol * (1 + std::abs(w)))
          << what << ": output " << k << " element " << i;
    }
  }
}

}  // namespace autofuse::runtime
