//! Convolution and pooling on the device, forward and backward, by the
//! library's `conv2d_*` and `pool2d_*` kernels (a thread per element
//! written, no atomics: the same bits every run).
//!
//! The kernels read contiguous NCHW tensors, so an operand that is a
//! strided view is first copied by the device's own word-copy kernel. Each
//! returns `None` where a size does not fit the kernels' 32-bit
//! arithmetic, one dispatch, or llvmpipe's 65535 iterations per loop; the
//! caller then hands the op to the host.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::Value;
use oxmera_kernel::library;
use oxmera_tensor::{Conv2dParams, Pool2dParams, Storage, Tensor, window_output_size};

use crate::backend::GpuBackend;
use crate::device::{DeviceMemory, GpuDevice};

/// The longest loop a thread of these kernels may run (llvmpipe stops a
/// loop after 65535 iterations; a margin below it).
const MAX_LOOP: usize = 16384;

/// The block every kernel here runs with (one of those they declare).
const BLOCK: u32 = 256;

/// The geometry scalars of the conv kernels after their element count
/// (`c_in h w c_out kh kw oh ow sh sw ph pw dh dw groups`), and the
/// output's `(oh, ow)`.
fn conv_scalars(
    x: &Tensor,
    weight: &Tensor,
    p: Conv2dParams,
) -> Option<(Vec<Value>, usize, usize)> {
    let (xd, wd) = (x.dims(), weight.dims());
    let oh = window_output_size(xd[2], wd[2], p.stride.0, p.padding.0, p.dilation.0)?;
    let ow = window_output_size(xd[3], wd[3], p.stride.1, p.padding.1, p.dilation.1)?;
    let values = [
        xd[1],
        xd[2],
        xd[3],
        wd[0],
        wd[2],
        wd[3],
        oh,
        ow,
        p.stride.0,
        p.stride.1,
        p.padding.0,
        p.padding.1,
        p.dilation.0,
        p.dilation.1,
        p.groups,
    ];
    Some((u32_values(&values)?, oh, ow))
}

/// The scalars of the pooling kernels after their element count (`h w kh
/// kw oh ow sh sw ph pw is_max`), and the output's `(oh, ow)`; `None` where
/// they do not fit or a window's loops would pass the loop limit.
fn pool_scalars(x: &Tensor, p: Pool2dParams, is_max: bool) -> Option<(Vec<Value>, usize, usize)> {
    if !loops_fit(&[p.kernel.0, p.kernel.1]) {
        return None;
    }
    let d = x.dims();
    let oh = window_output_size(d[2], p.kernel.0, p.stride.0, p.padding.0, 1)?;
    let ow = window_output_size(d[3], p.kernel.1, p.stride.1, p.padding.1, 1)?;
    let values = [
        d[2],
        d[3],
        p.kernel.0,
        p.kernel.1,
        oh,
        ow,
        p.stride.0,
        p.stride.1,
        p.padding.0,
        p.padding.1,
    ];
    let mut scalars = u32_values(&values)?;
    scalars.push(Value::Bool(is_max));
    Some((scalars, oh, ow))
}

/// Sizes as the kernels' u32 scalars, or `None` if one does not fit.
fn u32_values(values: &[usize]) -> Option<Vec<Value>> {
    values
        .iter()
        .map(|&v| u32::try_from(v).ok().map(Value::U32))
        .collect()
}

/// Whether every extent a thread loops over stays under the loop limit.
fn loops_fit(extents: &[usize]) -> bool {
    extents.iter().all(|&e| e <= MAX_LOOP)
}

impl<D: GpuDevice> GpuBackend<D> {
    /// `x` itself where its elements are already the storage's first
    /// ones in row-major order; else a contiguous copy made on the device.
    fn dense(&self, x: &Tensor) -> Result<Option<Tensor>> {
        let layout = x.layout();
        if layout.is_contiguous() && layout.offset() == 0 {
            return Ok(Some(x.clone()));
        }
        Ok(self
            .contiguous_words(x)?
            .map(|s| Tensor::from_storage(s, x.shape().clone())))
    }

