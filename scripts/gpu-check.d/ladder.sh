#!/usr/bin/env bash
# budget: 420
# The ladder's GPU rungs, their authors' solutions against their specs on
# this machine's GPU, and for D2 and D3 each named wrong solution too,
# which must fail (without a driver `ladder verify` counts them unchecked,
# so this is where they are checked): D2 (run and measure) and D3 (tune:
# the solution's stencil tuned, each configuration timed with CUDA events) on cuda:0
# through the CUDA driver, and C1-C2 (elementwise, reduction) on the wgpu
# adapter when the doctor found one (NVIDIA's Vulkan driver: subgroups of 32). Run by
# scripts/gpu-check.sh with OX and OUT set; the budget line above is read
# there (the specs are built here, with cargo, into target/ladder: most
# of the budget; the tests take seconds).
#
# The specs are built in a scratch copy of exercises/ with each solution as
# its src/lib.rs, so a learner's files are never touched. With
# OXMERA_REQUIRE_CUDA=1 and OXMERA_REQUIRE_GPU=1 a missing device fails
# the spec instead of exiting 77 ("needs hardware"). Without cargo the
# section exits 77 itself: skipped, never passed.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
if ! command -v cargo >/dev/null 2>&1; then
    echo "skipped: no cargo on this machine (the ladder's specs are built here)"
    exit 77
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tar -C "$root" --exclude=target --exclude='.backup' -cf - exercises | tar -C "$scratch" -xf -
# The workspace's paths to oxmera's crates, made absolute for the copy.
sed -i "s#path = \"\.\./crates/#path = \"$root/crates/#" "$scratch/exercises/Cargo.toml"
# `gpu-check.sh --device wgpu` (a machine with no NVIDIA GPU) runs tier C
# only; its `device` is exported to this script.
rungs=""
[ "${device:-cuda}" = cuda ] && rungs="d2-run-and-measure d3-tune"
if [ -n "${OUT:-}" ] && grep -q '^  wgpu:0' "$OUT/doctor.log" 2>/dev/null; then
    rungs="$rungs c1-gpu-elementwise c2-gpu-reduction"
fi
failed=0
if [ -z "$rungs" ]; then
    echo "skipped: no CUDA device asked for and no wgpu adapter found"
    exit 77
fi
for rung in $rungs; do
    cp "$scratch/exercises/$rung/solution/lib.rs" "$scratch/exercises/$rung/src/lib.rs"
    package=$(sed -n 's/^name = "\(ladder-[a-z0-9]*\)"$/\1/p' "$scratch/exercises/$rung/Cargo.toml")
    echo "--- $rung ($package): the solution against the spec"
    start=$(date +%s)
    if ! OXMERA_REQUIRE_CUDA=1 OXMERA_REQUIRE_GPU=1 XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}" \
        cargo test -q --manifest-path "$scratch/exercises/Cargo.toml" \
        --target-dir "$root/target/ladder" -p "$package" --test spec -- --nocapture; then
        echo "FAILED: $rung"
        failed=1
    fi
    # Tier D's named wrong solutions, each of which only the GPU catches
    # (`ladder verify` counts them unchecked without a driver): each must
    # fail its spec here, where one is at hand.
    case $rung in
    d*)
        for wrong in "$scratch/exercises/$rung"/wrong/*.rs; do
            name=$(basename "$wrong" .rs)
            cp "$wrong" "$scratch/exercises/$rung/src/lib.rs"
            echo "--- $rung: the wrong solution $name must fail the spec"
            if OXMERA_REQUIRE_CUDA=1 cargo test -q --manifest-path "$scratch/exercises/Cargo.toml" \
                --target-dir "$root/target/ladder" -p "$package" --test spec >"$scratch/wrong.log" 2>&1; then
                echo "FAILED: $rung: the wrong solution $name passes the spec"
                failed=1
            else
                echo "ok: $name fails: $(grep -m1 -E 'panicked|error' "$scratch/wrong.log")"
            fi
        done
        ;;
    esac
    echo "($rung: $(( $(date +%s) - start )) s with its build)"
done
exit $failed
