//! `sort` on the device: the sorting permutation of every slice along a
//! dim by the library's bitonic network — `sort_keys` makes each element a
//! key in the reference's total order (rows padded to a power of two),
//! then `bitonic_step` runs stage by stage, a launch each (the boundary
//! between launches is the only barrier a whole grid has). The positions
//! the network leaves in each row's first `n` slots are the indices: the
//! cast kernel widens them to `i64`, a permuted copy puts the sorted dim
//! back in its place. `sort`, `argsort`, `topk`, `kthvalue` and `median`
//! all start here.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::Value;
use oxmera_kernel::library::{self, sort_kind};
use oxmera_tensor::fused_backward::into_storage;
use oxmera_tensor::{Backend, Storage, Tensor, no_grad};

use crate::backend::GpuBackend;
use crate::copy::Place;
use crate::device::{DeviceMemory, GpuDevice};
use crate::long::dim_last;
use crate::native::{ELEMENTWISE_BLOCK, dims_of};

impl<D: GpuDevice> GpuBackend<D> {
    /// The sorting permutation of `x` along `dim` (`Backend::sort`), or
    /// `None` where the padded rows do not fit one dispatch or the
    /// kernels' arithmetic.
    pub(crate) fn sort_native(
        &self,
        x: &Tensor,
        dim: usize,
        descending: bool,
    ) -> Result<Option<Storage>> {
        // The words the keys are made of: halves widened exactly (order
        // and ties kept), bytes and bools as i32.
        let (src, kind, per) = match x.dtype() {
            DType::F32 => (x.clone(), sort_kind::F32, 1),
            DType::I32 => (x.clone(), sort_kind::I32, 1),
            DType::F64 => (x.clone(), sort_kind::F64, 2),
            DType::I64 => (x.clone(), sort_kind::I64, 2),
            DType::F16 | DType::BF16 => match self.widen(x)? {
                Some(w) => (w, sort_kind::F32, 1),
                None => return Ok(None),
            },
            DType::U8 | DType::Bool => {
                let words = self.cast(x, DType::I32)?;
                (
                    Tensor::from_storage(words, x.shape().clone()),
                    sort_kind::I32,
                    1,
                )
            }
        };
        // The sorted dim last: rows in the row-major order of the others.
        let rank = x.rank();
        let (rows_view, back) = dim_last(&src, dim)?;
        let n = x.dims()[dim];
        let rows = x.numel() / n;
        let padded = n.next_power_of_two();
        let Some(slots) = rows.checked_mul(padded) else {
            return Ok(None);
        };
        let (Some(shape), Some((mut strides, offset))) =
            (dims_of(rows_view.dims()), Place::of(&rows_view).words(per))
        else {
            return Ok(None);
        };
        // In words; a pair's second word is the kernel's `off + 1`.
        strides.truncate(rank);
        // `fits` keeps the slots below i32::MAX, so every u32 below holds.
        if !self.fits(slots) {
            return Ok(None);
        }
        let name = "sort";
        let gpu = self.gpu();
        let words = (slots * 4) as u64;
        let (hi, lo, pos) = (
            gpu.alloc(words, name)?,
            gpu.alloc(words, name)?,
            gpu.alloc(words, name)?,
        );
        let src_buf = self.buffer(rows_view.storage(), name)?;
        let (s, st) = (gpu.metadata(&shape)?, gpu.metadata(&strides)?);
        self.linear(
            library::sort_keys(),
            ELEMENTWISE_BLOCK,
            &[src_buf.buffer.raw(), hi.raw(), lo.raw(), pos.raw(), &s, &st],
            &[
                Value::U32(rank as u32),
                Value::U32(n as u32),
                Value::U32(padded as u32),
                Value::U32(rows as u32),
                Value::I32(offset),
                Value::U32(kind),
                Value::Bool(descending),
            ],
            slots,
            name,
        )?;
        let mut k = 2;
        while k <= padded {
            let mut j = k / 2;
            while j >= 1 {
                self.linear(
                    library::bitonic_step(),
                    ELEMENTWISE_BLOCK,
                    &[hi.raw(), lo.raw(), pos.raw()],
                    &[
                        Value::U32(padded as u32),
                        Value::U32(rows as u32),
                        Value::U32(k as u32),
                        Value::U32(j as u32),
                    ],
                    slots / 2,
                    name,
                )?;
                j /= 2;
            }
            k *= 2;
        }
        // Positions below 2^31: the i32 cast widens them exactly.
        let mut sorted_dims: Vec<usize> = rows_view.dims().to_vec();
        sorted_dims[rank - 1] = padded;
        let positions = Tensor::from_storage(self.store(DType::I32, slots, pos), sorted_dims)
            .narrow(-1, 0, n)?;
        let wide = Tensor::from_storage(self.cast(&positions, DType::I64)?, rows_view.dims());
        let t = no_grad(|| wide.permute(&back))?;
        into_storage(self, t).map(Some)
    }
}
