//! The `DataLoader`: batches of a data set as tensors, in a seeded order.

use oxmera_core::Device;
use oxmera_tensor::Tensor;

use crate::random::permutation;
use crate::{DataError, Dataset, Target, TargetKind};

/// The order the loader visits samples in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// `0, 1, 2, …` every epoch (for evaluation).
    Sequential,
    /// A fresh permutation every epoch, a pure function of `(seed, epoch)`:
    /// the same pair always gives the same order, so a run resumed at
    /// epoch `e` sees exactly the batches it would have seen.
    Shuffled {
        /// The seed of the shuffle.
        seed: u64,
    },
}

/// How a [`DataLoader`] batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoaderConfig {
    /// Samples per batch (at least 1).
    pub batch_size: usize,
    /// The visiting order.
    pub order: Order,
    /// Whether to drop a last batch smaller than `batch_size` (so every
    /// batch has the same shape) instead of yielding it.
    pub drop_last: bool,
    /// The device the batch tensors are made on.
    pub device: Device,
}

impl LoaderConfig {
    /// Sequential batches of `batch_size` on the default device
    /// ([`Device::default`], the CPU backend, where layer configs put their
    /// parameters too), keeping the last short batch.
    pub fn new(batch_size: usize) -> Self {
        LoaderConfig {
            batch_size,
            order: Order::Sequential,
            drop_last: false,
            device: Device::default(),
        }
    }

    /// The same, shuffled with `seed`.
    pub fn shuffled(self, seed: u64) -> Self {
        LoaderConfig {
            order: Order::Shuffled { seed },
            ..self
        }
    }

    /// The same, dropping a short last batch.
    pub fn drop_last(self) -> Self {
        LoaderConfig {
            drop_last: true,
            ..self
        }
    }

    /// The same, on `device`.
    pub fn on(self, device: Device) -> Self {
        LoaderConfig { device, ..self }
    }
}

/// One batch: `x` is `f32` `[B, ..feature shape]`; `y` is `i64` `[B]` for
/// class targets or `f32` `[B, k]` for `k` real values.
#[derive(Debug, Clone)]
pub struct Batch {
    /// The features.
    pub x: Tensor,
    /// The targets.
    pub y: Tensor,
    /// The data-set indices of the samples, in batch order.
    pub indices: Vec<usize>,
}

/// Cuts a data set into batches, epoch by epoch.
///
/// ```
/// use oxmera_data::{DataLoader, Dataset, LoaderConfig};
/// # use oxmera_cpu as _; // links the CPU backend (the default device)
/// let digits = oxmera_data::digits()?;
/// let loader = DataLoader::new(&digits, LoaderConfig::new(64).shuffled(7).drop_last())?;
/// assert_eq!(loader.num_batches(), 1797 / 64);
/// let first = loader.epoch(0).next().unwrap()?;
/// assert_eq!(first.x.dims(), &[64, 1, 8, 8]);
/// assert_eq!(first.y.dims(), &[64]);
/// # Ok::<(), oxmera_data::DataError>(())
/// ```
#[derive(Debug, Clone)]
pub struct DataLoader<D> {
    dataset: D,
    config: LoaderConfig,
}

impl<D: Dataset> DataLoader<D> {
    /// A loader over `dataset` (pass `&dataset` to keep ownership).
    pub fn new(dataset: D, config: LoaderConfig) -> Result<Self, DataError> {
        if config.batch_size == 0 {
            return Err(DataError::config(
                "DataLoader::new",
                "batch_size",
                "need at least one sample per batch, got 0",
            ));
        }
        Ok(DataLoader { dataset, config })
    }

    /// The data set.
    pub fn dataset(&self) -> &D {
        &self.dataset
    }

    /// The configuration.
    pub fn config(&self) -> &LoaderConfig {
        &self.config
    }

    /// Batches per epoch.
    pub fn num_batches(&self) -> usize {
        let (n, b) = (self.dataset.len(), self.config.batch_size);
        if self.config.drop_last {
            n / b
        } else {
            n.div_ceil(b)
        }
    }

