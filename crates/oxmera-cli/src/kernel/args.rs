//! A kernel's arguments described on the command line, how a buffer is
//! printed, and how two buffers are compared.
//!
//! Each parameter gets one `--arg name=spec`. A scalar's spec is its value
//! (`n=1000`, `alpha=0.5`, `flag=true`). A buffer's spec is one of
//!
//! | spec | elements |
//! |---|---|
//! | `zeros:N`, `ones:N` | N zeros or ones |
//! | `iota:N` | 0, 1, 2, … N−1 |
//! | `rand:N` | seeded uniform draws: floats in [−1, 1), i32/i64 in [−100, 100), unsigned integers in [0, 100), bool |
//! | `fill:V:N` | N copies of V |
//! | `1,2.5,3` | the values listed |
//! | `x.npy` | a NumPy file of the buffer's type (f32 and i32 buffers also take f64 and i64 files) |
//!
//! N may be a number or the name of an integer scalar argument
//! (`--arg n=1000 --arg x=rand:n`). Random buffers come from the Philox
//! generator keyed by `--seed` and the parameter's position, so a command
//! prints the same numbers every time and on every machine.

use std::collections::HashMap;
use std::path::Path;

use oxmera_kernel::eval;
use oxmera_kernel::ir::{Kernel, ParamKind, Scalar, Value};
use oxmera_kernel::sim::{Arg, Buffer};

use super::npy;

/// The value of a scalar of type `ty` written as `text`.
fn scalar(text: &str, ty: Scalar) -> Option<Value> {
    let t = text.trim();
    Some(match ty {
        Scalar::F32 => Value::F32(t.parse().ok()?),
        Scalar::I32 => Value::I32(t.parse().ok()?),
        Scalar::U32 => Value::U32(t.parse().ok()?),
        Scalar::Bool => Value::Bool(t.parse().ok()?),
        Scalar::F64 => Value::F64(t.parse().ok()?),
        Scalar::I64 => Value::I64(t.parse().ok()?),
        Scalar::U64 => Value::U64(t.parse().ok()?),
        Scalar::U8 => Value::U8(t.parse().ok()?),
        Scalar::U16 => Value::U16(t.parse().ok()?),
        // A half is read as f32 and rounded, as a kernel's literal is.
        Scalar::F16 | Scalar::BF16 => eval::cast(Value::F32(t.parse().ok()?), ty),
    })
}

/// Seeded uniform draws for the parameter at `position`.
fn random(elem: Scalar, n: usize, seed: u64, position: usize) -> Vec<Value> {
    let key = [seed as u32, (seed >> 32) as u32];
    (0..n)
        .map(|j| {
            // Two draws per Philox block of four words.
            let block = oxmera_core::philox4x32_10([(j / 2) as u32, 0, position as u32, 0], key);
            let u = oxmera_core::unit_f64(block[2 * (j % 2)], block[2 * (j % 2) + 1]);
            match elem {
                Scalar::Bool => Value::Bool(u < 0.5),
                Scalar::F64 => Value::F64(u * 2.0 - 1.0),
                t if t.is_float() => eval::cast(Value::F32((u * 2.0 - 1.0) as f32), t),
                t if t.is_signed() => eval::cast(Value::I32((u * 200.0).floor() as i32 - 100), t),
                t => eval::cast(Value::U32((u * 100.0).floor() as u32), t),
            }
        })
        .collect()
}

