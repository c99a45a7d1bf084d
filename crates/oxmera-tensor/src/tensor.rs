//! The `Tensor` type: a layout over shared storage.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use oxmera_core::{DType, Device, Error, Layout, Result, Shape};

use crate::autograd::{GradMeta, Node};
use crate::{Backend, Element, HostBuffer, Storage, registry};

/// A process-unique tensor identity (autograd keys gradients by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorId(u64);

impl TensorId {
    fn fresh() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        TensorId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// An n-dimensional array: a [`Layout`] over shared, immutable [`Storage`].
///
/// One type serves every dtype and device. Cloning a `Tensor` is cheap (a
/// reference count); views share storage and never copy; operations return
/// new tensors over fresh storage. Every fallible method returns
/// `Result<_, oxmera_core::Error>`.
#[derive(Clone)]
pub struct Tensor(Arc<Inner>);

struct Inner {
    id: TensorId,
    storage: Arc<Storage>,
    layout: Layout,
    /// Present exactly when the tensor requires grad (see `autograd`).
    grad: Option<GradMeta>,
}

impl Tensor {
    /// A tensor over `storage` seen through `layout`.
    ///
    /// # Panics
    /// If the layout reaches past the end of the storage: backends and
    /// views are responsible for never building such a pair.
    pub fn from_parts(storage: Arc<Storage>, layout: Layout) -> Tensor {
        assert!(
            layout.required_len() <= storage.len(),
            "layout {layout:?} reaches past storage of {} elements",
            storage.len()
        );
        Tensor(Arc::new(Inner {
            id: TensorId::fresh(),
            storage,
            layout,
            grad: None,
        }))
    }

    /// The same data with autograd metadata attached: a new tensor identity
    /// that requires grad, recorded by `node` (a leaf when `None`).
    pub(crate) fn with_grad_meta(&self, node: Option<Arc<Node>>) -> Tensor {
        Tensor(Arc::new(Inner {
            id: TensorId::fresh(),
            storage: self.0.storage.clone(),
            layout: self.0.layout.clone(),
            grad: Some(GradMeta::new(node)),
        }))
    }

    /// The node that produced this tensor, if this handle was the last
    /// one to it (so that dismantling a graph can take the node apart).
    pub(crate) fn into_unique_node(self) -> Option<Arc<Node>> {
        Arc::try_unwrap(self.0).ok()?.grad?.take_node()
    }

    /// The storage, taken out when this handle is the only one to the
    /// tensor and the tensor the only one to its storage; the tensor back
    /// otherwise.
    pub(crate) fn into_unique_storage(self) -> std::result::Result<Storage, Tensor> {
        match Arc::try_unwrap(self.0) {
            Ok(inner) => match Arc::try_unwrap(inner.storage) {
                Ok(storage) => Ok(storage),
                Err(storage) => Err(Tensor::from_parts(storage, inner.layout)),
            },
            Err(shared) => Err(Tensor(shared)),
        }
    }

    /// The autograd metadata, present when the tensor requires grad.
    pub(crate) fn grad_meta(&self) -> Option<&GradMeta> {
        self.0.grad.as_ref()
    }

    /// A tensor over fresh contiguous storage of `shape`.
    ///
    /// # Panics
    /// If the storage does not hold exactly `shape.numel()` elements.
    pub fn from_storage(storage: Storage, shape: impl Into<Shape>) -> Tensor {
        let shape = shape.into();
        assert_eq!(
            storage.len(),
            shape.numel(),
            "storage of {} elements for shape {shape}",
            storage.len()
        );
        Tensor::from_parts(Arc::new(storage), Layout::contiguous(shape))
    }

    /// A tensor with the same storage seen through another layout.
    pub(crate) fn with_layout(&self, layout: Layout) -> Tensor {
        Tensor::from_parts(self.0.storage.clone(), layout)
    }

    /// Builds a tensor of `shape` from a vector, on `device`.
    ///
    /// ```
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::{Device, Error};
    /// # use oxmera_reference as _; // links the reference backend
    /// let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], Device::Reference)?;
    /// assert_eq!(t.dims(), &[2, 3]);
    /// let bad = Tensor::from_vec(vec![1.0f32; 5], [2, 3], Device::Reference);
    /// assert!(matches!(bad, Err(Error::ElementCount { .. })));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn from_vec<T: Element>(
        data: Vec<T>,
        shape: impl Into<Shape>,
        device: Device,
    ) -> Result<Tensor> {
        Tensor::from_host(T::into_buffer(data), shape, device, "from_vec")
    }

