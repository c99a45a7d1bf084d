//! The CUDA rows (with the `cuda` feature), each a ratio in one run on
//! `cuda:0` against what the same GPU does at its best:
//!
//! - elementwise add and a sum over 256M f32, softmax and layer norm of an
//!   8192 × 8192 f32 matrix along its rows, against a device-to-device copy
//!   that reads and writes as many bytes (the GPU's copy bandwidth,
//!   measured in the run: 1.0 would be the copy's rate);
//! - f32 matmul 4096 against cuBLAS's SGEMM where `libcublas.so` is
//!   installed (skipped, saying so, where not);
//! - one SGD step of the bench's MLP against the CPU backend.
//!
//! Every oxmera figure includes a `synchronize`, as a user who reads a
//! result sees it; the peers wait for the GPU the same way. Sizes shrink
//! with `--quick` (a plumbing check, no figure worth quoting).

use std::time::Instant;

use oxmera_core::{Device, Result};
use oxmera_cuda::{CublasSgemm, DeviceCopy};

use crate::measure::Contender;
use crate::{Mlp, Report, Sizes, Work, keep, measure_and_record, randn};

/// The sizes of the CUDA rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CudaSizes {
    /// Elements of the add and the sum.
    pub stream: usize,
    /// The matmul's side.
    pub matmul: usize,
    /// Rows and columns of softmax and layer norm.
    pub rows: (usize, usize),
}

impl CudaSizes {
    pub(crate) fn of(quick: bool) -> CudaSizes {
        if quick {
            CudaSizes {
                stream: 1 << 16,
                matmul: 64,
                rows: (64, 64),
            }
        } else {
            CudaSizes {
                stream: 256 << 20,
                matmul: 4096,
                rows: (8192, 8192),
            }
        }
    }
}

/// Measures the CUDA rows, or notes why there are none.
pub(crate) fn rows(report: &mut Report, sizes: &Sizes) -> Result<()> {
    let gpu = match oxmera_cuda::probe() {
        Ok(all) if !all.is_empty() => all[0].clone(),
        Ok(_) => {
            report.note("cuda: skipped (the driver lists no GPU)");
            return Ok(());
        }
        Err(e) => {
            report.note(&format!("cuda: skipped ({e})"));
            return Ok(());
        }
    };
    report.note(&format!("cuda:0 is {gpu}"));
    let d = Device::Cuda(0);
    let s = sizes.cuda;

    // c = a + b: 12 bytes an element; the copy moves 6 a side.
    let n = s.stream;
    let (a, b) = (randn(21, &[n], d)?, randn(22, &[n], d)?);
    streaming(report, sizes, &format!("cuda_add_f32_{n}"), 12 * n, || {
        a.add(&b)?.synchronize()
    })?;
    drop((a, b));

    // The sum of every element: 4 bytes read an element.
    let x = randn(23, &[n], d)?;
    streaming(report, sizes, &format!("cuda_sum_f32_{n}"), 4 * n, || {
        x.sum_all()?.synchronize()
    })?;
    drop(x);

    // Softmax and layer norm along rows: each element read and written.
    let (r, c) = s.rows;
    let x = randn(24, &[r, c], d)?;
    streaming(
        report,
        sizes,
        &format!("cuda_softmax_f32_{r}x{c}"),
        8 * r * c,
        || x.softmax(1)?.synchronize(),
    )?;
    streaming(
        report,
        sizes,
        &format!("cuda_layer_norm_f32_{r}x{c}"),
        8 * r * c,
        || x.layer_norm(1, 1e-5)?.synchronize(),
    )?;
    drop(x);

    // Matmul against cuBLAS.
    let m = s.matmul;
    let (a, b) = (randn(25, &[m, m], d)?, randn(26, &[m, m], d)?);
    let mut cublas = CublasSgemm::new(d, m)?;
    let contenders = vec![
        timed("oxmera", || a.matmul(&b)?.synchronize()),
        Contender::reporting("cuBLAS", move || match cublas.as_mut() {
            Some(g) => {
                let t = Instant::now();
                keep(g.run())?;
                Ok(t.elapsed().as_secs_f64())
            }
            None => Err("cuBLAS (libcublas.so) is not installed".into()),
        }),
    ];
    let work = Work::Flops(2.0 * (m as f64).powi(3));
    measure_and_record(
        report,
        sizes.plan,
        &format!("cuda_matmul_f32_{m}"),
        work,
        contenders,
    )?;

    // One SGD step of the MLP the CPU rows time.
    let (batch, d_in, hidden, classes) = sizes.mlp;
    let mut on_gpu = Mlp::new(d, sizes.mlp)?;
    let mut on_cpu = Mlp::new(Device::Cpu, sizes.mlp)?;
    let contenders = vec![
        timed("oxmera", move || {
            on_gpu.step()?;
            oxmera_tensor::synchronize(d)
        }),
        timed("cpu backend", move || on_cpu.step()),
    ];
    let name = format!("cuda_mlp_step_{d_in}-{hidden}-{hidden}-{classes}_b{batch}");
    measure_and_record(report, sizes.plan, &name, Work::Time, contenders)
}

/// One streaming row: `op` moving `bytes` against a device copy that
/// moves as many (a copy of `bytes / 2` reads and writes `bytes`).
fn streaming(
    report: &mut Report,
    sizes: &Sizes,
    name: &str,
    bytes: usize,
    op: impl FnMut() -> Result<()>,
) -> Result<()> {
    let mut copy = DeviceCopy::new(Device::Cuda(0), bytes / 2)?;
    let contenders = vec![
        timed("oxmera", op),
        timed("device copy", move || copy.run()),
    ];
    measure_and_record(
        report,
        sizes.plan,
        name,
        Work::Bytes(bytes as f64),
        contenders,
    )
}

/// A contender timed by the host's clock around `f` (which waits for the
/// GPU).
fn timed<'a>(name: &str, mut f: impl FnMut() -> Result<()> + 'a) -> Contender<'a> {
    Contender::reporting(name, move || {
        let t = Instant::now();
        keep(f())?;
        Ok(t.elapsed().as_secs_f64())
    })
}
