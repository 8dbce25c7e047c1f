#!/bin/bash
# Each pattern of examples/patterns/ in f32, bf16 and f16 (every f32 type of
# the .af text replaced), fused, at its large shape: `autofuse bench`'s
# fused time in ms per dtype, one line per pattern. Finds a dtype whose
# kernels lag the others (docs/benchmarks.md, session 44).
#   bench/dtype_patterns.sh [--threads T] [PATTERN...]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=1
if [ "${1:-}" = "--threads" ]; then
  threads=$2
  shift 2
fi
bin=${AUTOFUSE_BIN:-build/release/autofuse}
declare -A shape=(
  [attention_transpose]=B=16,S=1024 [batchnorm_stats]=N=65536
  [bert_embeddings]=B=64,S=512,V=4096 [chain30]=N=16384,D=1024 [dlrm_concat]=B=32768
  [mse]=N=16384,D=1024 [rmsnorm]=B=32,S=512 [rotary]=B=16,S=1024
  [skip_layernorm]=B=16,S=512 [softmax_mask]=B=8,S=384 [swiglu]=B=16,S=512)
patterns=("$@")
[ ${#patterns[@]} -gt 0 ] || mapfile -t patterns < <(printf '%s\n' "${!shape[@]}" | sort)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in "${patterns[@]}"; do
  line="$p"
  for t in f32 bf16 f16; do
    sed "s/f32/$t/g" "examples/patterns/$p.af" >"$tmp/$p.af"
    ms=$("$bin" bench "$tmp/$p.af" --shape "${shape[$p]}" --threads "$threads" |
      grep -o 'fused [0-9.]* ms' | head -1 | awk '{print $2}')
    line+=" $t=$ms"
  done
  echo "$line"
done
