//! The GEMM against a plain triple loop in `f64`, for every kernel this
//! processor can run, on odd sizes and strided, transposed operands.

use super::*;

/// A deterministic pseudo-random fill in [-1, 1).
fn fill(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn naive(m: usize, n: usize, k: usize, a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Vec<f64> {
    let at = |x: MatRef<'_, f64>, i: usize, j: usize| {
        x.data[x.offset + i * x.row_stride + j * x.col_stride]
    };
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| at(a, i, p) * at(b, p, j)).sum();
        }
    }
    c
}

fn mk<T>(data: &[T], offset: usize, row_stride: usize, col_stride: usize) -> MatRef<'_, T> {
    MatRef {
        data,
        offset,
        row_stride,
        col_stride,
    }
}

/// The bit patterns of `v`, for comparisons that must be exact.
fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// `kernel` on `C = A·B` gives, on one thread and on several, the bits of
/// the same kernel made to pack every operand (no direct form).
fn in_place_gives_the_packed_bits(
    kernel: &Kernel<f32>,
    (m, n, k): (usize, usize, usize),
    a: MatRef<'_, f32>,
    b: MatRef<'_, f32>,
    what: &str,
) {
    let packed_only = Kernel {
        direct: None,
        ..*kernel
    };
    for parallel in [false, true] {
        let mut want = vec![f32::NAN; m * n];
        blocked(&packed_only, m, n, k, a, b, &mut want, parallel);
        let mut got = vec![f32::NAN; m * n];
        blocked(kernel, m, n, k, a, b, &mut got, parallel);
        assert_eq!(bits(&got), bits(&want), "{what}, parallel {parallel}");
    }
}

/// Runs `C = A·B` in `f32` with `isa` for the given operand layouts and
/// compares with the `f64` loop, within the forward error bound of an
/// `f32` dot product of length `k` (operands in [-1, 1]).
fn check_f32(isa: Isa, m: usize, n: usize, k: usize, a_t: bool, b_t: bool, pad: usize) {
    // Row-major with `pad` extra columns (a strided view), or transposed.
    let layout = |rows: usize, cols: usize, transposed: bool| {
        if transposed {
            (rows + pad, 1usize, cols * (rows + pad) + 3)
        } else {
            (cols + pad, 1usize, rows * (cols + pad) + 3)
        }
    };
    let view = |data: &[f64], rows: usize, cols: usize, t: bool| {
        let (ld, _, _) = layout(rows, cols, t);
        let _ = data;
        if t {
            (3usize, 1usize, ld)
        } else {
            (3usize, ld, 1usize)
        }
    };
    let (_, _, a_len) = layout(m, k, a_t);
    let (_, _, b_len) = layout(k, n, b_t);
    let a64 = fill(a_len, (m * 31 + k) as u64);
    let b64 = fill(b_len, (k * 17 + n) as u64);
    let (ao, ars, acs) = view(&a64, m, k, a_t);
    let (bo, brs, bcs) = view(&b64, k, n, b_t);
    let a32: Vec<f32> = a64.iter().map(|&v| v as f32).collect();
    let b32: Vec<f32> = b64.iter().map(|&v| v as f32).collect();
    let a64: Vec<f64> = a32.iter().map(|&v| v as f64).collect();
    let b64: Vec<f64> = b32.iter().map(|&v| v as f64).collect();
    let want = naive(
        m,
        n,
        k,
        mk(&a64[..], ao, ars, acs),
        mk(&b64[..], bo, brs, bcs),
    );
    // C's previous contents must be ignored: NaN would survive any read.
    let mut got = vec![f32::NAN; m * n];
    gemm(
        isa,
        m,
        n,
        k,
        mk(&a32[..], ao, ars, acs),
        mk(&b32[..], bo, brs, bcs),
        &mut got,
        true,
    );
    let bound = (k as f64 + 2.0) * f32::EPSILON as f64 * k as f64;
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g as f64 - w).abs() <= bound,
            "{isa}: {m}x{k}@{k}x{n} (a_t {a_t}, b_t {b_t}) at {i}: {g} vs {w}"
        );
    }
}

const SIZES: [usize; 8] = [1, 2, 7, 13, 17, 33, 65, 130];

#[test]
fn every_kernel_on_odd_sizes() {
    for isa in Isa::available() {
        for &m in &SIZES {
            for &n in &[1, 7, 16, 33, 65] {
                for &k in &[1, 5, 17, 130] {
                    check_f32(isa, m, n, k, false, false, 0);
                }
            }
        }
    }
}

