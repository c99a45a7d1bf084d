//! `TensorDataset`: every sample held in memory, in two flat vectors.

use oxmera_core::{DType, Device};
use oxmera_tensor::Tensor;

use crate::{DataError, Dataset, Sample, Target, TargetKind};

/// The targets of a [`TensorDataset`], flat.
#[derive(Debug, Clone, PartialEq)]
enum Targets {
    Classes {
        labels: Vec<i64>,
        num_classes: usize,
    },
    Values {
        values: Vec<f32>,
        width: usize,
    },
}

/// A data set held in memory: `n` samples of features (row-major `f32`,
/// each filling `feature_shape`) and their targets. The built-in data sets
/// all return this type.
///
/// ```
/// use oxmera_data::{Dataset, Target, TensorDataset};
/// // Three samples of two features, labelled with classes 0..2.
/// let ds = TensorDataset::classification(
///     vec![0.0, 0.1, 1.0, 1.1, 2.0, 2.1], vec![2], vec![0, 1, 1], 2)?;
/// assert_eq!(ds.len(), 3);
/// assert_eq!(ds.get(1)?.features, vec![1.0, 1.1]);
/// assert_eq!(ds.get(1)?.target, Target::Class(1));
/// # Ok::<(), oxmera_data::DataError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDataset {
    features: Vec<f32>,
    feature_shape: Vec<usize>,
    targets: Targets,
}

impl TensorDataset {
    /// A classification data set: `labels[i]` in `0..num_classes` is the
    /// class of the features `features[i * f..(i + 1) * f]`, with `f` the
    /// element count of `feature_shape`.
    pub fn classification(
        features: Vec<f32>,
        feature_shape: impl Into<Vec<usize>>,
        labels: Vec<i64>,
        num_classes: usize,
    ) -> Result<Self, DataError> {
        let op = "TensorDataset::classification";
        if let Some((index, &label)) = labels
            .iter()
            .enumerate()
            .find(|&(_, &l)| l < 0 || l as u64 >= num_classes as u64)
        {
            return Err(DataError::LabelOutOfRange {
                op,
                index,
                label,
                num_classes,
            });
        }
        let n = labels.len();
        Self::build(
            op,
            features,
            feature_shape.into(),
            n,
            Targets::Classes {
                labels,
                num_classes,
            },
        )
    }

    /// A regression data set: sample `i` has the target values
    /// `values[i * width..(i + 1) * width]`.
    pub fn regression(
        features: Vec<f32>,
        feature_shape: impl Into<Vec<usize>>,
        values: Vec<f32>,
        width: usize,
    ) -> Result<Self, DataError> {
        let op = "TensorDataset::regression";
        if width == 0 {
            return Err(DataError::config(
                op,
                "width",
                "need at least one target value",
            ));
        }
        if values.len() % width != 0 {
            return Err(DataError::config(
                op,
                "values",
                format!("{} values do not split into rows of {width}", values.len()),
            ));
        }
        let n = values.len() / width;
        Self::build(
            op,
            features,
            feature_shape.into(),
            n,
            Targets::Values { values, width },
        )
    }

    fn build(
        op: &'static str,
        features: Vec<f32>,
        feature_shape: Vec<usize>,
        n: usize,
        targets: Targets,
    ) -> Result<Self, DataError> {
        let per = feature_shape.iter().product::<usize>();
        if n.checked_mul(per) != Some(features.len()) {
            return Err(DataError::CountMismatch {
                op,
                features: features.len().checked_div(per).unwrap_or(0),
                targets: n,
            });
        }
        Ok(TensorDataset {
            features,
            feature_shape,
            targets,
        })
    }

