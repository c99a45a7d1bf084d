//! Protocol-buffer wire encoding: the few field types event files (and
//! oxmera's ONNX export) need, written by hand.
//!
//! A message is a sequence of fields, each a key (`field number << 3 |
//! wire type`, as a varint) and a value: a varint (type 0: integers,
//! enums, bools), eight little-endian bytes (type 1: `double`), a length
//! and that many bytes (type 2: strings, bytes, nested messages, packed
//! repeated numbers), or four little-endian bytes (type 5: `float`). A
//! repeated field is its field written once per element (or, packed, one
//! length-delimited run); parsers accept both for numbers.
//!
//! ```
//! use oxmera_tensorboard::wire::Message;
//! let mut m = Message::new();
//! m.varint(1, 150);
//! assert_eq!(m.as_bytes(), [0x08, 0x96, 0x01]); // the protobuf docs' own example
//! ```

/// A message being encoded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message(Vec<u8>);

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

impl Message {
    /// An empty message.
    pub fn new() -> Message {
        Message(Vec::new())
    }

    fn key(&mut self, field: u32, wire_type: u8) {
        push_varint(&mut self.0, (u64::from(field) << 3) | u64::from(wire_type));
    }

    /// A varint field (`int32`, `int64`, `uint64`, `bool`, enums; a
    /// negative `int64` is its two's-complement bits, ten bytes).
    pub fn varint(&mut self, field: u32, value: u64) -> &mut Message {
        self.key(field, 0);
        push_varint(&mut self.0, value);
        self
    }

    /// An `int64` field.
    pub fn int64(&mut self, field: u32, value: i64) -> &mut Message {
        self.varint(field, value as u64)
    }

    /// A `double` field.
    pub fn double(&mut self, field: u32, value: f64) -> &mut Message {
        self.key(field, 1);
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// A `float` field.
    pub fn float(&mut self, field: u32, value: f32) -> &mut Message {
        self.key(field, 5);
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// A `bytes` field.
    pub fn bytes(&mut self, field: u32, value: &[u8]) -> &mut Message {
        self.key(field, 2);
        push_varint(&mut self.0, value.len() as u64);
        self.0.extend_from_slice(value);
        self
    }

    /// A `string` field.
    pub fn string(&mut self, field: u32, value: &str) -> &mut Message {
        self.bytes(field, value.as_bytes())
    }

    /// A nested message field.
    pub fn message(&mut self, field: u32, value: &Message) -> &mut Message {
        self.bytes(field, &value.0)
    }

    /// A packed repeated `double` field.
    pub fn packed_doubles(&mut self, field: u32, values: &[f64]) -> &mut Message {
        let body: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.bytes(field, &body)
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The encoded bytes, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_seven_bits_a_byte_low_first() {
        let mut m = Message::new();
        m.varint(1, 300); // 0b1_0010_1100
        assert_eq!(m.as_bytes(), [0x08, 0xac, 0x02]);
        let mut m = Message::new();
        m.int64(1, -1);
        assert_eq!(m.as_bytes().len(), 1 + 10);
    }

    #[test]
    fn nested_messages_are_length_delimited() {
        let mut inner = Message::new();
        inner.string(1, "a");
        let mut outer = Message::new();
        outer.message(3, &inner);
        assert_eq!(outer.as_bytes(), [0x1a, 3, 0x0a, 1, b'a']);
    }
}