    /// Builds a tensor of `shape` from a slice, on `device`.
    pub fn from_slice<T: Element>(
        data: &[T],
        shape: impl Into<Shape>,
        device: Device,
    ) -> Result<Tensor> {
        Tensor::from_host(T::into_buffer(data.to_vec()), shape, device, "from_slice")
    }

    /// A rank-0 tensor holding one value.
    pub fn scalar<T: Element>(value: T, device: Device) -> Result<Tensor> {
        Tensor::from_vec(vec![value], Shape::scalar(), device)
    }

    /// Builds a tensor from a host buffer (checked against the shape).
    pub fn from_host(
        data: HostBuffer,
        shape: impl Into<Shape>,
        device: Device,
        op: &'static str,
    ) -> Result<Tensor> {
        let shape = shape.into();
        let expected = shape.valid_numel(op)?;
        if data.len() != expected {
            return Err(Error::ElementCount {
                op,
                expected,
                got: data.len(),
                shape,
            });
        }
        let storage = backend_storing(device, op, data.dtype())?.from_host(data)?;
        crate::transfer::count_upload(device);
        Ok(Tensor::from_storage(storage, shape))
    }

    /// The identity of this tensor handle (views get their own).
    pub fn id(&self) -> TensorId {
        self.0.id
    }

    /// The layout: shape, strides and offset into storage.
    pub fn layout(&self) -> &Layout {
        &self.0.layout
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        self.0.layout.shape()
    }

    /// The extents of the dims.
    pub fn dims(&self) -> &[usize] {
        self.0.layout.dims()
    }

    /// The strides, in elements.
    pub fn strides(&self) -> &[usize] {
        self.0.layout.strides().as_slice()
    }

    /// The number of dims.
    pub fn rank(&self) -> usize {
        self.0.layout.rank()
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.0.layout.numel()
    }

    /// The element dtype.
    pub fn dtype(&self) -> DType {
        self.0.storage.dtype()
    }

    /// The device the storage is on.
    pub fn device(&self) -> Device {
        self.0.storage.device()
    }

    /// The shared storage.
    pub fn storage(&self) -> &Arc<Storage> {
        &self.0.storage
    }

