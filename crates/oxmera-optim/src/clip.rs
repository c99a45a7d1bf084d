//! Gradient clipping by global norm.

use oxmera_core::{DType, Error, Result};
use oxmera_nn::Param;
use oxmera_tensor::no_grad;

/// Added to the norm in the scale factor, as PyTorch does, so that an
/// all-zero gradient never divides by zero.
const NORM_EPS: f64 = 1e-6;

/// Scales the gradients of `params` together so that their global L2 norm
/// (the norm of all gradients concatenated) is at most `max_norm`, and
/// returns the norm they had before.
///
/// When the norm exceeds `max_norm`, every gradient is multiplied by
/// `max_norm / (norm + 1e-6)` (in its own dtype); otherwise nothing is
/// touched, bit for bit. Parameters without a gradient, and buffers, are
/// ignored. The norm is accumulated in f64 in the order of `params`, so an
/// f16 gradient cannot overflow it and the result is deterministic.
///
/// **A NaN or infinite norm** (some gradient holds a NaN or an inf, or the
/// squares overflow f64) is returned as it is and the gradients are left
/// untouched: scaling by `max_norm / inf = 0` or by NaN would only hide
/// the problem in gradients that look harmless. Check the returned norm
/// with `is_finite()` and skip the step (or stop) when it is not.
///
/// Errors: `max_norm` negative or NaN ([`Error::InvalidArgument`], `op`
/// `"clip_grad_norm"`); `max_norm = inf` never clips.
///
/// ```
/// # use oxmera_reference as _;
/// use oxmera_core::Device;
/// use oxmera_nn::Param;
/// use oxmera_optim::clip_grad_norm;
/// use oxmera_tensor::Tensor;
/// let p = Param::new(Tensor::from_vec(vec![0.0f64, 0.0], [2], Device::Reference)?)?;
/// p.tensor().set_grad(Some(Tensor::from_vec(vec![3.0f64, 4.0], [2], Device::Reference)?))?;
/// let norm = clip_grad_norm(&[p.clone()], 1.0)?;
/// assert_eq!(norm, 5.0); // sqrt(9 + 16)
/// let g = p.grad().unwrap().to_vec::<f64>()?;
/// assert!((g[0] - 0.6).abs() < 1e-6 && (g[1] - 0.8).abs() < 1e-6);
/// # Ok::<(), oxmera_core::Error>(())
/// ```
pub fn clip_grad_norm(params: &[Param], max_norm: f64) -> Result<f64> {
    const OP: &str = "clip_grad_norm";
    if max_norm.is_nan() || max_norm < 0.0 {
        return Err(Error::invalid(
            OP,
            "max_norm",
            format!("must be >= 0, got {max_norm}"),
        ));
    }
    no_grad(|| {
        let mut with_grad = Vec::new();
        let mut sum_sq = 0.0f64;
        for param in params.iter().filter(|p| p.is_trainable()) {
            let value = param.tensor();
            if let Some(grad) = value.grad() {
                sum_sq += grad.to_dtype(DType::F64)?.square()?.sum_all()?.item()?;
                with_grad.push((value, grad));
            }
        }
        let norm = sum_sq.sqrt();
        if !norm.is_finite() {
            return Ok(norm);
        }
        let scale = max_norm / (norm + NORM_EPS);
        if scale < 1.0 {
            // Scaled copies are made first so that a failure leaves every
            // gradient as it was.
            let scaled = with_grad
                .iter()
                .map(|(_, g)| g.mul_scalar(scale))
                .collect::<Result<Vec<_>>>()?;
            for ((value, _), g) in with_grad.iter().zip(scaled) {
                value.set_grad(Some(g))?;
            }
        }
        Ok(norm)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxmera_core::Device;
    use oxmera_reference as _;
    use oxmera_tensor::Tensor;
    use proptest::prelude::*;

    fn param_with_grad(grad: Vec<f64>) -> Param {
        let n = grad.len();
        let p = Param::new(Tensor::zeros([n], DType::F64, Device::Reference).unwrap()).unwrap();
        p.tensor()
            .set_grad(Some(
                Tensor::from_vec(grad, [n], Device::Reference).unwrap(),
            ))
            .unwrap();
        p
    }

    fn grad_of(p: &Param) -> Vec<f64> {
        p.grad().unwrap().to_vec::<f64>().unwrap()
    }

    #[test]
    fn clips_across_params_by_the_global_norm() {
        // grads [1, 2] and [2] (and a param with no grad, and a buffer):
        // norm = sqrt(1 + 4 + 4) = 3; max 1.5 -> scale = 1.5 / (3 + 1e-6)
        let a = param_with_grad(vec![1.0, 2.0]);
        let b = param_with_grad(vec![2.0]);
        let none = Param::new(Tensor::zeros([3], DType::F64, Device::Reference).unwrap()).unwrap();
        let buffer = Param::buffer(Tensor::ones([2], DType::F64, Device::Reference).unwrap());
        let norm = clip_grad_norm(&[a.clone(), none.clone(), b.clone(), buffer], 1.5).unwrap();
        assert_eq!(norm, 3.0);
        let scale = 1.5 / (3.0 + 1e-6);
        assert_eq!(grad_of(&a), vec![scale, 2.0 * scale]);
        assert_eq!(grad_of(&b), vec![2.0 * scale]);
        assert!(none.grad().is_none());
        // the new norm is max_norm, less the eps's share: 1.5 * 3 / (3 + 1e-6)
        let after = clip_grad_norm(&[a, b], f64::INFINITY).unwrap();
        assert!((after - 1.5).abs() < 1e-6 && after < 1.5);
    }

    #[test]
    fn below_the_limit_is_a_no_op_to_the_bit() {
        // norm = sqrt(0.09 + 0.16) = 0.5 < 1
        let a = param_with_grad(vec![0.3, -0.4]);
        let norm = clip_grad_norm(std::slice::from_ref(&a), 1.0).unwrap();
        assert!((norm - 0.5).abs() < 1e-15);
        assert_eq!(grad_of(&a), vec![0.3, -0.4]);
        // exactly at the limit: scale = 5 / (5 + 1e-6) < 1 clips, by a hair
        let b = param_with_grad(vec![3.0, 4.0]);
        assert_eq!(clip_grad_norm(std::slice::from_ref(&b), 5.0).unwrap(), 5.0);
        assert!(grad_of(&b)[0] < 3.0);
    }

    #[test]
    fn no_grads_gives_zero() {
        let p = Param::new(Tensor::ones([2], DType::F32, Device::Reference).unwrap()).unwrap();
        assert_eq!(clip_grad_norm(&[p], 1.0).unwrap(), 0.0);
        assert_eq!(clip_grad_norm(&[], 1.0).unwrap(), 0.0);
    }

    #[test]
    fn zero_max_norm_zeroes_the_gradients() {
        let a = param_with_grad(vec![1.0, -2.0]);
        clip_grad_norm(std::slice::from_ref(&a), 0.0).unwrap();
        assert_eq!(grad_of(&a), vec![0.0, -0.0]);
    }

    #[test]
    fn non_finite_norm_is_returned_and_gradients_are_untouched() {
        let a = param_with_grad(vec![1.0, f64::NAN]);
        let b = param_with_grad(vec![5.0]);
        let norm = clip_grad_norm(&[a.clone(), b.clone()], 1.0).unwrap();
        assert!(norm.is_nan());
        assert_eq!(grad_of(&b), vec![5.0]);
        let c = param_with_grad(vec![f64::NEG_INFINITY, 2.0]);
        let norm = clip_grad_norm(&[c.clone(), b.clone()], 1.0).unwrap();
        assert_eq!(norm, f64::INFINITY);
        assert_eq!(grad_of(&c), vec![f64::NEG_INFINITY, 2.0]);
        assert_eq!(grad_of(&b), vec![5.0]);
        // squares overflowing f64 are an infinite norm too
        let d = param_with_grad(vec![1e200]);
        assert_eq!(
            clip_grad_norm(std::slice::from_ref(&d), 1.0).unwrap(),
            f64::INFINITY
        );
        assert_eq!(grad_of(&d), vec![1e200]);
    }

    #[test]
    fn invalid_max_norm_is_typed() {
        let a = param_with_grad(vec![1.0]);
        for bad in [-1.0, f64::NAN] {
            match clip_grad_norm(std::slice::from_ref(&a), bad) {
                Err(Error::InvalidArgument { op, name, .. }) => {
                    assert_eq!((op, name), ("clip_grad_norm", "max_norm"));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(grad_of(&a), vec![1.0]);
    }

    #[test]
    fn f32_norm_accumulates_in_f64() {
        // 3e20 squared overflows f32 (max ~3.4e38) but not f64: norm 5e20.
        let p = Param::new(Tensor::zeros([2], DType::F32, Device::Reference).unwrap()).unwrap();
        let g = Tensor::from_vec(vec![3e20f32, 4e20], [2], Device::Reference).unwrap();
        p.tensor().set_grad(Some(g)).unwrap();
        let norm = clip_grad_norm(std::slice::from_ref(&p), 1.0).unwrap();
        assert!((norm / 5e20 - 1.0).abs() < 1e-6, "{norm}");
        let g = p.grad().unwrap().to_vec::<f32>().unwrap();
        assert!(
            (g[0] - 0.6).abs() < 1e-6 && (g[1] - 0.8).abs() < 1e-6,
            "{g:?}"
        );
    }

    /// The global norm as the law below measures it, independently of the
    /// function under test: f64 sum of squares over every element.
    fn norm_of(ps: &[Param]) -> f64 {
        ps.iter()
            .filter_map(|p| p.grad())
            .flat_map(|g| g.to_f64_vec().unwrap())
            .map(|x| x * x)
            .sum::<f64>()
            .sqrt()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Clipping never increases the norm, returns the norm before, and
        /// leaves at most max_norm (up to two f32 roundings: the scale and
        /// each product).
        #[test]
        fn clip_never_increases_the_norm(
            grads in prop::collection::vec(prop::collection::vec(-1e3f32..1e3, 1..5), 1..4),
            max_norm in 0.0f64..50.0,
        ) {
            let params: Vec<Param> = grads
                .iter()
                .map(|g| {
                    let p = Param::new(Tensor::zeros([g.len()], DType::F32, Device::Reference).unwrap()).unwrap();
                    p.tensor().set_grad(Some(Tensor::from_vec(g.clone(), [g.len()], Device::Reference).unwrap())).unwrap();
                    p
                })
                .collect();
            let before = norm_of(&params);
            let returned = clip_grad_norm(&params, max_norm).unwrap();
            let after = norm_of(&params);
            prop_assert!((returned - before).abs() <= 1e-12 * before.max(1.0));
            prop_assert!(after <= before, "{after} > {before}");
            let bound = max_norm * (1.0 + 2f64.powi(-22));
            prop_assert!(after <= bound, "{after} > {bound}");
        }
    }
}
