#!/usr/bin/env bash
# Takes the screenshot of TensorBoard's scalars page that the README shows,
# in a real browser (Chromium, headless), on a real `oxmera train` run.
# Not run in CI (it trains for minutes and installs a browser); run it by
# hand from the repository's root to redo docs/img/tensorboard-scalars.png:
#
#   scripts/tensorboard-screenshot.sh [TRAIN ARGS...]
#
# Default TRAIN ARGS: the transformer on Shakespeare with its defaults.
# Needs: Debian's `chromium` (installed here with apt-get if missing) and
# TensorBoard 2.21 (from the same pinned cache directory CI uses).
set -euo pipefail

args=("$@")
run=run
if [ ${#args[@]} -eq 0 ]; then
    args=(--model transformer)
    run=transformer
fi
work=$(mktemp -d)
trap 'kill "${tb_pid:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT

if ! command -v chromium >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
obs_py="${HOME}/.cache/oxmera-observability-py"
if ! PYTHONPATH="$obs_py" python3 -c 'import tensorboard' 2>/dev/null; then
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
        --target "$obs_py" tensorboard==2.21.0
fi

cargo run --locked --release -q -p oxmera-cli -- train "${args[@]}" \
    --out "$work/run" --tensorboard "$work/tb/$run"
PYTHONPATH="$obs_py" python3 -m tensorboard.main --logdir "$work/tb" --port 6106 \
    >"$work/tensorboard.log" 2>&1 &
tb_pid=$!
for _ in $(seq 60); do
    curl -sf localhost:6106/data/runs >/dev/null && break
    sleep 1
done
mkdir -p docs/img
# The page draws its charts with JavaScript after it loads: give it 15 s of
# virtual time before the picture is taken.
chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1400,1500 --virtual-time-budget=15000 \
    --screenshot=docs/img/tensorboard-scalars.png "http://localhost:6106/#scalars" 2>/dev/null
echo "wrote docs/img/tensorboard-scalars.png ($(chromium --version 2>/dev/null))"