    /// A data set from tensors: `x` of shape `[n, ..features]` (any dtype,
    /// converted to `f32`) and `y` either integer `[n]` (class labels;
    /// the class count is the largest label plus one) or float `[n]` or
    /// `[n, k]` (regression targets).
    pub fn from_tensors(x: &Tensor, y: &Tensor) -> Result<Self, DataError> {
        let op = "TensorDataset::from_tensors";
        if x.rank() == 0 {
            return Err(oxmera_core::Error::RankMismatch {
                op,
                expected: 1,
                shape: x.shape().clone(),
            }
            .into());
        }
        let features: Vec<f32> = x.to_f64_vec()?.into_iter().map(|v| v as f32).collect();
        let feature_shape = x.dims()[1..].to_vec();
        let n = x.dims()[0];
        if y.rank() == 0 || y.rank() > 2 || y.dims()[0] != n {
            return Err(DataError::CountMismatch {
                op,
                features: n,
                targets: y.dims().first().copied().unwrap_or(1),
            });
        }
        if y.dtype().is_float() {
            let width = if y.rank() == 2 { y.dims()[1] } else { 1 };
            let values = y.to_f64_vec()?.into_iter().map(|v| v as f32).collect();
            Self::build(
                op,
                features,
                feature_shape,
                n,
                Targets::Values { values, width },
            )
        } else {
            if y.rank() != 1 || y.dtype() == DType::Bool {
                return Err(oxmera_core::Error::UnsupportedDType {
                    op,
                    dtype: y.dtype(),
                    hint: "class labels are an integer tensor of shape [n]",
                }
                .into());
            }
            let host = y.to_host()?;
            let labels: Vec<i64> = (0..host.len()).map(|i| host.get_i64(i)).collect();
            let num_classes = labels.iter().max().map_or(0, |&m| m.max(-1) + 1) as usize;
            Self::classification(features, feature_shape, labels, num_classes)
        }
    }

    /// The same samples seen with another feature shape of the same
    /// element count (`[1, 8, 8]` as `[64]` for an MLP, say).
    pub fn with_feature_shape(mut self, shape: impl Into<Vec<usize>>) -> Result<Self, DataError> {
        let shape = shape.into();
        let old: usize = self.feature_shape.iter().product();
        let new: usize = shape.iter().product();
        if old != new {
            return Err(DataError::config(
                "TensorDataset::with_feature_shape",
                "shape",
                format!(
                    "{shape:?} has {new} elements, the features {:?} have {old}",
                    self.feature_shape
                ),
            ));
        }
        self.feature_shape = shape;
        Ok(self)
    }

    /// All features, row-major, `n * feature count` values.
    pub fn features(&self) -> &[f32] {
        &self.features
    }

    /// The class labels, for a classification data set.
    pub fn labels(&self) -> Option<&[i64]> {
        match &self.targets {
            Targets::Classes { labels, .. } => Some(labels),
            Targets::Values { .. } => None,
        }
    }

    /// The regression targets, row-major, for a regression data set.
    pub fn values(&self) -> Option<&[f32]> {
        match &self.targets {
            Targets::Values { values, .. } => Some(values),
            Targets::Classes { .. } => None,
        }
    }

    /// The whole data set as two tensors on `device`: `x` `[n, ..features]`
    /// `f32`, and `y` `[n]` `i64` or `[n, k]` `f32`.
    pub fn to_tensors(&self, device: Device) -> Result<(Tensor, Tensor), DataError> {
        let n = self.len();
        let mut x_shape = vec![n];
        x_shape.extend_from_slice(&self.feature_shape);
        let x = Tensor::from_slice(&self.features, x_shape, device)?;
        let y = match &self.targets {
            Targets::Classes { labels, .. } => Tensor::from_slice(labels, [n], device)?,
            Targets::Values { values, width } => Tensor::from_slice(values, [n, *width], device)?,
        };
        Ok((x, y))
    }
}

impl Dataset for TensorDataset {
    fn len(&self) -> usize {
        match &self.targets {
            Targets::Classes { labels, .. } => labels.len(),
            Targets::Values { values, width } => values.len() / width,
        }
    }

    fn feature_shape(&self) -> &[usize] {
        &self.feature_shape
    }

    fn target_kind(&self) -> TargetKind {
        match &self.targets {
            Targets::Classes { num_classes, .. } => TargetKind::Classes {
                num_classes: *num_classes,
            },
            Targets::Values { width, .. } => TargetKind::Values { width: *width },
        }
    }

