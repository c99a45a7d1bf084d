//! The IDX reader on small files written here: good, compressed, truncated,
//! oversized, wrong-magic and hostile ones.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::GzEncoder;
use oxmera_data::{
    DataError, Dataset, IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC, Target, mnist, read_idx, read_idx_pair,
};

fn idx_bytes(magic: u32, dims: &[u32], data: &[u8]) -> Vec<u8> {
    let mut out = magic.to_be_bytes().to_vec();
    for d in dims {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Two 2x3 images with pixels 0..12 (scaled /255) and labels 7, 2.
fn images() -> Vec<u8> {
    idx_bytes(IDX_IMAGES_MAGIC, &[2, 2, 3], &(0..12).collect::<Vec<u8>>())
}

fn labels() -> Vec<u8> {
    idx_bytes(IDX_LABELS_MAGIC, &[2], &[7, 2])
}

#[test]
fn reads_plain_and_gzip_files_alike() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write(dir.path(), "a", &images());
    let packed = write(dir.path(), "b.gz", &gz(&images()));
    let a = read_idx(&plain, IDX_IMAGES_MAGIC).unwrap();
    assert_eq!(a.dims, vec![2, 2, 3]);
    assert_eq!(a.data, (0..12).collect::<Vec<u8>>());
    assert_eq!(read_idx(&packed, IDX_IMAGES_MAGIC).unwrap(), a);
}

#[test]
fn pair_becomes_a_scaled_classification_set() {
    let dir = tempfile::tempdir().unwrap();
    let im = write(dir.path(), "im", &images());
    let lb = write(dir.path(), "lb", &labels());
    let ds = read_idx_pair(&im, &lb).unwrap();
    assert_eq!(ds.len(), 2);
    assert_eq!(ds.feature_shape(), &[1, 2, 3]);
    let s = ds.get(1).unwrap();
    assert_eq!(s.target, Target::Class(2));
    assert_eq!(s.features[0], 6.0 / 255.0);
}

#[test]
fn wrong_magic_is_reported_with_both_numbers() {
    let dir = tempfile::tempdir().unwrap();
    // A label file where images are expected.
    let lb = write(dir.path(), "lb", &labels());
    match read_idx(&lb, IDX_IMAGES_MAGIC) {
        Err(DataError::WrongMagic {
            expected,
            found,
            path,
            ..
        }) => {
            assert_eq!((expected, found), (IDX_IMAGES_MAGIC, IDX_LABELS_MAGIC));
            assert_eq!(path, lb);
        }
        other => panic!("expected WrongMagic, got {other:?}"),
    }
    let text = write(dir.path(), "txt", b"hello, world");
    assert!(matches!(
        read_idx(&text, IDX_LABELS_MAGIC),
        Err(DataError::WrongMagic {
            found: 0x6865_6c6c,
            ..
        })
    ));
}

#[test]
fn truncated_files_report_expected_and_actual_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let full = images(); // 16 header bytes + 12 pixels
    let cut = write(dir.path(), "cut", &full[..20]);
    assert!(matches!(
        read_idx(&cut, IDX_IMAGES_MAGIC),
        Err(DataError::Truncated {
            expected: 28,
            actual: 20,
            ..
        })
    ));
    // Cut inside the header.
    let cut = write(dir.path(), "cut2", &full[..9]);
    assert!(matches!(
        read_idx(&cut, IDX_IMAGES_MAGIC),
        Err(DataError::Truncated {
            expected: 16,
            actual: 9,
            ..
        })
    ));
    // Cut inside the magic, and empty.
    let cut = write(dir.path(), "cut3", &full[..3]);
    assert!(matches!(
        read_idx(&cut, IDX_IMAGES_MAGIC),
        Err(DataError::Truncated {
            expected: 4,
            actual: 3,
            ..
        })
    ));
    let empty = write(dir.path(), "empty", &[]);
    assert!(matches!(
        read_idx(&empty, IDX_IMAGES_MAGIC),
        Err(DataError::Truncated { actual: 0, .. })
    ));
    // A whole gzip stream of a short payload.
    let short_gz = write(dir.path(), "short.gz", &gz(&full[..20]));
    assert!(matches!(
        read_idx(&short_gz, IDX_IMAGES_MAGIC),
        Err(DataError::Truncated {
            expected: 28,
            actual: 20,
            ..
        })
    ));
    // A gzip stream itself cut short: an error, never a panic.
    let packed = gz(&full);
    let cut_gz = write(dir.path(), "cut.gz", &packed[..packed.len() - 10]);
    assert!(read_idx(&cut_gz, IDX_IMAGES_MAGIC).is_err());
}

#[test]
fn hostile_header_claims_cost_no_allocation() {
    let dir = tempfile::tempdir().unwrap();
    // Claims 2^32-1 cubed bytes: overflows u64 (and any allocation).
    let huge = write(
        dir.path(),
        "huge",
        &idx_bytes(
            IDX_IMAGES_MAGIC,
            &[u32::MAX, u32::MAX, u32::MAX],
            &[1, 2, 3],
        ),
    );
    assert!(matches!(
        read_idx(&huge, IDX_IMAGES_MAGIC),
        Err(DataError::DimsOverflow { .. })
    ));
    // Claims 4 GiB that are not there, plain and compressed: a
    // truncation error, found before (plain) or without (gzip) reserving
    // room for the claim.
    let claim = idx_bytes(IDX_LABELS_MAGIC, &[u32::MAX], &[1, 2, 3]);
    let plain = write(dir.path(), "claim", &claim);
    assert!(matches!(
        read_idx(&plain, IDX_LABELS_MAGIC),
        Err(DataError::Truncated {
            expected: 4_294_967_303,
            actual: 11,
            ..
        })
    ));
    let packed = write(dir.path(), "claim.gz", &gz(&claim));
    assert!(matches!(
        read_idx(&packed, IDX_LABELS_MAGIC),
        Err(DataError::Truncated {
            expected: 4_294_967_303,
            actual: 11,
            ..
        })
    ));
}