#[test]
fn every_kernel_on_transposed_and_strided_operands() {
    for isa in Isa::available() {
        for (a_t, b_t, pad) in [
            (true, false, 0),
            (false, true, 0),
            (true, true, 2),
            (false, false, 5),
        ] {
            for &(m, n, k) in &[(13, 33, 17), (65, 7, 130), (1, 65, 33), (30, 40, 300)] {
                check_f32(isa, m, n, k, a_t, b_t, pad);
            }
        }
    }
}

#[test]
fn blocks_deeper_and_wider_than_one_cache_block() {
    // k > KC and n > the B block width: several (jc, pc) blocks. The
    // depth follows KC (600 at KC = 512: two blocks of 300), so the test
    // keeps covering several depth blocks if KC changes.
    let k = depth_block::<f32>() + 88;
    for isa in Isa::available() {
        check_f32(isa, 37, 1100, k, false, false, 0);
    }
}

#[test]
fn f64_kernels_match_the_loop_closely() {
    for isa in Isa::available() {
        let (m, n, k) = (33, 29, 300);
        let a = fill(m * k, 1);
        let b = fill(k * n, 2);
        let (ra, rb) = (MatRef::row_major(&a[..], k), MatRef::row_major(&b[..], n));
        let want = naive(m, n, k, ra, rb.t().t());
        let mut got = vec![f64::NAN; m * n];
        gemm(isa, m, n, k, ra, rb, &mut got, false);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-12, "{isa}: {g} vs {w}");
        }
    }
}

#[test]
fn hand_checked_product_and_empty_dims() {
    // [[1, 2, 3], [4, 5, 6]] @ [[7, 8], [9, 10], [11, 12]] = [[58, 64], [139, 154]]
    let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let b = [7.0f32, 8.0, 9.0, 10.0, 11.0, 12.0];
    for isa in Isa::available() {
        let mut c = [0.0f32; 4];
        gemm(
            isa,
            2,
            2,
            3,
            MatRef::row_major(&a, 3),
            MatRef::row_major(&b, 2),
            &mut c,
            true,
        );
        assert_eq!(c, [58.0, 64.0, 139.0, 154.0], "{isa}");
        // k = 0: an empty sum, so C is zero whatever it held.
        let mut c = [1.0f32; 4];
        gemm(
            isa,
            2,
            2,
            0,
            MatRef::row_major(&a, 0),
            MatRef::row_major(&b, 2),
            &mut c,
            true,
        );
        assert_eq!(c, [0.0; 4]);
    }
}

/// The row blocks tile C exactly, start on panel boundaries, and differ
/// in size by at most one panel.
#[test]
fn row_blocks_are_even_and_cover_c() {
    for (m, n, mr, tasks) in [
        (2048, 3, 12, 12),
        (1024, 2, 12, 8),
        (13, 5, 12, 2),
        (65, 1, 6, 6),
    ] {
        let mut c = vec![0u8; m * n];
        let blocks = row_blocks(&mut c, m, n, mr, tasks);
        assert_eq!(blocks.len(), tasks);
        let mut next = 0;
        let mut sizes = Vec::new();
        for (row0, block) in &blocks {
            assert_eq!(*row0, next);
            assert_eq!(row0 % mr, 0);
            next += block.len() / n;
            sizes.push((block.len() / n).div_ceil(mr));
        }
        assert_eq!(next, m);
        let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(hi - lo <= 1, "{sizes:?}");
    }
}

/// A narrow `C` is computed transposed (`Cᵀ = Bᵀ·Aᵀ`), split by its rows
/// between threads when large: the same sums in the same order, so the
/// same bits as the direct product on one thread — both A layouts, blocks
/// of unequal size (300 rows: 160 + 140), one row block (61 rows).
#[test]
fn narrow_products_run_transposed_with_the_direct_bits() {
    for isa in Isa::available() {
        let kernel = f32::kernel(isa);
        for (m, n, k) in [
            (256, 10, 512),
            (300, 10, 512),
            (1000, 3, 400),
            (100, 3, 7),
            (61, 1, 300),
            (40, 17, 9),
        ] {
            let a: Vec<f32> = fill(m * k, 1).iter().map(|&v| v as f32).collect();
            let b: Vec<f32> = fill(k * n, 2).iter().map(|&v| v as f32).collect();
            let bv = MatRef::row_major(&b, n);
            for av in [MatRef::row_major(&a, k), MatRef::row_major(&a, m).t()] {
                let mut got = vec![f32::NAN; m * n];
                gemm(isa, m, n, k, av, bv, &mut got, true);
                let mut direct = vec![f32::NAN; m * n];
                blocked(&kernel, m, n, k, av, bv, &mut direct, false);
                assert_eq!(bits(&got), bits(&direct), "{isa} {m}x{k}@{k}x{n} {av:?}");
            }
        }
        // The large ones are split where there are threads to split them.
        if crate::threads::num_threads() >= 2 && transposed_pads_less(&kernel, 300, 10) {
            let rows = narrow_block_rows(&kernel, 300, 300 * 10 * 512, true);
            assert!(rows < 300 && rows % kernel.nr == 0, "{isa}: {rows}");
            assert_eq!(narrow_block_rows(&kernel, 300, 300 * 10 * 512, false), 320);
        }
        // The motivating shape (a batch of 256 through a 10-way layer) does
        // take the transposed path wherever a tile is wider than 10.
        assert_eq!(
            transposed_pads_less(&kernel, 256, 10),
            kernel.nr > 10,
            "{isa}"
        );
    }
}

