//! Front end: pooling with PyTorch's `dilation` and `ceil_mode`, as
//! `F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode)` and
//! `F.avg_pool2d(x, kernel_size, stride, padding, ceil_mode)` (with
//! `count_include_pad=True`, oxmera's only average).
//!
//! Why at the tensor layer and not in the Backend: the Backend's pooling
//! methods and [`Pool2dParams`] stay as they are, so no backend (cpu,
//! wgpu, cuda) changes. When the options make the same windows as the
//! plain ops (dilation 1 and no extra `ceil_mode` window), the call *is*
//! [`Tensor::max_pool2d`] or [`Tensor::avg_pool2d`], bit for bit, native
//! kernels and all. Otherwise a composite: the input is padded (−∞ for
//! the max, zeros for the mean) out to the last window's last tap, every
//! window's taps are `index_select`ed along the height and then the width
//! with host-built indices (window `o`, tap `i` reads padded position
//! `o·stride + i·dilation`) into `[n, c, oh, ow, kh·kw]`, and the max is an
//! `argmax` and one `gather` (so the gradient goes to the first maximum in
//! row-major tap order, a NaN winning, as `max_pool2d`'s), the mean a sum
//! divided by PyTorch's divisor, computed on the host: `(hend − hstart)·
//! (wend − wstart)` with `hend = min(hstart + kh, h + pad)`, so a window
//! that reaches past the padded border counts only its part inside it.
//! The cost is the gathered copy (`kh·kw / (sh·sw)` times the input); a
//! native kernel would spare it.

use oxmera_core::{DType, Error, Result, Shape};

use super::conv::{need_float, need_rank, positive_pair};
use crate::{Pool2dParams, Tensor};

/// PyTorch's full set of pooling options: `kernel`, `stride`, `padding`,
/// `dilation` (spacing between taps; max pooling only) and `ceil_mode`
/// (round the output size up, keeping a last partial window that starts
/// inside the input or its left padding). Build with
/// [`Pool2dOptions::new`] and the setters.
///
/// ```
/// use oxmera_tensor::Pool2dOptions;
/// let o = Pool2dOptions::new((3, 3)).stride((2, 2)).dilation((2, 1)).ceil_mode(true);
/// assert_eq!((o.kernel, o.stride, o.padding, o.dilation, o.ceil_mode), ((3, 3), (2, 2), (0, 0), (2, 1), true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pool2dOptions {
    /// Window size, (height, width).
    pub kernel: (usize, usize),
    /// Step between windows, (height, width).
    pub stride: (usize, usize),
    /// Padding on each side, (height, width); at most half the kernel.
    pub padding: (usize, usize),
    /// Spacing between kernel taps, (height, width); PyTorch's
    /// `avg_pool2d` has none, so only `(1, 1)` is taken there.
    pub dilation: (usize, usize),
    /// Round the output size up instead of down (PyTorch's `ceil_mode`).
    pub ceil_mode: bool,
}

impl Pool2dOptions {
    /// A `kernel`-sized window stepping by its own size, no padding,
    /// dilation 1, `ceil_mode` off: PyTorch's defaults.
    pub fn new(kernel: (usize, usize)) -> Self {
        Pool2dOptions {
            kernel,
            stride: kernel,
            padding: (0, 0),
            dilation: (1, 1),
            ceil_mode: false,
        }
    }

    /// Sets the step between windows.
    pub fn stride(mut self, stride: (usize, usize)) -> Self {
        self.stride = stride;
        self
    }

    /// Sets the padding on each side.
    pub fn padding(mut self, padding: (usize, usize)) -> Self {
        self.padding = padding;
        self
    }

    /// Sets the spacing between kernel taps.
    pub fn dilation(mut self, dilation: (usize, usize)) -> Self {
        self.dilation = dilation;
        self
    }

    /// Sets `ceil_mode`.
    pub fn ceil_mode(mut self, ceil_mode: bool) -> Self {
        self.ceil_mode = ceil_mode;
        self
    }

    /// The kernel, stride and padding, for the plain pooling ops.
    pub fn params(&self) -> Pool2dParams {
        Pool2dParams {
            kernel: self.kernel,
            stride: self.stride,
            padding: self.padding,
        }
    }
}

impl From<Pool2dParams> for Pool2dOptions {
    fn from(p: Pool2dParams) -> Self {
        Pool2dOptions::new(p.kernel)
            .stride(p.stride)
            .padding(p.padding)
    }
}

