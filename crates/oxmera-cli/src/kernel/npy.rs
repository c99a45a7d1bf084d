//! The `.npy` format (NumPy's one-array file), enough to save a kernel's
//! buffer and to read one back or from NumPy: little-endian `f4`, `i4`,
//! `u4`, `b1`, `f8`, `i8`, `u8`, `u1`, `u2` and `f2`, C order, any shape
//! (read flat). NumPy has no bfloat16: a `bf16` buffer is saved as `u2`,
//! its bit patterns, and read back from one. `f8` and `i8` files, what
//! NumPy writes by default, are also read into `f32` and `i32` buffers (the
//! latter refused where a value does not fit).
//!
//! The layout (NumPy's format specification, version 1.0): the magic
//! `\x93NUMPY`, the version bytes, a little-endian header length (2 bytes in
//! version 1, 4 in versions 2 and 3), a Python dict literal padded with
//! spaces to a multiple of 64 bytes and ending in `\n`, then the data.

use oxmera_kernel::ir::{Scalar, Value};
use oxmera_kernel::sim::Buffer;

const MAGIC: &[u8] = b"\x93NUMPY";

/// The bytes of a version-1 `.npy` file holding `b` as a 1-D array.
pub fn encode(b: &Buffer) -> Vec<u8> {
    let descr = match b.elem {
        Scalar::F32 => "<f4",
        Scalar::I32 => "<i4",
        Scalar::U32 => "<u4",
        Scalar::Bool => "|b1",
        Scalar::F64 => "<f8",
        Scalar::I64 => "<i8",
        Scalar::U64 => "<u8",
        Scalar::U8 => "|u1",
        Scalar::U16 | Scalar::BF16 => "<u2",
        Scalar::F16 => "<f2",
    };
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': False, 'shape': ({},), }}",
        b.len()
    );
    // Magic (6) + version (2) + length (2) + header, padded to 64 with `\n` last.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    if b.elem == Scalar::Bool {
        out.extend((0..b.len()).map(|i| u8::from(b.bits(i) != 0)));
    } else {
        // The buffer's bytes are the file's: little-endian, at each type's width.
        out.extend_from_slice(b.as_bytes());
    }
    out
}

/// A buffer of `elem` from `.npy` bytes; `what` names the file in errors.
pub fn decode(bytes: &[u8], elem: Scalar, what: &str) -> Result<Buffer, String> {
    let bad = |why: &str| format!("{what}: not a .npy file this reader takes ({why})");
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(bad("no \\x93NUMPY magic"));
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(&format!("format version {v}"))),
    };
    let header = bytes
        .get(start..start + len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or_else(|| bad("truncated header"))?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}':"))? + key.len() + 3;
        Some(header[at..].trim_start())
    };
    let descr = field("descr")
        .and_then(|s| s.strip_prefix('\'')?.split('\'').next())
        .ok_or_else(|| bad("no descr"))?;
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err(bad("Fortran order; save with np.ascontiguousarray"));
    }
    let shape = field("shape")
        .and_then(|s| s.strip_prefix('(')?.split(')').next())
        .ok_or_else(|| bad("no shape"))?;
    let count = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .try_fold(1usize, |n, d| d.parse::<usize>().ok().map(|d| n * d))
        .ok_or_else(|| bad("unreadable shape"))?;
    let data = &bytes[start + len..];
    let width = match descr {
        "<f4" | "<i4" | "<u4" => 4,
        "<f8" | "<i8" | "<u8" => 8,
        "<u2" | "<f2" => 2,
        "|b1" | "|u1" => 1,
        other => return Err(bad(&format!("dtype `{other}`"))),
    };
    if data.len() != count * width {
        return Err(bad(&format!(
            "{} data bytes for {count} elements of {width} bytes",
            data.len()
        )));
    }
    let wide = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("8 bytes"));
    let values: Vec<Value> = match (descr, elem) {
        ("<f4", Scalar::F32)
        | ("<i4", Scalar::I32)
        | ("<u4", Scalar::U32)
        | ("<f8", Scalar::F64)
        | ("<i8", Scalar::I64)
        | ("<u8", Scalar::U64)
        | ("|u1", Scalar::U8)
        | ("<u2", Scalar::U16 | Scalar::BF16)
        | ("<f2", Scalar::F16) => return Ok(Buffer::from_bytes(elem, data.to_vec())),
        ("<f8", Scalar::F32) => data
            .chunks_exact(8)
            .map(|c| Value::F32(f64::from_bits(wide(c)) as f32))
            .collect(),
        ("<i8", Scalar::I32) => data
            .chunks_exact(8)
            .map(|c| i32::try_from(wide(c) as i64).map(Value::I32))
            .collect::<Result<_, _>>()
            .map_err(|_| format!("{what}: an i64 value does not fit in i32"))?,
        ("|b1" | "|u1", Scalar::Bool) => data.iter().map(|&b| Value::Bool(b != 0)).collect(),
        (d, e) => return Err(format!("{what} holds `{d}` elements; the buffer is of {e}")),
    };
    Ok(Buffer::from_values(elem, &values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_element_type() {
        for b in [
            Buffer::from_f32(&[1.5, -0.0, f32::INFINITY]),
            Buffer::from_i32(&[-7, 0, i32::MAX]),
            Buffer::from_u32(&[0, 1, u32::MAX]),
            Buffer::from_values(
                Scalar::Bool,
                &[Value::Bool(true), Value::Bool(false), Value::Bool(true)],
            ),
            Buffer::from_f64(&[0.1, -1e300]),
            Buffer::from_i64(&[i64::MIN, 3]),
            Buffer::from_u64(&[u64::MAX]),
            Buffer::from_u8(&[0, 255, 7]),
            Buffer::from_u16(&[65535, 1]),
            Buffer::from_f16_bits(&[0x3c00, 0x7c00]),
            Buffer::from_bf16_bits(&[0x3f80, 0xff80]),
        ] {
            let bytes = encode(&b);
            assert_eq!((MAGIC.len() + 4 + (bytes[8] as usize)) % 64, 0);
            assert_eq!(decode(&bytes, b.elem, "t.npy").unwrap(), b);
        }
    }

    #[test]
    fn reads_numpys_float64_default_and_a_2d_shape() {
        // What `np.save(f, np.array([[1.0, 2.5], [3.0, -4.0]]))` writes.
        let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }";
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0]);
        let padded = format!("{header}{}\n", " ".repeat(117 - header.len()));
        bytes.extend_from_slice(&(padded.len() as u16).to_le_bytes());
        bytes.extend_from_slice(padded.as_bytes());
        for v in [1.0f64, 2.5, 3.0, -4.0] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let b = decode(&bytes, Scalar::F32, "x.npy").unwrap();
        assert_eq!(b.to_f32(), [1.0, 2.5, 3.0, -4.0]);
        let e = decode(&bytes, Scalar::U32, "x.npy").unwrap_err();
        assert!(e.contains("`<f8`"), "{e}");
    }

    #[test]
    fn refuses_what_it_cannot_read() {
        assert!(decode(b"not numpy", Scalar::F32, "a").is_err());
        let mut bytes = encode(&Buffer::from_f32(&[1.0, 2.0]));
        bytes.pop();
        let e = decode(&bytes, Scalar::F32, "cut.npy").unwrap_err();
        assert!(e.contains("data bytes"), "{e}");
    }
}