    /// Whether two tensors view the same storage (pointer identity).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0.storage, &other.0.storage)
    }

    /// Whether the elements are laid out row-major with no gaps.
    pub fn is_contiguous(&self) -> bool {
        self.0.layout.is_contiguous()
    }

    /// The backend that computes on this tensor's device.
    pub fn backend(&self) -> Result<Arc<dyn Backend>> {
        registry::backend(self.device())
    }

    /// This tensor if it is already contiguous, else a contiguous copy.
    /// Copies exactly when it must.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        crate::tensor::probe_result("contiguous", self.shape(), self.dtype(), self.device())?;
        let storage = self.backend()?.contiguous(self)?;
        let out = Tensor::from_storage(storage, self.shape().clone());
        Ok(crate::autograd::rules::identity("contiguous", self, out))
    }

    /// The elements in logical row-major order, as `T` (which must be the
    /// tensor's dtype; use [`Tensor::to_dtype`] first to convert).
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::DTypeMismatch {
                op: "to_vec",
                lhs: self.dtype(),
                rhs: T::DTYPE,
            });
        }
        let host = self.to_host()?;
        Ok(T::slice(&host).expect("dtype checked above").to_vec())
    }

    /// The elements in logical order, converted to `f64`.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        let host = self.to_host()?;
        Ok((0..host.len()).map(|i| host.get_f64(i)).collect())
    }

    /// The elements in logical order as a host buffer of the tensor's dtype.
    pub fn to_host(&self) -> Result<HostBuffer> {
        // A broadcast view's logical elements can outnumber its storage's
        // by any factor: the copy is probed like any result.
        probe_result("to_host", self.shape(), self.dtype(), self.device())?;
        match self.0.storage.as_host() {
            Some(buf) => Ok(crate::with_host_buffer!(buf, v => {
                Element::into_buffer(self.0.layout.offsets().map(|o| v[o]).collect())
            })),
            None => self.backend()?.to_host(self),
        }
    }

    /// One element, by multi-index, converted to `f64`.
    pub fn get(&self, index: &[usize]) -> Result<f64> {
        let off = self.0.layout.offset_of("get", index)?;
        match self.0.storage.as_host() {
            Some(buf) => Ok(buf.get_f64(off)),
            None => {
                let one = self.narrow_to_index(index)?;
                Ok(one.to_host()?.get_f64(0))
            }
        }
    }

    /// The single element of a one-element tensor, as `f64`.
    pub fn item(&self) -> Result<f64> {
        if self.numel() != 1 {
            return Err(Error::ElementCount {
                op: "item",
                shape: self.shape().clone(),
                expected: 1,
                got: self.numel(),
            });
        }
        Ok(self.to_host()?.get_f64(0))
    }

    fn narrow_to_index(&self, index: &[usize]) -> Result<Tensor> {
        let mut layout = self.0.layout.clone();
        for (d, &i) in index.iter().enumerate() {
            layout = layout.narrow("get", d as isize, i, 1)?;
        }
        Ok(self.with_layout(layout))
    }

    /// Converts to another dtype (see [`Element`] for the rounding and
    /// saturation rules). Returns `self` when the dtype already matches.
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        let backend = self.backend()?;
        check_stores(&*backend, "to_dtype", dtype)?;
        let storage = backend.cast(self, dtype)?;
        let out = Tensor::from_storage(storage, self.shape().clone());
        Ok(crate::autograd::rules::cast(self, out))
    }

    /// Waits for the work queued on this tensor's device and returns the
    /// first failure among it (see [`crate::synchronize`]).
    pub fn synchronize(&self) -> Result<()> {
        self.backend()?.synchronize()
    }

    /// Copies to another device (through the host). Returns `self` when the
    /// device already matches.
    pub fn to_device(&self, device: Device) -> Result<Tensor> {
        if device == self.device() {
            return Ok(self.clone());
        }
        let host = self.to_host()?;
        Tensor::from_host(host, self.shape().clone(), device, "to_device")
    }
}

/// The backend of `device`, which must be able to hold `dtype`: what every
/// constructor asks before it makes a tensor.
pub(crate) fn backend_storing(
    device: Device,
    op: &'static str,
    dtype: DType,
) -> Result<Arc<dyn Backend>> {
    let backend = registry::backend(device)?;
    check_stores(&*backend, op, dtype)?;
    Ok(backend)
}

/// The element count of a result of `shape` and `dtype` on `device`, once
/// it is known that a tensor may have that shape (`Err(ShapeOverflow)`
/// otherwise) and that its memory can be had (`Err(OutOfMemory)`, see
/// [`oxmera_core::memory`]): asked before the backend starts work, since a
/// backend's own allocation aborts.
pub(crate) fn probe_result(
    op: &'static str,
    shape: &Shape,
    dtype: DType,
    device: Device,
) -> Result<usize> {
    let n = shape.valid_numel(op)?;
    // At most MAX_NUMEL elements of at most 16 bytes: fits in u64.
    let bytes = (n as u64).saturating_mul(dtype.size_in_bytes() as u64);
    oxmera_core::memory::probe_result(op, bytes, device)?;
    Ok(n)
}

/// `Err(UnsupportedOnDevice)` when `backend`'s device cannot hold `dtype`.
pub(crate) fn check_stores(backend: &dyn Backend, op: &'static str, dtype: DType) -> Result<()> {
    if backend.stores(dtype) {
        Ok(())
    } else {
        Err(Error::UnsupportedOnDevice {
            op,
            dtype,
            device: backend.device(),
            hint: "keep this tensor on a host device, or cast it to a dtype the device stores",
        })
    }
}

/// Waits until every piece of work queued on `device` has finished, and
/// returns the first failure among it: an error the device found after the
/// call that queued the work had returned ([`Error::DeviceFault`], naming
/// that op). Reading a tensor back (`to_vec`, `to_host`) synchronizes too.
/// A host device has nothing to wait for.
pub fn synchronize(device: Device) -> Result<()> {
    registry::backend(device)?.synchronize()
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("id", &self.0.id)
            .field("dtype", &self.dtype())
            .field("device", &self.device())
            .field("layout", &self.0.layout)
            .finish()
    }
}
