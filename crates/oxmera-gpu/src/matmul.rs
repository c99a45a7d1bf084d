//! Matrix products on the device: dense f32 products by the device's
//! register-tiled kernel where it has one, everything else (strided,
//! transposed and batched operands; f64) by `matmul_strided` or its f64
//! sibling, both operands read through their strides.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::{Dim3, Kernel, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_tensor::{Storage, Tensor};

use crate::backend::GpuBackend;
use crate::device::{DeviceMemory, GpuDevice};
use crate::native::view_of;

impl<D: GpuDevice> GpuBackend<D> {
    /// `a @ b` by `matmul_strided`: both operands read through their
    /// strides (transposed and broadcast operands are views). `None` where
    /// a size does not fit the kernel's u32/i32 or one dispatch.
    /// The tile is the one `oxmera kernel tune` cached for this device,
    /// else 16 (`crate::tuned`).
    ///
    /// Dense operands go first to the device's register-tiled kernel,
    /// where it has one (`matmul_dense`).
    pub(crate) fn matmul_f32(&self, a: &Tensor, b: &Tensor) -> Result<Option<Storage>> {
        if let Some(s) = self.matmul_dense(a, b)? {
            return Ok(Some(s));
        }
        let (kernel, tile) = self.gpu().matmul_kernel();
        self.matmul_with(kernel, tile, DType::F32, a, b)
    }

    /// `a @ b` by the device's register-tiled kernel, when it has one and
    /// the product is one dense `m × k` by `k × n` (every batch dim 1; both
    /// operands row-major from their buffer's start) whose element indices
    /// fit the kernel's `u32` arithmetic and whose grid fits the part;
    /// `None` otherwise (the strided kernel then takes it).
    fn matmul_dense(&self, a: &Tensor, b: &Tensor) -> Result<Option<Storage>> {
        let Some(dense) = self.gpu().dense_matmul_kernel() else {
            return Ok(None);
        };
        let (ad, bd) = (a.dims(), b.dims());
        let rank = ad.len();
        let (m, k, n) = (ad[rank - 2], ad[rank - 1], bd[rank - 1]);
        let batch: usize = ad[..rank - 2].iter().product();
        // Row-major from the start: the last stride 1 (or one column) and
        // the one before it the row length (or one row), offset 0.
        let row_major = |t: &Tensor, rows: usize, cols: usize| {
            view_of(t).is_some_and(|(s, offset)| {
                offset == 0
                    && (cols == 1 || s[rank - 1] == 1)
                    && (rows == 1 || s[rank - 2] as usize == cols)
            })
        };
        let tile = dense.tile as usize;
        let max = self.gpu().max_grid();
        let indexable =
            |x: usize, y: usize| x.checked_mul(y).is_some_and(|p| p <= u32::MAX as usize);
        if batch != 1
            || m == 0
            || n == 0
            || !row_major(a, m, k)
            || !row_major(b, k, n)
            || !(indexable(m, k) && indexable(k, n) && indexable(m, n))
            || n.div_ceil(tile) > max.x as usize
            || m.div_ceil(tile) > max.y as usize
        {
            return Ok(None);
        }
        let out = self.gpu().alloc((m * n * 4) as u64, "matmul")?;
        let (ba, bb) = (
            self.buffer(a.storage(), "matmul")?,
            self.buffer(b.storage(), "matmul")?,
        );
        let launch = LaunchConfig {
            grid: Dim3::new(n.div_ceil(tile) as u32, m.div_ceil(tile) as u32, 1),
            block: dense.block,
        };
        self.gpu().launch(
            dense.kernel,
            launch,
            &[ba.buffer.raw(), bb.buffer.raw(), out.raw()],
            &[
                Value::U32(m as u32),
                Value::U32(n as u32),
                Value::U32(k as u32),
            ],
            "matmul",
        )?;
        Ok(Some(self.store(DType::F32, m * n, out)))
    }

    /// `a @ b` by `matmul_strided` or its f64 sibling (`elem`), which share
    /// their parameters, at tile `tile`.
    pub(crate) fn matmul_with(
        &self,
        kernel: &'static Kernel,
        tile: u32,
        elem: DType,
        a: &Tensor,
        b: &Tensor,
    ) -> Result<Option<Storage>> {
        let (ad, bd) = (a.dims(), b.dims());
        let rank = ad.len();
        let (m, k, n) = (ad[rank - 2], ad[rank - 1], bd[rank - 1]);
        let batch: usize = ad[..rank - 2].iter().product();
        let count = batch * m * n;
        let (Some((sa, oa)), Some((sb, ob))) = (view_of(a), view_of(b)) else {
            return Ok(None);
        };
        let max = self.gpu().max_grid();
        let fits = |v: usize| u32::try_from(v).is_ok();
        let within = |v: usize, limit: u32| v <= limit as usize;
        if !(fits(count)
            && fits(k)
            && within(batch, max.z)
            && within(n.div_ceil(tile as usize), max.x)
            && within(m.div_ceil(tile as usize), max.y))
        {
            return Ok(None);
        }
        let out = self
            .gpu()
            .alloc((count * elem.size_in_bytes()) as u64, "matmul")?;
        if count > 0 {
            let (ba, bb) = (
                self.buffer(a.storage(), "matmul")?,
                self.buffer(b.storage(), "matmul")?,
            );
            let shape: Vec<u32> = ad[..rank - 2].iter().map(|&d| d as u32).collect();
            let s = self.gpu().metadata(&shape)?;
            let (ma, mb) = (
                self.gpu().metadata(&sa[..rank - 2])?,
                self.gpu().metadata(&sb[..rank - 2])?,
            );
            let i = |v: u32| Value::I32(v as i32);
            let launch = LaunchConfig {
                grid: Dim3::new(
                    (n as u32).div_ceil(tile),
                    (m as u32).div_ceil(tile),
                    batch as u32,
                ),
                block: Dim3::new(tile, tile, 1),
            };
            self.gpu().launch(
                kernel,
                launch,
                &[ba.buffer.raw(), bb.buffer.raw(), out.raw(), &s, &ma, &mb],
                &[
                    Value::U32((rank - 2) as u32),
                    Value::U32(m as u32),
                    Value::U32(n as u32),
                    Value::U32(k as u32),
                    i(sa[rank - 2]),
                    i(sa[rank - 1]),
                    i(sb[rank - 2]),
                    i(sb[rank - 1]),
                    Value::I32(oa),
                    Value::I32(ob),
                ],
                "matmul",
            )?;
        }
        Ok(Some(self.store(elem, count, out)))
    }
}
