//! The process-wide settings — the instruction set and the thread count —
//! exercised through the tensor API. They are global, so every test here
//! holds one lock while it changes them, and restores them before letting
//! go.

mod common;

use std::sync::Mutex;

use common::*;
use oxmera_core::{DType, Device};
use oxmera_cpu::Isa;
use oxmera_tensor::{Conv2dParams, Tensor};

static SETTINGS: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SETTINGS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every kernel path this processor can run (portable, AVX2+FMA and
/// AVX-512 on a current x86-64), forced one after another, on the odd
/// sizes that exercise every tile edge, and on the vectorized `f32` loops
/// (exp, sum, max, softmax).
#[test]
fn every_instruction_set_matches_the_reference() {
    let _g = lock();
    let best = oxmera_cpu::isa();
    let available = Isa::available();
    assert!(available.contains(&Isa::Portable));
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        assert!(
            available.contains(&Isa::Avx2Fma),
            "AVX2+FMA present but not offered"
        );
    }
    for isa in available {
        isa.select().unwrap();
        assert_eq!(oxmera_cpu::isa(), isa);
        for &m in &[1usize, 7, 17, 65, 129] {
            for &(k, n) in &[(1usize, 17usize), (65, 7), (129, 129), (7, 65)] {
                let a = operand(m as u64, &[m, k], "contiguous", DType::F32).unwrap();
                let b = operand(n as u64 + 1, &[k, n], "permuted", DType::F32).unwrap();
                // The dot-product bound k·u·Σ|a·b| (1% margin), plus the
                // reference's final rounding.
                check_matmul(&format!("{isa} matmul {m}x{k}@{k}x{n}"), &a, &b);
            }
        }
        // A product large enough to be cut into several cache blocks and
        // thread tasks.
        let a = operand(3, &[300, 700], "contiguous", DType::F32).unwrap();
        let b = operand(4, &[700, 1100], "contiguous", DType::F32).unwrap();
        check_matmul(&format!("{isa} blocked matmul"), &a, &b);
        // Lengths around every vector width (4, 8, 16 lanes).
        for len in [1usize, 3, 8, 15, 16, 17, 31, 33, 100, 1025] {
            let x = operand(len as u64, &[3, len], "contiguous", DType::F32)
                .unwrap()
                .mul_scalar(5.0)
                .unwrap();
            let rx = on_reference(&x);
            assert_close(
                &format!("{isa} exp {len}"),
                &x.exp().unwrap(),
                &rx.exp().unwrap(),
                |_, w| 2.0 * ulp(w, DType::F32),
            );
            // As in against_reference's softmax_tolerance: 4 ulps plus the
            // conditioning of exp in its rounded argument, |x_i - max|·u,
            // with |x_i - max| <= |ln w| + ln n.
            assert_close(
                &format!("{isa} softmax {len}"),
                &x.softmax(1).unwrap(),
                &rx.softmax(1).unwrap(),
                |_, w| {
                    let cond = if w > 0.0 {
                        w.ln().abs() + (len as f64).ln()
                    } else {
                        0.0
                    };
                    (4.0 + cond) * ulp(w, DType::F32) + 2.0 * f64::from(f32::from_bits(1))
                },
            );
            let sabs = rx
                .abs()
                .unwrap()
                .sum(&[1], false)
                .unwrap()
                .to_f64_vec()
                .unwrap();
            // The blocked sum's bound (16-term f32 leaves carried in f64:
            // at most 15 f32 roundings per term, `vmath::sum_f32`), the f64
            // sums' n·u64·Σ|x| for either side, and the final rounding.
            assert_close(
                &format!("{isa} sum {len}"),
                &x.sum(&[1], false).unwrap(),
                &rx.sum(&[1], false).unwrap(),
                |i, w| {
                    let f32_leaf = 15.0 * f64::powi(2.0, -24);
                    let f64_sums = 2.0 * len as f64 * f64::powi(2.0, -53);
                    ulp(w, DType::F32) + (f32_leaf + f64_sums) * sabs[i]
                },
            );
            assert_exact(
                &format!("{isa} max {len}"),
                &x.max(&[1], false).unwrap(),
                &rx.max(&[1], false).unwrap(),
            );
        }
        let s = specials(64, DType::F32).unwrap().reshape([4, 16]).unwrap();
        let rs = on_reference(&s);
        assert_exact(
            &format!("{isa} max specials"),
            &s.max(&[1], false).unwrap(),
            &rs.max(&[1], false).unwrap(),
        );
        assert_close(
            &format!("{isa} exp specials"),
            &s.exp().unwrap(),
            &rs.exp().unwrap(),
            |_, w| 2.0 * ulp(w, DType::F32),
        );
    }
    best.select().unwrap();
}

/// The results of one computation under several thread counts.
fn under_threads(counts: &[usize], f: impl Fn() -> Vec<Vec<f64>>) -> Vec<Vec<Vec<f64>>> {
    let out = counts
        .iter()
        .map(|&n| {
            oxmera_cpu::set_num_threads(n).unwrap();
            assert_eq!(oxmera_cpu::num_threads(), n);
            f()
        })
        .collect();
    oxmera_cpu::set_num_threads(0).unwrap();
    out
}

