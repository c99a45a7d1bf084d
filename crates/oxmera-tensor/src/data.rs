//! [`TensorData`]: nested Rust arrays, slices and vectors as tensor data,
//! for [`Tensor::new`] and `Tensor::try_from`.
//!
//! The shape is read off the nesting (`[[1., 2.], [3., 4.]]` is 2 × 2)
//! and the dtype off the element type (`f32` → `F32`, `i64` → `I64`, …):
//! nothing is converted behind the program's back. Rust gives an
//! unsuffixed float literal the type `f64`, so write one suffix
//! (`[1f32, 2., 3.]`) for the `F32` most models train in. A ragged nest of
//! vectors (rows of different lengths) is [`Error::InvalidArgument`].

use half::{bf16, f16};
use oxmera_core::{Device, Error, Result, Shape};

use crate::{Element, Tensor};

/// Data a tensor can be built from: an element, or an array, slice or
/// vector of `TensorData` (nested to any depth).
pub trait TensorData {
    /// The element type at the bottom of the nesting.
    type Elem: Element;
    /// Appends this value's dims (outermost first) to `dims`.
    fn dims(&self, dims: &mut Vec<usize>);
    /// Appends the elements, row-major, to `out`; checks that every row at
    /// nesting depth `depth` has the extent `dims[depth]`.
    fn flatten(&self, dims: &[usize], depth: usize, out: &mut Vec<Self::Elem>) -> Result<()>;
}

macro_rules! element_data {
    ($($t:ty),*) => {$(
        impl TensorData for $t {
            type Elem = $t;
            fn dims(&self, _: &mut Vec<usize>) {}
            fn flatten(&self, _: &[usize], _: usize, out: &mut Vec<$t>) -> Result<()> {
                out.push(*self);
                Ok(())
            }
        }
    )*};
}
element_data!(f16, bf16, f32, f64, i32, i64, u8, bool);

/// The shared body of the sequence impls: every row must match.
fn flatten_rows<T: TensorData>(
    rows: &[T],
    dims: &[usize],
    depth: usize,
    out: &mut Vec<T::Elem>,
) -> Result<()> {
    if rows.len() != dims[depth] {
        return Err(Error::invalid(
            "new",
            "data",
            format!(
                "ragged data: a row at depth {depth} has {} elements where the first has {}",
                rows.len(),
                dims[depth]
            ),
        ));
    }
    rows.iter()
        .try_for_each(|r| r.flatten(dims, depth + 1, out))
}

impl<T: TensorData, const N: usize> TensorData for [T; N] {
    type Elem = T::Elem;
    fn dims(&self, dims: &mut Vec<usize>) {
        dims.push(N);
        if let Some(first) = self.first() {
            first.dims(dims);
        }
    }
    fn flatten(&self, dims: &[usize], depth: usize, out: &mut Vec<T::Elem>) -> Result<()> {
        flatten_rows(self, dims, depth, out)
    }
}

impl<T: TensorData> TensorData for [T] {
    type Elem = T::Elem;
    fn dims(&self, dims: &mut Vec<usize>) {
        dims.push(self.len());
        if let Some(first) = self.first() {
            first.dims(dims);
        }
    }
    fn flatten(&self, dims: &[usize], depth: usize, out: &mut Vec<T::Elem>) -> Result<()> {
        flatten_rows(self, dims, depth, out)
    }
}

impl<T: TensorData> TensorData for Vec<T> {
    type Elem = T::Elem;
    fn dims(&self, dims: &mut Vec<usize>) {
        self.as_slice().dims(dims)
    }
    fn flatten(&self, dims: &[usize], depth: usize, out: &mut Vec<T::Elem>) -> Result<()> {
        flatten_rows(self, dims, depth, out)
    }
}

impl<T: TensorData + ?Sized> TensorData for &T {
    type Elem = T::Elem;
    fn dims(&self, dims: &mut Vec<usize>) {
        (**self).dims(dims)
    }
    fn flatten(&self, dims: &[usize], depth: usize, out: &mut Vec<T::Elem>) -> Result<()> {
        (**self).flatten(dims, depth, out)
    }
}

impl Tensor {
    /// A tensor from nested arrays, slices or vectors, its shape read off
    /// the nesting and its dtype off the element type (see [`TensorData`]).
    /// A bare element gives a rank-0 tensor.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{DType, Device};
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::new([[1f32, 2.], [3., 4.]], Device::Reference)?;
    /// assert_eq!((x.dims(), x.dtype()), (&[2, 2][..], DType::F32));
    /// let rows = vec![vec![1i64, 2, 3], vec![4, 5]];
    /// assert!(Tensor::new(&rows, Device::Reference).is_err()); // ragged
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn new<D: TensorData>(data: D, device: Device) -> Result<Tensor> {
        let mut dims = Vec::new();
        data.dims(&mut dims);
        let shape = Shape::from(dims);
        let n = shape.valid_numel("new")?;
        let mut flat = Vec::with_capacity(n);
        data.flatten(shape.dims(), 0, &mut flat)?;
        Tensor::from_host(D::Elem::into_buffer(flat), shape, device, "new")
    }
}

/// A 1-D tensor on the default device ([`Device::default`]) from a vector.
/// Fallible, because making a tensor asks the device's backend (which may
/// not be linked or may fail to open); hence `TryFrom`, not `From`.
impl<T: Element + TensorData<Elem = T>> TryFrom<Vec<T>> for Tensor {
    type Error = Error;
    fn try_from(data: Vec<T>) -> Result<Tensor> {
        let n = data.len();
        Tensor::from_vec(data, [n], Device::default())
    }
}

/// A 1-D tensor on the default device from a slice (see the `Vec` impl).
impl<T: Element + TensorData<Elem = T>> TryFrom<&[T]> for Tensor {
    type Error = Error;
    fn try_from(data: &[T]) -> Result<Tensor> {
        Tensor::from_slice(data, [data.len()], Device::default())
    }
}
