//! Every kind of damaged or hostile file, crafted byte by byte, is a typed
//! error naming what is wrong — never a panic, never a huge allocation.

use std::collections::BTreeMap;

use oxmera_checkpoint::{Checkpoint, CheckpointError, MAX_HEADER_LEN, load, save, to_bytes};
use oxmera_core::{DType, Device};
use oxmera_reference as _;
use oxmera_tensor::Tensor;
use proptest::prelude::*;

/// A safetensors file: the header's length (little-endian u64), the
/// header, the data.
fn file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn parse(bytes: &[u8]) -> Result<Checkpoint, CheckpointError> {
    Checkpoint::from_bytes(bytes, Device::Reference)
}

/// A small real checkpoint: two tensors of different dtypes and metadata.
fn sample_bytes() -> Vec<u8> {
    let tensors = BTreeMap::from([
        (
            "a".to_string(),
            Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], Device::Reference).unwrap(),
        ),
        (
            "b".to_string(),
            Tensor::from_vec(vec![7i64, 8], [2, 1], Device::Reference).unwrap(),
        ),
    ]);
    let metadata = BTreeMap::from([("step".to_string(), "3".to_string())]);
    to_bytes(&tensors, &metadata).unwrap()
}

#[test]
fn a_hand_written_file_loads() {
    // What any safetensors writer would produce for one I32 [2, 2].
    let data: Vec<u8> = [1i32, 2, 3, -4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let bytes = file(
        r#"{"__metadata__":{"format":"pt"},"m":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}"#,
        &data,
    );
    let ckpt = parse(&bytes).unwrap();
    assert_eq!(
        ckpt.tensors["m"].to_vec::<i32>().unwrap(),
        vec![1, 2, 3, -4]
    );
    assert_eq!(ckpt.tensors["m"].dims(), &[2, 2]);
    assert_eq!(ckpt.metadata["format"], "pt");
}

#[test]
fn too_short_for_the_length_field() {
    assert!(matches!(
        parse(&[]),
        Err(CheckpointError::TooShort { len: 0 })
    ));
    assert!(matches!(
        parse(&[1, 2, 3, 4, 5]),
        Err(CheckpointError::TooShort { len: 5 })
    ));
}

#[test]
fn absurd_header_lengths_are_refused_before_reading() {
    let mut bytes = u64::MAX.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    assert!(matches!(
        parse(&bytes),
        Err(CheckpointError::HeaderTooLarge {
            claimed: u64::MAX,
            limit: MAX_HEADER_LEN
        })
    ));
    // Under the limit but past the end of the file.
    let mut bytes = 1000u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}  ");
    assert!(matches!(
        parse(&bytes),
        Err(CheckpointError::HeaderPastEnd {
            claimed: 1000,
            available: 4
        })
    ));
    // The same through a file on disk.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.safetensors");
    let mut bytes = (MAX_HEADER_LEN - 1).to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(
        load(&path, Device::Reference),
        Err(CheckpointError::HeaderPastEnd { available: 2, .. })
    ));
}

#[test]
fn a_header_too_long_to_load_is_not_written() {
    // Metadata just over the limit: saving it would make a file that
    // loading refuses, so saving refuses first, and no file appears.
    let long = "x".repeat(MAX_HEADER_LEN as usize);
    let metadata = BTreeMap::from([("history".to_string(), long)]);
    let tensors = BTreeMap::new();
    assert!(matches!(
        to_bytes(&tensors, &metadata),
        Err(CheckpointError::HeaderTooLarge { claimed, limit: MAX_HEADER_LEN })
            if claimed > MAX_HEADER_LEN
    ));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("too-long.safetensors");
    assert!(matches!(
        save(&path, &tensors, &metadata),
        Err(CheckpointError::HeaderTooLarge { .. })
    ));
    assert!(!path.exists());
    // Just under it, the same metadata saves and loads.
    let fits = "x".repeat(MAX_HEADER_LEN as usize - 100);
    let metadata = BTreeMap::from([("history".to_string(), fits)]);
    save(&path, &tensors, &metadata).unwrap();
    let ckpt = load(&path, Device::Reference).unwrap();
    assert_eq!(
        ckpt.metadata["history"].len(),
        MAX_HEADER_LEN as usize - 100
    );
}