/// Work is split into pieces of fixed size (GEMM panels, reduction chunks,
/// rows), whatever the thread count, and the pieces are combined in a
/// fixed order; so every result is bit-for-bit the same for any number of
/// threads, not merely for a given one.
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let _g = lock();
    let a = operand(1, &[257, 300], "contiguous", DType::F32).unwrap();
    let b = operand(2, &[300, 190], "permuted", DType::F32).unwrap();
    let big = operand(3, &[1 << 21], "contiguous", DType::F32).unwrap();
    let rows = operand(4, &[512, 700], "stepped", DType::F32).unwrap();
    let x = operand(5, &[4, 8, 20, 20], "contiguous", DType::F32).unwrap();
    let w = operand(6, &[16, 8, 3, 3], "contiguous", DType::F32).unwrap();
    let p = Conv2dParams {
        padding: (1, 1),
        ..Conv2dParams::default()
    };
    let run = || {
        let v = |t: Tensor| t.to_f64_vec().unwrap();
        vec![
            v(a.matmul(&b).unwrap()),
            v(big.sum_all().unwrap()),
            v(big
                .reshape([1 << 10, 1 << 11])
                .unwrap()
                .sum(&[0], false)
                .unwrap()),
            v(rows.softmax(1).unwrap()),
            v(rows.log_softmax(0).unwrap()),
            v(rows.var(&[1], 1.0, false).unwrap()),
            v(big.mul(&big).unwrap().add_scalar(1.0).unwrap()),
            v(x.conv2d(&w, None, p).unwrap()),
        ]
    };
    let results = under_threads(&[1, 2, 3, 5], run);
    for (n, r) in results.iter().enumerate().skip(1) {
        for (k, (got, want)) in r.iter().zip(&results[0]).enumerate() {
            let same = got
                .iter()
                .zip(want)
                .all(|(g, w)| g.to_bits() == w.to_bits());
            assert!(same, "computation {k} differs between 1 thread and run {n}");
        }
    }
}

#[test]
fn thread_count_setting() {
    let _g = lock();
    oxmera_cpu::set_num_threads(3).unwrap();
    assert_eq!(oxmera_cpu::num_threads(), 3);
    // Kernels still run, on the chosen pool.
    let t = Tensor::ones([100_000], DType::F32, Device::Cpu).unwrap();
    assert_eq!(t.sum_all().unwrap().item().unwrap(), 100_000.0);
    oxmera_cpu::set_num_threads(0).unwrap();
    assert_eq!(oxmera_cpu::num_threads(), rayon_default());
}

/// What rayon's global pool uses: `RAYON_NUM_THREADS`, or one thread per
/// logical CPU.
fn rayon_default() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `on_pool` keeps the pool's other workers taking work while its closure
/// runs (`threads::keepers`). That must never change a result or hang:
/// several threads call it at once, on pools of 2 to 4 workers (more
/// workers than this machine may have CPUs), each call nesting another
/// and running parallel products, sums and softmaxes whose results must
/// be the single-thread ones to the bit; a panic inside it reaches the
/// caller and leaves the pool usable. A watchdog turns a hang into a
/// failure.
#[test]
fn on_pool_with_concurrent_callers_and_nesting_neither_hangs_nor_changes_bits() {
    let _g = lock();
    let run = || {
        let a = operand(11, &[160, 170], "contiguous", DType::F32).unwrap();
        let b = operand(12, &[170, 150], "contiguous", DType::F32).unwrap();
        let x = operand(13, &[300, 400], "contiguous", DType::F32).unwrap();
        // Bit patterns, so that equality below is to the bit.
        let v = |t: Tensor| -> Vec<u64> {
            t.to_f64_vec()
                .unwrap()
                .iter()
                .map(|x| x.to_bits())
                .collect()
        };
        vec![
            v(a.matmul(&b).unwrap()),
            v(x.sum(&[0], false).unwrap()),
            v(x.softmax(1).unwrap()),
        ]
    };
    oxmera_cpu::set_num_threads(1).unwrap();
    let want = run();
    let (tx, rx) = std::sync::mpsc::channel();
    let want_in = want.clone();
    std::thread::spawn(move || {
        for threads in [2, 3, 4, 0] {
            oxmera_cpu::set_num_threads(threads).unwrap();
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for _ in 0..10 {
                            let (outer, inner) =
                                oxmera_cpu::on_pool(|| (run(), oxmera_cpu::on_pool(run)));
                            assert!(outer == want_in && inner == want_in, "{threads} threads");
                        }
                    });
                }
            });
            let caught = std::panic::catch_unwind(|| oxmera_cpu::on_pool(|| panic!("inside")));
            assert!(caught.is_err());
            assert!(oxmera_cpu::on_pool(run) == want_in);
        }
        tx.send(()).unwrap();
    });
    let finished = rx.recv_timeout(std::time::Duration::from_secs(300));
    oxmera_cpu::set_num_threads(0).unwrap();
    assert!(finished.is_ok(), "on_pool hung (or a check failed)");
}