/// One thread packs each B block just before use; threads share B packed
/// in advance. Both run the same kernel calls on the same depth blocks, so
/// a product several blocks deep and wide gives the same bits either way.
#[test]
fn serial_and_threaded_blocking_agree_bit_for_bit() {
    for isa in Isa::available() {
        let kernel = f32::kernel(isa);
        for (m, n, k) in [(37, 1100, 600), (130, 2100, 70), (25, 33, 513)] {
            let a: Vec<f32> = fill(m * k, 3).iter().map(|&v| v as f32).collect();
            let b: Vec<f32> = fill(k * n, 4).iter().map(|&v| v as f32).collect();
            let (av, bv) = (MatRef::row_major(&a, k), MatRef::row_major(&b, n));
            let mut serial = vec![f32::NAN; m * n];
            blocked(&kernel, m, n, k, av, bv, &mut serial, false);
            let mut threaded = vec![f32::NAN; m * n];
            blocked(&kernel, m, n, k, av, bv, &mut threaded, true);
            assert_eq!(bits(&serial), bits(&threaded), "{isa} {m}x{k}@{k}x{n}");
        }
    }
}

/// Operands read in place and operands packed are the same kernel calls
/// on the same values, so they give the same bits: row-major A (the
/// kernel walks its rows) and column-major A (its steps), row-major B,
/// edge rows and edge columns included, on one thread and on several,
/// across depth blocks.
#[test]
fn operands_read_in_place_give_the_packed_bits() {
    for isa in Isa::available() {
        let kernel = f32::kernel(isa);
        for (m, n, k) in [
            (2044, 128, 128),
            (37, 100, 600),
            (13, 33, 7),
            (300, 200, 257),
        ] {
            let a: Vec<f32> = fill(m * k, 5).iter().map(|&v| v as f32).collect();
            let b: Vec<f32> = fill(k * n, 6).iter().map(|&v| v as f32).collect();
            let bv = MatRef::row_major(&b, n);
            for av in [MatRef::row_major(&a, k), MatRef::row_major(&a, m).t()] {
                assert_eq!(
                    reads_a_in_place(&kernel, av, n),
                    kernel.direct.is_some(),
                    "{isa}: this A is read in place"
                );
                assert_eq!(
                    reads_b_in_place(&kernel, bv, m),
                    kernel.direct.is_some() && m <= IN_PLACE_B_MAX_M,
                    "{isa}: B is read in place where C is short"
                );
                let what = format!("{isa} {m}x{k}@{k}x{n} {av:?}");
                in_place_gives_the_packed_bits(&kernel, (m, n, k), av, bv, &what);
            }
        }
    }
}

/// With one or two A panels B is read in place even along rows 4 KiB
/// apart (`FEW_PANELS`), and gives the packed bits: a narrow `C`'s
/// transpose (10 and 16 rows against a `[300, 1024]` B), one thread and
/// several.
#[test]
fn b_is_read_in_place_against_few_panels_with_the_packed_bits() {
    for isa in Isa::available() {
        let kernel = f32::kernel(isa);
        let (n, k) = (1024, 300);
        let b: Vec<f32> = fill(k * n, 8).iter().map(|&v| v as f32).collect();
        let bv = MatRef::row_major(&b, n);
        for m in [10, 2 * kernel.mr] {
            assert_eq!(reads_b_in_place(&kernel, bv, m), kernel.direct.is_some());
            let a: Vec<f32> = fill(m * k, 9).iter().map(|&v| v as f32).collect();
            let av = MatRef::row_major(&a, k);
            in_place_gives_the_packed_bits(&kernel, (m, n, k), av, bv, &format!("{isa} m = {m}"));
        }
        // Beyond them the 4 KiB rows are packed.
        assert!(!reads_b_in_place(&kernel, bv, 2 * kernel.mr + 1));
    }
}

