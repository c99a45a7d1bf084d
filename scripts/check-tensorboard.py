#!/usr/bin/env python3
"""Checks `oxmera train --tensorboard DIR --metrics-jsonl FILE` with
TensorBoard's own reader (the `tensorboard` package's EventAccumulator).

usage: check-tensorboard.py RUN_DIR TB_DIR JSONL

- every epoch scalar equals metrics.json's figure for that epoch (the event
  file stores scalars as float32, so equal after rounding to float32);
- every `train/loss` point equals the JSON-lines stream's loss at its step;
- a copy of the newest event file cut inside its last record, as a kill
  would leave it, still loads every event before the cut.
"""
import json
import os
import shutil
import struct
import sys
import tempfile

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def load(logdir):
    ea = EventAccumulator(logdir, size_guidance={"scalars": 0, "histograms": 0})
    ea.Reload()
    return ea


def main(run_dir, tb_dir, jsonl):
    metrics = json.load(open(os.path.join(run_dir, "metrics.json")))
    epochs = metrics["epochs"]
    ea = load(tb_dir)
    keys = ["loss", "train_accuracy", "test_accuracy"]
    with_loss = [row.get("test_loss") is not None for row in epochs]
    assert all(with_loss) or not any(with_loss), f"test_loss in only some epochs: {with_loss}"
    if all(with_loss):
        keys.append("test_loss")
    for key in keys:
        series = [e.value for e in ea.Scalars("epoch/" + key)]
        want = [f32(row[key]) for row in epochs]
        assert series == want, f"epoch/{key}: {series} != metrics.json's {want}"
    lines = [json.loads(l) for l in open(jsonl)]
    steps = {l["step"]: l["loss"] for l in lines if l["kind"] == "step"}
    points = ea.Scalars("train/loss")
    assert points, "no train/loss points"
    for p in points:
        assert p.value == f32(steps[p.step]), f"train/loss at {p.step}: {p.value} != {steps[p.step]}"
    histograms = ea.Tags()["histograms"]
    assert histograms, "no parameter histograms"
    print(f"tensorboard: {len(epochs)} epochs ({', '.join(keys)}) and {len(points)} steps equal metrics.json and "
          f"the stream; {len(histograms)} parameter histograms")

    # A kill in the middle of the last write.
    newest = max(f for f in os.listdir(tb_dir) if "tfevents" in f)
    with tempfile.TemporaryDirectory() as cut_dir:
        data = open(os.path.join(tb_dir, newest), "rb").read()
        open(os.path.join(cut_dir, newest), "wb").write(data[:-7])
        cut = load(cut_dir)
        whole_one = load_single(tb_dir, newest)
        before = sum(len(whole_one.Scalars(t)) for t in whole_one.Tags()["scalars"])
        after = sum(len(cut.Scalars(t)) for t in cut.Tags()["scalars"])
        whole_h = sum(len(whole_one.Histograms(t)) for t in whole_one.Tags()["histograms"])
        cut_h = sum(len(cut.Histograms(t)) for t in cut.Tags()["histograms"])
        # The last event (a histogram at the end of the last epoch) is lost;
        # everything before it loads.
        assert after == before and cut_h == whole_h - 1, (before, after, whole_h, cut_h)
        print(f"a file cut inside its last record: {after} scalars and {cut_h} of {whole_h} "
              "histograms still load")


def load_single(tb_dir, name):
    d = tempfile.mkdtemp()
    shutil.copy(os.path.join(tb_dir, name), d)
    return load(d)


if __name__ == "__main__":
    main(*sys.argv[1:4])