/// The buffer `spec` describes, of `elem`s; `scalars` resolve a length
/// written as a parameter's name.
fn buffer(
    spec: &str,
    elem: Scalar,
    scalars: &HashMap<String, Value>,
    seed: u64,
    position: usize,
) -> Result<Buffer, String> {
    let length = |s: &str| -> Result<usize, String> {
        if let Ok(n) = s.trim().parse::<usize>() {
            return Ok(n);
        }
        match scalars.get(s.trim()) {
            Some(Value::U32(n)) => Ok(*n as usize),
            Some(Value::I32(n)) if *n >= 0 => Ok(*n as usize),
            _ => Err(format!(
                "`{s}` is not a length: write a number or the name of an integer argument"
            )),
        }
    };
    let value = |s: &str| scalar(s, elem).ok_or_else(|| format!("`{s}` is not a {elem} value"));
    let data = if let Some(n) = spec.strip_prefix("zeros:") {
        return Ok(Buffer::zeros(elem, length(n)?));
    } else if let Some(n) = spec.strip_prefix("ones:") {
        vec![value(if elem == Scalar::Bool { "true" } else { "1" })?; length(n)?]
    } else if let Some(n) = spec.strip_prefix("iota:") {
        (0..length(n)?)
            .map(|i| match elem {
                Scalar::Bool => Value::Bool(i % 2 == 1),
                // `i as T`: wraps for the narrow integers, rounds for halves.
                _ => eval::cast(Value::U64(i as u64), elem),
            })
            .collect()
    } else if let Some(n) = spec.strip_prefix("rand:") {
        random(elem, length(n)?, seed, position)
    } else if let Some(rest) = spec.strip_prefix("fill:") {
        let (v, n) = rest
            .rsplit_once(':')
            .ok_or("write `fill:VALUE:LENGTH`, e.g. `fill:0.5:1000`")?;
        vec![value(v)?; length(n)?]
    } else if spec.ends_with(".npy") {
        let bytes =
            std::fs::read(Path::new(spec)).map_err(|e| format!("cannot read {spec}: {e}"))?;
        return npy::decode(&bytes, elem, spec);
    } else {
        spec.split(',')
            .map(value)
            .collect::<Result<Vec<Value>, String>>()
            .map_err(|e| {
                format!(
                    "{e}; a buffer is zeros:N, ones:N, iota:N, rand:N, fill:V:N, \
                     a list like 1,2,3 or a .npy file"
                )
            })?
    };
    Ok(Buffer::from_values(elem, &data))
}

/// What a parameter is, as the signature says it.
pub fn describe(kind: ParamKind) -> String {
    match kind {
        ParamKind::Scalar(t) => t.to_string(),
        ParamKind::Buffer { elem, writable } => {
            format!("&{}[{elem}]", if writable { "mut " } else { "" })
        }
    }
}

/// The kernel's arguments from `--arg name=spec` items, in parameter order.
pub fn arguments(k: &Kernel, specs: &[String], seed: u64) -> Result<Vec<Arg>, String> {
    let mut given: HashMap<&str, &str> = HashMap::new();
    for s in specs {
        let (name, spec) = s
            .split_once('=')
            .ok_or_else(|| format!("`--arg {s}`: write NAME=VALUE, e.g. `--arg n=1000`"))?;
        let name = name.trim();
        if k.param_index(name).is_none() {
            let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "`{}` has no parameter `{name}`; its parameters: {}",
                k.name,
                names.join(", ")
            ));
        }
        if given.insert(name, spec.trim()).is_some() {
            return Err(format!("`--arg {name}=..` is given twice"));
        }
    }
    let missing: Vec<String> = k
        .params
        .iter()
        .filter(|p| !given.contains_key(p.name.as_str()))
        .map(|p| format!("`{}: {}`", p.name, describe(p.kind)))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "`{}` needs an --arg for {}; e.g. `--arg n=1000` for a scalar, \
             `--arg x=rand:1000` or `--arg out=zeros:1000` for a buffer",
            k.name,
            missing.join(", ")
        ));
    }
    // Scalars first, so a buffer's length may name one.
    let mut scalars = HashMap::new();
    for p in &k.params {
        if let ParamKind::Scalar(t) = p.kind {
            let text = given[p.name.as_str()];
            let v = scalar(text, t)
                .ok_or_else(|| format!("`--arg {}={text}`: not a {t} value", p.name))?;
            scalars.insert(p.name.clone(), v);
        }
    }
    k.params
        .iter()
        .enumerate()
        .map(|(position, p)| match p.kind {
            ParamKind::Scalar(_) => Ok(Arg::Scalar(scalars[&p.name])),
            ParamKind::Buffer { elem, .. } => {
                buffer(given[p.name.as_str()], elem, &scalars, seed, position)
                    .map(Arg::Buffer)
                    .map_err(|e| format!("`--arg {}`: {e}", p.name))
            }
        })
        .collect()
}

/// The first `n` elements of a buffer, written as their type reads.
pub fn head(b: &Buffer, n: usize) -> String {
    let items: Vec<String> = (0..b.len().min(n))
        .map(|i| match b.get(i) {
            Value::F32(x) => format!("{x:.6}"),
            Value::F64(x) => format!("{x:.6}"),
            h @ (Value::F16(_) | Value::BF16(_)) => {
                format!("{:.6}", h.as_f32().expect("a half widens"))
            }
            Value::I32(x) => x.to_string(),
            Value::U32(x) => x.to_string(),
            Value::I64(x) => x.to_string(),
            Value::U64(x) => x.to_string(),
            Value::U8(x) => x.to_string(),
            Value::U16(x) => x.to_string(),
            Value::Bool(x) => x.to_string(),
        })
        .collect();
    let more = if b.len() > n { ", …" } else { "" };
    format!("[{}{more}]", items.join(", "))
}

