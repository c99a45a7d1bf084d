//! Adam's step in one pass.
//!
//! As tensor ops (`oxmera_tensor::fused_update::adam`) a step is fourteen
//! passes over each parameter and its moments; here it is one, reading
//! the parameter, its gradient and the two moments and writing the three
//! results. Each element goes through the composition's operations in its
//! order, each rounded to the dtype as the composition's kernels round
//! them (scalars rounded to the dtype first, no fused multiply-add), so
//! the result is the composition's to the bit — which a test checks.

use oxmera_core::{DType, Result};
use oxmera_tensor::fused_update::{self, AdamStep};
use oxmera_tensor::{Storage, Tensor};
use rayon::prelude::*;

use crate::elementwise::Float;
use crate::{Cpu, host, strided, threads};

/// One Adam step (see [`oxmera_tensor::Backend::adam_update`]).
pub(crate) fn adam(
    param: &Tensor,
    grad: &Tensor,
    exp_avg: &Tensor,
    exp_avg_sq: &Tensor,
    s: &AdamStep,
) -> Result<[Storage; 3]> {
    match param.dtype() {
        DType::F32 => adam_as::<f32>(param, grad, exp_avg, exp_avg_sq, s),
        DType::F64 => adam_as::<f64>(param, grad, exp_avg, exp_avg_sq, s),
        _ => fused_update::adam_on(&Cpu, param, grad, exp_avg, exp_avg_sq, s),
    }
}

fn adam_as<T: Float>(
    param: &Tensor,
    grad: &Tensor,
    exp_avg: &Tensor,
    exp_avg_sq: &Tensor,
    s: &AdamStep,
) -> Result<[Storage; 3]> {
    let (p, g) = (host::read::<T>(param)?, host::read::<T>(grad)?);
    let (m, v) = (host::read::<T>(exp_avg)?, host::read::<T>(exp_avg_sq)?);
    let n = p.len();
    let (mut out_p, mut out_m, mut out_v) = (
        strided::output::<T>(n),
        strided::output::<T>(n),
        strided::output::<T>(n),
    );
    // The composition's scalar operands, rounded to T as it rounds them
    // (`Element::from_f64`, as the scalar ops' operand is made).
    let decay = s.weight_decay != 0.0;
    let (shrink, l2) = (
        T::from_f64(1.0 - s.lr * s.weight_decay),
        T::from_f64(s.weight_decay),
    );
    let (b1, one_b1) = (T::from_f64(s.beta1), T::from_f64(1.0 - s.beta1));
    let (b2, one_b2) = (T::from_f64(s.beta2), T::from_f64(1.0 - s.beta2));
    let (root_bias2, eps) = (T::from_f64(s.bias2.sqrt()), T::from_f64(s.eps));
    let rate = T::from_f64(s.lr / s.bias1);
    let chunk = |start: usize, op: &mut [T], om: &mut [T], ov: &mut [T]| {
        for i in 0..op.len() {
            let at = start + i;
            let (mut pv, mut gv) = (p[at], g[at]);
            if decay {
                if s.decoupled {
                    pv = pv * shrink;
                } else {
                    gv = gv + pv * l2;
                }
            }
            let mv = m[at] * b1 + gv * one_b1;
            let vv = v[at] * b2 + (gv * gv) * one_b2;
            let denom = vv.sqrt() / root_bias2 + eps;
            op[i] = pv - (mv / denom) * rate;
            om[i] = mv;
            ov[i] = vv;
        }
    };
    let size = threads::CHUNK;
    if threads::worth_splitting(n) {
        threads::run(|| {
            out_p
                .par_chunks_mut(size)
                .zip(out_m.par_chunks_mut(size))
                .zip(out_v.par_chunks_mut(size))
                .enumerate()
                .for_each(|(c, ((op, om), ov))| chunk(c * size, op, om, ov));
        });
    } else {
        chunk(0, &mut out_p, &mut out_m, &mut out_v);
    }
    Ok([host::store(out_p), host::store(out_m), host::store(out_v)])
}
