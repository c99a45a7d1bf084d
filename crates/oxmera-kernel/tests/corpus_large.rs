//! The corpus's large class: 768³ tiled matmuls (`corpus/large.rs`). A
//! clean one must come out clean from the analysis and simulate its whole
//! grid to the end under the default per-block step budget — about ten
//! billion lane instructions, so those runs are release-only:
//!
//! ```text
//! cargo test --release -p oxmera-kernel --test corpus_large
//! ```
//!
//! (CI runs exactly that.) The buggy twins are caught in the first block
//! and run in every build.

use oxmera_kernel::analysis::{CheckOptions, check};
use oxmera_kernel::corpus::{LargeCase, SIZE, large_cases, simulate_large};
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::sim::{ReportKind, SimError, SimOptions, render_report};

fn case(name: &str) -> LargeCase {
    large_cases()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{name}"))
}

#[test]
fn the_large_class_has_two_clean_kernels_and_their_buggy_twins() {
    let cases = large_cases();
    let clean = cases.iter().filter(|c| c.expect == "clean").count();
    assert!(clean >= 2, "{clean} clean");
    assert!(cases.len() - clean >= 2, "{} buggy", cases.len() - clean);
    for c in &cases {
        assert_eq!(
            c.summary.contains("(clean)"),
            c.expect == "clean",
            "{}",
            c.name
        );
        let threads = c.launch.grid.count() * c.launch.block.count();
        assert!(
            threads >= (SIZE * SIZE) as u64 / 4,
            "{}: the whole output",
            c.name
        );
    }
}

#[test]
fn the_analysis_finds_nothing_in_the_clean_kernels() {
    for c in large_cases().iter().filter(|c| c.expect == "clean") {
        let findings = check((c.kernel)(), &CheckOptions::new(c.launch)).unwrap();
        assert!(findings.is_empty(), "{}: {findings:#?}", c.name);
    }
}

#[test]
fn the_buggy_twins_are_caught_in_the_first_block_with_their_witness() {
    for c in large_cases().iter().filter(|c| c.expect != "clean") {
        let (r, _) = simulate_large(c, 7);
        let Err(SimError::Report(r)) = r else {
            panic!("{}: expected {}, got {r:?}", c.name, c.expect)
        };
        let text = render_report((c.kernel)(), &r);
        assert_eq!(Some(r.kind_name()), c.expect.strip_prefix("sim:"), "{text}");
        assert_eq!(r.block, Dim3::new(0, 0, 0), "{text}");
        match &r.kind {
            // Two threads and the element: the lanes and the address.
            ReportKind::SharedRace {
                first,
                second,
                index,
                ..
            } => {
                assert_ne!(first, second, "{text}");
                assert!(*index < 1024, "{text}");
                assert!(text.contains(&format!("[{index}]")), "{text}");
            }
            ReportKind::OutOfBounds {
                buffer,
                index,
                len,
                write,
                ..
            } => {
                // The 25th tile of 24: row 768 of `b`, its first element
                // one past the end.
                assert_eq!((buffer.as_str(), *write), ("b", false), "{text}");
                assert_eq!(*len, (SIZE * SIZE) as usize, "{text}");
                assert_eq!(*index, (SIZE * SIZE) as i64, "{text}");
            }
            other => panic!("{}: {other:?}", c.name),
        }
    }
}

/// The product at a spread of elements, against f64 on the host: each is a
/// sum of 768 products of values in [-1, 1), so f32's rounding errs by at
/// most 768 · 2⁻²³ · 768 (every partial sum below 768) ≈ 0.07; far looser
/// than what the tiled sums err, far tighter than a wrong element.
fn check_product(args: &[oxmera_kernel::sim::Arg], name: &str) {
    let (a, b, c) = (
        args[0].buffer().unwrap().to_f32(),
        args[1].buffer().unwrap().to_f32(),
        args[2].buffer().unwrap().to_f32(),
    );
    let n = SIZE as usize;
    for e in (0..n * n).step_by(997).chain([n * n - 1]) {
        let (i, j) = (e / n, e % n);
        let want: f64 = (0..n)
            .map(|q| a[i * n + q] as f64 * b[q * n + j] as f64)
            .sum();
        let err = (c[e] as f64 - want).abs();
        assert!(err < 0.07, "{name}: c[{i}][{j}] = {} against {want}", c[e]);
    }
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "ten billion lane instructions: cargo test --release -p oxmera-kernel --test corpus_large"
)]
fn the_clean_kernels_simulate_the_whole_grid_under_the_per_block_budget() {
    for name in ["matmul_tiled", "matmul_tile32_rows4"] {
        let c = case(name);
        let start = std::time::Instant::now();
        let (r, args) = simulate_large(&c, 7);
        let stats = r.unwrap_or_else(|e| panic!("{name}: {e:?}"));
        eprintln!(
            "{name} 768³ at {}: {} lane instructions ({} warp instructions) in {:.1} s",
            c.launch,
            stats.lane_instructions,
            stats.warp_instructions,
            start.elapsed().as_secs_f64()
        );
        check_product(&args, name);
        // The run is longer than one block's budget: a budget for the whole
        // grid, the old bug, would have called it endless.
        if name == "matmul_tiled" {
            assert!(
                stats.warp_instructions > SimOptions::default().max_warp_steps,
                "{name}: {stats:?}"
            );
        }
    }
}
