//! `vector_norm` by hand, as `torch.linalg.vector_norm`: each ord on
//! numbers a reader can check (3-4-5 triangles), PyTorch's gradients at
//! zero and at ties, the typed errors, and a finite-difference check, on
//! the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::Tensor;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];
const INF: f64 = f64::INFINITY;

fn f64s(values: &[f64], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

fn v(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

fn grad(x: &Tensor, f: impl Fn(&Tensor) -> Result<Tensor>) -> Vec<f64> {
    let x = x.with_requires_grad(true).unwrap();
    f(&x).unwrap().sum_all().unwrap().backward().unwrap();
    v(&x.grad().unwrap())
}

#[test]
fn each_ord_by_hand() {
    for dev in DEVICES {
        // [[3, -4, 0],
        //  [0,  0, 0]]
        let x = f64s(&[3.0, -4.0, 0.0, 0.0, 0.0, 0.0], &[2, 3], dev);
        assert_eq!(v(&x.vector_norm(2.0, &[1], false).unwrap()), [5.0, 0.0]);
        assert_eq!(v(&x.vector_norm(1.0, &[-1], false).unwrap()), [7.0, 0.0]);
        assert_eq!(v(&x.vector_norm(0.0, &[1], false).unwrap()), [2.0, 0.0]);
        assert_eq!(v(&x.vector_norm(INF, &[1], false).unwrap()), [4.0, 0.0]);
        assert_eq!(
            v(&x.vector_norm(-INF, &[0], false).unwrap()),
            [0.0, 0.0, 0.0]
        );
        // (27 + 64 + 0)^(1/3) = 91^(1/3)
        let p3 = v(&x.vector_norm(3.0, &[1], false).unwrap());
        assert!(
            (p3[0] - 91f64.cbrt()).abs() < 1e-14 && p3[1] == 0.0,
            "{p3:?}"
        );
        // p = 1/2: (√3 + √4 + 0)² = 7 + 4√3
        let half = v(&x.vector_norm(0.5, &[1], false).unwrap());
        assert!(
            (half[0] - (7.0 + 4.0 * 3f64.sqrt())).abs() < 1e-13,
            "{half:?}"
        );
        // p = -1: zeros make Σ|x|^-1 infinite, so the norm is 0;
        // [2, 2] gives (1/2 + 1/2)^-1 = 1.
        let neg = f64s(&[2.0, -2.0, 0.0, 5.0], &[2, 2], dev);
        assert_eq!(v(&neg.vector_norm(-1.0, &[1], false).unwrap()), [1.0, 0.0]);
        // Every element, and keepdim.
        assert_eq!(x.vector_norm_all(2.0).unwrap().item().unwrap(), 5.0);
        assert_eq!(x.norm(1.0).unwrap().item().unwrap(), 7.0);
        let k = x.vector_norm(2.0, &[0, 1], true).unwrap();
        assert_eq!((k.dims(), v(&k)), (&[1, 1][..], vec![5.0]));
        // An empty dims reduces over nothing: |x| elementwise.
        assert_eq!(
            v(&x.vector_norm(2.0, &[], false).unwrap()),
            [3.0, 4.0, 0.0, 0.0, 0.0, 0.0]
        );
        // NaN propagates (and counts as nonzero for ord 0).
        let nan = f64s(&[f64::NAN, 1.0], &[2], dev);
        assert!(nan.vector_norm_all(2.0).unwrap().item().unwrap().is_nan());
        assert!(nan.vector_norm_all(INF).unwrap().item().unwrap().is_nan());
        assert_eq!(nan.vector_norm_all(0.0).unwrap().item().unwrap(), 2.0);
        // f16: 300² overflows f16, but the norm is computed in f32.
        let h = Tensor::from_vec(vec![300.0f32, -400.0], [2], dev)
            .unwrap()
            .to_dtype(DType::F16)
            .unwrap();
        let n = h.vector_norm_all(2.0).unwrap();
        assert_eq!((n.dtype(), n.item().unwrap()), (DType::F16, 500.0));
        // The 2-norm of an empty extent is 0.
        let e = Tensor::zeros([3, 0], DType::F32, dev).unwrap();
        assert_eq!(v(&e.vector_norm(2.0, &[1], false).unwrap()), [0.0; 3]);
    }
}

#[test]
fn gradients_follow_pytorch_at_zero_and_at_ties() {
    for dev in DEVICES {
        let x = f64s(&[3.0, -4.0, 0.0, 0.0, 0.0, 0.0], &[2, 3], dev);
        // 2-norm: x/‖x‖ = [0.6, -0.8, 0]; the zero row's norm is 0, and
        // its gradient 0 (PyTorch's subgradient), not 0/0.
        assert_eq!(
            grad(&x, |x| x.vector_norm(2.0, &[1], false)),
            [0.6, -0.8, 0.0, 0.0, 0.0, 0.0]
        );
        // 1-norm: sign(x), 0 at 0.
        assert_eq!(
            grad(&x, |x| x.vector_norm(1.0, &[1], false)),
            [1.0, -1.0, 0.0, 0.0, 0.0, 0.0]
        );
        // ord 0: no gradient anywhere.
        assert_eq!(grad(&x, |x| x.vector_norm(0.0, &[1], false)), [0.0; 6]);
        // inf: |-4| and |4| tie at the maximum and share it, with signs;
        // the zero row's three zeros all attain its max of 0, each getting
        // 1/3 times sign(0) = 0.
        let t = f64s(&[-4.0, 1.0, 4.0, 0.0, 0.0, 0.0], &[2, 3], dev);
        assert_eq!(
            grad(&t, |x| x.vector_norm(INF, &[1], false)),
            [-0.5, 0.0, 0.5, 0.0, 0.0, 0.0]
        );
        // p = 3: sign(x)·|x|^2 / n^2 with n^3 = 27 + 64 = 91.
        let g = grad(&x, |x| x.vector_norm(3.0, &[1], false));
        let n2 = 91f64.cbrt().powi(2);
        let want = [9.0 / n2, -16.0 / n2, 0.0, 0.0, 0.0, 0.0];
        for (g, w) in g.iter().zip(want) {
            assert!((g - w).abs() < 1e-14, "{g} against {w}");
        }
        // p = 1/2: zeros get 0 rather than |0|^(-1/2) = inf.
        let g = grad(&f64s(&[4.0, 0.0], &[2], dev), |x| x.vector_norm_all(0.5));
        // n = (√4)² = 4; ∂n/∂x0 = |x0|^(-1/2)·n^(1/2) = (1/2)·2 = 1.
        assert_eq!(g, [1.0, 0.0]);
    }
}

#[test]
fn errors_are_typed() {
    for dev in DEVICES {
        let x = f64s(&[1.0, 2.0], &[2], dev);
        let r = x.vector_norm(2.0, &[1], false);
        assert!(matches!(r, Err(Error::DimOutOfRange { .. })), "{r:?}");
        let r = x.vector_norm(2.0, &[0, 0], false);
        assert!(matches!(r, Err(Error::DuplicateDim { .. })), "{r:?}");
        let r = x.vector_norm(f64::NAN, &[0], false);
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{r:?}");
        for dt in [DType::I32, DType::I64, DType::U8, DType::Bool] {
            let r = x.to_dtype(dt).unwrap().vector_norm_all(2.0);
            assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        }
        // No identity over an empty extent for inf, -inf or a negative p.
        let e = Tensor::zeros([3, 0], DType::F32, dev).unwrap();
        for ord in [INF, -INF, -1.0] {
            let r = e.vector_norm(ord, &[1], false);
            assert!(
                matches!(r, Err(Error::EmptyReduction { .. })),
                "{ord}: {r:?}"
            );
        }
    }
}

#[test]
fn gradcheck_every_ord() {
    // No zeros and no ties: where every norm is differentiable.
    let values = [-1.7, 0.35, 2.6, -0.6, 1.3, 4.0];
    for dev in DEVICES {
        let x = f64s(&values, &[2, 3], dev);
        let t = x.transpose(0, 1).unwrap();
        for ord in [2.0, 1.0, INF, -INF, 3.0, 0.5, 1.5, -2.0] {
            for (input, dims) in [(&x, vec![1]), (&x, vec![0, 1]), (&t, vec![0])] {
                let report = gradcheck(
                    |x| x[0].vector_norm(ord, &dims, false),
                    std::slice::from_ref(input),
                    DEFAULT_STEP,
                )
                .unwrap();
                assert!(
                    report.passed(),
                    "ord {ord} over {dims:?} on {dev}: {report}"
                );
            }
        }
    }
}
