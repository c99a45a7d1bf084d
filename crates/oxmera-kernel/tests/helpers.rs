//! Helper functions in a `#[kernels]` module: simulated against the host,
//! and a barrier inside a helper called under a divergent branch reported
//! at the call with the barrier's own line beside it.

use oxmera_kernel::analysis::{CheckOptions, Rule, check};
use oxmera_kernel::diag::render;
use oxmera_kernel::ir::Value;
use oxmera_kernel::kernels;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, ReportKind, SimError, SimOptions};

#[kernels]
mod strided {
    /// The storage offset of element `i` of a `rows x cols` view with
    /// strides `(s0, s1)`.
    #[helper]
    fn offset(i: u32, cols: u32, s0: u32, s1: u32) -> u32 {
        let r = i / cols;
        r * s0 + (i % cols) * s1
    }

    /// The sum of `v` over the warp, in every lane.
    #[helper]
    fn warp_sum(v: f32) -> f32 {
        let mut acc = v;
        let mut step = warp_size() / 2;
        while step > 0 {
            acc += shfl_xor_sync(0xffff_ffffu32, acc, step);
            step /= 2;
        }
        acc
    }

    /// Stages `x[i]` into `s` and waits for the block: a barrier inside.
    #[helper]
    fn stage(s: &mut [f32], x: &[f32], t: u32) {
        s[t] = x[t];
        sync_threads();
    }

    /// The smaller and the larger of two values: a tuple.
    #[helper]
    fn min_max(a: f32, b: f32) -> (f32, f32) {
        let lo = if a < b { a } else { b };
        (lo, if a < b { b } else { a })
    }

    /// The spread of each pair `x[2i], x[2i + 1]`.
    #[kernel]
    pub fn pair_spread(x: &[f32], out: &mut [f32], n: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < n {
            let (lo, hi) = min_max(x[2 * i], x[2 * i + 1]);
            out[i] = hi - lo;
        }
    }

    /// Copies a transposed view to dense `out`.
    #[kernel]
    pub fn transpose(x: &[f32], out: &mut [f32], rows: u32, cols: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < rows * cols {
            // out is cols x rows; element (c, r) of it is x's (r, c).
            out[i] = x[offset(i, rows, 1, cols)];
        }
    }

    /// One sum per warp, written by its lane 0.
    #[kernel]
    pub fn warp_sums(x: &[f32], out: &mut [f32]) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        let total = warp_sum(x[i]);
        if lane_id() == 0 {
            out[i / warp_size()] = total;
        }
    }

    /// Stages under a guard that splits the block when it is larger than
    /// one warp: the helper's barrier is then divergent.
    #[kernel]
    pub fn guarded_stage(x: &[f32], out: &mut [f32]) {
        let s = shared::<f32>(64);
        let t = thread_idx_x();
        if t < 32 {
            stage(s, x, t);
        }
        out[t] = s[t];
    }

    /// The same helper called by every thread: clean at any block.
    #[kernel]
    pub fn staged(x: &[f32], out: &mut [f32]) {
        let s = shared::<f32>(64);
        let t = thread_idx_x();
        stage(s, x, t);
        out[t] = s[63 - t];
    }
}

use strided::*;

fn f32s(v: &[f32]) -> Arg {
    Arg::Buffer(Buffer::from_f32(v))
}

