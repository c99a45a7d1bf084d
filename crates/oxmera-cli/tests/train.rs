//! `oxmera train` end to end: the files it writes, resuming to the same
//! bits as an uninterrupted run, and stopping on a non-finite loss.
//!
//! The runs are short (a few epochs of the procedural moons, or of digits)
//! so the suite stays fast in a debug build; what they check does not
//! depend on the length of the run.

mod training;

use std::process::{Command, Output};

use oxmera::Device;
use serde_json::Value;
use training::{figures, metrics, model_bits, succeed, train};

/// `oxmera ARGS…` (any subcommand), its output.
fn oxmera(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args(args)
        .output()
        .expect("the oxmera binary runs")
}

#[test]
fn a_run_writes_checkpoint_metrics_and_curves() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = succeed(&["--dataset", "digits", "--epochs", "2"], &out);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("test accuracy"), "summary line: {stdout}");

    let m = metrics(&out);
    assert_eq!(m["epochs"].as_array().unwrap().len(), 2);
    let acc = m["final_test_accuracy"]
        .as_f64()
        .expect("final test accuracy");
    // Two epochs on digits are far above chance (10%).
    assert!(acc > 0.5, "test accuracy after 2 epochs: {acc}");
    assert_eq!(m["config"]["dataset"], "digits");

    let png = std::fs::read(out.join("curves.png")).expect("curves.png written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(!model_bits(&out).is_empty());
}

#[test]
fn the_same_seed_gives_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let args = ["--dataset", "moons", "--epochs", "2", "--seed", "3"];
    succeed(&args, &a);
    succeed(&args, &b);
    assert_eq!(figures(&metrics(&a)), figures(&metrics(&b)));
    assert_eq!(model_bits(&a), model_bits(&b));
}

#[test]
fn resuming_from_an_epoch_checkpoint_ends_bit_identical() {
    // The uninterrupted run keeps its last three epochs' checkpoints;
    // resuming from the one after epoch 2 must retrace epochs 3 and 4 to
    // the same bits, under the default cosine schedule (whose rate at each
    // step comes from the restored step count) and with each optimizer.
    let dir = tempfile::tempdir().unwrap();
    for optimizer in ["sgd", "adam"] {
        let (whole, resumed) = (dir.path().join("whole"), dir.path().join("resumed"));
        let args = [
            "--dataset",
            "moons",
            "--optimizer",
            optimizer,
            "--epochs",
            "4",
        ];
        succeed(&args, &whole);
        let ckpt = whole.join("epoch-2.safetensors");
        let resume = ["--resume", ckpt.to_str().unwrap()];
        let o = succeed(&[&args[..], &resume[..]].concat(), &resumed);
        assert!(String::from_utf8_lossy(&o.stdout).contains("test accuracy"));

        let (w, r) = (metrics(&whole), metrics(&resumed));
        assert_eq!(figures(&w).len(), 4);
        assert_eq!(
            figures(&w),
            figures(&r),
            "{optimizer}: per-epoch figures differ"
        );
        assert_eq!(
            model_bits(&whole),
            model_bits(&resumed),
            "{optimizer}: weights differ"
        );
        // Only the last three epochs' checkpoints are kept.
        assert!(!whole.join("epoch-1.safetensors").exists());
        assert!(whole.join("epoch-4.safetensors").exists());
    }
}

#[test]
fn resuming_with_a_constant_rate_can_train_longer() {
    // Two epochs, then two more from the checkpoint, equal four at once.
    let dir = tempfile::tempdir().unwrap();
    let (whole, halves) = (dir.path().join("whole"), dir.path().join("halves"));
    let common = [
        "--dataset",
        "moons",
        "--schedule",
        "constant",
        "--lr",
        "0.05",
    ];
    succeed(&[&common[..], &["--epochs", "4"]].concat(), &whole);
    succeed(&[&common[..], &["--epochs", "2"]].concat(), &halves);
    let ckpt = halves.join("checkpoint.safetensors");
    let resume = ["--epochs", "4", "--resume", ckpt.to_str().unwrap()];
    succeed(&[&common[..], &resume[..]].concat(), &halves);
    assert_eq!(figures(&metrics(&whole)), figures(&metrics(&halves)));
    assert_eq!(model_bits(&whole), model_bits(&halves));
}

#[test]
fn resuming_with_other_settings_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    succeed(&["--dataset", "moons", "--epochs", "1"], &out);
    let ckpt = out.join("checkpoint.safetensors");
    // Another learning rate; and, under the cosine schedule, another
    // epoch count (it sets every step's rate).
    for other in [
        ["--epochs", "1", "--lr", "0.5"],
        ["--epochs", "2", "--lr", "0.1"],
    ] {
        let resume = ["--resume", ckpt.to_str().unwrap()];
        let o = train(
            &[&["--dataset", "moons"][..], &other[..], &resume[..]].concat(),
            &out,
        );
        assert_eq!(o.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("other settings"), "{stderr}");
    }
}