    /// Launches one kernel over `n` threads whose first buffers are
    /// `inputs` (made dense), then the output of `n` f32 elements, then
    /// `n` and `scalars`.
    fn window_launch(
        &self,
        kernel: &'static oxmera_kernel::ir::Kernel,
        name: &'static str,
        inputs: &[&Tensor],
        n: usize,
        scalars: Vec<Value>,
    ) -> Result<Option<Storage>> {
        if n >= i32::MAX as usize || !self.fits(n) {
            return Ok(None);
        }
        let mut dense = Vec::with_capacity(inputs.len());
        for x in inputs {
            match self.dense(x)? {
                Some(d) => dense.push(d),
                None => return Ok(None),
            }
        }
        let gpu = self.gpu();
        let out = gpu.alloc((n * 4) as u64, name)?;
        if n > 0 {
            let sources = dense
                .iter()
                .map(|x| self.buffer(x.storage(), name))
                .collect::<Result<Vec<_>>>()?;
            let mut buffers: Vec<&D::Raw> = sources.iter().map(|b| b.buffer.raw()).collect();
            buffers.push(out.raw());
            let mut all = vec![Value::U32(n as u32)];
            all.extend(scalars);
            self.linear(kernel, BLOCK, &buffers, &all, n, name)?;
        }
        Ok(Some(self.store(DType::F32, n, out)))
    }

    /// `conv2d(x, weight) + bias` for f32.
    pub(crate) fn conv2d_f32(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        p: Conv2dParams,
    ) -> Result<Option<Storage>> {
        let Some((mut scalars, oh, ow)) = conv_scalars(x, weight, p) else {
            return Ok(None);
        };
        let wd = weight.dims();
        if !loops_fit(&[wd[1], wd[2], wd[3]]) {
            return Ok(None);
        }
        let n = x.dims()[0] * wd[0] * oh * ow;
        scalars.push(Value::Bool(bias.is_some()));
        // Without a bias the kernel's bias buffer is bound but never read.
        let b = bias.unwrap_or(weight);
        self.window_launch(
            library::conv2d_direct(),
            "conv2d",
            &[x, weight, b],
            n,
            scalars,
        )
    }

    /// The input and weight gradients of `conv2d` for f32.
    pub(crate) fn conv2d_backward_f32(
        &self,
        x: &Tensor,
        weight: &Tensor,
        grad: &Tensor,
        p: Conv2dParams,
    ) -> Result<Option<(Storage, Storage)>> {
        let Some((scalars, _, _)) = conv_scalars(x, weight, p) else {
            return Ok(None);
        };
        let (xd, wd, gd) = (x.dims(), weight.dims(), grad.dims());
        // Input gradient: each thread loops over its group's output
        // channels and the window; weight gradient: over batch and output.
        if !loops_fit(&[wd[0] / p.groups, wd[2], wd[3], xd[0], gd[2], gd[3]]) {
            return Ok(None);
        }
        let name = "conv2d_backward";
        let Some(gx) = self.window_launch(
            library::conv2d_grad_input(),
            name,
            &[grad, weight],
            x.shape().numel(),
            scalars.clone(),
        )?
        else {
            return Ok(None);
        };
        let mut with_batch = vec![Value::U32(xd[0] as u32)];
        with_batch.extend(scalars);
        let Some(gw) = self.window_launch(
            library::conv2d_grad_weight(),
            name,
            &[x, grad],
            weight.shape().numel(),
            with_batch,
        )?
        else {
            return Ok(None);
        };
        Ok(Some((gx, gw)))
    }

    /// Max or average pooling for f32.
    pub(crate) fn pool_f32(
        &self,
        x: &Tensor,
        p: Pool2dParams,
        is_max: bool,
    ) -> Result<Option<Storage>> {
        let Some((scalars, oh, ow)) = pool_scalars(x, p, is_max) else {
            return Ok(None);
        };
        let d = x.dims();
        let n = d[0] * d[1] * oh * ow;
        let name = if is_max { "max_pool2d" } else { "avg_pool2d" };
        self.window_launch(library::pool2d_forward(), name, &[x], n, scalars)
    }

    /// The input gradient of max or average pooling for f32.
    pub(crate) fn pool_backward_f32(
        &self,
        x: &Tensor,
        grad: &Tensor,
        p: Pool2dParams,
        is_max: bool,
    ) -> Result<Option<Storage>> {
        let Some((scalars, _, _)) = pool_scalars(x, p, is_max) else {
            return Ok(None);
        };
        let name = if is_max {
            "max_pool2d_backward"
        } else {
            "avg_pool2d_backward"
        };
        self.window_launch(
            library::pool2d_backward(),
            name,
            &[x, grad],
            x.shape().numel(),
            scalars,
        )
    }
}