#[test]
fn header_not_utf8_or_not_json_or_not_an_object() {
    for header in [&b"\xff\xfe{}"[..], b"{\"a\": ", b"[1, 2]", b"null"] {
        let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(header);
        assert!(
            matches!(parse(&bytes), Err(CheckpointError::BadHeader { .. })),
            "{header:?}"
        );
    }
    let meta = file(r#"{"__metadata__":{"step":3}}"#, &[]);
    assert!(matches!(
        parse(&meta),
        Err(CheckpointError::BadHeader { .. })
    ));
}

fn assert_bad_entry(header: &str, data: &[u8], tensor: &str) {
    match parse(&file(header, data)) {
        Err(CheckpointError::BadEntry { name, .. }) => assert_eq!(name, tensor),
        other => panic!("{header}: expected BadEntry, got {other:?}"),
    }
}

#[test]
fn malformed_entries_name_the_tensor() {
    assert_bad_entry(r#"{"w":{"shape":[1],"data_offsets":[0,4]}}"#, &[0; 4], "w");
    assert_bad_entry(
        r#"{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#,
        &[0; 4],
        "w",
    );
    assert_bad_entry(
        r#"{"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}}"#,
        &[0; 4],
        "w",
    );
    assert_bad_entry(
        r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}"#,
        &[0; 4],
        "w",
    );
    assert_bad_entry(r#"{"w":{"dtype":"F32","shape":[1]}}"#, &[0; 4], "w");
    assert_bad_entry(r#"{"w":[1,2,3]}"#, &[], "w");
}

#[test]
fn unsupported_dtypes_name_the_tensor() {
    match parse(&file(
        r#"{"q":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}}"#,
        &[0; 2],
    )) {
        Err(CheckpointError::UnsupportedDType { name, dtype }) => {
            assert_eq!((name.as_str(), dtype.as_str()), ("q", "I8"));
        }
        other => panic!("expected UnsupportedDType, got {other:?}"),
    }
}

#[test]
fn dtype_and_shape_disagreeing_with_the_offsets() {
    match parse(&file(
        r#"{"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}}"#,
        &[0; 12],
    )) {
        Err(CheckpointError::ByteSizeMismatch {
            name,
            dtype,
            shape,
            expected,
            got,
        }) => {
            assert_eq!(name, "w");
            assert_eq!(
                (dtype, shape, expected, got),
                (DType::F32, vec![2, 2], 16, 12)
            );
        }
        other => panic!("expected ByteSizeMismatch, got {other:?}"),
    }
    // A shape whose byte count overflows 64 bits.
    let huge = format!(
        r#"{{"w":{{"dtype":"F64","shape":[{},{}],"data_offsets":[0,8]}}}}"#,
        u64::MAX,
        u64::MAX
    );
    assert!(matches!(
        parse(&file(&huge, &[0; 8])),
        Err(CheckpointError::ShapeOverflow { name, .. }) if name == "w"
    ));
    // A shape claiming far more than the file holds, with offsets to match.
    let claim = r#"{"w":{"dtype":"F32","shape":[1000000000],"data_offsets":[0,4000000000]}}"#;
    assert!(matches!(
        parse(&file(claim, &[0; 16])),
        Err(CheckpointError::OffsetOutOfRange { name, end: 4_000_000_000, data_len: 16, .. }) if name == "w"
    ));
}

#[test]
fn offsets_out_of_range_or_backwards() {
    assert!(matches!(
        parse(&file(r#"{"w":{"dtype":"U8","shape":[8],"data_offsets":[8,16]}}"#, &[0; 8])),
        Err(CheckpointError::OffsetOutOfRange { name, start: 8, end: 16, data_len: 8 }) if name == "w"
    ));
    assert!(matches!(
        parse(&file(r#"{"w":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}"#, &[0; 4])),
        Err(CheckpointError::OffsetOutOfRange { name, start: 4, end: 0, .. }) if name == "w"
    ));
}

#[test]
fn overlapping_tensors_name_both() {
    let header = r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}}"#;
    match parse(&file(header, &[0; 24])) {
        Err(CheckpointError::OverlappingData {
            name,
            other,
            start,
            other_end,
            ..
        }) => {
            assert_eq!((name.as_str(), other.as_str()), ("b", "a"));
            assert_eq!((start, other_end), (8, 16));
        }
        other => panic!("expected OverlappingData, got {other:?}"),
    }
    // Two names for the very same bytes overlap too.
    let alias = r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#;
    assert!(matches!(
        parse(&file(alias, &[0; 4])),
        Err(CheckpointError::OverlappingData { .. })
    ));
}

#[test]
fn bytes_that_belong_to_no_tensor() {
    let gap = r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[6,10]}}"#;
    assert!(matches!(
        parse(&file(gap, &[0; 10])),
        Err(CheckpointError::UncoveredData { start: 4, end: 6 })
    ));
    let tail = r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#;
    assert!(matches!(
        parse(&file(tail, &[0; 7])),
        Err(CheckpointError::UncoveredData { start: 4, end: 7 })
    ));
}

#[test]
fn bool_bytes_other_than_zero_and_one() {
    let header = r#"{"mask":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}}"#;
    assert!(matches!(
        parse(&file(header, &[1, 0, 7])),
        Err(CheckpointError::InvalidBool { name, index: 2, byte: 7 }) if name == "mask"
    ));
}

#[test]
fn every_truncation_of_a_real_file_is_an_error() {
    let bytes = sample_bytes();
    assert!(parse(&bytes).is_ok());
    for len in 0..bytes.len() {
        assert!(parse(&bytes[..len]).is_err(), "cut at {len} loaded");
    }
    // And through the file system, at a few cuts.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.safetensors");
    for len in [0, 7, 8, 20, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..len]).unwrap();
        assert!(
            load(&path, Device::Reference).is_err(),
            "cut at {len} loaded"
        );
    }
}

#[test]
fn every_single_byte_corruption_is_handled() {
    // Flipping any byte either still loads (a data byte changed value) or
    // is a typed error; none may panic. Header bytes must never load into
    // a different structure silently: the names and shapes are checked.
    let bytes = sample_bytes();
    let header_end = 8 + u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut damaged = bytes.clone();
            damaged[i] ^= flip;
            if let Ok(ckpt) = parse(&damaged) {
                if i < header_end {
                    // A flip inside a JSON string of a name or a value can
                    // leave valid JSON; the layout must still be the same.
                    assert_eq!(ckpt.tensors.len() + ckpt.metadata.len(), 3, "byte {i}");
                }
            }
        }
    }
}

