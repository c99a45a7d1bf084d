//! Normalization layers: LayerNorm and BatchNorm here, GroupNorm and
//! RMSNorm in [`group`].

mod group;
pub use group::{GroupNorm, RMSNorm};

use oxmera_core::{DType, Device, Error, Result, Shape};
use oxmera_tensor::{Tensor, no_grad};

use crate::{Module, ModuleState, Param, join_name};

/// Normalizes over the trailing `normalized_shape` dims of each sample:
/// `y = (x − mean) / √(var + eps) · weight + bias`, with the biased
/// variance (divide by the count), as PyTorch's `nn.LayerNorm`.
///
/// `weight` starts at ones and `bias` at zeros, both of
/// `normalized_shape`; [`LayerNorm::without_affine`] drops them. The
/// same computation in training and evaluation: one
/// [`Tensor::layer_norm`] (a fused kernel on backends that have one),
/// then the affine part.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::{DType, Device};
/// use oxmera_nn::{LayerNorm, Module};
/// use oxmera_tensor::Tensor;
/// let ln = LayerNorm::new([2], DType::F64, Device::Reference)?.eps(0.0)?;
/// let x = Tensor::from_vec(vec![1.0f64, 3.0, -5.0, 5.0], [2, 2], Device::Reference)?;
/// // Each row has mean m and standard deviation s; (x - m) / s is ±1.
/// assert_eq!(ln.forward(&x)?.to_vec::<f64>()?, vec![-1.0, 1.0, -1.0, 1.0]);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct LayerNorm {
    weight: Option<Param>,
    bias: Option<Param>,
    normalized_shape: Shape,
    eps: f64,
}

impl LayerNorm {
    /// A layer norm over trailing dims `normalized_shape` (at least one
    /// dim; [`Error::InvalidArgument`] otherwise), with `eps = 1e-5`.
    #[track_caller]
    pub fn new(
        normalized_shape: impl Into<Shape>,
        dtype: DType,
        device: Device,
    ) -> Result<LayerNorm> {
        let normalized_shape = normalized_shape.into();
        if normalized_shape.rank() == 0 {
            return Err(Error::invalid(
                "LayerNorm",
                "normalized_shape",
                "needs at least one dim",
            ));
        }
        let weight = Param::new(Tensor::ones(normalized_shape.clone(), dtype, device)?)?;
        let bias = Param::new(Tensor::zeros(normalized_shape.clone(), dtype, device)?)?;
        Ok(LayerNorm {
            weight: Some(weight),
            bias: Some(bias),
            normalized_shape,
            eps: 1e-5,
        })
    }

    /// Sets the constant added to the variance (finite, `>= 0`).
    pub fn eps(mut self, eps: f64) -> Result<LayerNorm> {
        self.eps = check_eps("LayerNorm", eps)?;
        Ok(self)
    }

    /// Drops the learned weight and bias: the output is just normalized.
    pub fn without_affine(mut self) -> LayerNorm {
        self.weight = None;
        self.bias = None;
        self
    }

    /// The learned scale, if any.
    pub fn weight(&self) -> Option<&Param> {
        self.weight.as_ref()
    }

    /// The learned shift, if any.
    pub fn bias(&self) -> Option<&Param> {
        self.bias.as_ref()
    }
}

impl Module for LayerNorm {
    /// `x`'s trailing dims must equal `normalized_shape`
    /// ([`Error::ShapeMismatch`] named `"LayerNorm"` otherwise).
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let k = self.normalized_shape.rank();
        if x.rank() < k || x.dims()[x.rank() - k..] != *self.normalized_shape.dims() {
            return Err(Error::ShapeMismatch {
                op: "LayerNorm",
                lhs: x.shape().clone(),
                rhs: self.normalized_shape.clone(),
            });
        }
        let y = x.layer_norm(k, self.eps)?;
        affine(y, self.weight.as_ref(), self.bias.as_ref(), None)
    }
}

