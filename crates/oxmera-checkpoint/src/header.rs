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
use serde_json::Value;

use crate::CheckpointError;
use crate::codec::from_header_name;

/// The largest header accepted: the safetensors crate's own limit.
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// The key the format reserves for the string-to-string metadata.
pub const METADATA_KEY: &str = "__metadata__";

/// One tensor's entry, validated.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<usize>,
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
pub(crate) fn parse_header(header: &[u8], data_len: u64) -> Result<Header, CheckpointError> {
    let data_start = 8 + header.len();
    let text = std::str::from_utf8(header).map_err(|e| CheckpointError::BadHeader {
        detail: format!("not UTF-8: {e}"),
    })?;
    let top: Entries = serde_json::from_str(text).map_err(|e| CheckpointError::BadHeader {
        detail: format!("not a JSON object: {e}"),
    })?;
    // JSON allows a key twice and every JSON library keeps one of the two
    // silently; a checkpoint with two tensors of one name (or two values of
    // one metadata key) is ambiguous, so it is refused by name.
    if let Some(name) = top.duplicate {
        return Err(CheckpointError::DuplicateName { name });
    }
    let mut metadata = BTreeMap::new();
    if let Some(meta) = top.metadata {
        if let Some(key) = meta.duplicate {
            return Err(CheckpointError::DuplicateName {
                name: format!("{METADATA_KEY}.{key}"),
            });
        }
        metadata = parse_metadata(meta.fields)?;
    }
    let mut entries = Vec::with_capacity(top.fields.len());
    for (name, value) in &top.fields {
        entries.push(parse_entry(name, value, data_len)?);
    }
    check_layout(&mut entries, data_len)?;
    Ok(Header {
        entries,
        metadata,
        data_start,
    })
}

/// A JSON object's fields in file order, with the first repeated key and,
/// at the top level, the `__metadata__` object parsed the same way.
#[derive(Default)]
struct Entries {
    fields: Vec<(String, Value)>,
    metadata: Option<Box<Entries>>,
    duplicate: Option<String>,
}

impl<'de> serde::Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Entries, D::Error> {
        struct Fields;
        impl<'de> serde::de::Visitor<'de> for Fields {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Entries, A::Error> {
                let mut out = Entries::default();
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        out.duplicate.get_or_insert(key.clone());
                    }
                    if key == METADATA_KEY {
                        out.metadata = Some(Box::new(map.next_value::<Entries>()?));
                    } else {
                        out.fields.push((key, map.next_value::<Value>()?));
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(Fields)
    }
}

fn parse_metadata(
    fields: Vec<(String, Value)>,
) -> Result<BTreeMap<String, String>, CheckpointError> {
    let bad = |detail: String| CheckpointError::BadHeader { detail };
    fields
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            other => Err(bad(format!(
                "{METADATA_KEY}[{k:?}] is {other}, metadata values must be strings"
            ))),
        })
        .collect()
}

fn parse_entry(name: &str, value: &Value, data_len: u64) -> Result<Entry, CheckpointError> {
    let bad = |detail: &str| CheckpointError::BadEntry {
        name: name.to_string(),
        detail: detail.to_string(),
    };
    let Value::Object(fields) = value else {
        return Err(bad("not an object"));
    };
    let dtype_name = fields
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no \"dtype\" string"))?;
    let dtype = from_header_name(dtype_name).ok_or_else(|| CheckpointError::UnsupportedDType {
        name: name.to_string(),
        dtype: dtype_name.to_string(),
    })?;
    let shape =
        u64_array(fields.get("shape")).ok_or_else(|| bad("no \"shape\" array of integers"))?;
    let offsets = u64_array(fields.get("data_offsets"))
        .filter(|o| o.len() == 2)
        .ok_or_else(|| bad("no \"data_offsets\" pair of integers"))?;
    let (start, end) = (offsets[0], offsets[1]);

    let overflow = || CheckpointError::ShapeOverflow {
        name: name.to_string(),
        shape: shape.clone(),
    };
    let bytes = shape
        .iter()
        .try_fold(dtype.size_in_bytes() as u64, |acc, &d| acc.checked_mul(d))
        .ok_or_else(overflow)?;
    if start > end || end > data_len {
        return Err(CheckpointError::OffsetOutOfRange {
            name: name.to_string(),
            start,
            end,
            data_len,
        });
    }
    // From here on every number is bounded by the data length, which the
    // file actually has, so it fits in usize.
    let shape: Vec<usize> = shape
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| overflow()))
        .collect::<Result<_, _>>()?;
    if end - start != bytes {
        return Err(CheckpointError::ByteSizeMismatch {
            name: name.to_string(),
            dtype,
            shape,
            expected: bytes,
            got: end - start,
        });
    }
    Ok(Entry {
        name: name.to_string(),
        dtype,
        shape,
        start: start as usize,
        end: end as usize,
    })
}

fn u64_array(value: Option<&Value>) -> Option<Vec<u64>> {
    value?.as_array()?.iter().map(Value::as_u64).collect()
}

/// Sorts the entries by offset and checks that they tile the data section
/// exactly: no overlaps, no gaps, nothing left over (as the format
/// requires, and as the safetensors crate checks too).
fn check_layout(entries: &mut [Entry], data_len: u64) -> Result<(), CheckpointError> {
    entries.sort_by(|a, b| (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name)));
    let mut cursor = 0usize;
    let mut previous: Option<&Entry> = None;
    for entry in entries.iter() {
        if entry.start < cursor {
            let other = previous.expect("cursor > 0 only after an entry");
            return Err(CheckpointError::OverlappingData {
                name: entry.name.clone(),
                start: entry.start as u64,
                end: entry.end as u64,
                other: other.name.clone(),
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
