//! Reading and validating a safetensors header before trusting any of it.
//!
//! A safetensors file is an 8-byte little-endian header length `n`, `n`
//! bytes of JSON, then the data section. The JSON maps each tensor name to
//! `{"dtype", "shape", "data_offsets": [start, end]}` (offsets relative to
//! the data section), plus an optional `"__metadata__"` map of strings.
//!
//! Every number in a header is a claim. This module checks each claim
//! against the bytes actually present — the header length against the
//! file, each tensor's byte count against its dtype and shape, its offsets
//! against the data section and against its neighbours — and turns each
//! failure into an error that names the tensor. Only then is anything
//! allocated in proportion to a claim.

use std::collections::BTreeMap;

use oxmera_core::DType;

use crate::CheckpointError;
use crate::codec::from_header_name;
use crate::json::{JsonError, Kind, Reader};

/// The largest header accepted, read or written: 32 MiB.
///
/// Chosen from what checkpoints need and what a hostile header can cost.
/// A tensor's entry is about 100 bytes of JSON, so 32 MiB holds some
/// 300,000 tensors, far more than any model file ships in one piece; the
/// largest metadata oxmera writes, `oxmera train`'s history, is about 95
/// bytes an epoch (100,000 epochs: under 10 MB). Reading a header costs
/// about twice its size for such files (1.9× measured) and under 2.5 times
/// for the costliest header there is (the shortest tensor entries,
/// metadata keys up to [`MAX_METADATA_KEYS`]; 2.3× measured): at this
/// limit, under 80 MB (`tests/header_memory.rs` measures both). The safetensors crate allows
/// 100 MB; a header past 32 MiB written elsewhere is refused. [`crate::save`]
/// refuses to write a longer header, so every file oxmera writes, oxmera
/// reads.
pub const MAX_HEADER_LEN: u64 = 32 << 20;

/// The most metadata keys a header may hold, read or written: 4096.
///
/// A checkpoint's metadata is a handful of keys (oxmera's training run
/// writes six; files from PyTorch usually one, `format`). Each key costs a
/// map node and two strings, about a hundred bytes, however short its
/// JSON (`"k1":"",` is seven): without a cap a header of tiny entries
/// cost ten times its size to read (9.9× measured). Capped, metadata adds
/// at most about half a megabyte to the ~2× a header's text and entries
/// cost.
pub const MAX_METADATA_KEYS: usize = 4096;

/// The key the format reserves for the string-to-string metadata.
pub const METADATA_KEY: &str = "__metadata__";

/// One tensor's entry, validated.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    // Boxed rather than `String`/`Vec`: 16 bytes each instead of 24, and
    // an entry is held for every tensor of a header while it is checked.
    pub name: Box<str>,
    pub dtype: DType,
    pub shape: Box<[usize]>,
    /// Byte offsets into the data section.
    pub start: usize,
    pub end: usize,
}

/// A validated header.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Header {
    /// The tensors, in data order.
    pub entries: Vec<Entry>,
    pub metadata: BTreeMap<String, String>,
    /// Where the data section starts in the file.
    pub data_start: usize,
}

/// Reads the 8-byte header length and checks it against the file length,
/// returning it once it is known to fit.
pub(crate) fn header_len(first8: [u8; 8], file_len: u64) -> Result<u64, CheckpointError> {
    let claimed = u64::from_le_bytes(first8);
    if claimed > MAX_HEADER_LEN {
        return Err(CheckpointError::HeaderTooLarge {
            claimed,
            limit: MAX_HEADER_LEN,
        });
    }
    let available = file_len.saturating_sub(8);
    if claimed > available {
        return Err(CheckpointError::HeaderPastEnd { claimed, available });
    }
    Ok(claimed)
}

/// Parses and validates the header of a whole file held in `bytes`.
pub(crate) fn parse(bytes: &[u8]) -> Result<Header, CheckpointError> {
    let first8: [u8; 8] =
        bytes
            .get(..8)
            .and_then(|b| b.try_into().ok())
            .ok_or(CheckpointError::TooShort {
                len: bytes.len() as u64,
            })?;
    let n = header_len(first8, bytes.len() as u64)? as usize;
    parse_header(&bytes[8..8 + n], (bytes.len() - 8 - n) as u64)
}

