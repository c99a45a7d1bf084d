#!/usr/bin/env bash
# Runs the simulator benchmark and the same kernels in numba's CUDA simulator
# (NUMBA_ENABLE_CUDASIM=1), then prints the speed ratio per kernel.
# Usage: crates/oxmera-kernel/bench/compare_numba.sh   (from the repository root)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${OXMERA_NUMBA_VENV:-${TMPDIR:-/tmp}/oxmera-numba-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet numba
fi
ours="$(cargo run --quiet --release -p oxmera-kernel --example sim_bench)"
theirs="$(NUMBA_ENABLE_CUDASIM=1 "$venv/bin/python" "$here/numba_sim.py")"
echo "$ours"
echo "$theirs"
for k in add reduce_sum; do
  a="$(echo "$ours" | awk -v k="$k" '$2 == k { print $(NF-1) }')"
  b="$(echo "$theirs" | awk -v k="$k" '$2 == k { print $(NF-1) }')"
  awk -v k="$k" -v a="$a" -v b="$b" 'BEGIN { printf "%s: oxmera simulator is %.0fx numba-cudasim (elements/s)\n", k, a / b }'
done
