//! The Rust GEMM peers, built with the `peers` feature: the `gemm` crate
//! (with its AVX-512 `x86-v4` kernels on x86-64, the strong configuration
//! candle uses) and `matrixmultiply` (what ndarray uses).
//!
//! Both take raw pointers and strides, so calling them is `unsafe`; this
//! module is the only place in the crate that allows it, and each call is
//! on buffers whose sizes match the dimensions passed.

#![allow(unsafe_code)]

/// `c = a · b` for row-major `n × n` matrices with the `gemm` crate on
/// `threads` threads.
pub fn gemm_crate(n: usize, a: &[f32], b: &[f32], c: &mut [f32], threads: usize) {
    assert!(a.len() == n * n && b.len() == n * n && c.len() == n * n);
    let par = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    let n_i = n as isize;
    // SAFETY: each pointer covers n·n elements (asserted), and with
    // column stride 1 and row stride n every index gemm forms for an
    // n × n operand is below n·n. `c` is not read (read_dst = false) and
    // does not alias `a` or `b` (a unique borrow).
    unsafe {
        gemm::gemm(
            n,
            n,
            n,
            c.as_mut_ptr(),
            1,
            n_i,
            false,
            a.as_ptr(),
            1,
            n_i,
            b.as_ptr(),
            1,
            n_i,
            0.0,
            1.0,
            false,
            false,
            false,
            par,
        );
    }
}

/// `c = a · b` for row-major `n × n` matrices with `matrixmultiply`
/// (threads from `MATMUL_NUM_THREADS`, see [`set_matrixmultiply_threads`]).
pub fn matrixmultiply(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    assert!(a.len() == n * n && b.len() == n * n && c.len() == n * n);
    let n_i = n as isize;
    // SAFETY: as for `gemm_crate`: n·n elements each, row stride n,
    // column stride 1, `c` uniquely borrowed.
    unsafe {
        matrixmultiply::sgemm(
            n,
            n,
            n,
            1.0,
            a.as_ptr(),
            n_i,
            1,
            b.as_ptr(),
            n_i,
            1,
            0.0,
            c.as_mut_ptr(),
            n_i,
            1,
        );
    }
}

/// Sets `MATMUL_NUM_THREADS`, which `matrixmultiply` reads once, at its
/// first product. Call before any other thread starts.
pub fn set_matrixmultiply_threads(threads: usize) {
    // SAFETY: called from `main` before the bench starts any thread (the
    // rayon pools start lazily, at the first parallel kernel), so no
    // other thread can be reading the environment.
    unsafe { std::env::set_var("MATMUL_NUM_THREADS", threads.to_string()) }
}
