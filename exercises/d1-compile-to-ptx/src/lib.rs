//! # D1 — compile to PTX
//!
//! `saxpy` is your kernel from B1. `SAXPY_PTX` below is the PTX oxmera
//! writes for it (`oxmera kernel ptx`, for sm_80 at 256 threads a block):
//! the module a CUDA driver would load. Read it, then change it by hand,
//! as the README asks. No GPU is needed: the spec hands the module to
//! NVIDIA's assembler, `ptxas`, which checks it as the driver would. Read
//! the README first; the spec is `tests/spec.rs`.

use oxmera_kernel::kernel;

/// `y[i] = a * x[i] + y[i]` for every `i < n`, one element per thread:
/// your kernel from B1, at one block size.
#[kernel(block = [256])]
pub fn saxpy(n: u32, a: f32, x: &[f32], y: &mut [f32]) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        y[i] = a * x[i] + y[i];
    }
}

/// The PTX module for `saxpy`, one `.entry` named `saxpy` with the kernel's
/// four parameters, for 256 threads a block.
// TODO(D1): today, oxmera's output unchanged. Make it a module for sm_90
// that computes `a * x[i] + y[i]` with one `fma.rn.f32`.
pub const SAXPY_PTX: &str = r#"//
// `saxpy`: PTX written by oxmera from the kernel IR for sm_80, block 256x1x1.
// PTX ISA 7.0 (CUDA 11.0): JIT-compiled by R450 drivers and newer.
//
// TODO(D1): retarget it to sm_90, and make the multiply and the add one
// fused multiply-add.
//
.version 7.0
.target sm_80
.address_size 64

.visible .entry saxpy(
    .param .u32 p_n,
    .param .f32 p_a,
    .param .u64 p_x,
    .param .u64 p_y
)
.reqntid 256, 1, 1
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .f32 %f<5>;
    .reg .b64 %rd<7>;
    .reg .b32 %i_0;  // i: u32
    .reg .b32 %n_arg;
    .reg .f32 %a_arg;
    .reg .b64 %x_arg;
    .reg .b64 %y_arg;
    .reg .b32 %thread_x;
    .reg .b32 %block_x;

    // Parameters.
    ld.param.u32 %n_arg, [p_n];
    ld.param.f32 %a_arg, [p_a];
    ld.param.u64 %x_arg, [p_x];
    cvta.to.global.u64 %x_arg, %x_arg;
    ld.param.u64 %y_arg, [p_y];
    cvta.to.global.u64 %y_arg, %y_arg;
    // Thread geometry.
    mov.u32 %thread_x, %tid.x;
    mov.u32 %block_x, %ctaid.x;

    // The body.
    // 16: let i = block_idx_x() * block_dim_x() + thread_idx_x();
    mul.lo.u32 %r1, %block_x, 256;
    add.u32 %r2, %r1, %thread_x;
    mov.b32 %i_0, %r2;
    // 17: if i < n {
    setp.lt.u32 %p1, %i_0, %n_arg;
    @!%p1 bra $L1_end;
    // 18: y[i] = a * x[i] + y[i];
    mul.wide.u32 %rd1, %i_0, 4;
    add.s64 %rd2, %y_arg, %rd1;
    mul.wide.u32 %rd3, %i_0, 4;
    add.s64 %rd4, %x_arg, %rd3;
    ld.global.f32 %f1, [%rd4];
    mul.rn.f32 %f2, %a_arg, %f1;
    mul.wide.u32 %rd5, %i_0, 4;
    add.s64 %rd6, %y_arg, %rd5;
    ld.global.f32 %f3, [%rd6];
    add.rn.f32 %f4, %f2, %f3;
    st.global.f32 [%rd2], %f4;
$L1_end:
    ret;
}
"#;
