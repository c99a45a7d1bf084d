//! `einsum` as PyTorch's: the contractions the issue names (matmul, batch
//! matmul, transpose, trace, diagonal, outer, a three-operand chain), by
//! hand and against the ops they equal, ellipses and broadcasting, integer
//! dtypes, gradients through gradcheck, and a typed error for every bad
//! equation — on the reference and cpu backends.

use oxmera::prelude::*;
use oxmera::tensor::Tensor;
use oxmera::tensor::autograd::{DEFAULT_STEP, gradcheck};

const DEVICES: [Device; 2] = [Device::Reference, Device::Cpu];

fn f64s(values: &[f64], shape: &[usize], device: Device) -> Tensor {
    Tensor::from_vec(values.to_vec(), shape.to_vec(), device).unwrap()
}

/// `0.5, 1.5, -1, …`: distinct values whose products are exact in f64.
fn ramp(shape: &[usize], device: Device) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<f64> = (0..n).map(|i| (i as f64 - 3.0) * 0.5).collect();
    f64s(&values, shape, device)
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn einsum(eq: &str, xs: &[&Tensor]) -> Tensor {
    Tensor::einsum(eq, xs).unwrap()
}

#[test]
fn the_named_contractions_by_hand() {
    for dev in DEVICES {
        // a = [[1, 2, 3],    b = [[1, 0],
        //      [4, 5, 6]]         [0, 1],
        //                         [2, 3]]
        let a = f64s(&[1., 2., 3., 4., 5., 6.], &[2, 3], dev);
        let b = f64s(&[1., 0., 0., 1., 2., 3.], &[3, 2], dev);
        // matmul: [[1 + 6, 2 + 9], [4 + 12, 5 + 18]]
        let ab = einsum("ij,jk->ik", &[&a, &b]);
        assert_eq!(ab.dims(), &[2, 2]);
        assert_eq!(vals(&ab), [7., 11., 16., 23.]);
        // transpose, explicit and implicit (letters in alphabetical order)
        assert_eq!(vals(&einsum("ij->ji", &[&a])), [1., 4., 2., 5., 3., 6.]);
        assert_eq!(vals(&einsum("ji", &[&a])), [1., 4., 2., 5., 3., 6.]);
        // trace and diagonal of ab
        assert_eq!(vals(&einsum("ii->", &[&ab])), [30.]);
        assert_eq!(einsum("ii", &[&ab]).dims(), &[] as &[usize]);
        assert_eq!(vals(&einsum("ii->i", &[&ab])), [7., 23.]);
        // outer product of a's first row and b's first column
        let u = f64s(&[1., 2.], &[2], dev);
        let v = f64s(&[3., 4., 5.], &[3], dev);
        assert_eq!(
            vals(&einsum("i,j->ij", &[&u, &v])),
            [3., 4., 5., 6., 8., 10.]
        );
        // dot product, and sums
        assert_eq!(vals(&einsum("i,i->", &[&u, &u])), [5.]);
        assert_eq!(vals(&einsum("ij->", &[&a])), [21.]);
        assert_eq!(vals(&einsum("ij->j", &[&a])), [5., 7., 9.]);
        // three operands: u^T a b = [1, 2] · ab = [7 + 32, 11 + 46]
        assert_eq!(vals(&einsum("i,ij,jk->k", &[&u, &a, &b])), [39., 57.]);
        // elementwise product kept whole
        assert_eq!(
            vals(&einsum("ij,ij->ij", &[&a, &a])),
            [1., 4., 9., 16., 25., 36.]
        );
    }
}