impl ModuleState for LayerNorm {
    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        if let Some(w) = &self.weight {
            out.push((join_name(prefix, "weight"), w.clone()));
        }
        if let Some(b) = &self.bias {
            out.push((join_name(prefix, "bias"), b.clone()));
        }
    }
}

/// `y · weight + bias`, each reshaped to `shape` when given.
fn affine(
    y: Tensor,
    weight: Option<&Param>,
    bias: Option<&Param>,
    shape: Option<&[usize]>,
) -> Result<Tensor> {
    let view = |p: &Param| -> Result<Tensor> {
        match shape {
            Some(s) => p.tensor().reshape(s.to_vec()),
            None => Ok(p.tensor()),
        }
    };
    let y = match weight {
        Some(w) => y.mul(&view(w)?)?,
        None => y,
    };
    match bias {
        Some(b) => y.add(&view(b)?),
        None => Ok(y),
    }
}

fn check_eps(op: &'static str, eps: f64) -> Result<f64> {
    if eps.is_finite() && eps >= 0.0 {
        Ok(eps)
    } else {
        Err(Error::invalid(
            op,
            "eps",
            format!("need a finite eps >= 0, got {eps}"),
        ))
    }
}

/// What BatchNorm1d and BatchNorm2d share; they differ only in the input
/// ranks they accept.
#[derive(Debug, Clone)]
struct BatchNorm {
    op: &'static str,
    ranks: &'static [usize],
    layout: &'static str,
    num_features: usize,
    eps: f64,
    momentum: Option<f64>,
    weight: Option<Param>,
    bias: Option<Param>,
    running_mean: Option<Param>,
    running_var: Option<Param>,
    num_batches_tracked: Option<Param>,
    training: bool,
}

impl BatchNorm {
    #[track_caller]
    fn new(
        op: &'static str,
        ranks: &'static [usize],
        layout: &'static str,
        num_features: usize,
        dtype: DType,
        device: Device,
    ) -> Result<BatchNorm> {
        let c = [num_features];
        Ok(BatchNorm {
            op,
            ranks,
            layout,
            num_features,
            eps: 1e-5,
            momentum: Some(0.1),
            weight: Some(Param::new(Tensor::ones(c, dtype, device)?)?),
            bias: Some(Param::new(Tensor::zeros(c, dtype, device)?)?),
            running_mean: Some(Param::buffer(Tensor::zeros(c, dtype, device)?)),
            running_var: Some(Param::buffer(Tensor::ones(c, dtype, device)?)),
            num_batches_tracked: Some(Param::buffer(Tensor::zeros((), DType::I64, device)?)),
            training: true,
        })
    }

