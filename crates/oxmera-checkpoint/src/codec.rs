//! Dtypes and element bytes: oxmera's dtypes to and from safetensors'.
//!
//! safetensors stores every element little-endian, row-major ("C" order).
//! oxmera's eight dtypes each have an exact counterpart, so a round trip
//! through a file is bit-exact, NaN payloads included.

use oxmera_core::DType;
use oxmera_tensor::HostBuffer;
use safetensors::Dtype;

use crate::CheckpointError;

/// The safetensors dtype of an oxmera dtype.
pub fn to_safetensors(dtype: DType) -> Dtype {
    match dtype {
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
        DType::U8 => Dtype::U8,
        DType::Bool => Dtype::BOOL,
    }
}

/// The oxmera dtype of a dtype as a safetensors header spells it, if
/// oxmera has one (`I8`, `U16`, the 8-bit floats and others have none).
pub fn from_header_name(name: &str) -> Option<DType> {
    Some(match name {
        "F16" => DType::F16,
        "BF16" => DType::BF16,
        "F32" => DType::F32,
        "F64" => DType::F64,
        "I32" => DType::I32,
        "I64" => DType::I64,
        "U8" => DType::U8,
        "BOOL" => DType::Bool,
        _ => return None,
    })
}

/// The elements of a buffer as little-endian bytes.
pub(crate) fn encode(buf: &HostBuffer) -> Vec<u8> {
    buf.to_le_bytes()
}

/// Decodes little-endian bytes, whose length the caller has checked to be
/// a multiple of the dtype's size, into a buffer; a bool byte other than 0
/// or 1 is an error, as safetensors defines them.
pub(crate) fn decode(
    name: &str,
    dtype: DType,
    bytes: &[u8],
) -> Result<HostBuffer, CheckpointError> {
    if dtype == DType::Bool
        && let Some((index, &byte)) = bytes.iter().enumerate().find(|&(_, &b)| b > 1)
    {
        return Err(CheckpointError::InvalidBool {
            name: name.to_string(),
            index,
            byte,
        });
    }
    Ok(HostBuffer::from_le_bytes(dtype, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::bf16;

    #[test]
    fn every_dtype_maps_both_ways() {
        for dtype in [
            DType::F16,
            DType::BF16,
            DType::F32,
            DType::F64,
            DType::I32,
            DType::I64,
            DType::U8,
            DType::Bool,
        ] {
            let st = to_safetensors(dtype);
            assert_eq!(from_header_name(&st.to_string()), Some(dtype));
            assert_eq!(st.bitsize(), 8 * dtype.size_in_bytes());
        }
        assert_eq!(from_header_name("I8"), None);
        assert_eq!(from_header_name("f32"), None);
    }

    #[test]
    fn bytes_are_little_endian() {
        assert_eq!(
            encode(&HostBuffer::I32(vec![1, -2])),
            [1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]
        );
        assert_eq!(encode(&HostBuffer::F32(vec![1.0])), [0, 0, 0x80, 0x3f]);
        assert_eq!(encode(&HostBuffer::BF16(vec![bf16::ONE])), [0x80, 0x3f]);
        assert_eq!(encode(&HostBuffer::Bool(vec![true, false])), [1, 0]);
        let back = decode("t", DType::I32, &[1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff]).unwrap();
        assert_eq!(back, HostBuffer::I32(vec![1, -2]));
        assert!(matches!(
            decode("flags", DType::Bool, &[0, 1, 2]),
            Err(CheckpointError::InvalidBool {
                index: 2,
                byte: 2,
                ..
            })
        ));
    }
}
