//! The sorting network (`sort_keys`, then every stage of `bitonic_step`)
//! in the simulator gives the reference backend's `argsort` exactly: f32
//! and f64 specials (NaN, ±0, ±∞, subnormals) with repeats, i32 and i64
//! extremes, both directions, through a transposed view, rows whose length
//! is not a power of two.

use oxmera_core::Device;
use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{self, sort_kind};
use oxmera_kernel::sim::{self, Arg, Buffer, SimOptions};
use oxmera_reference as _;
use oxmera_tensor::Tensor;

fn launch(threads: usize) -> LaunchConfig {
    LaunchConfig {
        grid: Dim3::x((threads as u32).div_ceil(64).max(1)),
        block: Dim3::x(64),
    }
}

fn u(v: u32) -> Arg {
    Arg::Scalar(Value::U32(v))
}

/// The network over `words` (an element of `per` words, stored `[n,
/// rows]`, each row read as a column: a transposed view), as the wgpu
/// backend launches it: the positions of each sorted row.
fn network(words: &[u32], per: usize, kind: u32, rows: usize, n: usize, down: bool) -> Vec<u32> {
    let padded = n.next_power_of_two();
    let slots = rows * padded;
    let mut args = vec![
        Arg::Buffer(Buffer::from_u32(words)),
        Arg::Buffer(Buffer::from_u32(&vec![0; slots])),
        Arg::Buffer(Buffer::from_u32(&vec![0; slots])),
        Arg::Buffer(Buffer::from_u32(&vec![0; slots])),
        Arg::Buffer(Buffer::from_u32(&[rows as u32, n as u32])),
        Arg::Buffer(Buffer::from_i32(&[per as i32, (per * rows) as i32])),
        u(2),
        u(n as u32),
        u(padded as u32),
        u(rows as u32),
        Arg::Scalar(Value::I32(0)),
        u(kind),
        Arg::Scalar(Value::Bool(down)),
    ];
    let opts = SimOptions::default();
    sim::run(library::sort_keys(), launch(slots), &mut args, &opts).unwrap();
    let mut keys: Vec<Arg> = args.drain(1..4).collect();
    let mut k = 2;
    while k <= padded {
        let mut j = k / 2;
        while j >= 1 {
            let mut step = vec![
                keys[0].clone(),
                keys[1].clone(),
                keys[2].clone(),
                u(padded as u32),
                u(rows as u32),
                u(k as u32),
                u(j as u32),
            ];
            sim::run(library::bitonic_step(), launch(slots / 2), &mut step, &opts).unwrap();
            keys = step.drain(0..3).collect();
            j /= 2;
        }
        k *= 2;
    }
    let pos = keys[2].buffer().unwrap().to_u32();
    (0..rows)
        .flat_map(|r| pos[r * padded..r * padded + n].to_vec())
        .collect()
}

/// The reference's argsort of `t` (`[n, rows]`) along dim 0, transposed
/// to rows.
fn reference(t: &Tensor, down: bool) -> Vec<u32> {
    let idx = t.t().unwrap().argsort(1, down).unwrap();
    idx.to_vec::<i64>()
        .unwrap()
        .iter()
        .map(|&v| v as u32)
        .collect()
}

#[test]
fn the_network_sorts_as_the_reference_does() {
    let r = Device::Reference;
    let (rows, n) = (3, 13);
    let specials = [
        f64::NAN,
        -0.0,
        0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.5,
        -1.5,
        5e-324,
        -5e-324,
        1e300,
        -1e-300,
        1.5,
        f64::NAN,
    ];
    let seeded: Vec<f64> = library::rng_f32(5, n * rows)
        .iter()
        .map(|&v| f64::from((v * 4.0).round()))
        .collect();
    let mut f = specials.repeat(rows);
    f[n..].copy_from_slice(&seeded[n..]);
    for down in [false, true] {
        let f32s: Vec<f32> = f.iter().map(|&v| v as f32).collect();
        let t = Tensor::from_vec(f32s.clone(), [n, rows], r).unwrap();
        let words: Vec<u32> = f32s.iter().map(|v| v.to_bits()).collect();
        let got = network(&words, 1, sort_kind::F32, rows, n, down);
        assert_eq!(got, reference(&t, down), "f32, descending {down}");

        let t = Tensor::from_vec(f.clone(), [n, rows], r).unwrap();
        let words: Vec<u32> = f
            .iter()
            .flat_map(|v| [v.to_bits() as u32, (v.to_bits() >> 32) as u32])
            .collect();
        let got = network(&words, 2, sort_kind::F64, rows, n, down);
        assert_eq!(got, reference(&t, down), "f64, descending {down}");

        let ints: Vec<i64> = f
            .iter()
            .enumerate()
            .map(|(k, v)| match k % 5 {
                0 => i64::MIN,
                1 => i64::MAX - (k as i64 % 2),
                2 => (1 << 32) + k as i64,
                _ if v.is_finite() => *v as i64 - 1,
                _ => -(1 << 33),
            })
            .collect();
        let t = Tensor::from_vec(ints.clone(), [n, rows], r).unwrap();
        let words: Vec<u32> = ints
            .iter()
            .flat_map(|&v| [v as u32, (v >> 32) as u32])
            .collect();
        let got = network(&words, 2, sort_kind::I64, rows, n, down);
        assert_eq!(got, reference(&t, down), "i64, descending {down}");

        let narrow: Vec<i32> = ints.iter().map(|&v| (v >> 16) as i32).collect();
        let t = Tensor::from_vec(narrow.clone(), [n, rows], r).unwrap();
        let words: Vec<u32> = narrow.iter().map(|&v| v as u32).collect();
        let got = network(&words, 1, sort_kind::I32, rows, n, down);
        assert_eq!(got, reference(&t, down), "i32, descending {down}");
    }
}
