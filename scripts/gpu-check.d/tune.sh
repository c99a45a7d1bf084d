#!/usr/bin/env bash
# budget: 240
# The tuner on this machine's GPU (issue 24): `oxmera kernel tune` for
# matmul_tiled and flip on the device gpu-check was asked for (cuda:0 by
# default; `gpu-check.sh --device wgpu` tunes on the wgpu adapter), each
# report as text and as --json in OUT:
#
#   tune-matmul_tiled-cuda.txt / .json   the rows docs/bench.md quotes:
#       every configuration's verdict and median, and the line "tuned ...
#       against the default ...: R" (the ratio in the same run)
#   tune-flip-cuda.txt / .json           blocks past one warp refused by
#       proof (OXK001), never launched; block 32 validated and timed
#   tune-cache.txt                       what the runs cached (the part's
#       identity, the kernel's IR hash, the best configuration)
#
# The cache is OUT's own (OXMERA_TUNE_CACHE), never the user's. The tune
# runs take seconds (each configuration's PTX JIT-compiled once, 2 warm-up
# and 9 timed launches). Where cargo is at hand, the CUDA crate's GPU tests
# follow (tests/on_gpu.rs: a launch timed by events, the part's identity;
# run with OXMERA_REQUIRE_CUDA=1, so a missing GPU fails them rather than
# skipping them), given 180 s for their build: a build that runs out is said as such and
# not counted against the tuner; without cargo they are left out, said as
# such. Run by scripts/gpu-check.sh with
# OX, OUT and device set; by hand, e.g.:
#
#   OX=target/release/oxmera OUT=gpu-check-out device=cuda scripts/gpu-check.d/tune.sh
#
# (`device=sim` runs the same steps on the simulator's cost model: a way to
# try the script with no GPU.)
set -uo pipefail
cd "$(dirname "$0")/../.."
ox=${OX:-target/release/oxmera}
out=${OUT:-gpu-check-out}
dev=${device:-cuda}
mkdir -p "$out"
export OXMERA_TUNE_CACHE="$out/tune-cache.txt"
failed=0
for k in matmul_tiled flip; do
    echo "--- oxmera kernel tune $k --device $dev"
    start=$(date +%s)
    # Text: shown here and kept; JSON: kept. Each a run of its own, so each
    # is a complete report (and the second confirms the first's ranking or
    # shows how much it moves between runs).
    if ! "$ox" kernel tune "$k" --device "$dev" | tee "$out/tune-$k-$dev.txt"; then
        echo "FAILED: tune $k (text)"
        failed=1
    fi
    if ! "$ox" kernel tune "$k" --device "$dev" --json > "$out/tune-$k-$dev.json"; then
        echo "FAILED: tune $k (--json)"
        failed=1
    fi
    echo "($k: $(( $(date +%s) - start )) s for both runs)"
done
echo "--- the cache ($OXMERA_TUNE_CACHE)"
cat "$OXMERA_TUNE_CACHE" 2>/dev/null || echo "(nothing cached)"
if [ "$dev" = cuda ] || [ "${dev%%:*}" = cuda ]; then
    if command -v cargo >/dev/null 2>&1; then
        echo "--- oxmera-cuda's tests on this GPU (cargo test --features cuda --test on_gpu)"
        start=$(date +%s)
        # OXMERA_REQUIRE_CUDA=1: with no GPU or driver the tests fail
        # rather than return early and count as passed.
        OXMERA_REQUIRE_CUDA=1 timeout 180 cargo test -q -p oxmera-cuda --features cuda --test on_gpu
        rc=$?
        if [ $rc -eq 124 ]; then
            echo "(oxmera-cuda on_gpu: its build ran past 180 s; not run, not a tuner failure)"
        elif [ $rc -ne 0 ]; then
            echo "FAILED: oxmera-cuda on_gpu"
            failed=1
        fi
        echo "(the tests: $(( $(date +%s) - start )) s with their build)"
    else
        echo "(no cargo here: the CUDA tuner's cargo tests were not run)"
    fi
fi
exit $failed
