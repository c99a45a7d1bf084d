//! Views: new layouts over the same storage. None of these copy, except
//! [`Tensor::reshape`] and [`Tensor::flatten`] when the layout forbids a
//! view (and they say so in their docs).

use oxmera_core::{Position, Result, Shape, normalize_dim};

use crate::Tensor;
use crate::autograd::rules;

impl Tensor {
    /// The same elements under a new shape, *without copying*; an error
    /// ([`oxmera_core::Error::NotAView`]) when the strides cannot express
    /// it. One dim may be `-1`-style inferred by passing [`Tensor::infer_shape`]'s result.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_tensor::Tensor;
    /// use oxmera_core::Device;
    /// let a = Tensor::arange(0.0, 6.0, 1.0, oxmera_core::DType::F32, Device::Reference)?;
    /// let v = a.view([2, 3])?;
    /// assert!(v.shares_storage(&a));
    /// assert!(v.t()?.view([6]).is_err()); // a transpose cannot be flattened in place
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn view(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        let layout = self.layout().reshape("view", &shape.into())?;
        Ok(rules::reshape("view", self, self.with_layout(layout)))
    }

    /// The same elements under a new shape: a view when the layout allows,
    /// otherwise a contiguous copy reshaped.
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        let shape = shape.into();
        match self.layout().reshape("reshape", &shape) {
            Ok(layout) => Ok(rules::reshape("reshape", self, self.with_layout(layout))),
            Err(oxmera_core::Error::NotAView { .. }) => {
                let c = self.contiguous()?;
                let layout = c.layout().reshape("reshape", &shape)?;
                Ok(rules::reshape("reshape", &c, c.with_layout(layout)))
            }
            Err(e) => Err(e),
        }
    }

    /// Resolves a shape with at most one `-1` (inferred) entry against this
    /// tensor's element count, for use with `reshape`/`view`.
    pub fn infer_shape(&self, dims: &[isize]) -> Result<Shape> {
        let op = "reshape";
        let mut inferred = None;
        let mut known = 1usize;
        for (i, &d) in dims.iter().enumerate() {
            match d {
                -1 if inferred.is_none() => inferred = Some(i),
                -1 => {
                    return Err(oxmera_core::Error::invalid(
                        op,
                        "shape",
                        format!("at most one dim may be -1, got {dims:?}"),
                    ));
                }
                d if d < 0 => {
                    return Err(oxmera_core::Error::invalid(
                        op,
                        "shape",
                        format!("dims must be non-negative or -1, got {dims:?}"),
                    ));
                }
                d => known = known.saturating_mul(d as usize),
            }
        }
        let mut out: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
        if let Some(i) = inferred {
            if known == 0 || self.numel() % known != 0 {
                return Err(oxmera_core::Error::invalid(
                    op,
                    "shape",
                    format!("cannot infer -1 in {dims:?} for {} elements", self.numel()),
                ));
            }
            out[i] = self.numel() / known;
        }
        Ok(Shape::from(out))
    }

    /// Reorders the dims: dim `i` of the result is dim `perm[i]` of `self`.
    pub fn permute(&self, perm: &[isize]) -> Result<Tensor> {
        let out = self.with_layout(self.layout().permute("permute", perm)?);
        // Valid now: the layout accepted it as a permutation.
        let d = perm
            .iter()
            .map(|&p| normalize_dim("permute", p, self.rank()))
            .collect::<Result<Vec<_>>>()?;
        Ok(rules::permute("permute", self, d, out))
    }

    /// Swaps two dims.
    pub fn transpose(&self, a: isize, b: isize) -> Result<Tensor> {
        let out = self.with_layout(self.layout().transpose("transpose", a, b)?);
        let mut perm: Vec<usize> = (0..self.rank()).collect();
        let (a, b) = (
            normalize_dim("transpose", a, self.rank())?,
            normalize_dim("transpose", b, self.rank())?,
        );
        perm.swap(a, b);
        Ok(rules::permute("transpose", self, perm, out))
    }

    /// The transpose of a matrix (rank ≤ 2; rank 0 and 1 are unchanged).
    pub fn t(&self) -> Result<Tensor> {
        match self.rank() {
            0 | 1 => Ok(self.clone()),
            2 => self.transpose(0, 1),
            _ => Err(oxmera_core::Error::RankMismatch {
                op: "t",
                expected: 2,
                shape: self.shape().clone(),
            }),
        }
    }

    /// Keeps `len` elements of `dim` starting at `start` (a view). A
    /// negative `start` counts from the end, as in PyTorch:
    /// `x.narrow(0, -2, 2)` is the last two rows.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{DType, Device};
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::arange(0, 5, 1, DType::I64, Device::Reference)?;
    /// assert_eq!(x.narrow(0, -2, 2)?.to_vec::<i64>()?, vec![3, 4]);
    /// assert_eq!(x.narrow(0, 1usize, 2)?.to_vec::<i64>()?, vec![1, 2]);
    /// assert!(x.narrow(0, -6, 1).is_err());
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn narrow(&self, dim: isize, start: impl Into<Position>, len: usize) -> Result<Tensor> {
        let d = normalize_dim("narrow", dim, self.rank())?;
        let start = start.into();
        // A start past the end is the layout's RangeOutOfBounds, as before;
        // only a negative one needs counting from the end here.
        let start = match usize::try_from(start.get()) {
            Ok(s) => s,
            Err(_) if start.get() > 0 => usize::MAX,
            Err(_) => start.resolve_start("narrow", d, self.dims()[d])?,
        };
        let out = self.with_layout(self.layout().narrow("narrow", dim, start, len)?);
        Ok(rules::slice("narrow", self, d, start, 1, out))
    }

    /// The slice at `index` along `dim`, with that dim removed (a view):
    /// PyTorch's `x.select(dim, index)`, `x[:, index]` for `dim = 1`. A
    /// negative `index` counts from the end.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::new([[1, 2, 3], [4, 5, 6]], Device::Reference)?;
    /// assert_eq!(x.select(1, -1)?.to_vec::<i32>()?, vec![3, 6]);
    /// assert_eq!(x.select(0, 0)?.dims(), &[3]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn select(&self, dim: isize, index: impl Into<Position>) -> Result<Tensor> {
        let d = normalize_dim("select", dim, self.rank())?;
        let i = index.into().resolve("select", d, self.dims()[d])?;
        let one = self.with_layout(self.layout().narrow("select", dim, i, 1)?);
        let one = rules::slice("select", self, d, i, 1, one);
        one.squeeze(d as isize)
    }

    /// Keeps every `step`-th element of `dim` within `start..end`.
    pub fn slice(&self, dim: isize, start: usize, end: usize, step: usize) -> Result<Tensor> {
        let out = self.with_layout(self.layout().slice("slice", dim, start, end, step)?);
        let d = normalize_dim("slice", dim, self.rank())?;
        Ok(rules::slice("slice", self, d, start, step, out))
    }

    /// Stretches size-1 (and missing leading) dims to `shape` with stride 0.
    pub fn broadcast_to(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        let out = self.with_layout(self.layout().broadcast_to("broadcast_to", &shape.into())?);
        Ok(rules::broadcast("broadcast_to", self, out))
    }

    /// Alias of [`Tensor::broadcast_to`], under PyTorch's name.
    pub fn expand(&self, shape: impl Into<Shape>) -> Result<Tensor> {
        let out = self.with_layout(self.layout().broadcast_to("expand", &shape.into())?);
        Ok(rules::broadcast("expand", self, out))
    }

    /// Removes a size-1 dim.
    pub fn squeeze(&self, dim: isize) -> Result<Tensor> {
        let out = self.with_layout(self.layout().squeeze("squeeze", dim)?);
        Ok(rules::reshape("squeeze", self, out))
    }

    /// Removes every size-1 dim.
    pub fn squeeze_all(&self) -> Tensor {
        rules::reshape(
            "squeeze_all",
            self,
            self.with_layout(self.layout().squeeze_all()),
        )
    }

    /// Inserts a size-1 dim at `dim` (which may be `rank`, or negative).
    pub fn unsqueeze(&self, dim: isize) -> Result<Tensor> {
        let out = self.with_layout(self.layout().unsqueeze("unsqueeze", dim)?);
        Ok(rules::reshape("unsqueeze", self, out))
    }

    /// Merges dims `start..=end` into one: a view when possible, else a copy.
    pub fn flatten(&self, start: isize, end: isize) -> Result<Tensor> {
        let rank = self.rank().max(1);
        let s = normalize_dim("flatten", start, rank)?;
        let e = normalize_dim("flatten", end, rank)?;
        if self.rank() == 0 {
            return self.reshape([1]);
        }
        if s > e {
            return Err(oxmera_core::Error::invalid(
                "flatten",
                "dims",
                format!("start dim {s} comes after end dim {e}"),
            ));
        }
        let dims = self.dims();
        let mut out = dims[..s].to_vec();
        out.push(dims[s..=e].iter().product());
        out.extend_from_slice(&dims[e + 1..]);
        self.reshape(out)
    }

    /// Splits `dim` into pieces of `size` (the last may be smaller); views.
    pub fn split(&self, size: usize, dim: isize) -> Result<Vec<Tensor>> {
        let d = normalize_dim("split", dim, self.rank())?;
        if size == 0 {
            return Err(oxmera_core::Error::invalid(
                "split",
                "size",
                "split size must be at least 1, got 0",
            ));
        }
        let n = self.dims()[d];
        // Each piece is a view: no data, but a handle and a layout (about
        // 256 bytes) on the host, so a huge dim split finely (even an
        // empty tensor's) is refused before it is walked.
        let pieces = n.div_ceil(size);
        oxmera_core::memory::probe_result(
            "split",
            (pieces as u64).saturating_mul(256),
            self.device(),
        )?;
        let mut out = Vec::with_capacity(pieces);
        for start in (0..n).step_by(size) {
            out.push(self.narrow(d as isize, start, size.min(n - start))?);
        }
        Ok(out)
    }

    /// Splits `dim` into `chunks` nearly equal pieces (fewer when the dim is
    /// small, as in PyTorch); views.
    pub fn chunk(&self, chunks: usize, dim: isize) -> Result<Vec<Tensor>> {
        let d = normalize_dim("chunk", dim, self.rank())?;
        if chunks == 0 {
            return Err(oxmera_core::Error::invalid(
                "chunk",
                "chunks",
                "number of chunks must be at least 1, got 0",
            ));
        }
        let n = self.dims()[d];
        self.split(n.div_ceil(chunks).max(1), d as isize)
    }
}
