//! Saving and loading gives back the same tensors, bit for bit.

use std::collections::BTreeMap;

use half::{bf16, f16};
use oxmera_checkpoint::{
    Checkpoint, MODEL_PREFIX, OPTIM_PREFIX, STEP_KEY, load, prefixed, rng_metadata, save, to_bytes,
};
use oxmera_core::{DType, Device};
use oxmera_reference as _;
use oxmera_tensor::{Generator, HostBuffer, Tensor};

fn t(host: HostBuffer, shape: &[usize]) -> Tensor {
    Tensor::from_host(host, shape.to_vec(), Device::Reference, "test").unwrap()
}

#[test]
fn every_dtype_round_trips_bit_exactly() {
    let nan_payload = f32::from_bits(0x7fc0_1234);
    let tensors = BTreeMap::from([
        (
            "f16".to_string(),
            t(
                HostBuffer::F16(vec![
                    f16::from_f32(1.5),
                    f16::NEG_INFINITY,
                    f16::MIN_POSITIVE_SUBNORMAL,
                ]),
                &[3],
            ),
        ),
        (
            "bf16".to_string(),
            t(
                HostBuffer::BF16(vec![bf16::from_f32(-2.25), bf16::NAN]),
                &[2],
            ),
        ),
        (
            "f32".to_string(),
            t(
                HostBuffer::F32(vec![nan_payload, -0.0, f32::MAX, 1e-45, 3.0, 4.0]),
                &[2, 3],
            ),
        ),
        (
            "f64".to_string(),
            t(
                HostBuffer::F64(vec![std::f64::consts::PI, f64::MIN_POSITIVE]),
                &[2, 1],
            ),
        ),
        (
            "i32".to_string(),
            t(HostBuffer::I32(vec![i32::MIN, -1, 0, i32::MAX]), &[2, 2]),
        ),
        (
            "i64".to_string(),
            t(HostBuffer::I64(vec![i64::MIN, i64::MAX]), &[2]),
        ),
        ("u8".to_string(), t(HostBuffer::U8(vec![0, 127, 255]), &[3])),
        (
            "bool".to_string(),
            t(HostBuffer::Bool(vec![true, false, true]), &[3]),
        ),
        ("scalar".to_string(), t(HostBuffer::F32(vec![42.0]), &[])),
        ("empty".to_string(), t(HostBuffer::F32(vec![]), &[0, 5])),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("all.safetensors");
    save(&path, &tensors, &BTreeMap::new()).unwrap();
    let back = load(&path, Device::Reference).unwrap();
    assert_eq!(back.tensors.len(), tensors.len());
    assert!(back.metadata.is_empty());
    for (name, original) in &tensors {
        let loaded = &back.tensors[name];
        assert_eq!(loaded.dims(), original.dims(), "{name}");
        assert_eq!(loaded.dtype(), original.dtype(), "{name}");
        // Compare the encoded bytes, which sees NaN payloads and -0.0.
        let one = |x: &Tensor| {
            to_bytes(
                &BTreeMap::from([("x".to_string(), x.clone())]),
                &BTreeMap::new(),
            )
            .unwrap()
        };
        assert_eq!(one(loaded), one(original), "{name}");
    }
    let f32s = back.tensors["f32"].to_vec::<f32>().unwrap();
    assert_eq!(f32s[0].to_bits(), 0x7fc0_1234);
    assert_eq!(f32s[1].to_bits(), (-0.0f32).to_bits());
}

#[test]
fn views_are_saved_in_logical_order() {
    let base = Tensor::from_vec(
        (0..12).map(|v| v as f32).collect(),
        [3, 4],
        Device::Reference,
    )
    .unwrap();
    let transposed = base.t().unwrap(); // [4, 3]: rows are base's columns
    let narrowed = base.narrow(1, 1, 2).unwrap(); // [3, 2]: columns 1 and 2
    assert!(!transposed.is_contiguous() && !narrowed.is_contiguous());
    let tensors = BTreeMap::from([("t".to_string(), transposed), ("n".to_string(), narrowed)]);
    let back = Checkpoint::from_bytes(
        &to_bytes(&tensors, &BTreeMap::new()).unwrap(),
        Device::Reference,
    )
    .unwrap();
    assert_eq!(back.tensors["t"].dims(), &[4, 3]);
    assert_eq!(
        back.tensors["t"].to_vec::<f32>().unwrap(),
        vec![0.0, 4.0, 8.0, 1.0, 5.0, 9.0, 2.0, 6.0, 10.0, 3.0, 7.0, 11.0]
    );
    assert_eq!(
        back.tensors["n"].to_vec::<f32>().unwrap(),
        vec![1.0, 2.0, 5.0, 6.0, 9.0, 10.0]
    );
    assert!(back.tensors["t"].is_contiguous());
}

#[test]
fn the_file_is_plain_safetensors() {
    // The exact bytes for one F32 tensor, as the format defines them: a
    // reader in any language (PyTorch's safetensors, candle) sees this.
    let w = Tensor::from_vec(vec![1.0f32, -2.0], [2], Device::Reference).unwrap();
    let bytes = to_bytes(&BTreeMap::from([("w".to_string(), w)]), &BTreeMap::new()).unwrap();
    let header = r#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    let padded = header.len().next_multiple_of(8);
    assert_eq!(&bytes[..8], &(padded as u64).to_le_bytes());
    assert_eq!(&bytes[8..8 + header.len()], header.as_bytes());
    assert!(
        bytes[8 + header.len()..8 + padded]
            .iter()
            .all(|&b| b == b' ')
    );
    assert_eq!(&bytes[8 + padded..], &[0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]);
}

#[test]
fn a_training_state_composes_with_prefixes_and_metadata() {
    let model = BTreeMap::from([
        (
            "0.weight".to_string(),
            Tensor::from_vec(vec![0.5f32; 6], [2, 3], Device::Reference).unwrap(),
        ),
        (
            "0.bias".to_string(),
            Tensor::from_vec(vec![0.1f32; 2], [2], Device::Reference).unwrap(),
        ),
    ]);
    let optim = BTreeMap::from([(
        "0.weight.exp_avg".to_string(),
        Tensor::from_vec(vec![0.01f32; 6], [2, 3], Device::Reference).unwrap(),
    )]);
    let generator = Generator::from_state(1234, 5678);
    let mut tensors = prefixed(MODEL_PREFIX, &model);
    tensors.extend(prefixed(OPTIM_PREFIX, &optim));
    let mut metadata = BTreeMap::from([(STEP_KEY.to_string(), "250".to_string())]);
    metadata.extend(rng_metadata(&generator));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.safetensors");
    save(&path, &tensors, &metadata).unwrap();
    let ckpt = load(&path, Device::Reference).unwrap();
    assert!(ckpt.tensors.contains_key("model.0.weight"));
    let restored = ckpt.with_prefix(MODEL_PREFIX);
    assert_eq!(
        restored.keys().collect::<Vec<_>>(),
        vec!["0.bias", "0.weight"]
    );
    assert_eq!(restored["0.bias"].to_vec::<f32>().unwrap(), vec![0.1, 0.1]);
    assert_eq!(ckpt.with_prefix(OPTIM_PREFIX).len(), 1);
    assert_eq!(ckpt.metadata_value::<u64>(STEP_KEY).unwrap(), 250);
    assert_eq!(ckpt.generator().unwrap(), generator);
    let w = ckpt.expect("model.0.weight", [2, 3], DType::F32).unwrap();
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![0.5; 6]);
}

#[test]
fn saving_again_replaces_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ckpt.safetensors");
    for step in 0..3i64 {
        let tensors = BTreeMap::from([(
            "s".to_string(),
            Tensor::from_vec(vec![step], [1], Device::Reference).unwrap(),
        )]);
        save(&path, &tensors, &BTreeMap::new()).unwrap();
        let back = load(&path, Device::Reference).unwrap();
        assert_eq!(back.tensors["s"].to_vec::<i64>().unwrap(), vec![step]);
    }
    // Only the checkpoint is left in the directory: no temporary files.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("ckpt.safetensors")]);
}
