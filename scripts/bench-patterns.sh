#!/usr/bin/env bash
# Benchmarks the pattern suite (examples/patterns/, docs/patterns.md): each
# pattern fused vs unfused at a medium shape and a large one (>= 64 MiB of
# graph inputs + outputs), with the bandwidth of the bytes that must move as
# a % of STREAM triad measured in the same run (`autofuse bench`). Prints a
# markdown table, one row per pattern and shape. Not run in CI: timings need
# a quiet machine.
#
# Usage: scripts/bench-patterns.sh [--bin PATH] [--reps R] [PATTERN...]
#   --bin   the autofuse binary (default build/release/autofuse)
#   --reps  timed repetitions per executable and shape (default: bench's
#           adaptive ~1 s); small values (3-10) on a loaded machine
#   PATTERN names from examples/patterns/ without .af (default: all)
# Kernels are compiled through the JIT cache ($AUTOFUSE_CACHE_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build/release/autofuse
reps=()
selected=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --reps) reps=(--reps "$2"); shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "bench-patterns: unknown option $1" >&2; exit 2 ;;
    *) selected+=("$1"); shift ;;
  esac
done
[ -x "$bin" ] || { echo "bench-patterns: no binary $bin (build it, or pass --bin)" >&2; exit 2; }

# pattern | medium shape | large shape. Large shapes move >= 64 MiB (inputs
# read once + outputs written once, as bench counts them). bert_embeddings:
# bench counts the whole word table as read, so V is kept at 4096 (12 MiB)
# rather than BERT's 30522 to keep the % of STREAM meaningful.
shapes=(
  "skip_layernorm      B=4,S=128        B=16,S=512"
  "rmsnorm             B=4,S=128        B=32,S=512"
  "softmax_mask        B=2,S=128        B=8,S=384"
  "swiglu              B=4,S=128        B=16,S=512"
  "rotary              B=4,S=128        B=16,S=1024"
  "attention_transpose B=4,S=128        B=16,S=1024"
  "bert_embeddings     B=4,S=128,V=4096 B=64,S=512,V=4096"
  "dlrm_concat         B=2048           B=32768"
  "batchnorm_stats     N=4096           N=65536"
  "mse                 N=1024,D=1024    N=16384,D=1024"
  "chain30             N=1024,D=1024    N=16384,D=1024"
)

known=" $(for line in "${shapes[@]}"; do echo -n "${line%% *} "; done)"
for name in ${selected[@]+"${selected[@]}"}; do
  [[ "$known" == *" $name "* ]] || { echo "bench-patterns: no pattern '$name' (known:$known)" >&2; exit 2; }
done

# Formats bench --json (stdin) as table rows; argv: pattern name, then the shapes in order.
format_rows=$(
  cat <<'PY'
import json, sys
name, shapes, doc = sys.argv[1], sys.argv[2:], json.loads(sys.stdin.read())
kernels = f"{doc['kernels']} / {doc['unfused_kernels']}"
for shape, r in zip(shapes, doc["results"]):
    print(f"| {name} | {shape} | {r['bytes'] / 2**20:.1f} | {kernels} | {r['fused_ms']:.3f} "
          f"| {r['unfused_ms']:.3f} | {r['speedup']:.2f}x | {r['gbps']:.1f} "
          f"| {r['pct_of_stream']:.0f}% |")
PY
)

echo "| pattern | shape | MiB moved | kernels (fused / unfused) | fused ms | unfused ms | speedup | GB/s | % of STREAM triad |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for line in "${shapes[@]}"; do
  read -r name medium large <<<"$line"
  if [ ${#selected[@]} -gt 0 ] && [[ " ${selected[*]} " != *" $name "* ]]; then continue; fi
  # One bench run per pattern: both shapes share the compiles and the STREAM figure.
  if ! json=$("$bin" bench "examples/patterns/$name.af" --shape "$medium" --shape "$large" \
    ${reps[@]+"${reps[@]}"} --json); then
    echo "| $name | (bench failed) | | | | | | | |"
    continue
  fi
  python3 -c "$format_rows" "$name" "$medium" "$large" <<<"$json"
done