#[test]
fn a_strided_helper_transposes_like_the_host() {
    let (rows, cols) = (3u32, 5u32);
    let x: Vec<f32> = (0..rows * cols).map(|v| v as f32).collect();
    let mut args = vec![
        f32s(&x),
        f32s(&vec![0.0; x.len()]),
        Arg::Scalar(Value::U32(rows)),
        Arg::Scalar(Value::U32(cols)),
    ];
    sim::run(
        transpose(),
        LaunchConfig::linear(1, 32),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let mut want = Vec::new();
    for c in 0..cols {
        for r in 0..rows {
            want.push(x[(r * cols + c) as usize]);
        }
    }
    assert_eq!(args[1].buffer().unwrap().to_f32(), want);
}

#[test]
fn a_tuple_helper_runs_like_the_host() {
    let x = [3.0f32, 1.0, -2.0, 5.0, 4.0, 4.0];
    let mut args = vec![f32s(&x), f32s(&[0.0; 3]), Arg::Scalar(Value::U32(3))];
    sim::run(
        pair_spread(),
        LaunchConfig::linear(1, 32),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    assert_eq!(args[1].buffer().unwrap().to_f32(), [2.0, 7.0, 0.0]);
}

#[test]
fn a_shuffle_helper_sums_each_warp() {
    let x: Vec<f32> = (0..64).map(|v| (v % 7) as f32).collect();
    let mut args = vec![f32s(&x), f32s(&[0.0; 2])];
    sim::run(
        warp_sums(),
        LaunchConfig::linear(1, 64),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let want: Vec<f32> = x.chunks(32).map(|c| c.iter().sum()).collect();
    assert_eq!(args[1].buffer().unwrap().to_f32(), want);
}

#[test]
fn a_barrier_inside_a_helper_is_reported_at_the_call_with_both_lines() {
    // One warp: the guard holds for the whole block, so it is clean.
    let one = check(
        guarded_stage(),
        &CheckOptions::new(LaunchConfig::linear(1, 32)),
    )
    .unwrap();
    assert!(one.is_empty(), "{one:?}");
    let k = guarded_stage();
    let found = check(k, &CheckOptions::new(LaunchConfig::linear(1, 64))).unwrap();
    let f = found
        .iter()
        .find(|f| f.rule == Rule::DivergentBarrier)
        .expect("OXK001");
    assert!(f.confirmed);
    // The finding's span is the barrier inside the helper; its call is the
    // kernel's `stage(s, x, t)`.
    let call = k.outermost_call(f.span).expect("inside a helper");
    assert_eq!(call.helper, "stage");
    assert_eq!(k.snippet(call.call), "stage(s, x, t)");
    assert_eq!(k.snippet(f.span), "sync_threads()");
    let shown = render(k, f);
    let call_line = k.span(call.call).line;
    let barrier_line = k.span(f.span).line;
    assert!(call_line > barrier_line, "the helper is above the kernel");
    // Reported at the call first, then at the barrier, each with its line
    // of source (the module's text is the kernels' source).
    let first = shown.find(&format!(":{call_line}:")).expect(&shown);
    let second = shown.find(&format!(":{barrier_line}:")).expect(&shown);
    assert!(first < second, "{shown}");
    assert!(shown.contains("            stage(s, x, t);"), "{shown}");
    assert!(shown.contains("        sync_threads();"), "{shown}");
    assert!(shown.contains("inside helper `stage`"), "{shown}");
    // And the simulator stops on it with a witness.
    let x: Vec<f32> = (0..64).map(|v| v as f32).collect();
    let mut args = vec![f32s(&x), f32s(&[0.0; 64])];
    let e = sim::run(
        k,
        LaunchConfig::linear(1, 64),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap_err();
    let SimError::Report(r) = e else {
        panic!("{e}")
    };
    assert!(
        matches!(r.kind, ReportKind::DivergentBarrier { .. }),
        "{r:?}"
    );
    // The witness names the barrier's line inside the helper, and the call.
    assert_eq!(k.span(r.span).line, barrier_line);
    let shown = sim::render_report(k, &r);
    assert!(shown.contains("        sync_threads();"), "{shown}");
    assert!(
        shown.contains(&format!(
            "inside the helper `stage`, from the call `stage(s, x, t)` at line {call_line}"
        )),
        "{shown}"
    );
}

#[test]
fn the_same_helper_called_by_every_thread_is_clean_and_runs() {
    let k = staged();
    assert!(
        check(k, &CheckOptions::new(LaunchConfig::linear(1, 64)))
            .unwrap()
            .is_empty()
    );
    let x: Vec<f32> = (0..64).map(|v| v as f32).collect();
    let mut args = vec![f32s(&x), f32s(&[0.0; 64])];
    sim::run(
        k,
        LaunchConfig::linear(1, 64),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let want: Vec<f32> = x.iter().rev().copied().collect();
    assert_eq!(args[1].buffer().unwrap().to_f32(), want);
}