#[test]
fn equals_the_ops_it_stands_for() {
    for dev in DEVICES {
        let x = ramp(&[2, 3, 4], dev);
        let y = ramp(&[2, 4, 5], dev);
        let m = ramp(&[4, 4], dev);
        // batch matmul
        assert_eq!(
            vals(&einsum("bij,bjk->bik", &[&x, &y])),
            vals(&x.matmul(&y).unwrap())
        );
        // a batch dim that is also kept on one side only: summed per batch
        assert_eq!(
            vals(&einsum("bij,bjk->ik", &[&x, &y])),
            vals(&x.matmul(&y).unwrap().sum(&[0], false).unwrap())
        );
        // a permutation of every dim
        assert_eq!(
            vals(&einsum("abc->cab", &[&x])),
            vals(&x.permute(&[2, 0, 1]).unwrap().contiguous().unwrap())
        );
        assert_eq!(vals(&einsum("ii", &[&m])), vals(&m.trace().unwrap()));
        assert_eq!(
            vals(&einsum("ii->i", &[&m])),
            vals(&m.diagonal(0, 0, 1).unwrap())
        );
        // the diagonal over two dims of a larger tensor, kept in place
        let d = ramp(&[3, 2, 3], dev);
        assert_eq!(
            vals(&einsum("iji->ji", &[&d])),
            vals(&d.diagonal(0, 0, 2).unwrap())
        );
        // a chain of three matrices, in either association
        let p = ramp(&[3, 4], dev);
        let q = ramp(&[4, 4], dev);
        let r = ramp(&[4, 2], dev);
        let chain = p.matmul(&q).unwrap().matmul(&r).unwrap();
        assert_eq!(vals(&einsum("ij,jk,kl->il", &[&p, &q, &r])), vals(&chain));
        // on a transposed view
        let pt = p.t().unwrap();
        assert_eq!(
            vals(&einsum("ji,jk->ik", &[&pt, &q])),
            vals(&p.matmul(&q).unwrap())
        );
    }
}

#[test]
fn ellipses_broadcasting_and_dtypes() {
    for dev in DEVICES {
        let x = ramp(&[2, 3, 4], dev);
        // the last two dims of any rank transposed
        assert_eq!(
            vals(&einsum("...ij->...ji", &[&x])),
            vals(&x.transpose(1, 2).unwrap().contiguous().unwrap())
        );
        let m = ramp(&[3, 4], dev);
        assert_eq!(
            vals(&einsum("...ij->...ji", &[&m])),
            vals(&m.t().unwrap().contiguous().unwrap())
        );
        // ellipses of different ranks broadcast, right-aligned
        let w = ramp(&[4, 5], dev);
        assert_eq!(
            vals(&einsum("...ij,...jk->...ik", &[&x, &w])),
            vals(&x.matmul(&w).unwrap())
        );
        // implicit output: the ellipsis dims first, then the lone letters
        assert_eq!(einsum("...ij", &[&x]).dims(), &[2, 3, 4]);
        // an ellipsis missing from the output is summed
        assert_eq!(
            vals(&einsum("...i->i", &[&x])),
            vals(&x.sum(&[0, 1], false).unwrap())
        );
        // a size-1 dim broadcasts against its label's size elsewhere
        let col = f64s(&[2., 3.], &[2, 1], dev);
        let row = f64s(&[1., 10., 100.], &[1, 3], dev);
        assert_eq!(
            vals(&einsum("ij,ij->ij", &[&col, &row])),
            [2., 20., 200., 3., 30., 300.]
        );
        // integers keep their dtype, sums included (as matmul)
        let i = Tensor::from_vec(vec![1i32, 2, 3, 4], [2, 2], dev).unwrap();
        let tr = einsum("ii", &[&i]);
        assert_eq!(tr.dtype(), DType::I32);
        assert_eq!(tr.to_vec::<i32>().unwrap(), [5]);
        assert_eq!(
            einsum("ij,jk", &[&i, &i]).to_vec::<i32>().unwrap(),
            [7, 10, 15, 22]
        );
        // f32 through the cpu backend's own kernels
        let f = Tensor::from_vec(vec![1f32, 2., 3., 4.], [2, 2], dev).unwrap();
        assert_eq!(
            einsum("ij,jk->ik", &[&f, &f]).to_vec::<f32>().unwrap(),
            [7., 10., 15., 22.]
        );
        // empty dims: a contraction over nothing is zeros
        let e = Tensor::zeros([2, 0], DType::F64, dev).unwrap();
        let e2 = Tensor::zeros([0, 3], DType::F64, dev).unwrap();
        assert_eq!(vals(&einsum("ij,jk->ik", &[&e, &e2])), [0.; 6]);
        // a scalar operand
        let s = Tensor::scalar(2.0f64, dev).unwrap();
        assert_eq!(vals(&einsum(",ij->ij", &[&s, &m]))[5], 2.0 * vals(&m)[5]);
    }
}