/// Parses and validates a header's `n` JSON bytes against a data section
/// of `data_len` bytes — everything but reading the data, so that a file
/// is refused before its data is read.
///
/// The JSON is read in one pass by [`crate::json::Reader`], keeping only
/// the validated entries and the metadata strings: no tree of the whole
/// document is built, so the cost is the header's text plus what is kept
/// (the `header_memory` test measures it).
pub(crate) fn parse_header(header: &[u8], data_len: u64) -> Result<Header, CheckpointError> {
    let data_start = 8 + header.len();
    let text = std::str::from_utf8(header).map_err(|e| CheckpointError::BadHeader {
        detail: format!("not UTF-8: {e}"),
    })?;
    let mut top = TopLevel {
        entries: Vec::with_capacity(count_keys(text)),
        ..TopLevel::default()
    };
    let mut reader = Reader::new(text);
    let read = (|| {
        if reader.peek_kind()? != Kind::Object {
            return Err(JsonError {
                at: 0,
                what: "the header is not a JSON object",
            });
        }
        reader.object(|r, key| top.field(r, key, data_len))?;
        reader.finish()
    })();
    read.map_err(|e| CheckpointError::BadHeader {
        detail: format!("not a JSON object of the safetensors shape: {e}"),
    })?;
    // JSON allows a key twice and every JSON library keeps one of the two
    // silently; a checkpoint with two tensors of one name (or two values of
    // one metadata key) is ambiguous, so it is refused by name.
    if let Some(name) = top
        .duplicate
        .take()
        .or_else(|| repeated_name(&mut top.entries))
    {
        return Err(CheckpointError::DuplicateName { name });
    }
    if top.metadata_keys > MAX_METADATA_KEYS {
        return Err(CheckpointError::TooManyMetadataKeys {
            count: top.metadata_keys,
            limit: MAX_METADATA_KEYS,
        });
    }
    if let Some(key) = top.metadata_duplicate {
        return Err(CheckpointError::DuplicateName {
            name: format!("{METADATA_KEY}.{key}"),
        });
    }
    if let Some(detail) = top.metadata_error {
        return Err(CheckpointError::BadHeader { detail });
    }
    if let Some(error) = top.entry_error {
        return Err(error);
    }
    let mut entries = top.entries;
    check_layout(&mut entries, data_len)?;
    Ok(Header {
        entries,
        metadata: top.metadata,
        data_start,
    })
}

/// What the top-level object held: the valid entries, the metadata, and
/// the first thing wrong of each kind (reported in a fixed order once the
/// whole header is known to be JSON).
#[derive(Default)]
struct TopLevel {
    entries: Vec<Entry>,
    metadata: BTreeMap<String, String>,
    seen_metadata: bool,
    duplicate: Option<String>,
    metadata_duplicate: Option<String>,
    metadata_error: Option<String>,
    /// Every key of `__metadata__`, kept or not (past the cap only counted).
    metadata_keys: usize,
    entry_error: Option<CheckpointError>,
}

impl TopLevel {
    /// Reads the value of the top-level key `key`.
    fn field(&mut self, r: &mut Reader, key: String, data_len: u64) -> Result<(), JsonError> {
        if key == METADATA_KEY {
            if std::mem::replace(&mut self.seen_metadata, true) {
                self.duplicate.get_or_insert(key);
            }
            return self.read_metadata(r);
        }
        let raw = RawEntry::read(r)?;
        // After the first bad entry the rest are only read, to check the
        // JSON: the error will be reported, so nothing more is kept.
        if self.entry_error.is_none() {
            match parse_entry(key, raw, data_len) {
                Ok(entry) => self.entries.push(entry),
                Err(e) => self.entry_error = Some(e),
            }
        }
        Ok(())
    }

    fn read_metadata(&mut self, r: &mut Reader) -> Result<(), JsonError> {
        let kind = r.peek_kind()?;
        if kind != Kind::Object {
            r.skip(1)?;
            self.metadata_error.get_or_insert_with(|| {
                format!("{METADATA_KEY} is {}, not an object", kind.describe())
            });
            return Ok(());
        }
        r.object(|r, key| {
            self.metadata_keys += 1;
            if self.metadata_keys > MAX_METADATA_KEYS {
                // Read to check the JSON, never kept: the count is the error.
                r.skip(2)?;
                return Ok(());
            }
            let kind = r.peek_kind()?;
            if kind != Kind::String {
                r.skip(2)?;
                self.metadata_error.get_or_insert_with(|| {
                    format!(
                        "{METADATA_KEY}[{key:?}] is {}, metadata values must be strings",
                        kind.describe()
                    )
                });
                return Ok(());
            }
            let value = r.string()?;
            match self.metadata.entry(key) {
                std::collections::btree_map::Entry::Occupied(taken) => {
                    self.metadata_duplicate.get_or_insert(taken.key().clone());
                }
                std::collections::btree_map::Entry::Vacant(free) => {
                    free.insert(value);
                }
            }
            Ok(())
        })
    }
}

/// How many keys the top-level object has (0 if the text is not JSON: the
/// reading pass reports why). Counting first lets the entries' vector be
/// allocated once at its final size, rather than at up to twice it while
/// it grows.
fn count_keys(text: &str) -> usize {
    let mut count = 0;
    let mut reader = Reader::new(text);
    let counted = reader.object(|r, _key| {
        count += 1;
        r.skip(1).map(drop)
    });
    if counted.is_ok() { count } else { 0 }
}