/// One axis's output extent under PyTorch's rule: `floor` or `ceil` of
/// `(len + 2p − d·(k−1) − 1) / s`, plus one; with `ceil_mode` a last
/// window starting at or past `len + p` is dropped.
fn extent(
    op: &'static str,
    axis: &'static str,
    len: usize,
    (k, s, p, d): (usize, usize, usize, usize),
    ceil: bool,
) -> Result<usize> {
    let span = d
        .checked_mul(k - 1)
        .and_then(|v| v.checked_add(1))
        .ok_or_else(|| Error::invalid(op, "dilation", "the window's span overflows"))?;
    let padded = len
        .checked_add(2 * p)
        .ok_or_else(|| Error::invalid(op, "padding", "the padded size overflows"))?;
    let Some(room) = padded.checked_sub(span) else {
        return Err(Error::WindowTooLarge {
            op,
            axis,
            input: len,
            padding: p,
            window: span,
        });
    };
    let mut out = if ceil { room.div_ceil(s) } else { room / s } + 1;
    // (out − 1)·s ≤ room + s − 1 may pass usize; u128 holds it.
    if ceil && ((out - 1) as u128) * s as u128 >= (len + p) as u128 {
        out -= 1;
    }
    Ok(out)
}

impl Tensor {
    /// Max pooling with PyTorch's full options, as `F.max_pool2d(x,
    /// kernel_size, stride, padding, dilation, ceil_mode)`: the windows'
    /// taps are `dilation` apart, and `ceil_mode` keeps a last partial
    /// window (its missing part is −∞). Values, NaN and the gradient's
    /// choice among ties as [`Tensor::max_pool2d`], which this is whenever
    /// the options make the same windows. Rank-4 float input.
    ///
    /// Errors: those of [`Tensor::max_pool2d`], plus
    /// [`Error::InvalidArgument`] for a zero dilation.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{Pool2dOptions, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 2.0, 4.0, 3.0], [1, 1, 1, 5], Device::Reference)?;
    /// // Windows of 2 stepping by 2: [1, 5], [2, 4], and with ceil_mode [3].
    /// let y = x.max_pool2d_with(Pool2dOptions::new((1, 2)).ceil_mode(true))?;
    /// assert_eq!(y.to_vec::<f32>()?, [5.0, 4.0, 3.0]);
    /// // Taps 2 apart: [1, 2], [2, 3].
    /// let y = x.max_pool2d_with(Pool2dOptions::new((1, 2)).dilation((1, 2)))?;
    /// assert_eq!(y.to_vec::<f32>()?, [2.0, 3.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn max_pool2d_with(&self, options: Pool2dOptions) -> Result<Tensor> {
        self.pool2d_with("max_pool2d", options, true)
    }

    /// Average pooling with PyTorch's `ceil_mode`, as `F.avg_pool2d(x,
    /// kernel_size, stride, padding, ceil_mode)` (`count_include_pad=True`):
    /// a last partial window divides by its size clipped at the padded
    /// border, `(hend − hstart)·(wend − wstart)` with `hend = min(hstart +
    /// kh, h + pad_h)`. `f16` and `bf16` are summed and divided in `f32` and
    /// rounded once. It is [`Tensor::avg_pool2d`] whenever the options make
    /// the same windows.
    ///
    /// Errors: those of [`Tensor::avg_pool2d`], plus
    /// [`Error::InvalidArgument`] for a dilation other than `(1, 1)`
    /// (PyTorch's `avg_pool2d` has none).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{Pool2dOptions, Tensor};
    /// let x = Tensor::from_vec(vec![2.0f32, 4.0, 9.0], [1, 1, 1, 3], Device::Reference)?;
    /// // [2, 4] / 2, and ceil_mode's last window [9] divides by 1.
    /// let y = x.avg_pool2d_with(Pool2dOptions::new((1, 2)).ceil_mode(true))?;
    /// assert_eq!(y.to_vec::<f32>()?, [3.0, 9.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn avg_pool2d_with(&self, options: Pool2dOptions) -> Result<Tensor> {
        self.pool2d_with("avg_pool2d", options, false)
    }

    fn pool2d_with(&self, op: &'static str, o: Pool2dOptions, max: bool) -> Result<Tensor> {
        need_float(op, self)?;
        need_rank(op, self, 4)?;
        positive_pair(op, "kernel size", o.kernel)?;
        positive_pair(op, "stride", o.stride)?;
        positive_pair(op, "dilation", o.dilation)?;
        if !max && o.dilation != (1, 1) {
            return Err(Error::invalid(
                op,
                "dilation",
                format!(
                    "average pooling has no dilation (PyTorch's neither), got {:?}",
                    o.dilation
                ),
            ));
        }
        let (k, s, p) = (o.kernel, o.stride, o.padding);
        if p.0 > k.0 / 2 || p.1 > k.1 / 2 {
            return Err(Error::invalid(
                op,
                "padding",
                format!("padding {p:?} must be at most half the kernel {k:?} on each axis"),
            ));
        }
        let &[n, c, h, w] = self.dims() else {
            unreachable!("rank checked above")
        };
        let (dh, dw) = o.dilation;
        let oh = extent(op, "height", h, (k.0, s.0, p.0, dh), o.ceil_mode)?;
        let ow = extent(op, "width", w, (k.1, s.1, p.1, dw), o.ceil_mode)?;
        let plain = (
            extent(op, "height", h, (k.0, s.0, p.0, dh), false)?,
            extent(op, "width", w, (k.1, s.1, p.1, dw), false)?,
        );
        if o.dilation == (1, 1) && plain == (oh, ow) {
            // The same windows as the plain op: call it.
            return if max {
                self.max_pool2d(o.params())
            } else {
                self.avg_pool2d(o.params())
            };
        }
        let out_shape = Shape::from([n, c, oh, ow]);
        crate::tensor::probe_result(op, &out_shape, self.dtype(), self.device())?;
        let Some(taps) =
            k.0.checked_mul(k.1)
                .filter(|t| out_shape.numel().checked_mul(*t).is_some())
        else {
            return Err(Error::invalid(op, "kernel size", "the windows overflow"));
        };
        let gathered = Shape::from([n, c, oh, ow, taps]);
        crate::tensor::probe_result(op, &gathered, self.dtype(), self.device())?;
        if out_shape.numel() == 0 {
            return Tensor::zeros(out_shape, self.dtype(), self.device());
        }
        // Padded positions of every (window, tap), window-major.
        let positions = |out: usize, k: usize, s: usize, d: usize| -> Vec<i64> {
            (0..out)
                .flat_map(|o| (0..k).map(move |i| (o * s + i * d) as i64))
                .collect()
        };
        let rows = positions(oh, k.0, s.0, dh);
        let cols = positions(ow, k.1, s.1, dw);
        // Pad out to the last tap (a ceil_mode window may pass the padding).
        let last = |v: &[i64]| v.iter().copied().max().unwrap_or(0) as usize + 1;
        let (hp, wp) = (
            (h + 2 * p.0).max(last(&rows)),
            (w + 2 * p.1).max(last(&cols)),
        );
        let wide = match (max, self.dtype()) {
            (false, DType::F16 | DType::BF16) => DType::F32,
            (_, d) => d,
        };
        let fill = if max { f64::NEG_INFINITY } else { 0.0 };
        let pads = [(0, 0), (0, 0), (p.0, hp - h - p.0), (p.1, wp - w - p.1)];
        let x = self.to_dtype(wide)?.pad(&pads, fill)?;
        let rows = Tensor::from_vec(rows, [oh * k.0], self.device())?;
        let cols = Tensor::from_vec(cols, [ow * k.1], self.device())?;
        // [n, c, oh·kh, ow·kw] → [n, c, oh, kh, ow, kw] → [n, c, oh, ow, kh·kw]
        let v = x
            .index_select(2, &rows)?
            .index_select(3, &cols)?
            .reshape([n, c, oh, k.0, ow, k.1])?
            .permute(&[0, 1, 2, 4, 3, 5])?
            .reshape(gathered)?;
        if max {
            let first = v.argmax(4, true)?;
            return v.gather(4, &first)?.squeeze(4);
        }
        let divisor = |out: usize, len: usize, k: usize, s: usize, p: usize| -> Vec<usize> {
            (0..out)
                .map(|o| (o * s + k).min(len + 2 * p) - o * s)
                .collect()
        };
        let dr = divisor(oh, h, k.0, s.0, p.0);
        let dc = divisor(ow, w, k.1, s.1, p.1);
        let sizes: Vec<f64> = dr
            .iter()
            .flat_map(|&a| dc.iter().map(move |&b| (a * b) as f64))
            .collect();
        let sizes = super::host_floats(sizes, [oh, ow], wide, self.device())?;
        v.sum(&[4], false)?.div(&sizes)?.to_dtype(self.dtype())
    }
}
