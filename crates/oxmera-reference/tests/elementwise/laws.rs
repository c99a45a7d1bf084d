//! Property tests: the algebraic laws the elementwise ops must obey, and
//! broadcasting as a view being the same as broadcasting by copy.

use oxmera_core::{DType, Device, Result, Shape, broadcast_shapes};
use oxmera_tensor::{HostBuffer, Tensor};
use proptest::prelude::*;

use crate::{rounded, same};

/// A deterministic stream of values in `[-range, range]`, with some exact
/// integers, halves, zeros and extremes mixed in.
fn values(seed: u64, n: usize, range: f64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            match s % 8 {
                0 => 0.0,
                1 => (u * 2.0 - 1.0) * range,
                2 => ((u * 2.0 - 1.0) * 8.0).round() / 2.0,
                _ => ((u * 2.0 - 1.0) * range).round(),
            }
        })
        .collect()
}

fn tensor(vals: &[f64], shape: &[usize], dtype: DType) -> Tensor {
    let buf = HostBuffer::from_f64s(dtype, vals.iter().copied());
    Tensor::from_host(buf, shape, Device::Reference, "test").unwrap()
}

/// Every element equal, NaNs matching and zeros' signs too.
fn identical(a: &Tensor, b: &Tensor) -> bool {
    let (x, y) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    a.dims() == b.dims() && a.dtype() == b.dtype() && x.iter().zip(&y).all(|(p, q)| same(*p, *q))
}

/// A shape of rank 0 to 3 with extents 0 to 3, and two shapes that
/// broadcast to it (some dims set to 1, some leading dims dropped).
fn broadcast_triple() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<usize>)> {
    prop::collection::vec(0usize..4, 0..4).prop_flat_map(|out| {
        let r = out.len();
        (
            Just(out),
            prop::collection::vec(any::<bool>(), r),
            prop::collection::vec(any::<bool>(), r),
            0..=r,
            0..=r,
        )
            .prop_map(|(out, ones_a, ones_b, drop_a, drop_b)| {
                let shrink = |ones: &[bool], drop: usize| -> Vec<usize> {
                    out.iter()
                        .zip(ones)
                        .skip(drop)
                        .map(|(&d, &one)| if one { 1 } else { d })
                        .collect()
                };
                let a = shrink(&ones_a, drop_a);
                let b = shrink(&ones_b, drop_b);
                (out, a, b)
            })
    })
}

type Op = fn(&Tensor, &Tensor) -> Result<Tensor>;
type UnaryOp = fn(&Tensor) -> Result<Tensor>;
type F64Binary = fn(f64, f64) -> f64;
type F64Unary = fn(f64) -> f64;

