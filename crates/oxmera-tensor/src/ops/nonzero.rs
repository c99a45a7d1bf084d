//! Front end: the ops whose result's length depends on the data —
//! `nonzero` and `masked_select`, as PyTorch's.
//!
//! Both read a tensor to the host to find its nonzero (or true)
//! elements, as `sort` reads its keys: the length of the result must be
//! known before a device can be asked for it. `masked_select` then picks
//! its values on the tensor's own device with `index_select`, so its
//! gradient is `index_select`'s (each value's gradient sent back to the
//! element it came from) and, through the broadcast, summed onto `self`.

use oxmera_core::{DType, Error, Result, Shape, broadcast_shapes};

use crate::Tensor;

impl Tensor {
    /// The indices of the nonzero elements, as `torch.nonzero(x)`: an
    /// `I64` tensor of shape `[n, rank]`, one row of coordinates per
    /// nonzero element in row-major order. NaN is nonzero, `-0.0` is
    /// zero, bool's `true` is nonzero. A 0-d tensor gives `[n, 0]` (`n` 0
    /// or 1). Every dtype; no gradient (the result is integer).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // [[0, 5, 0],
    /// //  [7, 0, 9]]
    /// let x = Tensor::from_vec(vec![0.0f32, 5.0, 0.0, 7.0, 0.0, 9.0], [2, 3], Device::Reference)?;
    /// let i = x.nonzero()?;
    /// assert_eq!(i.dims(), &[3, 2]);
    /// assert_eq!(i.to_vec::<i64>()?, [0, 1, 1, 0, 1, 2]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn nonzero(&self) -> Result<Tensor> {
        let rank = self.rank();
        let dims = self.dims().to_vec();
        let flat = self.nonzero_positions("nonzero")?;
        // The coordinates are `rank` times the positions: probe them as
        // the result they become before building them on the host.
        crate::tensor::probe_result(
            "nonzero",
            &Shape::from([flat.len(), rank]),
            DType::I64,
            self.device(),
        )?;
        let mut coords = Vec::with_capacity(flat.len() * rank);
        let mut at = vec![0i64; rank];
        for &p in &flat {
            // Row-major coordinates of the flat position p.
            let mut rest = p as usize;
            for d in (0..rank).rev() {
                at[d] = (rest % dims[d]) as i64;
                rest /= dims[d];
            }
            coords.extend_from_slice(&at);
        }
        Tensor::from_vec(coords, [flat.len(), rank], self.device())
    }

    /// The elements of `self` where `mask` is true, as
    /// `torch.masked_select(x, mask)`: `self` and the bool `mask` broadcast
    /// together, and the result is 1-D, in the row-major order of the
    /// broadcast shape. The gradient goes back to the selected elements
    /// (summed over a broadcast of `self`); the others get 0. A mask of
    /// another dtype is [`Error::UnsupportedDType`], shapes that do not
    /// broadcast [`Error::BroadcastIncompatible`].
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], Device::Reference)?;
    /// let mask = x.gt_scalar(2.5)?;
    /// assert_eq!(x.masked_select(&mask)?.to_vec::<f32>()?, [3.0, 4.0, 5.0, 6.0]);
    /// // A row mask broadcast over both rows picks columns 0 and 2 of each.
    /// let cols = Tensor::from_vec(vec![true, false, true], [3], Device::Reference)?;
    /// assert_eq!(x.masked_select(&cols)?.to_vec::<f32>()?, [1.0, 3.0, 4.0, 6.0]);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        const OP: &str = "masked_select";
        if self.device() != mask.device() {
            return Err(Error::DeviceMismatch {
                op: OP,
                lhs: self.device(),
                rhs: mask.device(),
            });
        }
        if mask.dtype() != DType::Bool {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: mask.dtype(),
                hint: "the mask is bool: compare, or cast with to_dtype(Bool)",
            });
        }
        let shape = broadcast_shapes(OP, self.shape(), mask.shape())?;
        // The broadcast copy of self that the selection reads.
        crate::tensor::probe_result(OP, &shape, self.dtype(), self.device())?;
        let positions = mask.broadcast_to(shape.clone())?.nonzero_positions(OP)?;
        let n = positions.len();
        let index = Tensor::from_vec(positions, [n], self.device())?;
        self.broadcast_to(shape.clone())?
            .reshape([shape.numel()])?
            .index_select(0, &index)
    }

    /// The row-major positions of the nonzero elements, read on the host.
    fn nonzero_positions(&self, op: &'static str) -> Result<Vec<i64>> {
        if self.numel() == 0 {
            // Nothing to read, however large the other dims.
            return Ok(Vec::new());
        }
        crate::tensor::probe_result(op, &Shape::from([self.numel()]), DType::F64, self.device())?;
        let host = self.to_host()?;
        Ok((0..host.len())
            .filter(|&i| host.get_f64(i) != 0.0)
            .map(|i| i as i64)
            .collect())
    }
}
