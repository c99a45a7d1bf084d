//! Every error path, by its typed variant, with exact messages for one of
//! each kind.

use oxmera_core::{DType, Device, Error, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{Backend, BinaryOp, HostBuffer, Storage, Tensor, UnaryOp};

use crate::common::t;

type Unary = fn(&Tensor) -> Result<Tensor>;
type Binary = fn(&Tensor, &Tensor) -> Result<Tensor>;
/// Which dtypes an op admits.
type Admits<'a> = &'a dyn Fn(DType) -> bool;

/// One tensor of each dtype.
fn one_of_each() -> Vec<Tensor> {
    DType::ALL
        .iter()
        .map(|&d| t(&[1.0, 0.0], &[2], d))
        .collect()
}

/// A tensor on the `cpu` device, built directly so that no cpu backend
/// needs to be registered for the device check to be reached.
fn on_cpu() -> Tensor {
    Tensor::from_storage(
        Storage::host(Device::Cpu, HostBuffer::F32(vec![1.0, 2.0])),
        [2],
    )
}

#[test]
fn unary_dtype_rules() {
    let floats = |d: DType| d.is_float();
    let numeric = |d: DType| !d.is_bool();
    let signed = |d: DType| d.is_signed();
    let boolean = |d: DType| d.is_bool();
    let rules: Vec<(&str, Unary, Admits)> = vec![
        ("neg", |x| x.neg(), &signed),
        ("abs", |x| x.abs(), &numeric),
        ("sign", |x| x.sign(), &numeric),
        ("square", |x| x.square(), &numeric),
        ("relu", |x| x.relu(), &numeric),
        ("floor", |x| x.floor(), &numeric),
        ("ceil", |x| x.ceil(), &numeric),
        ("round", |x| x.round(), &numeric),
        ("clamp", |x| x.clamp(Some(0.0), Some(1.0)), &numeric),
        ("exp", |x| x.exp(), &floats),
        ("log", |x| x.log(), &floats),
        ("log1p", |x| x.log1p(), &floats),
        ("sqrt", |x| x.sqrt(), &floats),
        ("rsqrt", |x| x.rsqrt(), &floats),
        ("recip", |x| x.recip(), &floats),
        ("sin", |x| x.sin(), &floats),
        ("cos", |x| x.cos(), &floats),
        ("tanh", |x| x.tanh(), &floats),
        ("sigmoid", |x| x.sigmoid(), &floats),
        ("leaky_relu", |x| x.leaky_relu(0.01), &floats),
        ("gelu", |x| x.gelu(), &floats),
        ("gelu_tanh", |x| x.gelu_tanh(), &floats),
        ("silu", |x| x.silu(), &floats),
        ("softplus", |x| x.softplus(), &floats),
        ("erf", |x| x.erf(), &floats),
        ("powf", |x| x.powf(2.0), &floats),
        ("logical_not", |x| x.logical_not(), &boolean),
    ];
    for x in &one_of_each() {
        for (name, op, admits) in &rules {
            match op(x) {
                Ok(y) => {
                    assert!(admits(x.dtype()), "{name} accepted {}", x.dtype());
                    assert_eq!(y.dtype(), x.dtype(), "{name} keeps the dtype");
                }
                Err(e) => {
                    assert!(!admits(x.dtype()), "{name} refused {}: {e}", x.dtype());
                    assert!(
                        matches!(e, Error::UnsupportedDType { op, dtype, .. } if op == *name && dtype == x.dtype()),
                        "{name}: {e:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn binary_dtype_rules() {
    let arithmetic: [(&str, Binary); 8] = [
        ("add", |a, b| a.add(b)),
        ("sub", |a, b| a.sub(b)),
        ("mul", |a, b| a.mul(b)),
        ("div", |a, b| a.div(b)),
        ("pow", |a, b| a.pow(b)),
        ("maximum", |a, b| a.maximum(b)),
        ("minimum", |a, b| a.minimum(b)),
        ("rem", |a, b| a.rem(b)),
    ];
    let logical: [(&str, Binary); 3] = [
        ("logical_and", |a, b| a.logical_and(b)),
        ("logical_or", |a, b| a.logical_or(b)),
        ("logical_xor", |a, b| a.logical_xor(b)),
    ];
    let comparisons: [(&str, Binary); 6] = [
        ("eq", |a, b| a.eq(b)),
        ("ne", |a, b| a.ne(b)),
        ("lt", |a, b| a.lt(b)),
        ("le", |a, b| a.le(b)),
        ("gt", |a, b| a.gt(b)),
        ("ge", |a, b| a.ge(b)),
    ];
    for x in one_of_each() {
        let d = x.dtype();
        let ops = arithmetic.iter().map(|o| (o, !d.is_bool()));
        let ops = ops.chain(logical.iter().map(|o| (o, d.is_bool())));
        let ops = ops.chain(comparisons.iter().map(|o| (o, true)));
        for ((name, op), admitted) in ops {
            match op(&x, &x) {
                Ok(_) => assert!(admitted, "{name} accepted {d}"),
                Err(e) => {
                    assert!(!admitted, "{name} refused {d}: {e}");
                    assert!(
                        matches!(e, Error::UnsupportedDType { op, .. } if op == *name),
                        "{e:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn exact_messages() {
    let f32v = t(&[1.0, 2.0], &[2], DType::F32);
    let msg = |r: Result<Tensor>| r.unwrap_err().to_string();
    assert_eq!(
        msg(t(&[1.0], &[1], DType::I32).exp()),
        "exp: not defined for dtype i32 (cast to a float dtype first)"
    );
    assert_eq!(
        msg(t(&[1.0], &[1], DType::U8).neg()),
        "neg: not defined for dtype u8 (u8 is unsigned: cast to a signed dtype first)"
    );
    assert_eq!(
        msg(t(&[1.0], &[1], DType::Bool).add(&t(&[1.0], &[1], DType::Bool))),
        "add: not defined for dtype bool (bool is not a number: cast to an integer or float dtype first)"
    );
    assert_eq!(
        msg(f32v.logical_and(&f32v)),
        "logical_and: not defined for dtype f32 (logical ops take bool: compare first, e.g. x.ne_scalar(0.0))"
    );
    assert_eq!(
        msg(f32v.add(&t(&[1.0, 2.0], &[2], DType::F64))),
        "add: dtypes differ: f32 and f64"
    );
    assert_eq!(
        msg(t(&[0.0; 6], &[2, 3], DType::F32).add(&t(&[0.0; 4], &[4], DType::F32))),
        "add: shapes cannot be broadcast: [2, 3] and [4] (dim 1: 3 vs 4)"
    );
    assert_eq!(
        msg(f32v.add(&on_cpu())),
        "add: tensors are on different devices: reference and cpu"
    );
    assert_eq!(
        msg(t(&[1.0], &[1], DType::I32).add_scalar(0.5)),
        "add: invalid scalar: 0.5 is not exactly representable in i32"
    );
    assert_eq!(
        msg(f32v.clamp(Some(f64::NAN), None)),
        "clamp: invalid min: must not be NaN"
    );
    assert_eq!(
        msg(f32v.leaky_relu(f64::INFINITY)),
        "leaky_relu: invalid slope: must be finite, got inf"
    );
    assert_eq!(
        msg(Tensor::where_(&f32v, &f32v, &f32v)),
        "where: not defined for dtype f32 (the condition must be bool: compare first, e.g. x.gt_scalar(0.0))"
    );
    let mask = t(&[1.0; 6], &[2, 3], DType::Bool);
    assert_eq!(
        msg(t(&[0.0; 3], &[3], DType::F32).masked_fill(&mask, 0.0)),
        "masked_fill: cannot expand [2, 3] to [3]"
    );
}

#[test]
fn typed_variants_for_every_path() {
    let f32v = t(&[1.0, 2.0], &[2], DType::F32);
    let f64v = t(&[1.0, 2.0], &[2], DType::F64);
    let i32v = t(&[1.0, 2.0], &[2], DType::I32);
    let cond = t(&[1.0, 0.0], &[2], DType::Bool);
    let three = t(&[1.0, 2.0, 3.0], &[3], DType::F32);

    // Device mismatches, on both sides and in every chokepoint.
    let cpu = on_cpu();
    for r in [
        f32v.add(&cpu),
        cpu.add(&f32v),
        f32v.lt(&cpu),
        Tensor::where_(&cond, &f32v, &cpu),
        Tensor::where_(&cond, &cpu, &f32v),
        f32v.masked_fill(
            &Tensor::from_storage(
                Storage::host(Device::Cpu, HostBuffer::Bool(vec![true])),
                [1],
            ),
            0.0,
        ),
        &f32v * &cpu,
    ] {
        assert!(matches!(r, Err(Error::DeviceMismatch { .. })), "{r:?}");
    }
    // Dtype mismatches.
    for r in [
        f32v.sub(&f64v),
        f32v.maximum(&f64v),
        i32v.ge(&f32v),
        Tensor::where_(&cond, &f32v, &f64v),
        &f32v / &f64v,
    ] {
        assert!(matches!(r, Err(Error::DTypeMismatch { .. })), "{r:?}");
    }
    let e = f32v.lt(&f64v).unwrap_err();
    assert!(matches!(
        e,
        Error::DTypeMismatch {
            op: "lt",
            lhs: DType::F32,
            rhs: DType::F64
        }
    ));
    // Shapes that do not broadcast.
    for r in [
        f32v.mul(&three),
        f32v.eq(&three),
        Tensor::where_(&cond, &three, &three),
        Tensor::where_(&t(&[1.0; 3], &[3], DType::Bool), &f32v, &f32v),
    ] {
        assert!(
            matches!(r, Err(Error::BroadcastIncompatible { .. })),
            "{r:?}"
        );
    }
    let e = Tensor::where_(&cond, &three, &three).unwrap_err();
    assert!(
        matches!(
            e,
            Error::BroadcastIncompatible {
                op: "where",
                dim: 0,
                lhs_size: 2,
                rhs_size: 3,
                ..
            }
        ),
        "{e:?}"
    );
    // Condition and mask dtypes.
    assert!(matches!(
        f32v.masked_fill(&f32v, 0.0),
        Err(Error::UnsupportedDType {
            op: "masked_fill",
            dtype: DType::F32,
            ..
        })
    ));
    assert!(matches!(
        three.masked_fill(&cond, 0.0),
        Err(Error::ExpandIncompatible {
            op: "masked_fill",
            ..
        })
    ));
    // Scalars that the dtype cannot hold exactly.
    let u8v = t(&[1.0], &[1], DType::U8);
    let i64v = t(&[1.0], &[1], DType::I64);
    let boolv = t(&[1.0], &[1], DType::Bool);
    for r in [
        i32v.add_scalar(0.5),
        i32v.mul_scalar(2_147_483_648.0),
        i32v.div_scalar(f64::NAN),
        i32v.sub_scalar(f64::INFINITY),
        i32v.lt_scalar(2.5),
        i32v.rsub_scalar(0.25),
        u8v.add_scalar(256.0),
        u8v.add_scalar(-1.0),
        i64v.add_scalar(9_223_372_036_854_775_808.0),
        boolv.eq_scalar(2.0),
        i32v.masked_fill(&cond, 1.5),
        i32v.pow_scalar(0.5),
        1.5 + &i32v,
    ] {
        assert!(
            matches!(r, Err(Error::InvalidArgument { name: "scalar", .. })),
            "{r:?}"
        );
    }
    assert!(boolv.eq_scalar(1.0).is_ok());
    assert!(u8v.add_scalar(255.0).is_ok());
    // Scalar parameters of unary ops.
    assert!(matches!(
        f32v.leaky_relu(f64::NAN),
        Err(Error::InvalidArgument { name: "slope", .. })
    ));
    assert!(matches!(
        f32v.clamp(None, Some(f64::NAN)),
        Err(Error::InvalidArgument { name: "max", .. })
    ));
    // The operators surface the same errors.
    assert!(matches!(
        -&t(&[1.0], &[1], DType::U8),
        Err(Error::UnsupportedDType { op: "neg", .. })
    ));
}

#[test]
fn the_backend_refuses_what_the_front_end_would() {
    // Called directly, bypassing the front end, the reference still answers
    // with a typed error rather than a panic.
    let r = Reference;
    let i = t(&[1.0], &[1], DType::I32);
    let f = t(&[1.0], &[1], DType::F32);
    let b = t(&[1.0], &[1], DType::Bool);
    let u = t(&[1.0], &[1], DType::U8);
    assert!(matches!(
        r.unary(UnaryOp::Exp, &i),
        Err(Error::UnsupportedDType { op: "exp", .. })
    ));
    assert!(matches!(
        r.unary(UnaryOp::Not, &f),
        Err(Error::UnsupportedDType { .. })
    ));
    assert!(matches!(
        r.unary(UnaryOp::Abs, &b),
        Err(Error::UnsupportedDType { .. })
    ));
    assert!(matches!(
        r.unary(UnaryOp::Neg, &u),
        Err(Error::UnsupportedDType { .. })
    ));
    assert!(matches!(
        r.binary(BinaryOp::And, &f, &f),
        Err(Error::UnsupportedDType { .. })
    ));
    assert!(matches!(
        r.binary(BinaryOp::Add, &b, &b),
        Err(Error::UnsupportedDType { .. })
    ));
    assert!(matches!(
        r.binary(BinaryOp::Or, &i, &i),
        Err(Error::UnsupportedDType { .. })
    ));
}
