//! Record framing (TFRecord) with masked CRC-32C, and a small reader.
//!
//! A record is `u64 length` (little-endian), `u32 masked_crc32c(length
//! bytes)`, the payload, `u32 masked_crc32c(payload)`. The CRC is
//! CRC-32C (Castagnoli, reflected polynomial `0x82F63B78`); "masked" is
//! `rotate_right(crc, 15) + 0xa282ead8`, which TensorFlow applies so that
//! a CRC computed over data that itself contains CRCs stays well mixed.
//!
//! The reader exists so that tests (and a curious learner) can check a
//! file without TensorBoard: it verifies every CRC, decodes the scalar
//! values, and stops at a torn tail — a record cut short by a kill — the
//! way TensorBoard's own reader does, keeping what came before it.

use std::io;
use std::path::Path;

/// The CRC-32C table, built at compile time.
const TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC-32C (Castagnoli) of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc = TABLE[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// TensorFlow's masked CRC of `data`.
pub fn masked_crc32c(data: &[u8]) -> u32 {
    crc32c(data).rotate_right(15).wrapping_add(0xa282_ead8)
}

/// `payload` framed as one record.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u64).to_le_bytes();
    let mut out = Vec::with_capacity(payload.len() + 16);
    out.extend_from_slice(&len);
    out.extend_from_slice(&masked_crc32c(&len).to_le_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&masked_crc32c(payload).to_le_bytes());
    out
}

/// A scalar read back from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarPoint {
    /// The step of its event.
    pub step: i64,
    /// Its tag.
    pub tag: String,
    /// Its value (`f32` in the file).
    pub value: f32,
}

/// What [`read_events`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Events {
    /// Complete records with correct CRCs.
    pub records: usize,
    /// The scalar values among them, in file order.
    pub scalars: Vec<ScalarPoint>,
    /// Why reading stopped before the end of the file, if it did (a record
    /// cut short, or a CRC that does not match).
    pub torn_tail: Option<String>,
}

/// Reads the records of the event file at `path` (see [`Events`]).
pub fn read_events(path: impl AsRef<Path>) -> io::Result<Events> {
    Ok(parse_events(&std::fs::read(path)?))
}

/// [`read_events`] over bytes in memory.
pub fn parse_events(mut data: &[u8]) -> Events {
    let mut events = Events::default();
    while !data.is_empty() {
        match next_record(data) {
            Ok((payload, rest)) => {
                events.records += 1;
                scalars_of(payload, &mut events.scalars);
                data = rest;
            }
            Err(why) => {
                events.torn_tail = Some(why);
                break;
            }
        }
    }
    events
}

fn next_record(data: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let take4 = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if data.len() < 12 {
        return Err(format!("a record header cut short ({} bytes)", data.len()));
    }
    let len_bytes = &data[..8];
    if take4(&data[8..12]) != masked_crc32c(len_bytes) {
        return Err("the length's CRC does not match".into());
    }
    let len = u64::from_le_bytes(len_bytes.try_into().expect("8 bytes"));
    let available = (data.len() - 12) as u64;
    if available < len.saturating_add(4) {
        return Err(format!(
            "a record of {len} bytes cut short ({available} bytes follow its header)"
        ));
    }
    let len = len as usize;
    let payload = &data[12..12 + len];
    if take4(&data[12 + len..16 + len]) != masked_crc32c(payload) {
        return Err("a payload's CRC does not match".into());
    }
    Ok((payload, &data[16 + len..]))
}

/// A protobuf field: its number and value (varint, fixed bytes or a
/// length-delimited slice).
enum Field<'a> {
    Varint(u64),
    Fixed(&'a [u8]),
    Bytes(&'a [u8]),
}

/// The fields of one message; stops quietly at anything malformed (the
/// CRC has already vouched for the bytes).
fn fields(mut data: &[u8]) -> Vec<(u64, Field<'_>)> {
    fn varint(data: &mut &[u8]) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = data.split_first()?;
            *data = rest;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let mut out = Vec::new();
    while let Some(key) = varint(&mut data) {
        let field = match key & 7 {
            0 => match varint(&mut data) {
                Some(v) => Field::Varint(v),
                None => break,
            },
            1 | 5 => {
                let n = if key & 7 == 1 { 8 } else { 4 };
                if data.len() < n {
                    break;
                }
                let (value, rest) = data.split_at(n);
                data = rest;
                Field::Fixed(value)
            }
            2 => match varint(&mut data) {
                Some(n) if (n as usize) <= data.len() => {
                    let (value, rest) = data.split_at(n as usize);
                    data = rest;
                    Field::Bytes(value)
                }
                _ => break,
            },
            _ => break,
        };
        out.push((key >> 3, field));
    }
    out
}

/// Appends the scalars of one `Event` payload to `out`.
fn scalars_of(event: &[u8], out: &mut Vec<ScalarPoint>) {
    let mut step = 0i64;
    let mut summary = None;
    for (number, field) in fields(event) {
        match (number, field) {
            (2, Field::Varint(v)) => step = v as i64,
            (5, Field::Bytes(s)) => summary = Some(s),
            _ => {}
        }
    }
    let Some(summary) = summary else { return };
    for (number, field) in fields(summary) {
        let (1, Field::Bytes(value)) = (number, field) else {
            continue;
        };
        let (mut tag, mut scalar) = (None, None);
        for (n, f) in fields(value) {
            match (n, f) {
                (1, Field::Bytes(t)) => tag = Some(String::from_utf8_lossy(t).into_owned()),
                (2, Field::Fixed(b)) if b.len() == 4 => {
                    scalar = Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                }
                _ => {}
            }
        }
        if let (Some(tag), Some(value)) = (tag, scalar) {
            out.push(ScalarPoint { step, tag, value });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_its_published_check_value() {
        // The standard check: CRC-32C of "123456789" is 0xE3069283
        // (RFC 3720, appendix B.4 lists the same polynomial).
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn a_framed_record_reads_back_and_any_cut_is_a_torn_tail() {
        let mut file = frame(b"first");
        file.extend(frame(b"second"));
        let whole = parse_events(&file);
        assert_eq!((whole.records, whole.torn_tail.is_none()), (2, true));
        for cut in 1..frame(b"second").len() {
            let torn = parse_events(&file[..file.len() - cut]);
            assert_eq!(torn.records, 1, "cut {cut}");
            assert!(torn.torn_tail.is_some(), "cut {cut}");
        }
        let mut flipped = file.clone();
        let last = flipped.len() - 6;
        flipped[last] ^= 1;
        let bad = parse_events(&flipped);
        assert_eq!(bad.records, 1);
        assert!(bad.torn_tail.unwrap().contains("CRC"));
    }
}