    fn set_momentum(&mut self, momentum: Option<f64>) -> Result<()> {
        if let Some(m) = momentum {
            if !(0.0..=1.0).contains(&m) {
                return Err(Error::invalid(
                    self.op,
                    "momentum",
                    format!("must lie in [0, 1], got {m}"),
                ));
            }
        }
        self.momentum = momentum;
        Ok(())
    }

    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let op = self.op;
        if !self.ranks.contains(&x.rank()) {
            return Err(Error::invalid(
                op,
                "input",
                format!("expected {}, got shape {}", self.layout, x.shape()),
            ));
        }
        let c = x.dims()[1];
        if c != self.num_features {
            return Err(Error::invalid(
                op,
                "input",
                format!(
                    "expected {} channels in dim 1, got shape {}",
                    self.num_features,
                    x.shape()
                ),
            ));
        }
        // Statistics are per channel: reduce over every dim but 1, and
        // broadcast back as [1, C, 1, …].
        let dims: Vec<isize> = (0..x.rank() as isize).filter(|&d| d != 1).collect();
        let mut stat_shape = vec![1; x.rank()];
        stat_shape[1] = c;
        let running = match (&self.running_mean, &self.running_var) {
            (Some(m), Some(v)) => Some((m, v)),
            _ => None,
        };
        let (mean, var) = match running {
            Some((m, v)) if !self.training => (
                m.tensor().reshape(stat_shape.clone())?,
                v.tensor().reshape(stat_shape.clone())?,
            ),
            _ => {
                let n = x.numel().checked_div(c).unwrap_or(0);
                if self.training && n <= 1 {
                    return Err(Error::invalid(
                        op,
                        "input",
                        format!(
                            "training needs more than one value per channel, got shape {}",
                            x.shape()
                        ),
                    ));
                }
                let mean = x.mean(&dims, true)?;
                let var = x.var(&dims, 0.0, true)?;
                if let (true, Some((m, v))) = (self.training, running) {
                    self.update_running(m, v, &mean, &var, n)?;
                }
                (mean, var)
            }
        };
        let y = x.sub(&mean)?.mul(&var.add_scalar(self.eps)?.rsqrt()?)?;
        affine(
            y,
            self.weight.as_ref(),
            self.bias.as_ref(),
            Some(&stat_shape),
        )
    }

    /// `running ← (1 − f) · running + f · batch`, with the unbiased batch
    /// variance (as PyTorch), `f` the momentum or, without one, `1 / t`
    /// after `t` batches (a cumulative average).
    fn update_running(
        &self,
        m: &Param,
        v: &Param,
        mean: &Tensor,
        var: &Tensor,
        n: usize,
    ) -> Result<()> {
        no_grad(|| {
            let tracked = match &self.num_batches_tracked {
                Some(t) => {
                    let next = t.tensor().add_scalar(1.0)?;
                    let count = next.item()?;
                    Some((t, next, count))
                }
                None => None,
            };
            let f = match (self.momentum, &tracked) {
                (Some(f), _) => f,
                (None, Some((_, _, count))) => 1.0 / count,
                // Without a counter a cumulative average has nothing to
                // divide by; `num_batches_tracked` is always kept when
                // running statistics are, so this is unreachable.
                (None, None) => 1.0,
            };
            let c = [self.num_features];
            let batch_mean = mean.detach().reshape(c)?;
            let unbiased = var
                .detach()
                .reshape(c)?
                .mul_scalar(n as f64 / (n as f64 - 1.0))?;
            let new_mean = m
                .tensor()
                .mul_scalar(1.0 - f)?
                .add(&batch_mean.mul_scalar(f)?)?;
            let new_var = v
                .tensor()
                .mul_scalar(1.0 - f)?
                .add(&unbiased.mul_scalar(f)?)?;
            m.set(new_mean)?;
            v.set(new_var)?;
            if let Some((t, next, _)) = tracked {
                t.set(next)?;
            }
            Ok(())
        })
    }

    fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
        let slots = [
            ("weight", &self.weight),
            ("bias", &self.bias),
            ("running_mean", &self.running_mean),
            ("running_var", &self.running_var),
            ("num_batches_tracked", &self.num_batches_tracked),
        ];
        for (name, slot) in slots {
            if let Some(p) = slot {
                out.push((join_name(prefix, name), p.clone()));
            }
        }
    }
}

