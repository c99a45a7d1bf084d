//! Streaming and row-wise rows: elementwise add, a fused expression and
//! a sum over one long vector (each against the machine's copy bandwidth
//! measured alongside), softmax and layer normalization over rows.

use std::cell::RefCell;

use oxmera_core::{Device, Result};
use oxmera_tensor::Tensor;

use crate::measure::Contender;
use crate::python::Python;
use crate::{Config, Report, Sizes, Work, measure_and_record, python_contender, randn};

/// The machine's copy bandwidth: `dst = src` split over `threads`
/// threads, into a buffer that already exists.
fn threaded_copy(src: &[f32], dst: &mut [f32], threads: usize) {
    let chunk = src.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
            s.spawn(move || d.copy_from_slice(c));
        }
    });
}

/// Elementwise add, a fused expression and a sum over one long vector,
/// each against the copy bandwidth measured alongside it.
pub(crate) fn streams(
    report: &mut Report,
    sizes: &Sizes,
    config: &Config,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    let n = sizes.stream;
    let label = if n >= 1 << 20 {
        format!("{}M", n >> 20)
    } else {
        format!("{}K", n >> 10)
    };
    let a = randn(11, &[n], Device::Cpu)?;
    let b = randn(12, &[n], Device::Cpu)?;
    let c = randn(13, &[n], Device::Cpu)?;
    let src = a.to_vec::<f32>()?;
    let mut dst = vec![0f32; n];
    let threads = config.threads;
    let bytes = |arrays: usize| Work::Bytes((arrays * n * 4) as f64);

    // Copy moves 2 arrays; the figure is GB/s of traffic either way, so
    // the ratio compares bandwidths.
    let copy_secs = RefCell::new(&mut dst);
    let memcpy = |name: &str| {
        let (src, dst) = (&src, &copy_secs);
        Contender::timed(name, move || {
            threaded_copy(src, &mut dst.borrow_mut()[..], threads)
        })
    };
    let scale = |arrays_peer: f64, arrays_ox: f64| arrays_ox / arrays_peer;

    // add: reads 2 arrays, writes 1.
    let mut cs = vec![
        Contender::timed("oxmera", || {
            a.add(&b).expect("add");
        }),
        rescaled(memcpy("memcpy"), scale(2.0, 3.0)),
    ];
    for &lib in libs {
        cs.push(python_contender(py, lib, "add", vec![n]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("add_f32_{label}"),
        bytes(3),
        cs,
    )?;

    // relu(a * b + c): reads 3, writes 1 — fused, against the same
    // expression as three tensor ops, copy, and the Python libraries.
    let mut cs = vec![
        Contender::timed("oxmera", || {
            oxmera_cpu::fused::zip3(&a, &b, &c, |x, y, z| (x * y + z).max(0.0)).expect("fused");
        }),
        Contender::timed("oxmera-unfused", || {
            a.mul(&b)
                .and_then(|t| t.add(&c))
                .and_then(|t| t.relu())
                .expect("unfused");
        }),
        rescaled(memcpy("memcpy"), scale(2.0, 4.0)),
    ];
    for &lib in libs {
        cs.push(python_contender(py, lib, "fused", vec![n]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("fused_relu_mul_add_f32_{label}"),
        bytes(4),
        cs,
    )?;

    // sum: reads 1.
    let mut cs = vec![
        Contender::timed("oxmera", || {
            a.sum_all().expect("sum");
        }),
        rescaled(memcpy("memcpy"), scale(2.0, 1.0)),
    ];
    for &lib in libs {
        cs.push(python_contender(py, lib, "sum", vec![n]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("sum_f32_{label}"),
        bytes(1),
        cs,
    )
}

/// A contender whose time is scaled so that its figure, computed with
/// another benchmark's byte count, is its own bandwidth: a copy moving
/// 2 arrays in `t` seconds reads as moving 3 arrays in `t · 3/2`.
fn rescaled(mut c: Contender<'_>, factor: f64) -> Contender<'_> {
    let mut inner = std::mem::replace(&mut c.run, Box::new(|| Ok(0.0)));
    c.run = Box::new(move || inner().map(|t| t * factor));
    c
}

pub(crate) fn softmax(
    report: &mut Report,
    sizes: &Sizes,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    rowwise(report, sizes, py, libs, "softmax", |x| x.softmax(1), &[])
}

/// Layer normalization over rows, against the same normalization written
/// as five tensor ops (the composed form a framework without the fused
/// kernel runs), on the same backend and input in the same run.
pub(crate) fn layer_norm(
    report: &mut Report,
    sizes: &Sizes,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
) -> Result<()> {
    let composed = |x: &Tensor| -> Result<Tensor> {
        let mean = x.mean(&[1], true)?;
        let rstd = x.var(&[1], 0.0, true)?.add_scalar(1e-5)?.rsqrt()?;
        x.sub(&mean)?.mul(&rstd)
    };
    let fused = |x: &Tensor| x.layer_norm(1, 1e-5);
    rowwise(
        report,
        sizes,
        py,
        libs,
        "layer_norm",
        fused,
        &[("composed", composed)],
    )
}

/// A way of computing a row-wise op on a tensor.
type RowOp = fn(&Tensor) -> Result<Tensor>;

/// An op applied to the rows of one input of the softmax shape, timed for
/// oxmera, the reference on small sizes, `same_input` (other ways of
/// computing it in oxmera, by label), and the Python peers' `name`.
fn rowwise(
    report: &mut Report,
    sizes: &Sizes,
    py: &RefCell<Option<Python>>,
    libs: &[&'static str],
    name: &'static str,
    op: RowOp,
    same_input: &[(&'static str, RowOp)],
) -> Result<()> {
    let (r, c) = sizes.softmax;
    let x = randn(21, &[r, c], Device::Cpu)?;
    let mut cs = vec![Contender::timed("oxmera", || {
        op(&x).expect(name);
    })];
    let rx = x.to_device(Device::Reference)?;
    if r * c <= 1 << 16 {
        cs.push(Contender::timed("reference", move || {
            op(&rx).expect(name);
        }));
    }
    for &(label, f) in same_input {
        let x = &x;
        cs.push(Contender::timed(label, move || {
            f(x).expect(label);
        }));
    }
    for &lib in libs {
        cs.push(python_contender(py, lib, name, vec![r, c]));
    }
    measure_and_record(
        report,
        sizes.plan,
        &format!("{name}_f32_{r}x{c}"),
        Work::Time,
        cs,
    )
}
