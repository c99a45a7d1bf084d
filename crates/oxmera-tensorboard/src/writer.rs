//! [`SummaryWriter`]: one event file, written an event at a time.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::proto::{Event, Payload, Value};
use crate::record::frame;

/// A histogram of values, as TensorBoard's `HistogramProto` holds it:
/// summary statistics and bucket counts, bucket `i` covering
/// `(bucket_limit[i-1], bucket_limit[i]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// How many values.
    pub num: f64,
    /// Their sum.
    pub sum: f64,
    /// The sum of their squares.
    pub sum_squares: f64,
    /// Each bucket's right edge, increasing.
    pub bucket_limit: Vec<f64>,
    /// Each bucket's count.
    pub bucket: Vec<f64>,
}

impl Histogram {
    /// `buckets` equal-width buckets over the finite values' range (one
    /// bucket when they are all equal). Non-finite values are left out:
    /// TensorBoard's histogram view has no place for them, and a NaN in a
    /// weight shows in the scalar curves first.
    pub fn from_values(values: &[f64], buckets: usize) -> Histogram {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let (min, max) = finite
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        let num = finite.len() as f64;
        let sum = finite.iter().sum();
        let sum_squares = finite.iter().map(|v| v * v).sum();
        if finite.is_empty() {
            return Histogram {
                min: 0.0,
                max: 0.0,
                num: 0.0,
                sum: 0.0,
                sum_squares: 0.0,
                bucket_limit: vec![0.0],
                bucket: vec![0.0],
            };
        }
        let k = if max > min { buckets.max(1) } else { 1 };
        let width = (max - min) / k as f64;
        let mut bucket_limit: Vec<f64> = (1..=k).map(|i| min + width * i as f64).collect();
        // The last edge is the maximum itself, whatever the rounding.
        bucket_limit[k - 1] = max;
        let mut bucket = vec![0.0; k];
        for &v in &finite {
            let i = if width > 0.0 {
                (((v - min) / width).ceil() as usize).clamp(1, k) - 1
            } else {
                0
            };
            bucket[i] += 1.0;
        }
        Histogram {
            min,
            max,
            num,
            sum,
            sum_squares,
            bucket_limit,
            bucket,
        }
    }
}

/// Writes one TensorBoard event file in a log directory: the version
/// event first, then one event per call, each framed, written whole and
/// flushed before the call returns (see the crate docs for why).
#[derive(Debug)]
pub struct SummaryWriter {
    file: BufWriter<File>,
    path: PathBuf,
}

/// Distinguishes files one process opens in one second.
static OPENED: AtomicU64 = AtomicU64::new(0);

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl SummaryWriter {
    /// A new event file in `dir` (created if missing), named
    /// `events.out.tfevents.SECONDS.oxmera.PID.N` — TensorBoard reads
    /// every file whose name holds `tfevents`, and a new name per writer
    /// means a resumed run never overwrites the file of the run before.
    pub fn create(dir: impl AsRef<Path>) -> io::Result<SummaryWriter> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir)?;
        let seconds = now() as u64;
        loop {
            let n = OPENED.fetch_add(1, Ordering::Relaxed);
            let name = format!(
                "events.out.tfevents.{seconds:010}.oxmera.{}.{n}",
                std::process::id()
            );
            let path = dir.join(name);
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => {
                    let mut writer = SummaryWriter {
                        file: BufWriter::new(file),
                        path,
                    };
                    writer.write(&Event {
                        wall_time: now(),
                        step: 0,
                        payload: Payload::FileVersion("brain.Event:2".into()),
                    })?;
                    return Ok(writer);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `value` of the series `tag` at `step` (stored as `f32`, as
    /// TensorBoard's scalars are).
    pub fn add_scalar(&mut self, tag: &str, value: f64, step: u64) -> io::Result<()> {
        self.add_scalars(&[(tag, value)], step)
    }

    /// Several series at one step, in one event.
    pub fn add_scalars(&mut self, values: &[(&str, f64)], step: u64) -> io::Result<()> {
        let values = values
            .iter()
            .map(|(tag, value)| Value::Scalar {
                tag: (*tag).to_string(),
                value: *value as f32,
            })
            .collect();
        self.summary(values, step)
    }

    /// A histogram of `values` (30 buckets) for the series `tag`.
    pub fn add_histogram(&mut self, tag: &str, values: &[f64], step: u64) -> io::Result<()> {
        let histogram = Histogram::from_values(values, 30);
        self.summary(
            vec![Value::Histogram {
                tag: tag.to_string(),
                histogram,
            }],
            step,
        )
    }

    fn summary(&mut self, values: Vec<Value>, step: u64) -> io::Result<()> {
        self.write(&Event {
            wall_time: now(),
            step: i64::try_from(step).unwrap_or(i64::MAX),
            payload: Payload::Summary(values),
        })
    }

    fn write(&mut self, event: &Event) -> io::Result<()> {
        self.file.write_all(&frame(&event.encode()))?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_count_every_finite_value_once() {
        let h = Histogram::from_values(&[0.0, 1.0, 2.0, 3.0, 4.0, f64::NAN], 4);
        assert_eq!(
            (h.min, h.max, h.num, h.sum, h.sum_squares),
            (0.0, 4.0, 5.0, 10.0, 30.0)
        );
        assert_eq!(h.bucket_limit, [1.0, 2.0, 3.0, 4.0]);
        // (−∞, 1] holds 0 and 1; then 2, 3, 4 one each.
        assert_eq!(h.bucket, [2.0, 1.0, 1.0, 1.0]);
        let flat = Histogram::from_values(&[2.0, 2.0], 30);
        assert_eq!((flat.bucket_limit, flat.bucket), (vec![2.0], vec![2.0]));
        assert_eq!(Histogram::from_values(&[], 30).num, 0.0);
    }
}