    fn get(&self, index: usize) -> Result<Sample, DataError> {
        let len = self.len();
        if index >= len {
            return Err(DataError::IndexOutOfRange {
                op: "TensorDataset::get",
                index,
                len,
            });
        }
        let per: usize = self.feature_shape.iter().product();
        let features = self.features[index * per..(index + 1) * per].to_vec();
        let target = match &self.targets {
            Targets::Classes { labels, .. } => Target::Class(labels[index]),
            Targets::Values { values, width } => {
                Target::Values(values[index * width..(index + 1) * width].to_vec())
            }
        };
        Ok(Sample { features, target })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_reference as _;

    #[test]
    fn classification_checks_counts_and_labels() {
        let bad_count = TensorDataset::classification(vec![0.0; 5], vec![2], vec![0, 1, 0], 2);
        assert!(matches!(
            bad_count,
            Err(DataError::CountMismatch {
                features: 2,
                targets: 3,
                ..
            })
        ));
        let bad_label = TensorDataset::classification(vec![0.0; 6], vec![2], vec![0, 2, 0], 2);
        assert!(matches!(
            bad_label,
            Err(DataError::LabelOutOfRange {
                index: 1,
                label: 2,
                num_classes: 2,
                ..
            })
        ));
        let negative = TensorDataset::classification(vec![0.0; 2], vec![2], vec![-1], 2);
        assert!(matches!(
            negative,
            Err(DataError::LabelOutOfRange { label: -1, .. })
        ));
    }

    #[test]
    fn regression_rows_and_get() {
        let ds = TensorDataset::regression(
            vec![1.0, 2.0, 3.0],
            vec![1],
            vec![10.0, 11.0, 20.0, 21.0, 30.0, 31.0],
            2,
        )
        .unwrap();
        assert_eq!(ds.len(), 3);
        assert_eq!(ds.target_kind(), TargetKind::Values { width: 2 });
        assert_eq!(ds.get(2).unwrap().target, Target::Values(vec![30.0, 31.0]));
        assert!(matches!(
            ds.get(3),
            Err(DataError::IndexOutOfRange {
                index: 3,
                len: 3,
                ..
            })
        ));
        assert!(TensorDataset::regression(vec![], vec![1], vec![1.0; 3], 2).is_err());
    }

    #[test]
    fn tensors_round_trip() {
        let x = Tensor::from_vec(
            vec![0.5f32, 1.5, 2.5, 3.5, 4.5, 5.5],
            [3, 2],
            Device::Reference,
        )
        .unwrap();
        let y = Tensor::from_vec(vec![2i64, 0, 1], [3], Device::Reference).unwrap();
        let ds = TensorDataset::from_tensors(&x, &y).unwrap();
        assert_eq!(ds.target_kind(), TargetKind::Classes { num_classes: 3 });
        assert_eq!(ds.get(0).unwrap().features, vec![0.5, 1.5]);
        let (x2, y2) = ds.to_tensors(Device::Reference).unwrap();
        assert_eq!(x2.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
        assert_eq!(y2.to_vec::<i64>().unwrap(), vec![2, 0, 1]);
        assert_eq!(x2.dims(), &[3, 2]);

        // A transposed (non-contiguous) x is read in logical order.
        let xt = Tensor::from_vec(
            vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0],
            [2, 3],
            Device::Reference,
        )
        .unwrap()
        .t()
        .unwrap();
        let ds = TensorDataset::from_tensors(&xt, &y).unwrap();
        assert_eq!(ds.get(1).unwrap().features, vec![1.0, 4.0]);
    }

    #[test]
    fn feature_shape_must_keep_the_count() {
        let ds = TensorDataset::classification(vec![0.0; 8], vec![2, 2], vec![0, 1], 2).unwrap();
        let flat = ds.clone().with_feature_shape(vec![4]).unwrap();
        assert_eq!(flat.feature_shape(), &[4]);
        assert!(ds.with_feature_shape(vec![3]).is_err());
    }
}