#[test]
fn gradients_pass_gradcheck() {
    for dev in DEVICES {
        let cases: [(&str, Vec<Vec<usize>>); 9] = [
            ("ij,jk->ik", vec![vec![2, 3], vec![3, 2]]),
            ("bij,bjk->bik", vec![vec![2, 2, 3], vec![2, 3, 2]]),
            ("ij->ji", vec![vec![2, 3]]),
            ("ii->", vec![vec![3, 3]]),
            ("ii->i", vec![vec![3, 3]]),
            ("i,j->ij", vec![vec![3], vec![2]]),
            ("i,ij,jk->k", vec![vec![2], vec![2, 3], vec![3, 2]]),
            ("...ij,...j->...i", vec![vec![2, 2, 3], vec![3]]),
            ("iij,kj->ik", vec![vec![2, 2, 3], vec![2, 3]]),
        ];
        for (eq, shapes) in cases {
            let inputs: Vec<Tensor> = shapes
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let t = ramp(s, dev);
                    t.add_scalar(0.25 * k as f64).unwrap()
                })
                .collect();
            let r = gradcheck(
                |xs| {
                    let refs: Vec<&Tensor> = xs.iter().collect();
                    Tensor::einsum(eq, &refs)
                },
                &inputs,
                DEFAULT_STEP,
            )
            .unwrap();
            assert!(r.passed(), "{eq} on {dev}: {r}");
        }
    }
}

#[test]
fn every_bad_equation_is_a_typed_error_that_says_why() {
    for dev in DEVICES {
        let a = ramp(&[2, 3], dev);
        let b = ramp(&[3, 4], dev);
        let sq = ramp(&[2, 2], dev);
        let cases: [(&str, Vec<&Tensor>, &str); 11] = [
            ("ij,jk->ik", vec![&a], "names 2 operand(s) but 1 were given"),
            ("ijk->i", vec![&a], "has rank 2 but its subscripts"),
            ("i->i", vec![&a], "has rank 2 but its subscripts"),
            ("i1->i", vec![&a], "'1' is not a subscript"),
            ("ij->kk", vec![&a], "names k, which no operand has"),
            ("ij->ii", vec![&a], "names i twice"),
            ("ij->i->j", vec![&a], "more than one '->'"),
            ("......->", vec![&a], "more than one '...'"),
            ("ij->...", vec![&a], "has '...' but no operand does"),
            (
                "ij,ij->ij",
                vec![&a, &b],
                "i is 2 in operand 0 but 3 in operand 1",
            ),
            ("ii->i", vec![&a], "sizes 2 and 3 in operand 0"),
        ];
        for (eq, xs, why) in cases {
            let err = Tensor::einsum(eq, &xs).unwrap_err();
            assert!(
                matches!(err, Error::InvalidArgument { .. }),
                "{eq}: {err:?}"
            );
            assert!(err.to_string().contains(why), "{eq}: {err}");
        }
        let none = Tensor::einsum("->", &[]).unwrap_err();
        assert!(none.to_string().contains("at least one operand"), "{none}");
        let f = Tensor::from_vec(vec![1f32, 2., 3., 4.], [2, 2], dev).unwrap();
        let r = Tensor::einsum("ij,jk", &[&sq, &f]);
        assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
        let bits = Tensor::from_vec(vec![true, false], [2], dev).unwrap();
        let r = Tensor::einsum("i->", &[&bits]);
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
        // A size-1 dim does not broadcast inside one operand's diagonal.
        let r = Tensor::einsum("ii->i", &[&ramp(&[1, 3], dev)]).unwrap_err();
        assert!(r.to_string().contains("sizes 1 and 3 in operand 0"), "{r}");
        let r = Tensor::einsum("i->", &[&bits]);
        assert!(matches!(r, Err(Error::UnsupportedDType { .. })), "{r:?}");
    }
    let r = Tensor::einsum(
        "ij,jk",
        &[
            &ramp(&[2, 2], Device::Reference),
            &ramp(&[2, 2], Device::Cpu),
        ],
    );
    assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{r:?}");
}