    /// The order samples are visited in during `epoch`.
    pub fn order(&self, epoch: u64) -> Vec<usize> {
        let n = self.dataset.len();
        match self.config.order {
            Order::Sequential => (0..n).collect(),
            Order::Shuffled { seed } => permutation(n, seed, epoch),
        }
    }

    /// The batches of `epoch`, in order.
    pub fn epoch(&self, epoch: u64) -> Batches<'_, D> {
        self.epoch_from(epoch, 0)
    }

    /// The batches of `epoch` from batch `first` on: resuming a run in the
    /// middle of an epoch skips the batches it already saw without
    /// building them.
    pub fn epoch_from(&self, epoch: u64, first: usize) -> Batches<'_, D> {
        Batches {
            loader: self,
            order: self.order(epoch),
            next: first,
            count: self.num_batches(),
        }
    }

    /// Builds the batch of the samples at `indices` (any indices, any
    /// count at least 1).
    pub fn batch(&self, indices: &[usize]) -> Result<Batch, DataError> {
        collate(&self.dataset, indices, self.config.device)
    }
}

/// The batches of one epoch (see [`DataLoader::epoch`]).
#[derive(Debug)]
pub struct Batches<'a, D> {
    loader: &'a DataLoader<D>,
    order: Vec<usize>,
    next: usize,
    count: usize,
}

impl<D: Dataset> Iterator for Batches<'_, D> {
    type Item = Result<Batch, DataError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.count {
            return None;
        }
        let b = self.loader.config.batch_size;
        let start = self.next * b;
        let end = (start + b).min(self.order.len());
        self.next += 1;
        Some(self.loader.batch(&self.order[start..end]))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.count.saturating_sub(self.next);
        (left, Some(left))
    }
}

impl<D: Dataset> ExactSizeIterator for Batches<'_, D> {}

/// Stacks the samples at `indices` into one batch on `device`, checking
/// each against the data set's declared feature shape and target kind.
pub fn collate<D: Dataset + ?Sized>(
    dataset: &D,
    indices: &[usize],
    device: Device,
) -> Result<Batch, DataError> {
    const OP: &str = "collate";
    let shape = dataset.feature_shape();
    let per: usize = shape.iter().product();
    let kind = dataset.target_kind();
    let b = indices.len();
    let mut x = Vec::with_capacity(b * per);
    let mut labels = Vec::new();
    let mut values = Vec::new();
    for &index in indices {
        let sample = dataset.get(index)?;
        if sample.features.len() != per {
            return Err(DataError::FeatureLength {
                op: OP,
                index,
                shape: shape.to_vec(),
                expected: per,
                got: sample.features.len(),
            });
        }
        x.extend_from_slice(&sample.features);
        match (kind, sample.target) {
            (TargetKind::Classes { num_classes }, Target::Class(label)) => {
                if label < 0 || label as u64 >= num_classes as u64 {
                    return Err(DataError::LabelOutOfRange {
                        op: OP,
                        index,
                        label,
                        num_classes,
                    });
                }
                labels.push(label);
            }
            (TargetKind::Values { width }, Target::Values(v)) if v.len() == width => {
                values.extend_from_slice(&v);
            }
            (kind, target) => {
                return Err(DataError::TargetMismatch {
                    op: OP,
                    index,
                    expected: kind.to_string(),
                    got: target.to_string(),
                });
            }
        }
    }
    let mut x_shape = Vec::with_capacity(shape.len() + 1);
    x_shape.push(b);
    x_shape.extend_from_slice(shape);
    let x = Tensor::from_vec(x, x_shape, device)?;
    let y = match kind {
        TargetKind::Classes { .. } => Tensor::from_vec(labels, [b], device)?,
        TargetKind::Values { width } => Tensor::from_vec(values, [b, width], device)?,
    };
    Ok(Batch {
        x,
        y,
        indices: indices.to_vec(),
    })
}
