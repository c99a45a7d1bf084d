//! Layout classes: how an input's elements sit in its storage.
//!
//! A backend's fast paths usually assume contiguous, zero-offset input;
//! each class here breaks one assumption, so a backend that forgets the
//! general strided path fails a named class instead of a vague case. The
//! input is built as a *leaf* tensor over the backing storage plus a chain
//! of public view ops (`permute`, `slice`, `narrow`, `broadcast_to`), so
//! the gradient of the backing leaf also exercises the views' backward
//! rules.
//!
//! Storage positions that the view does not reach hold a sentinel value,
//! so a backend that reads outside the view produces a visible mismatch.

use oxmera_core::{DType, Device, Result, Shape};
use oxmera_tensor::{HostBuffer, Tensor};
use serde::Deserialize;

/// How an input's elements are laid out in its storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayoutClass {
    /// Row-major, no gaps, offset 0.
    Contiguous,
    /// Stored with the dims reversed and viewed through a permutation, so
    /// the last dim has the largest stride (rank ≥ 2).
    Permuted,
    /// Every dim taken with step 2 from offset 1 of a larger storage:
    /// strides of twice the usual, gaps between elements (rank ≥ 1).
    Sliced,
    /// The first dim (and the last, at rank ≥ 2) stretched from size 1
    /// with stride 0: one stored element serves a whole dim (rank ≥ 1).
    Broadcast,
    /// Contiguous strides, but starting a few elements into a larger
    /// storage. An empty input with a zero dim before its last is viewed
    /// instead from *empty* storage at an offset past its end, as
    /// `zeros([0, 3]).narrow(1, 1, 2)` is: a kernel that slices
    /// `storage[offset..offset + n]` before looking at `n` fails there.
    Offset,
}

/// How many elements of storage precede an [`LayoutClass::Offset`] input
/// (and follow it).
const OFFSET_PAD: usize = 3;

impl LayoutClass {
    /// Every class, in the order the report lists them.
    pub const ALL: [LayoutClass; 5] = [
        LayoutClass::Contiguous,
        LayoutClass::Permuted,
        LayoutClass::Sliced,
        LayoutClass::Broadcast,
        LayoutClass::Offset,
    ];

    /// The name used in the corpus and the report.
    pub fn name(self) -> &'static str {
        match self {
            LayoutClass::Contiguous => "contiguous",
            LayoutClass::Permuted => "permuted",
            LayoutClass::Sliced => "sliced",
            LayoutClass::Broadcast => "broadcast",
            LayoutClass::Offset => "offset",
        }
    }

    /// Whether the class means anything for an input of `rank` dims (a
    /// rank-1 tensor has no second dim to permute with, a rank-0 tensor
    /// no dim to step or stretch).
    pub fn applies_to(self, rank: usize) -> bool {
        match self {
            LayoutClass::Permuted => rank >= 2,
            LayoutClass::Sliced | LayoutClass::Broadcast => rank >= 1,
            LayoutClass::Contiguous | LayoutClass::Offset => true,
        }
    }

    /// The shape whose values are drawn: the logical shape, except that
    /// a broadcast input draws only its size-1 source.
    pub(crate) fn source_shape(self, shape: &Shape) -> Shape {
        let mut d = shape.dims().to_vec();
        if self == LayoutClass::Broadcast && !d.is_empty() {
            d[0] = 1;
            let last = d.len() - 1;
            if last > 0 {
                d[last] = 1;
            }
        }
        Shape::from(d)
    }

    /// The shape of the backing storage, as a tensor shape.
    fn backing_shape(self, shape: &Shape) -> Shape {
        let dims = shape.dims();
        match self {
            LayoutClass::Contiguous => shape.clone(),
            LayoutClass::Permuted => Shape::from(dims.iter().rev().copied().collect::<Vec<_>>()),
            LayoutClass::Sliced => Shape::from(dims.iter().map(|&d| 2 * d + 1).collect::<Vec<_>>()),
            LayoutClass::Broadcast => self.source_shape(shape),
            LayoutClass::Offset if empty_before_last(shape) => {
                let mut d = dims.to_vec();
                *d.last_mut().expect("rank >= 2") += OFFSET_PAD;
                Shape::from(d)
            }
            LayoutClass::Offset => Shape::from([shape.numel() + 2 * OFFSET_PAD]),
        }
    }

    /// The view of `backing` that has the logical `shape`.
    fn view(self, backing: &Tensor, shape: &Shape) -> Result<Tensor> {
        match self {
            LayoutClass::Contiguous => Ok(backing.clone()),
            LayoutClass::Permuted => {
                let perm: Vec<isize> = (0..shape.rank() as isize).rev().collect();
                backing.permute(&perm)
            }
            LayoutClass::Sliced => {
                let mut t = backing.clone();
                for (d, &n) in shape.dims().iter().enumerate() {
                    t = t.slice(d as isize, 1, 2 * n + 1, 2)?;
                }
                Ok(t)
            }
            LayoutClass::Broadcast => backing.broadcast_to(shape.clone()),
            LayoutClass::Offset if empty_before_last(shape) => {
                let last = shape.rank() - 1;
                backing.narrow(last as isize, OFFSET_PAD, shape.dims()[last])
            }
            LayoutClass::Offset => backing
                .narrow(0, OFFSET_PAD, shape.numel())?
                .view(shape.clone()),
        }
    }
}