#[test]
fn trailing_bytes_and_count_mismatch_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut long = labels();
    long.extend_from_slice(&[9, 9, 9]);
    let long = write(dir.path(), "long", &long);
    assert!(matches!(
        read_idx(&long, IDX_LABELS_MAGIC),
        Err(DataError::TrailingBytes {
            expected: 10,
            extra: 3,
            ..
        })
    ));

    let im = write(dir.path(), "im", &images());
    let three = write(
        dir.path(),
        "lb3",
        &idx_bytes(IDX_LABELS_MAGIC, &[3], &[1, 2, 3]),
    );
    assert!(matches!(
        read_idx_pair(&im, &three),
        Err(DataError::IdxCountMismatch {
            images: 2,
            labels: 3,
            ..
        })
    ));

    let bad_label = write(
        dir.path(),
        "lb10",
        &idx_bytes(IDX_LABELS_MAGIC, &[2], &[1, 10]),
    );
    assert!(matches!(
        read_idx_pair(&im, &bad_label),
        Err(DataError::LabelOutOfRange {
            index: 1,
            label: 10,
            ..
        })
    ));
    assert!(matches!(
        read_idx(&im, 0x0000_0d03),
        Err(DataError::InvalidConfig { what: "magic", .. })
    ));
}

#[test]
fn mnist_finds_the_distributed_names_or_lists_what_it_tried() {
    let dir = tempfile::tempdir().unwrap();
    match mnist(dir.path()) {
        Err(DataError::MissingFile { what, tried }) => {
            assert_eq!(what, "train images");
            assert_eq!(tried.len(), 4);
            assert!(tried.contains(&dir.path().join("train-images-idx3-ubyte.gz")));
            assert!(tried.contains(&dir.path().join("train-images.idx3-ubyte")));
        }
        other => panic!("expected MissingFile, got {other:?}"),
    }
    write(dir.path(), "train-images-idx3-ubyte.gz", &gz(&images()));
    write(dir.path(), "train-labels-idx1-ubyte", &labels());
    write(dir.path(), "t10k-images.idx3-ubyte", &images());
    assert!(matches!(
        mnist(dir.path()),
        Err(DataError::MissingFile {
            what: "test labels",
            ..
        })
    ));
    write(dir.path(), "t10k-labels.idx1-ubyte.gz", &gz(&labels()));
    let m = mnist(dir.path()).unwrap();
    assert_eq!((m.train.len(), m.test.len()), (2, 2));
    assert_eq!(m.test.labels().unwrap(), &[7, 2]);
}

#[test]
fn multi_member_gzip_reads_as_one_stream() {
    // `cat a.gz b.gz`: the header and half the data in one member, the
    // rest in a second.
    let dir = tempfile::tempdir().unwrap();
    let whole = labels();
    let (a, b) = whole.split_at(whole.len() / 2 + 1);
    let mut joined = gz(a);
    joined.extend(gz(b));
    let path = write(dir.path(), "joined.gz", &joined);
    let read = read_idx(&path, IDX_LABELS_MAGIC).unwrap();
    let plain = read_idx(write(dir.path(), "plain", &whole), IDX_LABELS_MAGIC).unwrap();
    assert_eq!((read.dims, read.data), (plain.dims, plain.data));
}

#[test]
fn a_header_past_the_limit_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    // 65536 x 65536 x 2 bytes = 8 GiB declared, 3 bytes present.
    let claim = idx_bytes(IDX_IMAGES_MAGIC, &[2, 65536, 65536], &[1, 2, 3]);
    for (name, bytes) in [("big", claim.clone()), ("big.gz", gz(&claim))] {
        let err = read_idx(write(dir.path(), name, &bytes), IDX_IMAGES_MAGIC).unwrap_err();
        assert!(
            matches!(err, DataError::IdxTooLarge { max, .. } if max == oxmera_data::MAX_IDX_BYTES),
            "{name}: {err}"
        );
    }
}

#[test]
fn a_gzip_bomb_after_a_valid_file_stops_at_the_first_excess() {
    // A valid labels file followed by 64 MiB of zeros, compressed to a
    // few tens of kilobytes: reading stops after at most 1 MiB of excess
    // instead of decompressing all of it.
    let dir = tempfile::tempdir().unwrap();
    let mut bomb = labels();
    bomb.extend(std::iter::repeat_n(0u8, 64 << 20));
    let packed = gz(&bomb);
    assert!(packed.len() < 1 << 20, "{} bytes", packed.len());
    let err = read_idx(write(dir.path(), "bomb.gz", &packed), IDX_LABELS_MAGIC).unwrap_err();
    match err {
        DataError::TrailingBytes { extra, .. } => assert!(extra > 0 && extra <= 1 << 20, "{extra}"),
        other => panic!("expected TrailingBytes, got {other}"),
    }
}
