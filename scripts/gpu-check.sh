#!/usr/bin/env bash
# scripts/gpu-check.sh: oxmera on a machine with an NVIDIA GPU, in one go.
#
# Runs from binaries built elsewhere and carried over (no Rust toolchain
# needed here): build them where cargo is, e.g.
#
#   cargo build --release -p oxmera-cli --features cuda,wgpu
#   cargo build --release -p oxmera-bench --features cuda,wgpu
#
# and run this script beside the checkout (it reads README.md for the
# user-kernel section). Each section has a time budget; the whole stays
# under 8 minutes. Results go to DIR: one log per section and summary.txt
# (section, exit status, seconds), which docs/bench.md quotes with the part,
# the driver and the date. The exit status is 0 when every section passed,
# 1 when one failed or ran out of its budget.
#
#   scripts/gpu-check.sh [--out DIR] [--bin PATH/TO/oxmera]
#                        [--bench PATH/TO/oxmera-bench] [--device cuda|wgpu]
#
# Without a CUDA driver it stops after the first section with the driver's
# BackendUnavailable message and exit status 2. `--device wgpu` runs the
# same sections on a wgpu adapter (lavapipe will do), to try the script on
# a machine with no NVIDIA GPU. Later GPU work adds a
# section by dropping an executable `scripts/gpu-check.d/NAME.sh`; it is
# run with OX (the binary) and OUT (the directory) in its environment and a
# budget of 120 s, or the one its `# budget: N` line sets. A section that
# exits 77 is recorded as skipped (the ladder's "needs hardware" code),
# not as a failure. `gpu-check.d/ladder.sh` runs the ladder's GPU rungs'
# solutions (D2; C1-C2 on a wgpu adapter) and needs cargo here;
# `gpu-check.d/tune.sh` runs `oxmera kernel tune` for matmul_tiled and flip
# on the device, its reports into DIR (docs/bench.md's CUDA rows).
set -uo pipefail
cd "$(dirname "$0")/.."
# The user's tuning cache never decides the launches checked here (the
# defaults are what docs/bench.md quotes); gpu-check.d/tune.sh points it at
# a file of its own in DIR.
export OXMERA_TUNE_CACHE=off

out=gpu-check-out
ox=${OXMERA_BIN:-target/release/oxmera}
bench=${OXMERA_BENCH_BIN:-target/release/oxmera-bench}
device=cuda
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --bin) ox=$2; shift 2 ;;
        --bench) bench=$2; shift 2 ;;
        --device) device=$2; shift 2 ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ ! -x "$ox" ]; then
    echo "gpu-check: no oxmera binary at $ox (build it with --features cuda, or pass --bin)" >&2
    exit 2
fi
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
failures=0
echo "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) with $ox" | tee -a "$summary"

# section NAME BUDGET_S COMMAND...: runs COMMAND (a program or a function
# below) under a time budget, its output into DIR/NAME.log, and records how
# it ended.
section() {
    local name=$1 budget=$2
    shift 2
    local start rc
    start=$(date +%s)
    timeout "$budget" bash -c '"$@"' bash "$@" > "$out/$name.log" 2>&1
    rc=$?
    local took=$(( $(date +%s) - start ))
    [ $rc -eq 124 ] && echo "(stopped at its budget of ${budget} s)" >> "$out/$name.log"
    # 77 is "needs hardware / skipped" (the ladder's code): said as such,
    # neither a failure nor a pass.
    [ $rc -ne 0 ] && [ $rc -ne 77 ] && failures=$((failures + 1))
    local note=""
    [ $rc -eq 77 ] && note="  skipped: $(tail -n 1 "$out/$name.log")"
    printf '%-28s exit %-3s %4s s (budget %s s)%s\n' "$name" "$rc" "$took" "$budget" "$note" | tee -a "$summary"
    return $rc
}

# 1. The part and the driver; without a driver, stop here, cleanly.
section doctor 30 "$ox" doctor --gpu
sed -n '/^GPUs/,$p' "$out/doctor.log"
if [ "$device" = cuda ] && grep -q 'no CUDA driver\|no CUDA support' "$out/doctor.log"; then
    echo "gpu-check: stopped: $(grep -m1 -o 'no CUDA.*' "$out/doctor.log")" | tee -a "$summary"
    exit 2
fi

# 2. Every library kernel's seeded demo on the GPU beside the simulator
#    (flip is divergent at its first block on purpose).
kernels() {
    local failed=0
    for k in $("$ox" kernel list | awk '$1 == "library" && $2 != "flip" { print $2 }'); do
        if ! "$ox" kernel run "$k" --device "$device"; then
            echo "FAILED: $k"
            failed=1
        fi
    done
    return $failed
}
export -f kernels
export ox device
section kernels 90 kernels

# 3. The README's own kernel, from a file, on the GPU beside the simulator.
readme_kernel() {
    local dir
    dir=$(mktemp -d)
    awk '/^## GPU kernels without a GPU/{f=1} f&&/^```rust/{r=1;next} r&&/^```/{exit} r' README.md > "$dir/my_kernels.rs"
    "$ox" kernel run "$dir/my_kernels.rs" add --block 64 --grid 16 \
        --arg n=1000 --arg a=rand:n --arg b=iota:n --arg out=zeros:n --device "$device"
}
export -f readme_kernel
section readme_kernel 30 readme_kernel

# 4. The conformance corpus on the device: the GPU op layer's launches,
#    and the host fallback (counted) where it has no kernel.
section conformance 150 "$ox" conformance --device "$device"

# 5. Training, one epoch each, on the device.
section train_mlp 90 "$ox" train --device "$device" --epochs 1 --out "$out/train-mlp"
section train_cnn 90 "$ox" train --device "$device" --model cnn --epochs 1 --out "$out/train-cnn"

# 5b. The bench's rows for the device, each a ratio in one run: on CUDA
#    add and sum over 256M f32, softmax and layer norm 8192² against the
#    GPU's copy bandwidth, matmul 4096 against cuBLAS (where installed),
#    the MLP step against the CPU backend (oxmera-bench's cuda.rs).
bench_rows() {
    if [ ! -x "$bench" ]; then
        echo "no oxmera-bench binary at $bench (build it with --features cuda,wgpu, or pass --bench)"
        return 77
    fi
    "$bench" --only "$device" --no-python --out "$out/bench"
}
export -f bench_rows
export bench out
section bench 180 bench_rows

# 6. The wgpu rows, where the machine also has a Vulkan driver and the
#    binary was built with wgpu.
if [ "$device" = cuda ] && grep -q '^  wgpu:0' "$out/doctor.log"; then
    section wgpu_conformance 120 "$ox" conformance --device wgpu
fi

# 7. Sections later work adds; a `# budget: N` line in one sets its
#    budget (seconds), 120 without. ladder.sh runs the ladder's GPU rungs.
for extra in scripts/gpu-check.d/*.sh; do
    [ -x "$extra" ] || continue
    budget=$(sed -n 's/^# budget: \([0-9][0-9]*\)$/\1/p' "$extra" | head -n 1)
    OX="$ox" OUT="$out" section "extra_$(basename "$extra" .sh)" "${budget:-120}" "$extra"
done

echo "gpu-check: done, $failures section(s) failed; see $summary" | tee -a "$summary"
[ "$failures" -eq 0 ]
