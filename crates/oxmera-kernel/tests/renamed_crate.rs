//! `#[kernel(crate = "..")]`: a crate that renames `oxmera-kernel` in its
//! `Cargo.toml` names it for the generated code. Here the rename is made by
//! `extern crate .. as`, which puts the new name in the extern prelude just
//! as a `package = "oxmera-kernel"` dependency does.

extern crate oxmera_kernel as gpu_kernels;

use gpu_kernels::kernel;
use gpu_kernels::launch::LaunchConfig;
use gpu_kernels::sim::{self, Arg, Buffer, SimOptions};

/// Doubles each element; the generated code names `::gpu_kernels`.
#[kernel(block = [4], target = "lavapipe", crate = "gpu_kernels")]
fn double(x: &mut [f32]) {
    let i = thread_idx_x();
    x[i] = x[i] * 2.0;
}

#[test]
fn a_renamed_crate_builds_and_runs_its_kernels() {
    let k = double();
    assert_eq!(
        k.launch.target.map(|t| t.to_string()).as_deref(),
        Some("lavapipe")
    );
    let mut args = vec![Arg::Buffer(Buffer::from_f32(&[1.0, 2.0, 3.0, 4.0]))];
    let launch = LaunchConfig {
        grid: gpu_kernels::ir::Dim3::x(1),
        block: gpu_kernels::ir::Dim3::x(4),
    };
    sim::run(k, launch, &mut args, &SimOptions::default()).unwrap();
    assert_eq!(args[0].buffer().unwrap().to_f32(), [2.0, 4.0, 6.0, 8.0]);
}