#[test]
fn missing_file_is_an_io_error_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.safetensors");
    match load(&path, Device::Reference) {
        Err(CheckpointError::Io { path: p, .. }) => assert_eq!(p, path),
        other => panic!("expected Io, got {other:?}"),
    }
}

#[test]
fn shape_and_dtype_mismatches_against_expectations() {
    let ckpt = parse(&sample_bytes()).unwrap();
    assert!(ckpt.expect("a", [3], DType::F32).is_ok());
    match ckpt.expect("a", [4], DType::F32) {
        Err(CheckpointError::ShapeMismatch {
            name,
            expected,
            found,
        }) => {
            assert_eq!(name, "a");
            assert_eq!((expected.dims(), found.dims()), (&[4][..], &[3][..]));
        }
        other => panic!("expected ShapeMismatch, got {other:?}"),
    }
    assert!(matches!(
        ckpt.expect("b", [2, 1], DType::I32),
        Err(CheckpointError::DTypeMismatch { name, expected: DType::I32, found: DType::I64 }) if name == "b"
    ));
    assert!(matches!(
        ckpt.expect("c", [1], DType::F32),
        Err(CheckpointError::MissingTensor { name }) if name == "c"
    ));
    assert!(matches!(
        ckpt.metadata_value::<u64>("epoch"),
        Err(CheckpointError::MissingMetadata { .. })
    ));
    assert!(matches!(
        ckpt.metadata_value::<bool>("step"),
        Err(CheckpointError::BadMetadata { .. })
    ));
}

#[test]
fn the_reserved_name_cannot_be_saved() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tensor::from_vec(vec![1u8], [1], Device::Reference).unwrap();
    let tensors = BTreeMap::from([("__metadata__".to_string(), t)]);
    assert!(matches!(
        save(dir.path().join("x"), &tensors, &BTreeMap::new()),
        Err(CheckpointError::ReservedName { .. })
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn arbitrary_headers_never_panic(header in "[{}\\[\\]\":,a-z0-9_ ]{0,120}", data in proptest::collection::vec(any::<u8>(), 0..40)) {
        let _ = parse(&file(&header, &data));
    }
}

#[test]
fn a_name_given_twice_is_refused_by_name() {
    // JSON allows a key twice, and a JSON reader keeps one of the two
    // silently: which tensor is meant would be a guess.
    let data = [0u8; 8];
    let twice = r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}"#;
    assert!(matches!(
        parse(&file(twice, &data)),
        Err(CheckpointError::DuplicateName { name }) if name == "w"
    ));
    let meta = r#"{"__metadata__":{"step":"1","step":"9"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
    assert!(matches!(
        parse(&file(meta, &data)),
        Err(CheckpointError::DuplicateName { name }) if name == "__metadata__.step"
    ));
}

#[test]
fn a_file_is_refused_from_its_header_before_its_data_is_read() {
    // A tiny header whose one tensor covers 4 bytes of a 64 MiB data
    // section: refused as uncovered data, and `load` reads only the header
    // to say so (the data section is a hole in a sparse file here, so
    // nothing about this test depends on reading it being slow).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.safetensors");
    let bytes = file(
        r#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
        &[0; 4],
    );
    let f = std::fs::File::create(&path).unwrap();
    use std::io::Write;
    (&f).write_all(&bytes).unwrap();
    f.set_len(bytes.len() as u64 + (64 << 20)).unwrap();
    assert!(matches!(
        load(&path, Device::Reference),
        Err(CheckpointError::UncoveredData { start: 4, .. })
    ));
}