/// Where two buffers of one type differ: the count of elements outside
/// `|a − b| ≤ tol·max(1, |b|)` (exact for integers and bools; NaN equals
/// NaN), and the largest absolute difference.
pub fn compare(a: &Buffer, b: &Buffer, tol: f64) -> (usize, f64) {
    let mut bad = usize::from(a.len() != b.len()) * a.len().max(b.len());
    let mut worst = 0.0f64;
    // Integers and bools compare by their bits (a 64-bit integer beyond
    // 2^53 has no exact f64); the f64 values give the difference shown.
    let exact = !a.elem.is_float();
    let (av, bv) = (a.to_f64(), b.to_f64());
    for (i, (&x, &y)) in av.iter().zip(&bv).enumerate() {
        if exact {
            bad += usize::from(a.bits(i) != b.bits(i));
            worst = worst.max((x - y).abs());
            continue;
        }
        if x.is_nan() && y.is_nan() {
            continue;
        }
        let d = (x - y).abs();
        worst = worst.max(if d.is_nan() { f64::INFINITY } else { d });
        bad += usize::from(d > tol * y.abs().max(1.0));
    }
    (bad, worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add() -> Kernel {
        oxmera_kernel_lower::file::lower_source(
            "add.rs",
            "#[kernel] fn add(a: &[f32], b: &[i32], out: &mut [f32], n: u32) { \
             let i = thread_idx_x(); if i < n { out[i] = a[i]; } }",
        )
        .unwrap()
        .kernels
        .remove(0)
    }

    #[test]
    fn specs_build_each_kind_of_argument() {
        let k = add();
        let specs = ["n=4", "a=iota:n", "b=1,-2,3", "out=fill:0.5:4"].map(String::from);
        let args = arguments(&k, &specs, 1).unwrap();
        assert_eq!(args[3], Arg::Scalar(Value::U32(4)));
        assert_eq!(args[0].buffer().unwrap().to_f32(), [0.0, 1.0, 2.0, 3.0]);
        assert_eq!(args[1].buffer().unwrap().to_i32(), [1, -2, 3]);
        assert_eq!(args[2].buffer().unwrap().to_f32(), [0.5; 4]);
    }

    #[test]
    fn random_buffers_are_seeded_and_in_range() {
        let k = add();
        let specs = ["n=64", "a=rand:n", "b=rand:n", "out=zeros:n"].map(String::from);
        let one = arguments(&k, &specs, 7).unwrap();
        assert_eq!(one, arguments(&k, &specs, 7).unwrap());
        assert_ne!(one, arguments(&k, &specs, 8).unwrap());
        let a = one[0].buffer().unwrap().to_f32();
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        let b = one[1].buffer().unwrap().to_i32();
        assert!(b.iter().all(|x| (-100..100).contains(x)));
        // Two parameters never share a stream.
        assert_ne!(a[0].to_bits(), one[2].buffer().unwrap().to_u32()[0]);
    }

    #[test]
    fn mistakes_are_named() {
        let k = add();
        let e = arguments(&k, &["n=4".into()], 1).unwrap_err();
        assert!(
            e.contains("`a: &[f32]`") && e.contains("`out: &mut [f32]`"),
            "{e}"
        );
        let e = arguments(&k, &["m=4".into()], 1).unwrap_err();
        assert!(e.contains("no parameter `m`"), "{e}");
        let specs = ["n=x", "a=zeros:1", "b=zeros:1", "out=zeros:1"].map(String::from);
        assert!(arguments(&k, &specs, 1).unwrap_err().contains("not a u32"));
        let specs = ["n=1", "a=zeros:q", "b=zeros:1", "out=zeros:1"].map(String::from);
        assert!(
            arguments(&k, &specs, 1)
                .unwrap_err()
                .contains("not a length")
        );
    }

    #[test]
    fn comparison_is_exact_for_integers_and_relative_for_floats() {
        let a = Buffer::from_f32(&[1.0, 1000.0, f32::NAN]);
        let b = Buffer::from_f32(&[1.0 + 1e-6, 1000.001, f32::NAN]);
        assert_eq!(compare(&a, &b, 1e-5).0, 0);
        assert_eq!(compare(&a, &b, 1e-7).0, 2);
        let (x, y) = (Buffer::from_i32(&[1, 2]), Buffer::from_i32(&[1, 3]));
        assert_eq!(compare(&x, &y, 1.0), (1, 1.0));
    }
}