/// Declares a public batch-norm layer over the shared [`BatchNorm`].
macro_rules! batch_norm {
    ($(#[$doc:meta])* $ty:ident, $ranks:expr, $layout:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $ty(BatchNorm);

        impl $ty {
            #[doc = concat!("A batch norm over `num_features` channels (input ", $layout, "): weight ones, bias zeros, running mean zeros, running variance ones, `eps = 1e-5`, momentum 0.1, in training mode.")]
            #[track_caller]
            pub fn new(num_features: usize, dtype: DType, device: Device) -> Result<$ty> {
                Ok($ty(BatchNorm::new(stringify!($ty), $ranks, $layout, num_features, dtype, device)?))
            }

            /// Sets the constant added to the variance (finite, `>= 0`).
            pub fn eps(mut self, eps: f64) -> Result<$ty> {
                self.0.eps = check_eps(self.0.op, eps)?;
                Ok(self)
            }

            /// Sets the running-average factor `f` in `[0, 1]`
            /// (`running ← (1 − f) · running + f · batch`), or `None` for a
            /// cumulative average over all batches seen.
            pub fn momentum(mut self, momentum: Option<f64>) -> Result<$ty> {
                self.0.set_momentum(momentum)?;
                Ok(self)
            }

            /// Drops the learned weight and bias.
            pub fn without_affine(mut self) -> $ty {
                self.0.weight = None;
                self.0.bias = None;
                self
            }

            /// Drops the running statistics: batch statistics are used in
            /// evaluation mode too, and nothing is updated.
            pub fn without_running_stats(mut self) -> $ty {
                self.0.running_mean = None;
                self.0.running_var = None;
                self.0.num_batches_tracked = None;
                self
            }

            /// The learned scale, `[C]`, if any.
            pub fn weight(&self) -> Option<&Param> {
                self.0.weight.as_ref()
            }

            /// The learned shift, `[C]`, if any.
            pub fn bias(&self) -> Option<&Param> {
                self.0.bias.as_ref()
            }

            /// The running mean buffer, `[C]`, if kept.
            pub fn running_mean(&self) -> Option<&Param> {
                self.0.running_mean.as_ref()
            }

            /// The running (unbiased) variance buffer, `[C]`, if kept.
            pub fn running_var(&self) -> Option<&Param> {
                self.0.running_var.as_ref()
            }

            /// How many training batches updated the running statistics
            /// (a rank-0 `i64` buffer), if kept.
            pub fn num_batches_tracked(&self) -> Option<&Param> {
                self.0.num_batches_tracked.as_ref()
            }
        }

        impl Module for $ty {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                self.0.forward(x)
            }
        }

        impl ModuleState for $ty {
            fn visit_params(&self, prefix: &str, out: &mut Vec<(String, Param)>) {
                self.0.visit_params(prefix, out);
            }

            fn set_training(&mut self, training: bool) {
                self.0.training = training;
            }

            fn is_training(&self) -> bool {
                self.0.training
            }
        }
    };
}

batch_norm!(
    /// Batch normalization over `[N, C]` or `[N, C, L]` input, per channel.
    ///
    /// In training mode it normalizes by the batch's mean and biased
    /// variance and updates the running statistics (with the *unbiased*
    /// variance, as PyTorch); in evaluation mode it normalizes by the
    /// running statistics and changes nothing. The running statistics and
    /// `num_batches_tracked` are buffers: saved, not trained.
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::{DType, Device};
    /// use oxmera_nn::{BatchNorm1d, Module};
    /// use oxmera_tensor::Tensor;
    /// let bn = BatchNorm1d::new(1, DType::F64, Device::Reference)?.eps(0.0)?;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0], [2, 1], Device::Reference)?;
    /// assert_eq!(bn.forward(&x)?.to_vec::<f64>()?, vec![-1.0, 1.0]);
    /// // running_mean = 0.9 · 0 + 0.1 · 2; running_var = 0.9 · 1 + 0.1 · 2 (unbiased).
    /// assert!((bn.running_mean().unwrap().tensor().item()? - 0.2).abs() < 1e-15);
    /// assert!((bn.running_var().unwrap().tensor().item()? - 1.1).abs() < 1e-15);
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    BatchNorm1d,
    &[2, 3],
    "[N, C] or [N, C, L]"
);

