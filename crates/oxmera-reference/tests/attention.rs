//! Scaled dot-product attention: the fused op against the chain of ops it
//! replaces (values and gradients), gradcheck, what its node keeps for
//! backward, masks, and its errors.

use oxmera_core::{DType, Device, Error, Result, Shape};
use oxmera_reference as _;
use oxmera_tensor::autograd::{DEFAULT_STEP, gradcheck};
use oxmera_tensor::{AttentionOptions, Generator, Tensor};

const DEV: Device = Device::Reference;

fn randn(rng: &mut Generator, shape: &[usize]) -> Tensor {
    rng.randn(shape.to_vec(), DType::F64, DEV).unwrap()
}

fn leaf(t: &Tensor) -> Tensor {
    t.with_requires_grad(true).unwrap()
}

/// Attention written as ordinary ops: what autograd would record without
/// the fused node.
fn chained(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    causal: bool,
) -> Result<Tensor> {
    let e = q.dims()[q.rank() - 1] as f64;
    let mut s = q
        .matmul(&k.transpose(-2, -1)?)?
        .mul_scalar(1.0 / e.sqrt())?;
    if let Some(m) = mask {
        s = s.add(m)?;
    }
    if causal {
        let (l, n) = (q.dims()[q.rank() - 2], k.dims()[k.rank() - 2]);
        let above: Vec<bool> = (0..l).flat_map(|i| (0..n).map(move |j| j > i)).collect();
        s = s.masked_fill(&Tensor::from_vec(above, [l, n], DEV)?, f64::NEG_INFINITY)?;
    }
    s.softmax(-1)?.matmul(v)
}

fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    let (a, b) = (a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn the_fused_op_equals_the_chain_of_ops_in_value_and_gradient() {
    let mut rng = Generator::new(11);
    // Keys and values shared across the batch (batch dim 1 broadcasts),
    // more keys than queries, a float mask and the causal mask together.
    let q = randn(&mut rng, &[3, 2, 4, 5]);
    let k = randn(&mut rng, &[1, 2, 6, 5]);
    let v = randn(&mut rng, &[1, 2, 6, 3]);
    let mask = randn(&mut rng, &[4, 6]);
    let upstream = randn(&mut rng, &[3, 2, 4, 3]);
    for causal in [false, true] {
        let (qa, ka, va) = (leaf(&q), leaf(&k), leaf(&v));
        let options = AttentionOptions::new().mask(mask.clone()).causal(causal);
        let fused = qa.scaled_dot_product_attention(&ka, &va, &options).unwrap();
        fused
            .mul(&upstream)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let (qb, kb, vb) = (leaf(&q), leaf(&k), leaf(&v));
        let chain = chained(&qb, &kb, &vb, Some(&mask), causal).unwrap();
        chain
            .mul(&upstream)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        // Both compute the same f64 expressions in a different order: a
        // few roundings of values of order 1.
        assert!(max_diff(&fused, &chain) < 1e-12, "causal {causal}");
        for (a, b, name) in [(&qa, &qb, "q"), (&ka, &kb, "k"), (&va, &vb, "v")] {
            let (ga, gb) = (a.grad().unwrap(), b.grad().unwrap());
            assert_eq!(ga.dims(), a.dims(), "{name}'s gradient has its own shape");
            assert!(max_diff(&ga, &gb) < 1e-12, "d{name}, causal {causal}");
        }
    }
}

#[test]
fn gradcheck_passes_through_masks_and_broadcast_batches() {
    let mut rng = Generator::new(5);
    let q = randn(&mut rng, &[2, 3, 4]);
    let k = randn(&mut rng, &[1, 5, 4]);
    let v = randn(&mut rng, &[2, 5, 2]);
    let keep: Vec<bool> = (0..15).map(|i| i % 4 != 1).collect();
    let bool_mask = Tensor::from_vec(keep, [3, 5], DEV).unwrap();
    let upstream = randn(&mut rng, &[2, 3, 2]);
    for options in [
        AttentionOptions::new(),
        AttentionOptions::new().causal(true).scale(0.7),
        AttentionOptions::new().mask(bool_mask.clone()),
    ] {
        let f = |xs: &[Tensor]| -> Result<Tensor> {
            xs[0]
                .scaled_dot_product_attention(&xs[1], &xs[2], &options)?
                .mul(&upstream)?
                .sum_all()
        };
        let report = gradcheck(f, &[q.clone(), k.clone(), v.clone()], DEFAULT_STEP).unwrap();
        assert!(report.checked > 0);
        assert!(report.passed(), "{options:?}: {report}");
    }
}

#[test]
fn the_node_keeps_q_k_v_and_one_probability_matrix() {
    let mut rng = Generator::new(2);
    let (b, h, l, s, e) = (2, 3, 7, 9, 4);
    let q = leaf(&randn(&mut rng, &[b, h, l, e]));
    let k = leaf(&randn(&mut rng, &[b, h, s, e]));
    let v = leaf(&randn(&mut rng, &[b, h, s, 5]));
    let out = q
        .scaled_dot_product_attention(&k, &v, &AttentionOptions::new().causal(true))
        .unwrap();
    assert_eq!(out.grad_fn_name(), Some("scaled_dot_product_attention"));
    let saved = out
        .saved_for_backward()
        .expect("the fused op lists what it keeps");
    assert_eq!(
        saved,
        [
            Shape::from([b, h, l, e]),
            Shape::from([b, h, s, e]),
            Shape::from([b, h, s, 5]),
            Shape::from([b, h, l, s]),
        ]
    );
    let square = saved.iter().filter(|x| x.dims()[2..] == [l, s]).count();
    assert_eq!(
        square, 1,
        "one L×S matrix (the probabilities), not one per step"
    );
    // An op that does not list what it keeps says so.
    assert_eq!(q.add(&q).unwrap().saved_for_backward(), None);
}

#[test]
fn masks_follow_pytorch_rules() {
    let q = Tensor::from_vec(vec![1.0f64, 0.0, 0.0, 1.0], [2, 2], DEV).unwrap();
    let k = q.clone();
    let v = Tensor::from_vec(vec![1.0f64, 10.0], [2, 1], DEV).unwrap();
    // A bool mask keeps where true: the second query sees only key 0.
    let keep = Tensor::from_vec(vec![true, true, true, false], [2, 2], DEV).unwrap();
    let out = q
        .scaled_dot_product_attention(&k, &v, &AttentionOptions::new().mask(keep))
        .unwrap();
    assert_eq!(out.to_vec::<f64>().unwrap()[1], 1.0);
    // A float mask of -inf removes a key the same way.
    let minus = Tensor::from_vec(vec![0.0, 0.0, 0.0, f64::NEG_INFINITY], [2, 2], DEV).unwrap();
    let out = q
        .scaled_dot_product_attention(&k, &v, &AttentionOptions::new().mask(minus))
        .unwrap();
    assert_eq!(out.to_vec::<f64>().unwrap()[1], 1.0);
    // A query with every key masked has no distribution: NaN, as PyTorch.
    let none = Tensor::from_vec(vec![true, true, false, false], [2, 2], DEV).unwrap();
    let out = q
        .scaled_dot_product_attention(&k, &v, &AttentionOptions::new().mask(none))
        .unwrap();
    let o = out.to_vec::<f64>().unwrap();
    assert!(o[0].is_finite() && o[1].is_nan(), "{o:?}");
}

#[test]
fn bad_operands_are_typed_errors() {
    let f = |dims: &[usize]| Tensor::zeros(dims.to_vec(), DType::F32, DEV).unwrap();
    let none = AttentionOptions::new();
    let ints = Tensor::zeros([2, 2], DType::I32, DEV).unwrap();
    assert!(matches!(
        ints.scaled_dot_product_attention(&ints, &ints, &none),
        Err(Error::UnsupportedDType { .. })
    ));
    let f64s = Tensor::zeros([2, 2], DType::F64, DEV).unwrap();
    assert!(matches!(
        f(&[2, 2]).scaled_dot_product_attention(&f64s, &f(&[2, 2]), &none),
        Err(Error::DTypeMismatch { .. })
    ));
    assert!(matches!(
        f(&[2]).scaled_dot_product_attention(&f(&[2, 2]), &f(&[2, 2]), &none),
        Err(Error::RankMismatch { .. })
    ));
    // The query's width differs from the key's.
    let err = f(&[3, 4])
        .scaled_dot_product_attention(&f(&[5, 3]), &f(&[5, 2]), &none)
        .unwrap_err();
    assert!(matches!(err, Error::ShapeMismatch { .. }), "{err}");
    assert!(err.to_string().contains("[3, 4]"), "{err}");
    // The key's length differs from the value's.
    let err = f(&[3, 4])
        .scaled_dot_product_attention(&f(&[5, 4]), &f(&[6, 2]), &none)
        .unwrap_err();
    assert!(err.to_string().contains("[6, 2]"), "{err}");
    assert!(matches!(
        f(&[2, 3, 4]).scaled_dot_product_attention(&f(&[3, 5, 4]), &f(&[3, 5, 2]), &none),
        Err(Error::BroadcastIncompatible { .. })
    ));
    let bad_mask = AttentionOptions::new().mask(f(&[4, 4]));
    assert!(matches!(
        f(&[3, 4]).scaled_dot_product_attention(&f(&[5, 4]), &f(&[5, 2]), &bad_mask),
        Err(Error::BroadcastIncompatible { .. })
    ));
    let nan_scale = AttentionOptions::new().scale(f64::NAN);
    assert!(matches!(
        f(&[3, 4]).scaled_dot_product_attention(&f(&[5, 4]), &f(&[5, 2]), &nan_scale),
        Err(Error::InvalidArgument { .. })
    ));
}