/// Lines a multiple of 4 KiB apart, a wide `C` (for A) or a tall one (for
/// B), or an operand without the unit stride the kernel needs are packed.
#[test]
fn operands_are_packed_where_reading_in_place_would_not_pay() {
    let a = vec![0.0f32; 2048 * 1030];
    let kernel = f32::kernel(crate::isa());
    if kernel.direct.is_none() {
        return;
    }
    assert!(!reads_a_in_place(&kernel, MatRef::row_major(&a, 1024), 128));
    assert!(!reads_a_in_place(
        &kernel,
        MatRef::row_major(&a, 1030),
        IN_PLACE_A_MAX_N + 1
    ));
    let strided = MatRef {
        data: &a[..],
        offset: 0,
        row_stride: 2060,
        col_stride: 2,
    };
    assert!(!reads_a_in_place(&kernel, strided, 128));
    assert!(reads_a_in_place(
        &kernel,
        MatRef::row_major(&a, 1030),
        IN_PLACE_A_MAX_N
    ));
    assert!(!reads_b_in_place(&kernel, strided, 128));
    assert!(!reads_b_in_place(&kernel, MatRef::row_major(&a, 1024), 128));
    assert!(!reads_b_in_place(
        &kernel,
        MatRef::row_major(&a, 1030),
        IN_PLACE_B_MAX_M + 1
    ));
    assert!(!reads_b_in_place(
        &kernel,
        MatRef::row_major(&a, 1030).t(),
        128
    ));
    assert!(reads_b_in_place(
        &kernel,
        MatRef::row_major(&a, 1030),
        IN_PLACE_B_MAX_M
    ));
}

/// The two AVX-512 tiles (`tile`) compute each element as the same sums
/// in the same order, so they give the same bits — which is what lets the
/// tile follow the processor without changing any result: odd sizes,
/// transposed and strided operands, operands read in place, several depth
/// blocks, one thread and several. (Each tile is also checked against the
/// loop above wherever it is this processor's choice.)
#[cfg(all(target_arch = "x86_64", oxmera_avx512))]
#[test]
fn both_avx512_tiles_give_the_same_bits() {
    if !Isa::Avx512.is_available() {
        return;
    }
    let shapes = [
        (1, 1, 1),
        (7, 33, 5),
        (13, 65, 130),
        (128, 128, 128),
        (256, 10, 512),
        (257, 96, 300),
        (40, 1100, 600),
    ];
    for (m, n, k) in shapes {
        for (a_t, b_t) in [(false, false), (true, false), (false, true)] {
            let a: Vec<f32> = fill(m * k, 5).iter().map(|&v| v as f32).collect();
            let b: Vec<f32> = fill(k * n, 6).iter().map(|&v| v as f32).collect();
            let av = if a_t {
                mk(&a, 0, 1, m)
            } else {
                mk(&a, 0, k, 1)
            };
            let bv = if b_t {
                mk(&b, 0, 1, k)
            } else {
                mk(&b, 0, n, 1)
            };
            for parallel in [false, true] {
                let run = |kernel: &Kernel<f32>| {
                    let mut c = vec![f32::NAN; m * n];
                    blocked(kernel, m, n, k, av, bv, &mut c, parallel);
                    bits(&c)
                };
                assert_eq!(
                    run(&x86::AVX512_F32),
                    run(&x86::AVX512_F32_8X32),
                    "{m}x{k}@{k}x{n} a_t {a_t} b_t {b_t} parallel {parallel}"
                );
            }
        }
    }
}

/// The vector transpose that packs `f32` lines contiguous along the
/// steps moves every value where the definition puts it, for panel
/// widths of one to four 8-line blocks, with and without a last block of
/// four lines (the 12-row panels of the wide tile), depths with and
/// without a ragged last strip, and lines further apart than they are
/// long; it declines (and writes nothing) for a width that is not a
/// multiple of 4.
#[test]
fn f32_transpose_panel_puts_every_value_where_the_definition_does() {
    for w in [4, 8, 12, 16, 20, 24, 32] {
        for kc in [1, 7, 8, 9, 63, 256, 261] {
            let (first, across) = (3, kc + 5);
            let data: Vec<f32> = (0..first + w * across).map(|v| v as f32).collect();
            let mut out = vec![f32::NAN; kc * w];
            if !<f32 as Scalar>::transpose_panel(&data, first, across, kc, w, &mut out) {
                // No AVX on this processor: nothing to check.
                assert!(out.iter().all(|v| v.is_nan()));
                return;
            }
            for p in 0..kc {
                for i in 0..w {
                    assert_eq!(
                        out[p * w + i],
                        data[first + i * across + p],
                        "w {w} kc {kc} step {p} line {i}"
                    );
                }
            }
        }
    }
    let mut out = vec![f32::NAN; 6 * 4];
    assert!(!<f32 as Scalar>::transpose_panel(
        &[0.0; 100],
        0,
        8,
        4,
        6,
        &mut out
    ));
    assert!(out.iter().all(|v| v.is_nan()));
}
