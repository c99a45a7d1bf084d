//! The protocol-buffer messages of an event file, encoded by hand with
//! [`crate::wire`]. The field numbers are those of TensorBoard's
//! `event.proto` (`Event`) and `summary.proto` (`Summary`,
//! `Summary.Value`, `HistogramProto`).

use crate::wire::Message;

/// One value of a `Summary`: a tag and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `simple_value` (field 2): a scalar, stored as `f32` by the format.
    Scalar {
        /// The series' name (`train/loss`).
        tag: String,
        /// The value.
        value: f32,
    },
    /// `histo` (field 5): a `HistogramProto`.
    Histogram {
        /// The series' name.
        tag: String,
        /// The histogram.
        histogram: crate::Histogram,
    },
}

impl Value {
    /// The encoded `Summary.Value` message.
    fn encode(&self) -> Message {
        let mut out = Message::new();
        match self {
            Value::Scalar { tag, value } => {
                out.string(1, tag).float(2, *value);
            }
            Value::Histogram { tag, histogram } => {
                let mut h = Message::new();
                h.double(1, histogram.min)
                    .double(2, histogram.max)
                    .double(3, histogram.num)
                    .double(4, histogram.sum)
                    .double(5, histogram.sum_squares)
                    .packed_doubles(6, &histogram.bucket_limit)
                    .packed_doubles(7, &histogram.bucket);
                out.string(1, tag).message(5, &h);
            }
        }
        out
    }
}

/// What an `Event` carries besides its time and step.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// `file_version` (field 3): the first event of every file,
    /// `"brain.Event:2"`.
    FileVersion(String),
    /// `summary` (field 5): values at this step.
    Summary(Vec<Value>),
}

/// An `Event` message: `wall_time` (field 1, seconds since the Unix
/// epoch), `step` (field 2) and its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Seconds since the Unix epoch.
    pub wall_time: f64,
    /// The training step.
    pub step: i64,
    /// The file version or a summary.
    pub payload: Payload,
}

impl Event {
    /// The encoded message.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Message::new();
        out.double(1, self.wall_time).int64(2, self.step);
        match &self.payload {
            Payload::FileVersion(v) => {
                out.string(3, v);
            }
            Payload::Summary(values) => {
                let mut summary = Message::new();
                for v in values {
                    summary.message(1, &v.encode());
                }
                out.message(5, &summary);
            }
        }
        out.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scalar_event_encodes_field_by_field() {
        let e = Event {
            wall_time: 1.5,
            step: 3,
            payload: Payload::Summary(vec![Value::Scalar {
                tag: "a".into(),
                value: 2.0,
            }]),
        };
        let mut want = vec![0x09]; // field 1, double
        want.extend_from_slice(&1.5f64.to_le_bytes());
        want.extend_from_slice(&[0x10, 0x03]); // field 2, varint 3
        // field 5 (summary) of 10 bytes: field 1 (a value) of 8 bytes: the
        // tag "a" (key, length, byte: 3 bytes), then float 2.0 (key and 4 bytes).
        want.extend_from_slice(&[0x2a, 10, 0x0a, 8, 0x0a, 1, b'a', 0x15]);
        want.extend_from_slice(&2.0f32.to_le_bytes());
        assert_eq!(e.encode(), want);
    }
}