batch_norm!(
    /// Batch normalization over `[N, C, H, W]` input, per channel:
    /// [`BatchNorm1d`]'s semantics with statistics over `N`, `H` and `W`.
    BatchNorm2d,
    &[4],
    "[N, C, H, W]"
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use oxmera_tensor::Generator;

    fn bn1(c: usize) -> BatchNorm1d {
        BatchNorm1d::new(c, DType::F64, DEV)
            .unwrap()
            .eps(0.0)
            .unwrap()
    }

    fn values(p: Option<&Param>) -> Vec<f64> {
        p.unwrap().tensor().to_f64_vec().unwrap()
    }

    #[test]
    fn layer_norm_gradient_passes_gradcheck_with_affine() {
        let ln = LayerNorm::new([2, 3], DType::F64, DEV).unwrap();
        ln.weight()
            .unwrap()
            .set(t64(&[2.0, -1.0, 0.5, 1.0, 3.0, -2.0], [2, 3]))
            .unwrap();
        ln.bias()
            .unwrap()
            .set(t64(&[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [2, 3]))
            .unwrap();
        let x = Generator::new(31)
            .randn([2, 2, 3], DType::F64, DEV)
            .unwrap();
        check_grad(|xs| ln.forward(&xs[0]), &[x]);
    }

    #[test]
    fn layer_norm_checks_its_shape_and_eps() {
        let ln = LayerNorm::new([3], DType::F32, DEV).unwrap();
        let x = Tensor::zeros([2, 4], DType::F32, DEV).unwrap();
        assert!(matches!(
            ln.forward(&x),
            Err(Error::ShapeMismatch {
                op: "LayerNorm",
                ..
            })
        ));
        assert!(LayerNorm::new((), DType::F32, DEV).is_err());
        assert!(matches!(
            LayerNorm::new([3], DType::F32, DEV).unwrap().eps(-1.0),
            Err(Error::InvalidArgument { name: "eps", .. })
        ));
        let bare = ln.without_affine();
        assert!(bare.named_parameters().is_empty());
        let x = t32(&[1.0, 2.0, 3.0], [1, 3]);
        let y = bare.forward(&x).unwrap().to_vec::<f32>().unwrap();
        // Mean 2, biased variance 2/3: ±1/√(2/3 + 1e-5).
        let s = (2.0f64 / 3.0 + 1e-5).sqrt();
        assert_close(
            &y.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &[-1.0 / s, 0.0, 1.0 / s],
            1e-6,
        );
    }

    #[test]
    fn running_statistics_follow_the_momentum_rule() {
        let bn = bn1(1);
        bn.forward(&t64(&[1.0, 3.0], [2, 1])).unwrap();
        // Second batch: mean 6, unbiased variance 2.
        bn.forward(&t64(&[5.0, 7.0], [2, 1])).unwrap();
        assert_close(&values(bn.running_mean()), &[0.9 * 0.2 + 0.1 * 6.0], 1e-15);
        assert_close(&values(bn.running_var()), &[0.9 * 1.1 + 0.1 * 2.0], 1e-15);
        assert_eq!(
            bn.num_batches_tracked()
                .unwrap()
                .tensor()
                .to_vec::<i64>()
                .unwrap(),
            vec![2]
        );
    }

    #[test]
    fn no_momentum_is_a_cumulative_average_and_eval_uses_it() {
        let mut bn = bn1(1).momentum(None).unwrap();
        bn.forward(&t64(&[1.0, 3.0], [2, 1])).unwrap();
        bn.forward(&t64(&[5.0, 7.0], [2, 1])).unwrap();
        // Means 2 and 6 average to 4; unbiased variances 2 and 2 to 2.
        assert_close(&values(bn.running_mean()), &[4.0], 1e-15);
        assert_close(&values(bn.running_var()), &[2.0], 1e-15);
        bn.eval();
        let y = bn.forward(&t64(&[4.0, 6.0], [2, 1])).unwrap();
        assert_close(&y.to_f64_vec().unwrap(), &[0.0, 2.0 / 2f64.sqrt()], 1e-15);
        // Evaluation changes nothing.
        assert_close(&values(bn.running_mean()), &[4.0], 1e-15);
        assert_eq!(
            bn.num_batches_tracked()
                .unwrap()
                .tensor()
                .to_vec::<i64>()
                .unwrap(),
            vec![2]
        );
    }

    #[test]
    fn batch_norm_2d_normalizes_each_channel_over_n_h_w() {
        let bn = BatchNorm2d::new(2, DType::F64, DEV)
            .unwrap()
            .eps(0.0)
            .unwrap();
        bn.weight().unwrap().set(t64(&[1.0, 2.0], [2])).unwrap();
        bn.bias().unwrap().set(t64(&[0.0, 10.0], [2])).unwrap();
        // Channel 0 holds 1, 2, 3, 4 (mean 2.5, biased var 1.25); channel 1
        // holds 10 everywhere but one 14 (mean 11, biased var 3).
        let x = t64(&[1.0, 2.0, 10.0, 10.0, 3.0, 4.0, 10.0, 14.0], [2, 2, 1, 2]);
        let y = bn.forward(&x).unwrap().to_f64_vec().unwrap();
        let s0 = 1.25f64.sqrt();
        let s1 = 3f64.sqrt();
        let want = [
            -1.5 / s0,
            -0.5 / s0,
            10.0 - 2.0 / s1,
            10.0 - 2.0 / s1,
            0.5 / s0,
            1.5 / s0,
            10.0 - 2.0 / s1,
            10.0 + 6.0 / s1,
        ];
        assert_close(&y, &want, 1e-14);
        // Unbiased variances: 1.25 · 4/3 and 3 · 4/3.
        assert_close(&values(bn.running_mean()), &[0.25, 1.1], 1e-15);
        assert_close(
            &values(bn.running_var()),
            &[0.9 + 0.1 * 5.0 / 3.0, 0.9 + 0.1 * 4.0],
            1e-15,
        );
    }

    #[test]
    fn batch_norm_gradient_passes_gradcheck() {
        let bn = BatchNorm1d::new(2, DType::F64, DEV).unwrap();
        bn.weight().unwrap().set(t64(&[1.5, -0.5], [2])).unwrap();
        let x = Generator::new(32)
            .randn([3, 2, 2], DType::F64, DEV)
            .unwrap();
        check_grad(|xs| bn.forward(&xs[0]), &[x]);
    }

    #[test]
    fn batch_norm_input_errors_are_named() {
        let bn = bn1(2);
        let err = bn.forward(&t64(&[1.0, 2.0], [1, 2])).unwrap_err();
        assert!(
            err.to_string().contains("more than one value per channel"),
            "{err}"
        );
        let err = bn.forward(&t64(&[1.0; 6], [2, 3])).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    op: "BatchNorm1d",
                    ..
                }
            ),
            "{err}"
        );
        let err = bn.forward(&t64(&[1.0; 8], [2, 2, 1, 2])).unwrap_err();
        assert!(err.to_string().contains("[N, C] or [N, C, L]"), "{err}");
        assert!(bn1(1).momentum(Some(1.5)).is_err());
        // In evaluation a single sample is fine.
        let mut bn = bn1(2);
        bn.eval();
        assert!(bn.forward(&t64(&[1.0, 2.0], [1, 2])).is_ok());
    }

    #[test]
    fn buffers_are_named_like_pytorch_and_optional() {
        let names: Vec<String> = BatchNorm2d::new(3, DType::F32, DEV)
            .unwrap()
            .state_dict()
            .into_keys()
            .collect();
        assert_eq!(
            names,
            [
                "bias",
                "num_batches_tracked",
                "running_mean",
                "running_var",
                "weight"
            ]
        );
        let mut bare = bn1(1).without_running_stats().without_affine();
        assert!(bare.state_dict().is_empty());
        // Without running statistics, evaluation uses the batch's.
        bare.eval();
        let y = bare.forward(&t64(&[1.0, 3.0], [2, 1])).unwrap();
        assert_close(&y.to_f64_vec().unwrap(), &[-1.0, 1.0], 1e-15);
    }
}
