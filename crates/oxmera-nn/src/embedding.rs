//! The lookup-table layer.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_tensor::{Generator, Tensor};

use crate::{Module, ModuleState, Param, join_name};

/// A table of `num_embeddings` vectors of width `dim`: integer indices of
/// any shape `[…]` become vectors `[…, dim]`.
///
/// The weight `[num_embeddings, dim]` is drawn from `N(0, 1)`, as
/// PyTorch's `nn.Embedding`. Its gradient accumulates where an index
/// repeats (the lookup is an `index_select`, whose backward adds).
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{Embedding, Module};
/// use oxmera_tensor::{Generator, Tensor};
/// let emb = Embedding::new(3, 2, &mut Generator::new(0), DType::F32, Device::Reference)?;
/// emb.weight().set(Tensor::from_vec(vec![0.0f32, 1.0, 10.0, 11.0, 20.0, 21.0], [3, 2], Device::Reference)?)?;
/// let ids = Tensor::from_vec(vec![2i64, 0, 2], [1, 3], Device::Reference)?;
/// let v = emb.forward(&ids)?;
/// assert_eq!(v.dims(), &[1, 3, 2]);
/// assert_eq!(v.to_vec::<f32>()?, vec![20.0, 21.0, 0.0, 1.0, 20.0, 21.0]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Embedding {
    weight: Param,
    num_embeddings: usize,
    dim: usize,
}

impl Embedding {
    /// A table of `num_embeddings` rows of width `dim`, drawn from `rng`
    /// in `dtype` (a float) on `device`.
    #[track_caller]
    pub fn new(
        num_embeddings: usize,
        dim: usize,
        rng: &mut Generator,
        dtype: DType,
        device: Device,
    ) -> Result<Embedding> {
        let weight = rng.randn([num_embeddings, dim], dtype, device)?;
        Embedding::from_weight(weight)
    }

    /// A table holding `weight` `[num_embeddings, dim]` (a float tensor),
    /// trainable. [`Error::RankMismatch`] unless it is 2-D.
    pub fn from_weight(weight: Tensor) -> Result<Embedding> {
        if weight.rank() != 2 {
            return Err(Error::RankMismatch {
                op: "Embedding",
                expected: 2,
                shape: weight.shape().clone(),
            });
        }
        let (num_embeddings, dim) = (weight.dims()[0], weight.dims()[1]);
        Ok(Embedding {
            weight: Param::new(weight)?,
            num_embeddings,
            dim,
        })
    }

    /// The table, `[num_embeddings, dim]`.
    pub fn weight(&self) -> &Param {
        &self.weight
    }

    /// The number of rows.
    pub fn num_embeddings(&self) -> usize {
        self.num_embeddings
    }

    /// The width of each vector.
    pub fn dim(&self) -> usize {
        self.dim
    }
}

impl Module for Embedding {
    /// `x` holds `i64` or `i32` indices in `0..num_embeddings`
    /// ([`Error::UnsupportedDType`] / [`Error::IndexOutOfBounds`] otherwise,
    /// named `"Embedding"`).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        const OP: &str = "Embedding";
        if !matches!(x.dtype(), DType::I64 | DType::I32) {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: x.dtype(),
                hint: "embedding indices are i64 or i32",
            });
        }
        let flat = x.reshape([x.numel()])?;
        let rows = self
            .weight
            .tensor()
            .index_select(0, &flat)
            .map_err(|e| match e {
                Error::IndexOutOfBounds {
                    index, dim, size, ..
                } => Error::IndexOutOfBounds {
                    op: OP,
                    index,
                    dim,
                    size,
                },
                other => other,
            })?;
        let mut shape = x.dims().to_vec();
        shape.push(self.dim);
        rows.reshape(shape)
    }
}

impl ModuleState for Embedding {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        out.push((join_name(prefix, "weight"), self.weight.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;

    #[test]
    fn repeated_indices_accumulate_gradient() {
        let emb = Embedding::new(4, 2, &mut Generator::new(0), DType::F64, DEV).unwrap();
        let ids = ti(&[1, 3, 1, 1], [2, 2]);
        emb.forward(&ids)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let g = emb.weight().grad().unwrap().to_f64_vec().unwrap();
        assert_eq!(g, vec![0.0, 0.0, 3.0, 3.0, 0.0, 0.0, 1.0, 1.0]);
    }

    #[test]
    fn init_is_standard_normal_from_the_generator() {
        let emb = Embedding::new(3, 5, &mut Generator::new(8), DType::F64, DEV).unwrap();
        let hand = Generator::new(8).randn([3, 5], DType::F64, DEV).unwrap();
        assert_eq!(
            emb.weight().tensor().to_f64_vec().unwrap(),
            hand.to_f64_vec().unwrap()
        );
        assert_eq!((emb.num_embeddings(), emb.dim()), (3, 5));
    }

    #[test]
    fn bad_indices_are_named() {
        let emb = Embedding::new(3, 2, &mut Generator::new(0), DType::F32, DEV).unwrap();
        assert_eq!(
            emb.forward(&ti(&[0, 3], [2])).unwrap_err(),
            Error::IndexOutOfBounds {
                op: "Embedding",
                index: 3,
                dim: 0,
                size: 3
            }
        );
        assert!(matches!(
            emb.forward(&t32(&[0.0], [1])),
            Err(Error::UnsupportedDType {
                op: "Embedding",
                ..
            })
        ));
        assert!(matches!(
            Embedding::from_weight(t32(&[0.0; 3], [3])),
            Err(Error::RankMismatch {
                op: "Embedding",
                ..
            })
        ));
    }
}