#[test]
fn a_non_finite_loss_stops_training_and_names_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = train(
        &[
            "--dataset",
            "moons",
            "--optimizer",
            "sgd",
            "--lr",
            "1e30",
            "--epochs",
            "3",
        ],
        &out,
    );
    assert_eq!(o.status.code(), Some(1), "exit code 1 on divergence");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("training stopped: the loss became"),
        "{stderr}"
    );
    assert!(stderr.contains("at step "), "{stderr}");
    assert!(stderr.contains("--lr"), "suggests a remedy: {stderr}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    for args in [
        &["--batch-size", "0"][..],
        &["--lr", "-1"][..],
        &["--dataset", "mnist"][..],
        &["--device", "tpu"][..],
        &["--model", "cnn", "--dataset", "moons"][..],
    ] {
        let o = train(args, &out);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
}

#[test]
fn a_device_with_services_only_trains_through_the_fallback_and_says_so() {
    // `loopback` computes nothing itself: every op runs on the reference
    // through the host fallback, so its run is the reference's, bit for
    // bit, and ends with the report of which ops fell back.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = ["--dataset", "moons", "--epochs", "2"];
    let o = succeed(&[&args[..], &["--device", "loopback"]].concat(), a.path());
    succeed(&[&args[..], &["--device", "reference"]].concat(), b.path());
    assert_eq!(figures(&metrics(a.path())), figures(&metrics(b.path())));
    assert_eq!(model_bits(a.path()), model_bits(b.path()));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("ops that ran on the host for loopback:0"),
        "{stdout}"
    );
    assert!(stdout.contains("matmul"), "{stdout}");
}

