//! `oxmera train --model transformer` and `oxmera sample` end to end, in
//! runs of a few small steps (a debug build is slow; CI runs a few hundred
//! steps in release and checks the loss falls well below chance).

mod training;

use std::process::{Command, Output};

use training::{figures, metrics, model_bits, succeed, train};

/// A few steps of small batches: enough to cross an epoch boundary, write
/// checkpoints and resume.
const SHORT: &[&str] = &[
    "--model",
    "transformer",
    "--steps-per-epoch",
    "3",
    "--batch-size",
    "2",
    "--schedule",
    "constant",
];

fn oxmera(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(args)
        .output()
        .expect("the oxmera binary runs")
}

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    SHORT.iter().chain(extra).copied().collect()
}

#[test]
fn a_run_records_validation_loss_and_the_model_its_checkpoint_needs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    succeed(&with(&["--epochs", "2"]), &out);
    let m = metrics(&out);
    assert_eq!(m["config"]["model"], "transformer");
    assert_eq!(m["config"]["dataset"], "shakespeare");
    assert_eq!(m["config"]["optimizer"], "adamw");
    let epochs = m["epochs"].as_array().unwrap();
    assert_eq!(epochs.len(), 2);
    let valid = m["final_test_loss"].as_f64().expect("a validation loss");
    // Six steps have barely started: the loss is near a uniform guess
    // (ln 76 = 4.33) and finite.
    assert!(valid.is_finite() && valid < 5.0, "validation loss {valid}");
    assert!(epochs[0]["test_loss"].as_f64().is_some());
    let ckpt =
        oxmera_checkpoint::load(out.join("checkpoint.safetensors"), oxmera::Device::Cpu).unwrap();
    let config: String = ckpt.metadata_value("model_config").unwrap();
    assert!(
        config.contains("context=64 width=128 heads=4 layers=4"),
        "{config}"
    );
    let vocab: String = ckpt.metadata_value("vocab").unwrap();
    assert_eq!(vocab.chars().count(), 76);
    assert!(
        ckpt.tensors
            .contains_key("model.blocks.3.attn.in_proj_weight")
    );
}

#[test]
fn a_resumed_run_ends_with_the_bits_of_an_uninterrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, part) = (dir.path().join("whole"), dir.path().join("part"));
    succeed(&with(&["--epochs", "2"]), &whole);
    succeed(&with(&["--epochs", "1"]), &part);
    let resume = part.join("checkpoint.safetensors");
    succeed(
        &with(&["--epochs", "2", "--resume", resume.to_str().unwrap()]),
        &part,
    );
    assert_eq!(figures(&metrics(&whole)), figures(&metrics(&part)));
    assert_eq!(model_bits(&whole), model_bits(&part));
}

#[test]
fn sample_continues_a_prompt_reproducibly_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    succeed(&with(&["--epochs", "1"]), &out);
    let ckpt = out.join("checkpoint.safetensors");
    let ckpt = ckpt.to_str().unwrap();
    let args = [
        "sample", ckpt, "--prompt", "ROMEO:", "--tokens", "40", "--seed", "3", "--top-k", "10",
    ];
    let first = oxmera(&args);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let text = String::from_utf8(first.stdout.clone()).unwrap();
    assert!(text.starts_with("ROMEO:"), "{text}");
    // The prompt, 40 characters, a newline.
    assert_eq!(text.chars().count(), "ROMEO:".len() + 40 + 1, "{text:?}");
    assert_eq!(
        oxmera(&args).stdout,
        first.stdout,
        "the same seed, the same text"
    );

    let unknown = oxmera(&["sample", ckpt, "--prompt", "ROMÉO"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("'É'"));
    let cold = oxmera(&["sample", ckpt, "--temperature", "0"]);
    assert_eq!(cold.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&cold.stderr).contains("temperature"));

    // A classifier's checkpoint is not a transformer's, and the reverse.
    let mlp = dir.path().join("mlp");
    succeed(&["--dataset", "moons", "--epochs", "1"], &mlp);
    let mlp_ckpt = mlp.join("checkpoint.safetensors");
    let wrong = oxmera(&["sample", mlp_ckpt.to_str().unwrap()]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("model_config"));
    let eval = oxmera(&["eval", ckpt]);
    assert_eq!(eval.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&eval.stderr).contains("oxmera sample"));

    // Export writes the graph and three validation windows with oxmera's
    // logits for every position (CI runs them in ONNX Runtime).
    let onnx = dir.path().join("t.onnx");
    let o = oxmera(&["export", ckpt, onnx.to_str().unwrap(), "--sample", "3"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("opset 17"));
    let npy_header = |suffix: &str| {
        let bytes = std::fs::read(dir.path().join(format!("t.onnx.{suffix}.npy"))).unwrap();
        String::from_utf8_lossy(&bytes[10..80]).into_owned()
    };
    let inputs = npy_header("inputs");
    assert!(
        inputs.contains("'<i8'") && inputs.contains("(3, 64)"),
        "{inputs}"
    );
    let logits = npy_header("logits");
    assert!(
        logits.contains("'<f4'") && logits.contains("(3, 64, 76)"),
        "{logits}"
    );
}

#[test]
fn mismatched_model_and_data_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let text_classifier = train(&["--dataset", "shakespeare"], &out);
    assert_eq!(text_classifier.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&text_classifier.stderr).contains("--model transformer"));
    let digits_lm = train(&["--model", "transformer", "--dataset", "digits"], &out);
    assert_eq!(digits_lm.status.code(), Some(2));
    let steps = train(&["--steps-per-epoch", "5"], &out);
    assert_eq!(steps.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&steps.stderr).contains("--steps-per-epoch"));
}
