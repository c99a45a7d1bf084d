//! Front end: the non-constant padding modes of PyTorch's `F.pad` —
//! `reflect`, `replicate` and `circular` — beside the constant
//! [`Tensor::pad`].
//!
//! Each is a composite: for every padded dim the source position of each
//! output position is worked out on the host (it depends only on the
//! dim's size and the pads, never on the data) and `index_select`ed on the
//! tensor's own device. So every backend runs the modes with the
//! `index_select` kernel it has, and the gradient is `index_select`'s: an
//! element's copies in the padding add back to it, as PyTorch's
//! `reflection_pad`/`replication_pad` backward kernels do.

use oxmera_core::{DType, Error, Result, Shape};

use crate::Tensor;

const NAME: &str = "pad";

/// How [`Tensor::pad_mode`] fills the padding, as `F.pad`'s `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PadMode {
    /// The dim mirrored about its edge elements, which are not repeated:
    /// `[1, 2, 3]` padded by 2 on each side is `[3, 2, 1, 2, 3, 2, 1]`.
    /// Each pad must be less than the dim's size.
    Reflect,
    /// The edge elements repeated: `[1, 2, 3]` → `[1, 1, 1, 2, 3, 3, 3]`.
    /// A padded dim must not be empty.
    Replicate,
    /// The dim wrapped around: `[1, 2, 3]` → `[2, 3, 1, 2, 3, 1, 2]`. Each
    /// pad may be at most the dim's size (it wraps once).
    Circular,
}

impl PadMode {
    /// PyTorch's name for the mode (`"reflect"`, `"replicate"`,
    /// `"circular"`).
    pub fn name(self) -> &'static str {
        match self {
            PadMode::Reflect => "reflect",
            PadMode::Replicate => "replicate",
            PadMode::Circular => "circular",
        }
    }

    /// The mode PyTorch calls `name`, if any.
    pub fn from_name(name: &str) -> Option<PadMode> {
        [PadMode::Reflect, PadMode::Replicate, PadMode::Circular]
            .into_iter()
            .find(|m| m.name() == name)
    }

    /// The source position of output position `i` (counted from the start
    /// of the padding) along a dim of `n` elements padded by `before`;
    /// the checks of [`Tensor::pad_mode`] keep it in `0..n`.
    fn source(self, i: usize, before: usize, n: usize) -> usize {
        let p = i as i128 - before as i128;
        let n = n as i128;
        let j = match self {
            PadMode::Reflect => {
                if p < 0 {
                    -p
                } else if p >= n {
                    2 * (n - 1) - p
                } else {
                    p
                }
            }
            PadMode::Replicate => p.clamp(0, n - 1),
            PadMode::Circular => p.rem_euclid(n),
        };
        j as usize
    }
}

impl Tensor {
    /// Pads with `mode` (reflect, replicate or circular), as
    /// `F.pad(x, pad, mode)`: `pads[i] = (before, after)` for dim `i`, one
    /// pair per dim in dim order, as [`Tensor::pad`] takes them (PyTorch's
    /// flat list starts from the last dim instead).
    ///
    /// PyTorch's limits hold: the rank is 2 to 5, and only the last three
    /// dims, never dim 0 (the batch, or an unbatched input's channels),
    /// may be padded — `F.pad` pads the last 1, 2 or 3 dims of a batched
    /// or unbatched input. `Reflect` needs each pad less than its dim's
    /// size, `Circular` at most its size, `Replicate` a non-empty dim;
    /// dims whose pads are `(0, 0)` are left alone. Breaking these is
    /// [`Error::InvalidArgument`]. Every dtype is accepted.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::{PadMode, Tensor};
    /// let x = Tensor::from_vec(vec![1i64, 2, 3], [1, 3], Device::Reference)?;
    /// let pad = |mode| x.pad_mode(&[(0, 0), (2, 2)], mode)?.to_vec::<i64>();
    /// assert_eq!(pad(PadMode::Reflect)?, [3, 2, 1, 2, 3, 2, 1]);
    /// assert_eq!(pad(PadMode::Replicate)?, [1, 1, 1, 2, 3, 3, 3]);
    /// assert_eq!(pad(PadMode::Circular)?, [2, 3, 1, 2, 3, 1, 2]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn pad_mode(&self, pads: &[(usize, usize)], mode: PadMode) -> Result<Tensor> {
        let rank = self.rank();
        if pads.len() != rank {
            return Err(Error::invalid(
                NAME,
                "pads",
                format!(
                    "expected one (before, after) pair per dim of {} ({rank} pairs), got {}",
                    self.shape(),
                    pads.len()
                ),
            ));
        }
        if !(2..=5).contains(&rank) {
            return Err(Error::invalid(
                NAME,
                "pads",
                format!(
                    "{} padding takes a 2-D to 5-D input (the last 1 to 3 dims of a batched or unbatched one), got shape {}",
                    mode.name(),
                    self.shape()
                ),
            ));
        }
        let first = rank.saturating_sub(3).max(1);
        let mut out_dims = self.dims().to_vec();
        for (d, (&n, &(before, after))) in self.dims().iter().zip(pads).enumerate() {
            if before == 0 && after == 0 {
                continue;
            }
            if d < first {
                return Err(Error::invalid(
                    NAME,
                    "pads",
                    format!(
                        "{} padding pads dims {first}..{rank} of shape {}, not dim {d}",
                        mode.name(),
                        self.shape()
                    ),
                ));
            }
            let fits = match mode {
                PadMode::Reflect => before < n && after < n,
                PadMode::Replicate => n > 0,
                PadMode::Circular => before <= n && after <= n,
            };
            if !fits {
                let rule = match mode {
                    PadMode::Reflect => "each pad must be less than the dim's size",
                    PadMode::Replicate => "an empty dim has no edge to repeat",
                    PadMode::Circular => "each pad may be at most the dim's size",
                };
                return Err(Error::invalid(
                    NAME,
                    "pads",
                    format!(
                        "{} padding by ({before}, {after}) along dim {d} of shape {}: {rule}",
                        mode.name(),
                        self.shape()
                    ),
                ));
            }
            out_dims[d] = n
                .checked_add(before)
                .and_then(|t| t.checked_add(after))
                .ok_or_else(|| {
                    Error::invalid(NAME, "pads", format!("({before}, {after}) overflows a dim"))
                })?;
        }
        let out = Shape::from(out_dims.clone());
        crate::tensor::probe_result(NAME, &out, self.dtype(), self.device())?;
        if out.numel() == 0 {
            return Tensor::zeros(out, self.dtype(), self.device());
        }
        let mut x = self.clone();
        for (d, &(before, after)) in pads.iter().enumerate() {
            if before == 0 && after == 0 {
                continue;
            }
            let n = self.dims()[d];
            let len = out_dims[d];
            // The positions are i64, possibly wider than the result's dtype.
            crate::tensor::probe_result(NAME, &Shape::from([len]), DType::I64, self.device())?;
            let positions: Vec<i64> = (0..len).map(|i| mode.source(i, before, n) as i64).collect();
            let index = Tensor::from_vec(positions, [len], self.device())?;
            x = x.index_select(d as isize, &index)?;
        }
        Ok(x)
    }
}
