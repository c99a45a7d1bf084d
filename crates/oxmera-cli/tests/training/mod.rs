//! What the end-to-end tests of `oxmera train` share: running it, and
//! reading back the figures and weights a run leaves in its `--out`.

#![allow(dead_code)] // each test file uses its own part of this

use std::path::Path;
use std::process::{Command, Output};

use oxmera::{DType, Device};
use serde_json::Value;

/// `oxmera train ARGS… --out OUT --quiet`, its output.
pub fn train(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .arg("train")
        .args(args)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .output()
        .expect("the oxmera binary runs")
}

/// `oxmera train`, which must succeed; its output.
pub fn succeed(args: &[&str], out: &Path) -> Output {
    let o = train(args, out);
    assert!(
        o.status.success(),
        "oxmera train {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The run's `metrics.json`, parsed.
pub fn metrics(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("metrics.json")).expect("metrics.json written");
    serde_json::from_str(&text).expect("metrics.json is JSON")
}

/// The figures of every epoch that do not depend on the wall clock.
pub fn figures(m: &Value) -> Vec<(u64, u64, u64, u64)> {
    m["epochs"]
        .as_array()
        .expect("an epochs list")
        .iter()
        .map(|e| {
            let bits = |k: &str| e[k].as_f64().expect("a number").to_bits();
            (
                e["epoch"].as_u64().unwrap(),
                bits("loss"),
                bits("train_accuracy"),
                bits("test_accuracy"),
            )
        })
        .collect()
}

/// Every model tensor of the checkpoint in `out`, as raw bits.
pub fn model_bits(out: &Path) -> Vec<(String, Vec<u64>)> {
    let ckpt = oxmera::checkpoint::load(out.join("checkpoint.safetensors"), Device::Reference)
        .expect("the checkpoint loads");
    ckpt.with_prefix(oxmera::checkpoint::MODEL_PREFIX)
        .into_iter()
        .map(|(name, t)| {
            assert_eq!(t.dtype(), DType::F32);
            let bits = t
                .to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits() as u64)
                .collect();
            (name, bits)
        })
        .collect()
}
