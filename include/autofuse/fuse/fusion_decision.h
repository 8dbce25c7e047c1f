// A legality answer with the reason for a refusal (after XLA's FusionDecision).
#pragma once

#include <string>

namespace autofuse::fuse {

class FusionDecision {
 public:
  static FusionDecision allow() { return FusionDecision(""); }
  static FusionDecision refuse(std::string reason) { return FusionDecision(std::move(reason)); }
  bool ok() const { return reason_.empty(); }
  explicit operator bool() const { return ok(); }
  const std::string& reason() const { return reason_; }

 private:
  explicit FusionDecision(std::string reason) : reason_(std::move(reason)) {}
  std::string reason_;
};

}  // namespace autofuse::fuse
