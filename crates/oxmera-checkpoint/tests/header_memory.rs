//! What reading a header costs, in bytes allocated, against the header's
//! size: a counting allocator wraps the system one for this test binary,
//! and each case loads a file whose data section is sparse (never read:
//! the last byte belongs to no tensor, so the file is refused after the
//! whole header has been parsed and validated, before any data is read).
//!
//! The bounds asserted here are derived, not fitted: the header's text
//! (1×), plus what is kept per entry (see each case).
// A global allocator is the one way to see every allocation a call makes;
// it only forwards to the system allocator and counts.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxmera_checkpoint::{CheckpointError, MAX_HEADER_LEN, MAX_METADATA_KEYS, load};
use oxmera_core::Device;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The cases run one at a time, each holding this from its first
/// allocation to its last: the counters are global, and another test
/// building its header would be counted in this one's peak.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

// SAFETY: every call forwards to `System` with the caller's own arguments;
// the counters are plain atomics and allocate nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Writes `header` and a sparse data section of `data_len + 1` bytes (the
/// extra byte makes the layout check refuse the file), loads it, and
/// returns the peak bytes allocated during the load above what was live
/// before it.
fn peak_of_load(header: &str, data_len: u64) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse.safetensors");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&(header.len() as u64).to_le_bytes())
        .unwrap();
    file.write_all(header.as_bytes()).unwrap();
    file.set_len(8 + header.len() as u64 + data_len + 1)
        .unwrap();
    drop(file);

    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let result = load(&path, Device::Reference);
    let peak = PEAK.load(Ordering::Relaxed) - before;
    assert!(
        matches!(result, Err(CheckpointError::UncoveredData { .. })),
        "the header was meant to parse and the layout to fail: {:?}",
        result.err()
    );
    peak
}

/// A header as a large model's: `count` tensors with real names, dtypes
/// and shapes, tiling the data section. Returns it and its data length.
fn model_header(count: usize) -> (String, u64) {
    let mut fields = Vec::with_capacity(count);
    let mut offset = 0u64;
    for i in 0..count {
        let (name, shape): (String, &[u64]) = match i % 4 {
            0 => (
                format!("model.layers.{}.self_attn.q_proj.weight", i / 4),
                &[4096, 4096],
            ),
            1 => (
                format!("model.layers.{}.mlp.down_proj.weight", i / 4),
                &[4096, 14336],
            ),
            2 => (
                format!("model.layers.{}.input_layernorm.weight", i / 4),
                &[4096],
            ),
            _ => (
                format!("model.layers.{}.mlp.gate_proj.bias", i / 4),
                &[14336],
            ),
        };
        let bytes = 2 * shape.iter().product::<u64>();
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        fields.push(format!(
            r#""{name}":{{"dtype":"BF16","shape":[{}],"data_offsets":[{offset},{}]}}"#,
            dims.join(","),
            offset + bytes
        ));
        offset += bytes;
    }
    (format!("{{{}}}", fields.join(",")), offset)
}

#[test]
fn a_large_models_header_costs_about_twice_its_size() {
    let _one = one_at_a_time();
    let (header, data_len) = model_header(20_000);
    let peak = peak_of_load(&header, data_len);
    let ratio = peak as f64 / header.len() as f64;
    eprintln!(
        "model header: {} bytes, peak {} bytes ({ratio:.2}x)",
        header.len(),
        peak
    );
    // The text (1x) and per entry what is kept: the entry's 56 bytes, its
    // name (moved from the key) and its shape, about 105 bytes for 119 of
    // JSON; the entries' vector is sized by a counting pass and sorted in
    // place, so nothing is held twice.
    assert!(ratio < 2.5, "{ratio:.2}x");
}

#[test]
fn a_long_metadata_string_with_escapes_costs_about_twice_its_size() {
    let _one = one_at_a_time();
    // What `oxmera train` writes: its history as JSON inside a string.
    let row = r#"{\"epoch\":12,\"loss\":0.0421,\"train_acc\":0.9874,\"test_acc\":0.9802,\"seconds\":1.25}"#;
    let history = vec![row; 50_000].join(",");
    let header = format!(r#"{{"__metadata__":{{"train_history":"[{history}]","step":"9000"}}}}"#);
    let peak = peak_of_load(&header, 0);
    let ratio = peak as f64 / header.len() as f64;
    eprintln!(
        "history header: {} bytes, peak {} bytes ({ratio:.2}x)",
        header.len(),
        peak
    );
    // The text and its decoded copy, which is shorter than the text.
    assert!(ratio <= 2.0 + 1e-3, "{ratio:.2}x");
}

#[test]
fn the_worst_header_stays_within_two_and_a_half_times_its_size() {
    let _one = one_at_a_time();
    // What costs most per byte of JSON: metadata keys (a map node and two
    // strings each, ~100 bytes for `"k1":"",`) up to their cap, then the
    // shortest tensor entries (a 56-byte entry, its name and a one-dim
    // shape for ~52 bytes of JSON), all zero-sized at offset 0.
    let mut header = String::from(r#"{"__metadata__":{"#);
    for i in 0..MAX_METADATA_KEYS {
        if i > 0 {
            header.push(',');
        }
        header.push_str(&format!(r#""{i:x}":"""#));
    }
    header.push('}');
    let mut i = 0u64;
    while header.len() + 64 < 4 << 20 {
        header.push_str(&format!(
            r#","{i:x}":{{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#
        ));
        i += 1;
    }
    header.push('}');
    let peak = peak_of_load(&header, 0);
    let ratio = peak as f64 / header.len() as f64;
    eprintln!(
        "tiny entries: {} bytes, peak {} bytes ({ratio:.2}x)",
        header.len(),
        peak
    );
    // 1x the text, (56 + name + 8) / ~52 for the entries, and half a
    // megabyte of metadata at most.
    assert!(ratio < 2.5, "{ratio:.2}x");
    let at_limit = ratio * MAX_HEADER_LEN as f64;
    eprintln!(
        "at MAX_HEADER_LEN ({MAX_HEADER_LEN} bytes) that is at most {:.0} MB",
        at_limit / 1e6
    );
}

#[test]
fn more_metadata_keys_than_the_cap_are_refused_reading_and_writing() {
    let _one = one_at_a_time();
    let too_many = MAX_METADATA_KEYS + 1;
    let fields: Vec<String> = (0..too_many).map(|i| format!(r#""{i}":"""#)).collect();
    let header = format!(r#"{{"__metadata__":{{{}}}}}"#, fields.join(","));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.safetensors");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&(header.len() as u64).to_le_bytes())
        .unwrap();
    file.write_all(header.as_bytes()).unwrap();
    drop(file);
    assert!(matches!(
        load(&path, Device::Reference),
        Err(CheckpointError::TooManyMetadataKeys { count, limit: MAX_METADATA_KEYS })
            if count == too_many
    ));
    let metadata: std::collections::BTreeMap<String, String> = (0..too_many)
        .map(|i| (i.to_string(), String::new()))
        .collect();
    assert!(matches!(
        oxmera_checkpoint::save(&path, &Default::default(), &metadata),
        Err(CheckpointError::TooManyMetadataKeys { .. })
    ));
}