#[test]
fn a_run_cleans_what_a_killed_run_left_and_writes_whole_files() {
    // A run killed inside a write leaves a hidden temporary file (its
    // outputs are renamed into place, so they are whole); the next run in
    // the same directory removes those and nothing else.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    std::fs::write(out.join(".metrics.json.4242.0.tmp"), b"{\"epo").unwrap();
    std::fs::write(out.join(".curves.4242.1.tmp.png"), b"").unwrap();
    std::fs::write(out.join(".checkpoint.safetensors.4242.2.tmp"), b"x").unwrap();
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    succeed(&["--dataset", "moons", "--epochs", "1"], out);
    let mut names: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') || n == "notes.txt")
        .collect();
    names.sort();
    assert_eq!(names, vec!["notes.txt"], "temporary files left behind");
    metrics(out);
    let png = std::fs::read(out.join("curves.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a whole PNG");
}

#[test]
fn tensorboard_and_the_metrics_stream_follow_a_run_and_its_resume() {
    use oxmera_tensorboard::record::read_events;
    let dir = tempfile::tempdir().unwrap();
    let (out, tb, jsonl) = (
        dir.path().join("run"),
        dir.path().join("tb"),
        dir.path().join("m.jsonl"),
    );
    let common = [
        "--dataset",
        "moons",
        "--schedule",
        "constant",
        "--lr",
        "0.05",
        "--log-every",
        "3",
        "--tensorboard",
        tb.to_str().unwrap(),
        "--metrics-jsonl",
        jsonl.to_str().unwrap(),
    ];
    succeed(&[&common[..], &["--epochs", "1"]].concat(), &out);
    let ckpt = out.join("checkpoint.safetensors");
    let resume = ["--epochs", "2", "--resume", ckpt.to_str().unwrap()];
    succeed(&[&common[..], &resume[..]].concat(), &out);

    // Two event files (the resumed run adds one); together they hold each
    // epoch's test accuracy as metrics.json has it (as f32), steps rising.
    let mut files: Vec<_> = std::fs::read_dir(&tb)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    let mut test_acc = Vec::new();
    for f in &files {
        let events = read_events(f).unwrap();
        assert!(events.torn_tail.is_none());
        test_acc.extend(
            events
                .scalars
                .iter()
                .filter(|p| p.tag == "epoch/test_accuracy")
                .map(|p| (p.step, p.value)),
        );
    }
    let m = metrics(&out);
    let want: Vec<f32> = m["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["test_accuracy"].as_f64().unwrap() as f32)
        .collect();
    assert_eq!(test_acc.iter().map(|p| p.1).collect::<Vec<_>>(), want);
    assert!(
        test_acc[0].0 < test_acc[1].0,
        "steps continue: {test_acc:?}"
    );

    // The stream: step lines every third step (and the first), epoch lines
    // matching metrics.json, across both runs.
    let lines: Vec<Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let steps: Vec<u64> = lines
        .iter()
        .filter(|l| l["kind"] == "step")
        .map(|l| l["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps[0], 1);
    assert!(steps[1..].iter().all(|s| s % 3 == 0), "{steps:?}");
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
    let epochs: Vec<f64> = lines
        .iter()
        .filter(|l| l["kind"] == "epoch")
        .map(|l| l["test_accuracy"].as_f64().unwrap())
        .collect();
    let want: Vec<f64> = m["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["test_accuracy"].as_f64().unwrap())
        .collect();
    assert_eq!(epochs, want);
    let first = &lines[0];
    for key in ["loss", "accuracy", "lr", "grad_norm", "seconds"] {
        assert!(first[key].is_number(), "{key} in {first}");
    }
    // --log-every 0 is a usage error.
    let o = train(
        &["--dataset", "moons", "--log-every", "0"],
        &dir.path().join("x"),
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn eval_scores_a_checkpoint_as_the_run_scored_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    succeed(&["--dataset", "moons", "--epochs", "2"], &out);
    let ckpt = out.join("checkpoint.safetensors");
    let o = oxmera(&["eval", ckpt.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let m = metrics(&out);
    let acc = m["epochs"].as_array().unwrap().last().unwrap()["test_accuracy"]
        .as_f64()
        .unwrap();
    assert!(
        stdout.contains(&format!("accuracy {:.2}%", 100.0 * acc)),
        "{stdout}"
    );
    // Two classes: a 2 x 2 matrix whose counts add up to the test split.
    let rows: Vec<u64> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with(['0', '1']) && l.split_whitespace().count() == 3)
        .flat_map(|l| {
            l.split_whitespace()
                .skip(1)
                .map(|c| c.parse::<u64>().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    assert!(stdout.contains(&format!("on {} samples", rows.iter().sum::<u64>())));
    assert!(std::fs::metadata(out.join("confusion.png")).unwrap().len() > 0);
    // A file that is not a checkpoint is an error, not a panic.
    let bogus = dir.path().join("bogus.safetensors");
    std::fs::write(&bogus, b"not a checkpoint").unwrap();
    let o = oxmera(&["eval", bogus.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn export_writes_an_onnx_model_and_a_sample() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    succeed(&["--dataset", "moons", "--epochs", "1"], &out);
    let onnx = dir.path().join("moons.onnx");
    let o = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args([
            "export",
            out.join("checkpoint.safetensors").to_str().unwrap(),
        ])
        .arg(&onnx)
        .args(["--sample", "5"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&onnx).unwrap();
    // ModelProto field 1 (ir_version) = 7 comes first.
    assert_eq!(&bytes[..2], &[0x08, 7]);
    // The three 512-wide layers' f32 weights are all in it.
    assert!(bytes.len() > 4 * (2 * 512 + 512 * 512 + 512 * 2));
    for suffix in ["inputs", "logits"] {
        let npy = std::fs::read(dir.path().join(format!("moons.onnx.{suffix}.npy"))).unwrap();
        assert_eq!(&npy[..6], b"\x93NUMPY");
        // Moons: two features in, two classes out.
        assert!(String::from_utf8_lossy(&npy[10..80]).contains("(5, 2)"));
    }
    // A missing checkpoint is an error with exit code 2.
    let o = oxmera(&["export", "no-such.safetensors", "x.onnx"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_command_line_says_what_is_true() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    // --epochs 0 trains nothing and wrote no checkpoint: a usage error now.
    let o = train(
        &["--dataset", "moons", "--epochs", "0"],
        &dir.path().join("e0"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--epochs must be at least 1"));
    // --lr -1 reaches the positive-number check (was clap's "unexpected argument").
    let o = train(
        &["--dataset", "moons", "--lr", "-1"],
        &dir.path().join("lr"),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--lr must be a positive number"),
        "{}",
        stderr(&o)
    );
    // A batch larger than the data set is said, not silently shrunk.
    let o = Command::new(env!("CARGO_BIN_EXE_oxmera"))
        .args([
            "train",
            "--dataset",
            "moons",
            "--epochs",
            "1",
            "--batch-size",
            "100000",
        ])
        .arg("--out")
        .arg(dir.path().join("big"))
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(stderr(&o).contains("is larger than the"), "{}", stderr(&o));
    // A finite loss that does not come down is warned about, with the hint.
    let o = train(
        &[
            "--dataset",
            "moons",
            "--optimizer",
            "adam",
            "--lr",
            "50",
            "--epochs",
            "1",
        ],
        &dir.path().join("stuck"),
    );
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("the run is not learning"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("--lr"));
    // A healthy run gets no such warning.
    let o = train(
        &["--dataset", "moons", "--epochs", "2"],
        &dir.path().join("ok"),
    );
    assert!(!stderr(&o).contains("not learning"), "{}", stderr(&o));
    // Resuming at the checkpoint's epochs trains nothing and writes the
    // run's outputs (what finishes a run killed in its last writes); past
    // them, --epochs cannot be the total (and under the cosine schedule
    // the settings differ too): refused.
    let ckpt = dir.path().join("ok/checkpoint.safetensors");
    let resume = |epochs: &str, out: &str| {
        train(
            &[
                "--dataset",
                "moons",
                "--epochs",
                epochs,
                "--resume",
                ckpt.to_str().unwrap(),
            ],
            &dir.path().join(out),
        )
    };
    let o = resume("2", "again");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        figures(&metrics(&dir.path().join("again"))),
        figures(&metrics(&dir.path().join("ok")))
    );
    assert_eq!(
        model_bits(&dir.path().join("again")),
        model_bits(&dir.path().join("ok"))
    );
    let o = resume("1", "past");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_data_set_without_samples_is_refused_before_training() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("empty-mnist");
    std::fs::create_dir_all(&data).unwrap();
    let header = |magic: u32, dims: &[u32]| -> Vec<u8> {
        let mut b = magic.to_be_bytes().to_vec();
        for d in dims {
            b.extend(d.to_be_bytes());
        }
        b
    };
    for prefix in ["train", "t10k"] {
        std::fs::write(
            data.join(format!("{prefix}-images-idx3-ubyte")),
            header(0x803, &[0, 28, 28]),
        )
        .unwrap();
        std::fs::write(
            data.join(format!("{prefix}-labels-idx1-ubyte")),
            header(0x801, &[0]),
        )
        .unwrap();
    }
    let o = train(
        &["--dataset", "mnist", "--data", data.to_str().unwrap()],
        &dir.path().join("out"),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has no samples"), "{stderr}");
}

#[test]
fn an_inconsistent_or_non_finite_checkpoint_is_refused_on_resume_naming_the_key() {
    use std::collections::BTreeMap;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let args = [
        "--dataset",
        "moons",
        "--schedule",
        "constant",
        "--lr",
        "0.05",
    ];
    succeed(&[&args[..], &["--epochs", "2"]].concat(), &out);
    let good = oxmera_checkpoint::load(out.join("checkpoint.safetensors"), Device::Cpu).unwrap();
    // Each case: a damaged copy, and the key its refusal must name.
    type Tamper = Box<dyn Fn(&mut BTreeMap<String, oxmera::Tensor>, &mut BTreeMap<String, String>)>;
    let cases: Vec<(&str, Tamper)> = vec![
        (
            "\"step\"",
            Box::new(|_, m| {
                m.insert("step".into(), i64::MAX.to_string());
            }),
        ),
        (
            "\"train_history\"",
            Box::new(|_, m| {
                // 100,000 epochs of history in a checkpoint that says 2.
                let history: serde_json::Value = serde_json::from_str(&m["train_history"]).unwrap();
                let row = history[0][0].clone();
                let rows: Vec<serde_json::Value> = (1..=100_000)
                    .map(|e| {
                        let mut r = row.clone();
                        r["epoch"] = e.into();
                        r
                    })
                    .collect();
                m.insert(
                    "train_history".into(),
                    serde_json::json!([rows, history[1]]).to_string(),
                );
            }),
        ),
        (
            "\"optim.1.weight\"",
            Box::new(|t, _| t.retain(|k, _| !k.starts_with("optim.1.weight."))),
        ),
        (
            "1.weight holds non-finite values",
            Box::new(|t, _| {
                let nan = t["model.1.weight"].mul_scalar(f64::NAN).unwrap();
                t.insert("model.1.weight".into(), nan);
            }),
        ),
    ];
    for (key, tamper) in cases {
        let (mut tensors, mut metadata) = (good.tensors.clone(), good.metadata.clone());
        tamper(&mut tensors, &mut metadata);
        let bad = dir.path().join("bad.safetensors");
        oxmera_checkpoint::save(&bad, &tensors, &metadata).unwrap();
        let o = train(
            &[
                &args[..],
                &["--epochs", "4", "--resume", bad.to_str().unwrap()],
            ]
            .concat(),
            &dir.path().join("resumed"),
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{key}: {stderr}");
        assert!(stderr.contains(key), "{key}: {stderr}");
        // Refused before training: nothing was written to the fresh --out.
        assert!(
            !dir.path().join("resumed/checkpoint.safetensors").exists(),
            "{key}"
        );
    }
}