/// A repeated tensor name, if any (the first in name order). Sorts the
/// entries by name in place: no index of names is built beside them.
fn repeated_name(entries: &mut [Entry]) -> Option<String> {
    entries.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    entries
        .windows(2)
        .find(|w| w[0].name == w[1].name)
        .map(|w| w[0].name.to_string())
}

/// One tensor entry's fields as read, before validation: `None` where the
/// field was missing or of the wrong kind.
#[derive(Default)]
struct RawEntry {
    is_object: bool,
    dtype: Option<String>,
    shape: Option<Vec<u64>>,
    offsets: Option<Vec<u64>>,
}

impl RawEntry {
    fn read(r: &mut Reader) -> Result<RawEntry, JsonError> {
        let mut raw = RawEntry::default();
        if r.peek_kind()? != Kind::Object {
            r.skip(1)?;
            return Ok(raw);
        }
        raw.is_object = true;
        r.object(|r, key| {
            let kind = r.peek_kind()?;
            // A field given twice keeps its last value, as JSON readers do.
            match (key.as_str(), kind) {
                ("dtype", Kind::String) => raw.dtype = Some(r.string()?),
                ("shape", Kind::Array) => raw.shape = r.integers()?,
                ("data_offsets", Kind::Array) => raw.offsets = r.integers()?,
                (field, _) => {
                    r.skip(2)?;
                    match field {
                        "dtype" => raw.dtype = None,
                        "shape" => raw.shape = None,
                        "data_offsets" => raw.offsets = None,
                        _ => {}
                    }
                }
            }
            Ok(())
        })?;
        Ok(raw)
    }
}

/// Validates one entry; the key becomes the entry's name (moved, not
/// copied: names are most of what a header holds).
fn parse_entry(name: String, raw: RawEntry, data_len: u64) -> Result<Entry, CheckpointError> {
    let bad = |detail: &str| CheckpointError::BadEntry {
        name: name.clone(),
        detail: detail.to_string(),
    };
    if !raw.is_object {
        return Err(bad("not an object"));
    }
    let dtype_name = raw.dtype.ok_or_else(|| bad("no \"dtype\" string"))?;
    let dtype = from_header_name(&dtype_name).ok_or_else(|| CheckpointError::UnsupportedDType {
        name: name.clone(),
        dtype: dtype_name.clone(),
    })?;
    let shape = raw
        .shape
        .ok_or_else(|| bad("no \"shape\" array of integers"))?;
    let offsets = raw
        .offsets
        .filter(|o| o.len() == 2)
        .ok_or_else(|| bad("no \"data_offsets\" pair of integers"))?;
    let (start, end) = (offsets[0], offsets[1]);

    let overflow = |shape: &[u64]| CheckpointError::ShapeOverflow {
        name: name.clone(),
        shape: shape.to_vec(),
    };
    let bytes = shape
        .iter()
        .try_fold(dtype.size_in_bytes() as u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| overflow(&shape))?;
    if start > end || end > data_len {
        return Err(CheckpointError::OffsetOutOfRange {
            name,
            start,
            end,
            data_len,
        });
    }
    // The offsets are bounded by the data length, which the file actually
    // has, so they fit in usize; a dimension need not (beside a zero).
    if shape.iter().any(|&d| usize::try_from(d).is_err()) {
        return Err(overflow(&shape));
    }
    // In place: u64 and usize share a layout, so no second vector.
    let shape: Vec<usize> = shape.into_iter().map(|d| d as usize).collect();
    if end - start != bytes {
        return Err(CheckpointError::ByteSizeMismatch {
            name,
            dtype,
            shape,
            expected: bytes,
            got: end - start,
        });
    }
    Ok(Entry {
        name: name.into_boxed_str(),
        dtype,
        shape: shape.into_boxed_slice(),
        start: start as usize,
        end: end as usize,
    })
}

/// Sorts the entries by offset and checks that they tile the data section
/// exactly: no overlaps, no gaps, nothing left over (as the format
/// requires, and as the safetensors crate checks too).
fn check_layout(entries: &mut [Entry], data_len: u64) -> Result<(), CheckpointError> {
    // Unstable, so in place (a stable sort allocates half the entries
    // again); the name breaks ties, so the order is still determined.
    entries.sort_unstable_by(|a, b| (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name)));
    let mut cursor = 0usize;
    let mut previous: Option<&Entry> = None;
    for entry in entries.iter() {
        if entry.start < cursor {
            let other = previous.expect("cursor > 0 only after an entry");
            return Err(CheckpointError::OverlappingData {
                name: entry.name.to_string(),
                start: entry.start as u64,
                end: entry.end as u64,
                other: other.name.to_string(),
                other_end: other.end as u64,
            });
        }
        if entry.start > cursor {
            return Err(CheckpointError::UncoveredData {
                start: cursor as u64,
                end: entry.start as u64,
            });
        }
        cursor = entry.end;
        previous = Some(entry);
    }
    if (cursor as u64) < data_len {
        return Err(CheckpointError::UncoveredData {
            start: cursor as u64,
            end: data_len,
        });
    }
    Ok(())
}