fn ops() -> [(&'static str, Op); 10] {
    [
        ("add", |a, b| a.add(b)),
        ("sub", |a, b| a.sub(b)),
        ("mul", |a, b| a.mul(b)),
        ("div", |a, b| a.div(b)),
        ("pow", |a, b| a.pow(b)),
        ("rem", |a, b| a.rem(b)),
        ("maximum", |a, b| a.maximum(b)),
        ("minimum", |a, b| a.minimum(b)),
        ("lt", |a, b| a.lt(b)),
        ("eq", |a, b| a.eq(b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn broadcasting_equals_materialized_inputs(
        (_, sa, sb) in broadcast_triple(),
        seed in any::<u64>(),
        dtype in prop::sample::select(vec![DType::F32, DType::I32, DType::F16]),
    ) {
        // Setting dims to 1 may shrink the common shape (a 0 becomes 1).
        let out = broadcast_shapes("test", &Shape::from(sa.as_slice()), &Shape::from(sb.as_slice()))
            .unwrap()
            .into_vec();
        let a = tensor(&values(seed, Shape::from(sa.as_slice()).numel(), 50.0), &sa, dtype);
        let b = tensor(&values(seed ^ 1, Shape::from(sb.as_slice()).numel(), 5.0), &sb, dtype);
        let a_copy = a.broadcast_to(out.as_slice()).unwrap().contiguous().unwrap();
        let b_copy = b.broadcast_to(out.as_slice()).unwrap().contiguous().unwrap();
        prop_assert!(a_copy.is_contiguous() && b_copy.is_contiguous());
        for (name, op) in ops() {
            let viewed = op(&a, &b).unwrap();
            let copied = op(&a_copy, &b_copy).unwrap();
            prop_assert_eq!(viewed.dims(), out.as_slice(), "{}", name);
            prop_assert!(identical(&viewed, &copied), "{} {:?} {:?}", name, sa, sb);
        }
        let cond = a.gt(&b).unwrap();
        let viewed = Tensor::where_(&cond, &a, &b).unwrap();
        let c_copy = cond.contiguous().unwrap();
        prop_assert!(identical(&viewed, &Tensor::where_(&c_copy, &a_copy, &b_copy).unwrap()));
        prop_assert!(identical(&viewed, &a.maximum(&b).unwrap()) || dtype.is_float());
    }

    #[test]
    fn add_and_mul_commute(
        (_, sa, sb) in broadcast_triple(),
        seed in any::<u64>(),
        dtype in prop::sample::select(vec![DType::F32, DType::F64, DType::BF16, DType::I32, DType::U8]),
    ) {
        let range = if dtype == DType::U8 { 255.0 } else { 1e6 };
        let a = tensor(&values(seed, Shape::from(sa.as_slice()).numel(), range).iter().map(|v| v.abs()).collect::<Vec<_>>(), &sa, dtype);
        let b = tensor(&values(!seed, Shape::from(sb.as_slice()).numel(), range), &sb, dtype);
        prop_assert!(identical(&a.add(&b).unwrap(), &b.add(&a).unwrap()));
        prop_assert!(identical(&a.mul(&b).unwrap(), &b.mul(&a).unwrap()));
        prop_assert!(identical(&(&a + &b).unwrap(), &(&b + &a).unwrap()));
    }

    #[test]
    fn integer_subtraction_is_adding_the_negation(
        a in prop::collection::vec(any::<i64>(), 0..40),
        seed in any::<u64>(),
        wide in any::<bool>(),
    ) {
        let b: Vec<i64> = a.iter().enumerate().map(|(i, &x)| x.rotate_left((seed % 64) as u32 + i as u32)).collect();
        let dev = Device::Reference;
        let n = a.len();
        let (x, y) = if wide {
            (Tensor::from_vec(a.clone(), [n], dev).unwrap(), Tensor::from_vec(b, [n], dev).unwrap())
        } else {
            let narrow = |v: &[i64]| v.iter().map(|&x| x as i32).collect::<Vec<_>>();
            (Tensor::from_vec(narrow(&a), [n], dev).unwrap(), Tensor::from_vec(narrow(&b), [n], dev).unwrap())
        };
        let lhs = x.sub(&y).unwrap();
        let rhs = x.add(&y.neg().unwrap()).unwrap();
        prop_assert_eq!(lhs.to_host().unwrap(), rhs.to_host().unwrap());
    }

    #[test]
    fn floor_division_and_remainder_recompose(
        a in prop::collection::vec(any::<i32>(), 1..40),
        b in prop::collection::vec(prop_oneof![Just(0i32), Just(-1), -5i32..6, any::<i32>()], 1..40),
    ) {
        let n = a.len().min(b.len());
        let dev = Device::Reference;
        let x = Tensor::from_vec(a[..n].to_vec(), [n], dev).unwrap();
        let y = Tensor::from_vec(b[..n].to_vec(), [n], dev).unwrap();
        let q = x.div(&y).unwrap();
        let r = x.rem(&y).unwrap();
        // a == b * (a div b) + (a rem b), in wrapping arithmetic.
        let back = y.mul(&q).unwrap().add(&r).unwrap();
        prop_assert_eq!(back.to_vec::<i32>().unwrap(), a[..n].to_vec());
        // The remainder is smaller than the divisor and shares its sign.
        for ((&rv, &bv), &av) in r.to_vec::<i32>().unwrap().iter().zip(&b[..n]).zip(&a[..n]) {
            if bv == 0 {
                prop_assert_eq!(rv, av);
            } else {
                prop_assert!((rv as i64).abs() < (bv as i64).abs());
                prop_assert!(rv == 0 || (rv < 0) == (bv < 0));
            }
        }
    }

    #[test]
    fn narrow_floats_are_rounded_once_from_f64(
        seed in any::<u64>(),
        n in 0usize..30,
        dtype in prop::sample::select(vec![DType::F16, DType::BF16, DType::F32]),
    ) {
        let a = tensor(&values(seed, n, 300.0), &[n], dtype);
        let b = tensor(&values(seed.rotate_left(7), n, 3.0), &[n], dtype);
        let (av, bv) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
        let binary: [(Op, F64Binary); 5] = [
            (|a, b| a.add(b), |x, y| x + y),
            (|a, b| a.sub(b), |x, y| x - y),
            (|a, b| a.mul(b), |x, y| x * y),
            (|a, b| a.div(b), |x, y| x / y),
            (|a, b| a.pow(b), f64::powf),
        ];
        for (op, f) in binary {
            let want: Vec<f64> = av.iter().zip(&bv).map(|(&x, &y)| f(x, y)).collect();
            let got = op(&a, &b).unwrap().to_f64_vec().unwrap();
            let want = rounded(&want, dtype);
            prop_assert!(got.iter().zip(&want).all(|(g, w)| same(*g, *w)), "{:?} vs {:?}", got, want);
        }
        let unary: [(UnaryOp, F64Unary); 4] = [
            (|x| x.exp(), f64::exp),
            (|x| x.cos(), f64::cos),
            (|x| x.square(), |x| x * x),
            (|x| x.round(), f64::round_ties_even),
        ];
        for (op, f) in unary {
            let want: Vec<f64> = bv.iter().map(|&x| f(x)).collect();
            let got = op(&b).unwrap().to_f64_vec().unwrap();
            let want = rounded(&want, dtype);
            prop_assert!(got.iter().zip(&want).all(|(g, w)| same(*g, *w)), "{:?} vs {:?}", got, want);
        }
    }
}
