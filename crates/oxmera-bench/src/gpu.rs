//! The wgpu rows (with the `wgpu` feature): elementwise add, matmul and an
//! MLP step on `wgpu:0`, each against the CPU backend in the same run.
//!
//! Every figure includes the device's queue and a wait for it (the op,
//! then `synchronize`), as a user who reads a result sees it. On lavapipe
//! — the CI's Vulkan driver, which runs shaders on the CPU — these figures
//! measure a CPU emulating a GPU and say nothing about GPUs; the table
//! says so when the adapter is a CPU.

use std::time::Instant;

use oxmera_core::{Device, Result};

use crate::measure::Contender;
use crate::{Mlp, Report, Sizes, Work, keep, measure_and_record, randn};

/// Measures the wgpu rows, or notes why there are none.
pub(crate) fn rows(report: &mut Report, sizes: &Sizes) -> Result<()> {
    let adapter = match oxmera_wgpu::probe() {
        Ok(all) if !all.is_empty() => all[0].clone(),
        Ok(_) => {
            report.note("wgpu: skipped (wgpu found no adapter)");
            return Ok(());
        }
        Err(e) => {
            report.note(&format!("wgpu: skipped ({e})"));
            return Ok(());
        }
    };
    let cpu_driver = adapter.device_type == "Cpu";
    report.note(&format!(
        "wgpu:0 is {} ({}, {}){}",
        adapter.name,
        adapter.backend,
        adapter.device_type,
        if cpu_driver {
            " — a CPU driver: the wgpu rows say nothing about GPUs"
        } else {
            ""
        }
    ));
    let d = Device::Wgpu(0);

    // Elementwise: c = a + b, 12 bytes moved per element.
    let n = sizes.stream;
    let (a, b) = (randn(11, &[n], d)?, randn(12, &[n], d)?);
    let (ca, cb) = (a.to_device(Device::Cpu)?, b.to_device(Device::Cpu)?);
    let contenders = against_cpu(|| a.add(&b)?.synchronize(), || ca.add(&cb).map(drop));
    let work = Work::Bytes(12.0 * n as f64);
    let name = format!("wgpu_add_f32_{n}");
    measure_and_record(report, sizes.plan, &name, work, contenders)?;

    // Matmul at the largest size of the run up to 1024 (a CPU driver
    // would take minutes beyond).
    let m = sizes
        .matmul
        .iter()
        .copied()
        .filter(|&m| m <= 1024)
        .max()
        .unwrap_or(16);
    let (a, b) = (randn(13, &[m, m], d)?, randn(14, &[m, m], d)?);
    let (ca, cb) = (a.to_device(Device::Cpu)?, b.to_device(Device::Cpu)?);
    let contenders = against_cpu(|| a.matmul(&b)?.synchronize(), || ca.matmul(&cb).map(drop));
    let work = Work::Flops(2.0 * (m as f64).powi(3));
    let name = format!("wgpu_matmul_f32_{m}");
    measure_and_record(report, sizes.plan, &name, work, contenders)?;

    // One SGD step of the MLP the CPU rows time.
    let (batch, d_in, hidden, classes) = sizes.mlp;
    let mut on_gpu = Mlp::new(d, sizes.mlp)?;
    let mut on_cpu = Mlp::new(Device::Cpu, sizes.mlp)?;
    let contenders = against_cpu(
        move || {
            on_gpu.step()?;
            oxmera_tensor::synchronize(d)
        },
        move || on_cpu.step(),
    );
    let name = format!("wgpu_mlp_step_{d_in}-{hidden}-{hidden}-{classes}_b{batch}");
    measure_and_record(report, sizes.plan, &name, Work::Time, contenders)
}

/// The two contenders of a wgpu row: the work on `wgpu:0` (including its
/// wait for the device) as "oxmera", the same on the CPU backend.
fn against_cpu<'a>(
    mut on_gpu: impl FnMut() -> Result<()> + 'a,
    mut on_cpu: impl FnMut() -> Result<()> + 'a,
) -> Vec<Contender<'a>> {
    vec![
        Contender::reporting("oxmera", move || {
            let t = Instant::now();
            keep(on_gpu())?;
            Ok(t.elapsed().as_secs_f64())
        }),
        Contender::reporting("cpu backend", move || {
            let t = Instant::now();
            keep(on_cpu())?;
            Ok(t.elapsed().as_secs_f64())
        }),
    ]
}