impl std::fmt::Display for LayoutClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `shape` has a zero dim before its last one, so that widening the
/// last dim keeps the storage empty while the narrowed view's offset is
/// past its end.
fn empty_before_last(shape: &Shape) -> bool {
    let dims = shape.dims();
    dims.len() >= 2 && dims[..dims.len() - 1].contains(&0)
}

/// The value stored where a view does not reach. Distinctive in a failure
/// message, and finite and in range for every dtype.
fn sentinel(dtype: DType) -> f64 {
    match dtype {
        DType::Bool => 1.0,
        d if d.is_int() => 77.0,
        _ => -999.0,
    }
}

/// An input as built on one device.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    /// The tensor over the backing storage (the autograd leaf).
    pub leaf: Tensor,
    /// The view of the leaf with the logical shape, which the op receives.
    pub view: Tensor,
}

/// Builds an input of logical `shape` in `class` on `device`, holding
/// `values` (drawn for [`LayoutClass::source_shape`], in row-major order).
///
/// The storage is filled on the host: the positions the view reaches are
/// found by viewing a tensor of storage indices the same way on the
/// reference, so the device's own kernels play no part in building its
/// inputs.
pub(crate) fn build(
    class: LayoutClass,
    shape: &Shape,
    dtype: DType,
    values: &[f64],
    device: Device,
    requires_grad: bool,
) -> Result<Built> {
    let backing_shape = class.backing_shape(shape);
    let len = backing_shape.numel();
    let data: Vec<f64> = if class == LayoutClass::Broadcast {
        values.to_vec()
    } else {
        // Storage index of each logical element, read through the view.
        let positions = Tensor::arange(0.0, len as f64, 1.0, DType::F64, Device::Reference)?
            .reshape(backing_shape.clone())?;
        let positions = class.view(&positions, shape)?.to_f64_vec()?;
        let mut data = vec![sentinel(dtype); len];
        for (pos, v) in positions.into_iter().zip(values) {
            data[pos as usize] = *v;
        }
        data
    };
    let mut leaf = Tensor::from_host(
        HostBuffer::from_f64s(dtype, data),
        backing_shape,
        device,
        "conformance input",
    )?;
    if requires_grad {
        leaf = leaf.with_requires_grad(true)?;
    }
    let view = class.view(&leaf, shape)?;
    Ok(Built { leaf, view })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_reference as _;

    #[test]
    fn an_empty_offset_input_sits_past_the_end_of_empty_storage() {
        let b = built(LayoutClass::Offset, &[0, 3]);
        assert_eq!(b.view.dims(), &[0, 3]);
        assert_eq!(b.leaf.storage().len(), 0);
        assert_eq!(b.view.layout().offset(), OFFSET_PAD);
        // Without a zero dim before the last, the usual padded storage.
        let b = built(LayoutClass::Offset, &[3, 0]);
        assert_eq!(b.view.dims(), &[3, 0]);
        assert_eq!(b.leaf.storage().len(), 2 * OFFSET_PAD);
    }

    fn built(class: LayoutClass, dims: &[usize]) -> Built {
        let shape = Shape::from(dims.to_vec());
        let n = class.source_shape(&shape).numel();
        let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
        build(class, &shape, DType::F32, &values, Device::Reference, false).unwrap()
    }

    #[test]
    fn every_class_shows_the_values_in_order() {
        for class in [
            LayoutClass::Contiguous,
            LayoutClass::Permuted,
            LayoutClass::Sliced,
            LayoutClass::Offset,
        ] {
            let b = built(class, &[2, 3]);
            assert_eq!(b.view.dims(), &[2, 3], "{class}");
            assert_eq!(
                b.view.to_f64_vec().unwrap(),
                vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                "{class}"
            );
        }
    }

    #[test]
    fn classes_have_the_layouts_they_promise() {
        let p = built(LayoutClass::Permuted, &[2, 3]);
        assert_eq!(p.view.strides(), &[1, 2]);
        let s = built(LayoutClass::Sliced, &[2, 3]);
        assert_eq!(s.view.strides(), &[14, 2]);
        assert_eq!(s.view.layout().offset(), 8);
        let o = built(LayoutClass::Offset, &[2, 3]);
        assert!(o.view.is_contiguous());
        assert_eq!(o.view.layout().offset(), OFFSET_PAD);
        let b = built(LayoutClass::Broadcast, &[2, 3, 4]);
        assert_eq!(b.view.strides(), &[0, 1, 0]);
        assert_eq!(b.leaf.dims(), &[1, 3, 1]);
        assert_eq!(
            b.view.to_f64_vec().unwrap()[..8],
            [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]
        );
    }

    #[test]
    fn gaps_hold_the_sentinel() {
        let s = built(LayoutClass::Sliced, &[2]);
        assert_eq!(
            s.leaf.to_f64_vec().unwrap(),
            vec![-999.0, 0.0, -999.0, 1.0, -999.0]
        );
    }

    #[test]
    fn zero_size_and_rank_zero_inputs_build() {
        for class in LayoutClass::ALL {
            let b = built(class, &[0, 3]);
            assert_eq!(b.view.dims(), &[0, 3], "{class}");
        }
        let o = built(LayoutClass::Offset, &[]);
        assert_eq!(o.view.to_f64_vec().unwrap(), vec![0.0]);
        assert!(!LayoutClass::Permuted.applies_to(1));
        assert!(!LayoutClass::Sliced.applies_to(0));
    }
}
