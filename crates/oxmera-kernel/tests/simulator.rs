//! Simulator semantics: masks reconverge where the source's blocks end,
//! loops with break/continue/return compute what the host computes, atomics
//! and collectives behave, and a run always terminates.

use oxmera_kernel::ir::Value;
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{self, Arg, Buffer, SimError, SimOptions};

#[kernel]
fn control(out: &mut [i32]) {
    let t = thread_idx_x() as i32;
    let mut acc = 0;
    for k in 0..10i32 {
        if k % 3 == t % 3 {
            continue;
        }
        if k > t {
            break;
        }
        acc += k;
    }
    let mut w = t;
    while w > 0 {
        w -= 7;
        acc += 1;
    }
    if t == 5 {
        out[t] = -1;
        return;
    }
    if t > 40 && out[t - 41] >= 0 {
        acc += 1000;
    }
    out[t] = acc;
}

fn control_host(t: i32) -> i32 {
    let mut acc = 0;
    for k in 0..10 {
        if k % 3 == t % 3 {
            continue;
        }
        if k > t {
            break;
        }
        acc += k;
    }
    let mut w = t;
    while w > 0 {
        w -= 7;
        acc += 1;
    }
    if t == 5 {
        return -1;
    }
    acc
}

#[test]
fn divergent_control_flow_matches_the_host() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::I32,
        64,
    ))];
    // One warp at a time sees the previous warp's results: warp 1 reads warp 0's.
    sim::run(
        control(),
        LaunchConfig::linear(1, 64),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let got = args[0].buffer().unwrap().to_i32();
    for t in 0..64 {
        let mut want = control_host(t);
        if t > 40 && control_host(t - 41) >= 0 {
            want += 1000;
        }
        assert_eq!(got[t as usize], want, "thread {t}");
    }
}

#[kernel]
fn histogram(x: &[u32], bins: &mut [u32], n: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    if i < n {
        atomic_add(bins, x[i] % 4, 1u32);
    }
}

#[test]
fn atomics_count_every_update() {
    let x: Vec<u32> = (0..1000).collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_u32(&x)),
        Arg::Buffer(Buffer::from_u32(&[0; 4])),
        Arg::Scalar(Value::U32(1000)),
    ];
    sim::run(
        histogram(),
        LaunchConfig::linear(8, 128),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    assert_eq!(args[1].buffer().unwrap().to_u32(), vec![250, 250, 250, 250]);
}

#[kernel]
fn votes(out: &mut [u32]) {
    let l = lane_id();
    let b = ballot_sync(0xffff_ffffu32, l % 4 == 0);
    let a = any_sync(0xffff_ffffu32, l == 31);
    let e = all_sync(0xffff_ffffu32, l < 31);
    let up = shfl_up_sync(0xffff_ffffu32, l, 1u32);
    let idx = shfl_sync(0xffff_ffffu32, l * 2, 3u32);
    out[l] = b;
    out[32 + l] = a as u32 + 2 * (e as u32);
    out[64 + l] = up;
    out[96 + l] = idx;
}

#[test]
fn votes_and_shuffles_follow_cuda_semantics() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::U32,
        128,
    ))];
    sim::run(
        votes(),
        LaunchConfig::linear(1, 32),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let o = args[0].buffer().unwrap().to_u32();
    assert!(o[..32].iter().all(|b| *b == 0x1111_1111));
    assert!(o[32..64].iter().all(|v| *v == 1));
    assert_eq!(&o[64..68], &[0, 0, 1, 2]);
    assert!(o[96..].iter().all(|v| *v == 6));
}

#[kernel]
fn spin(out: &mut [f32]) {
    let mut v = 0.0;
    loop {
        v += 1.0;
    }
}

#[test]
fn an_endless_kernel_stops_at_the_step_budget() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::F32,
        1,
    ))];
    let opts = SimOptions {
        max_warp_steps: 10_000,
        ..SimOptions::default()
    };
    match sim::run(spin(), LaunchConfig::linear(1, 32), &mut args, &opts) {
        Err(SimError::Report(r)) => assert_eq!(r.kind_name(), "step-limit"),
        other => panic!("{other:?}"),
    }
}

/// Ends in every block but the last, whose threads count up from 0 to a
/// bound they passed long ago: the inner loop never ends.
#[kernel]
fn endless_in_last_block(out: &mut [u32]) {
    let t = thread_idx_x();
    let mut total = 0u32;
    for round in 0..2u32 {
        let mut k = 0u32;
        while k != 5 {
            k += 1;
            if block_idx_x() == 2 && round == 1 && k == 5 {
                k = 6;
            }
        }
        total += k;
    }
    out[block_idx_x() * 32 + t] = total;
}

#[test]
fn the_step_limit_names_the_block_and_the_loops_it_was_in() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::U32,
        96,
    ))];
    let opts = SimOptions {
        max_warp_steps: 100_000,
        ..SimOptions::default()
    };
    let k = endless_in_last_block();
    let Err(SimError::Report(r)) = sim::run(k, LaunchConfig::linear(3, 32), &mut args, &opts)
    else {
        panic!("the last block never ends");
    };
    assert_eq!(r.kind_name(), "step-limit");
    assert_eq!(r.block.x, 2);
    let text = sim::render_report(k, &r);
    assert!(
        text.contains("block (2, 0, 0) ran 100000 warp instructions"),
        "{text}"
    );
    let inner = text.find("= note: in the loop at line ").expect(&text);
    let outer = text.find("= note: inside the loop at line ").expect(&text);
    assert!(inner < outer, "{text}");
    assert!(text.contains("`while k != 5 {`"), "{text}");
    assert!(text.contains("`for round in 0..2u32 {`"), "{text}");
}

#[test]
fn wrong_arguments_are_typed_errors() {
    let mut args = vec![Arg::Scalar(Value::U32(1))];
    assert!(matches!(
        sim::run(
            spin(),
            LaunchConfig::linear(1, 32),
            &mut args,
            &SimOptions::default()
        ),
        Err(SimError::Args(_))
    ));
}

#[kernel]
fn shared_atomics(out: &mut [i32]) {
    let s = shared::<i32>(4);
    let t = thread_idx_x() as i32;
    if t == 0 {
        s[0] = 0;
        s[1] = 1000;
        s[2] = -1000;
        s[3] = 7;
    }
    sync_threads();
    atomic_add(s, 0u32, t);
    atomic_min(s, 1u32, t - 5);
    atomic_max(s, 2u32, t * 2);
    let old = atomic_cas(s, 3u32, 7, t + 100);
    sync_threads();
    if t == 0 {
        out[0] = s[0];
        out[1] = s[1];
        out[2] = s[2];
        out[3] = s[3];
    }
    if old == 7 {
        out[4] = t;
    }
    let prev = atomic_exch(out, 5u32, t);
    out[6 + t] = prev;
}

#[test]
fn shared_and_global_atomics_apply_in_lane_order() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::I32,
        6 + 64,
    ))];
    sim::run(
        shared_atomics(),
        LaunchConfig::linear(1, 64),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let o = args[0].buffer().unwrap().to_i32();
    assert_eq!(&o[..5], &[(0..64).sum::<i32>(), -5, 126, 100, 0]);
    // Exchanges run warp by warp, lane by lane: each thread sees its predecessor.
    assert_eq!(o[5], 63);
    assert_eq!(o[6], 0);
    assert!((1..64).all(|t| o[6 + t] == t as i32 - 1));
}

/// A kernel with both sides of a branch and a loop, for the lane trace.
#[oxmera_kernel::kernel]
fn branchy(x: &[f32], out: &mut [f32], n: u32) {
    let i = thread_idx_x();
    if i < n {
        let mut acc = 0.0;
        for k in 0..i {
            acc += x[k];
        }
        out[i] = acc;
    } else {
        out[i] = -1.0;
    }
}

#[test]
fn a_trace_is_the_path_of_one_thread_with_what_it_wrote() {
    use oxmera_kernel::sim::{Arg, Buffer, SimOptions, render_trace, trace};
    let k = branchy();
    let launch = oxmera_kernel::launch::LaunchConfig {
        grid: oxmera_kernel::ir::Dim3::x(1),
        block: oxmera_kernel::ir::Dim3::x(8),
    };
    let args = || {
        vec![
            Arg::Buffer(Buffer::from_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])),
            Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F32, 8)),
            Arg::Scalar(oxmera_kernel::ir::Value::U32(4)),
        ]
    };
    // Thread 2 takes the `then` side and runs the loop twice.
    let mut a = args();
    let run = trace(k, launch, &mut a, &SimOptions::default(), 2).unwrap();
    assert!(run.result.is_ok());
    let writes: Vec<String> = run
        .trace
        .steps
        .iter()
        .flat_map(|s| s.writes.clone())
        .collect();
    assert_eq!(
        writes,
        [
            "i = 2",
            "acc = 0.0",
            "k = 0",
            "acc = 1.0",
            "k = 1",
            "acc = 3.0",
            "k = 2",
            "out[2] = 3.0"
        ]
    );
    let shown = render_trace(k, &run.trace, &run.result);
    assert!(!shown.contains("out[i] = -1.0"), "{shown}");
    assert!(
        shown.contains("(block (0, 0, 0), thread 2 of the block: warp 0, lane 2)"),
        "{shown}"
    );
    // Thread 6 takes the `else` side only; the run itself is unchanged.
    let mut b = args();
    let run = trace(k, launch, &mut b, &SimOptions::default(), 6).unwrap();
    let shown = render_trace(k, &run.trace, &run.result);
    assert!(
        shown.contains("out[6] = -1.0") && !shown.contains("acc"),
        "{shown}"
    );
    let mut c = args();
    oxmera_kernel::sim::run(k, launch, &mut c, &SimOptions::default()).unwrap();
    assert_eq!(b, c);
    // A thread outside the launch is refused before anything runs.
    let e = trace(k, launch, &mut args(), &SimOptions::default(), 8)
        .err()
        .unwrap();
    assert!(e.contains("outside the launch (8 threads"), "{e}");
}

/// `if` as a value and `const` items, as CUDA code uses `c ? a : b` and
/// `constexpr`.
#[oxmera_kernel::kernel(block = [8])]
fn values_and_consts(x: &[f32], out: &mut [f32], flags: &mut [u32], n: u32) {
    const SCALE: f32 = 2.0;
    const PAIRS: u32 = 4;
    let s = shared::<f32>(PAIRS * 2);
    let i = thread_idx_x();
    // A guarded load: `x[i]` is read only where `i < n`.
    let v = if i < n { x[i] } else { 0.0 };
    s[i] = v;
    sync_threads();
    out[i] = if v > 1.0 {
        let doubled = v * SCALE;
        doubled
    } else if v < -1.0 {
        -SCALE
    } else {
        s[(i + 1) % (PAIRS * 2)]
    };
    let mut count = 0u32;
    count += if v > 0.0 { 1 } else { 0 };
    flags[i] = count;
}

#[test]
fn if_values_and_consts_compute_what_rust_computes() {
    let k = values_and_consts();
    let launch = LaunchConfig {
        grid: oxmera_kernel::ir::Dim3::x(1),
        block: oxmera_kernel::ir::Dim3::x(8),
    };
    let x = [3.0f32, -5.0, 0.5, -0.25, 2.0, 7.0];
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_f32(&[0.0; 8])),
        Arg::Buffer(Buffer::from_u32(&[9; 8])),
        Arg::Scalar(Value::U32(6)),
    ];
    // Threads 6 and 7 would read past `x` if the guard were lifted.
    sim::run(k, launch, &mut args, &SimOptions::default()).unwrap();
    let v: Vec<f32> = (0..8).map(|i| if i < 6 { x[i] } else { 0.0 }).collect();
    let want: Vec<f32> = (0..8)
        .map(|i| {
            if v[i] > 1.0 {
                v[i] * 2.0
            } else if v[i] < -1.0 {
                -2.0
            } else {
                v[(i + 1) % 8]
            }
        })
        .collect();
    assert_eq!(args[1].buffer().unwrap().to_f32(), want);
    let flags: Vec<u32> = v.iter().map(|&x| u32::from(x > 0.0)).collect();
    assert_eq!(args[2].buffer().unwrap().to_u32(), flags);
    // The IR holds only what it held before: statements and literals.
    let printed = oxmera_kernel::pretty::print(k);
    assert!(printed.contains("if_value"), "{printed}");
    assert_eq!(k.shared_bytes(&[]), Some(8 * 4));
    let wgsl = oxmera_kernel::emit::wgsl::wgsl(
        k,
        &oxmera_kernel::emit::wgsl::WgslOptions::new(launch.block),
    );
    assert!(wgsl.is_ok(), "{wgsl:?}");
}

/// `match` on an op code, as a statement and as a value.
#[oxmera_kernel::kernel(block = [16])]
fn dispatch(x: &[f32], out: &mut [f32], codes: &mut [u32]) {
    let i = thread_idx_x();
    let v = x[i];
    let code = match i {
        0 => 100u32,
        1 | 2 => 200,
        3..=5 if v > 0.0 => 300,
        3..=5 => 350,
        n if n % 2 == 0 => 400 + n,
        _ => 500,
    };
    codes[i] = code;
    match code / 100 {
        1 => out[i] = v,
        2 | 3 => {
            out[i] = v * 2.0;
        }
        4 => out[i] = -v,
        _ => {}
    }
}

#[test]
fn match_runs_its_first_matching_arm_as_rust_does() {
    let k = dispatch();
    let launch = LaunchConfig {
        grid: oxmera_kernel::ir::Dim3::x(1),
        block: oxmera_kernel::ir::Dim3::x(16),
    };
    let x: Vec<f32> = (0..16)
        .map(|i| if i % 3 == 0 { -(i as f32) } else { i as f32 })
        .collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_f32(&[7.0; 16])),
        Arg::Buffer(Buffer::from_u32(&[0; 16])),
    ];
    sim::run(k, launch, &mut args, &SimOptions::default()).unwrap();
    let (mut codes, mut out) = (Vec::new(), Vec::new());
    for (i, &v) in x.iter().enumerate() {
        let i = i as u32;
        let code = match i {
            0 => 100u32,
            1 | 2 => 200,
            3..=5 if v > 0.0 => 300,
            3..=5 => 350,
            n if n % 2 == 0 => 400 + n,
            _ => 500,
        };
        codes.push(code);
        out.push(match code / 100 {
            1 => v,
            2 | 3 => v * 2.0,
            4 => -v,
            _ => 7.0,
        });
    }
    assert_eq!(args[2].buffer().unwrap().to_u32(), codes);
    assert_eq!(args[1].buffer().unwrap().to_f32(), out);
    let wgsl = oxmera_kernel::emit::wgsl::wgsl(
        k,
        &oxmera_kernel::emit::wgsl::WgslOptions::new(launch.block),
    );
    assert!(wgsl.is_ok(), "{wgsl:?}");
}

/// Each block runs a bounded loop; many blocks together pass the budget.
#[oxmera_kernel::kernel]
fn busy(out: &mut [f32]) {
    let mut acc = 0.0;
    for k in 0..200u32 {
        acc += k as f32;
    }
    out[block_idx_x() * block_dim_x() + thread_idx_x()] = acc;
}

#[test]
fn the_step_budget_is_per_block() {
    // 64 blocks of one warp, each about 1,000 warp instructions: 64,000 in
    // all, over a budget of 10,000 that each block stays well inside.
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::F32,
        64 * 32,
    ))];
    let opts = SimOptions {
        max_warp_steps: 10_000,
        ..SimOptions::default()
    };
    let stats = sim::run(busy(), LaunchConfig::linear(64, 32), &mut args, &opts).unwrap();
    assert!(stats.warp_instructions > 10_000, "{stats:?}");
    assert!(
        args[0]
            .buffer()
            .unwrap()
            .to_f32()
            .iter()
            .all(|&v| v == 19900.0)
    );
    // The endless one still stops, in its first block, and says which.
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::F32,
        1,
    ))];
    match sim::run(spin(), LaunchConfig::linear(4, 32), &mut args, &opts) {
        Err(SimError::Report(r)) => {
            let shown = sim::render_report(spin(), &r);
            assert!(
                shown.contains("block (0, 0, 0) ran 10000 warp instructions"),
                "{shown}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Trigonometry, base-2 exponentials and bit counts, as Rust's own methods
/// spell them.
#[oxmera_kernel::kernel(block = [8])]
fn trig_and_bits(x: &[f32], words: &[i32], out: &mut [f32], counts: &mut [u32]) {
    let i = thread_idx_x();
    let v = x[i];
    out[i] = v.sin() * 1000.0 + v.cos() * 100.0 + v.exp2() * 10.0 + v.abs().log2();
    let w = words[i];
    counts[i] = w.count_ones() * 10000 + w.leading_zeros() * 100 + (w as u32).trailing_zeros();
}

#[test]
fn trig_exp2_log2_and_bit_counts_compute_what_rust_computes() {
    let k = trig_and_bits();
    let launch = LaunchConfig::linear(1, 8);
    let x = [0.5f32, -1.25, 3.0, 100.0, -0.001, 7.5, 2.0e-3, -20.0];
    let words = [0i32, 1, -1, i32::MIN, 0x0f0, 12345678, -256, 1 << 30];
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_i32(&words)),
        Arg::Buffer(Buffer::from_f32(&[0.0; 8])),
        Arg::Buffer(Buffer::from_u32(&[0; 8])),
    ];
    sim::run(k, launch, &mut args, &SimOptions::default()).unwrap();
    let want: Vec<f32> = x
        .iter()
        .map(|v| v.sin() * 1000.0 + v.cos() * 100.0 + v.exp2() * 10.0 + v.abs().log2())
        .collect();
    assert_eq!(args[2].buffer().unwrap().to_f32(), want);
    let counts: Vec<u32> = words
        .iter()
        .map(|w| w.count_ones() * 10000 + w.leading_zeros() * 100 + (*w as u32).trailing_zeros())
        .collect();
    // 0 has 32 leading and 32 trailing zeros, as in Rust.
    assert_eq!(counts[0], 3232);
    assert_eq!(args[3].buffer().unwrap().to_u32(), counts);
    let printed = oxmera_kernel::pretty::print(k);
    assert!(
        printed.contains("count_ones") && printed.contains("sin"),
        "{printed}"
    );
}

/// Steps that would carry the loop variable past the end of its type.
#[oxmera_kernel::kernel(block = [1])]
fn wide_steps(out: &mut [u32], signed: &mut [i32]) {
    let mut n = 0u32;
    for i in (0u32..u32::MAX).step_by(0x8000_0000) {
        n += 1;
        out[n] = i;
    }
    out[0] = n;
    let mut m = 0u32;
    for j in (-5i32..i32::MAX).step_by(0x4000_0000) {
        m += 1;
        signed[m] = j;
    }
    signed[0] = m as i32;
}

#[test]
fn a_step_past_the_end_of_the_type_stops_the_loop_as_in_rust() {
    // Rust's `step_by` stops where the next value would pass the bound; a
    // wrapping add would bring the variable back below it and loop on.
    let mut args = vec![
        Arg::Buffer(Buffer::from_u32(&[0; 4])),
        Arg::Buffer(Buffer::from_i32(&[0; 5])),
    ];
    sim::run(
        wide_steps(),
        LaunchConfig::linear(1, 1),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let want_u: Vec<u32> = std::iter::once(2)
        .chain((0u32..u32::MAX).step_by(0x8000_0000))
        .chain([0])
        .collect();
    assert_eq!(args[0].buffer().unwrap().to_u32(), want_u);
    let walked: Vec<i32> = (-5i32..i32::MAX).step_by(0x4000_0000).collect();
    assert_eq!(walked.len(), 3);
    let want_i: Vec<i32> = std::iter::once(3).chain(walked).chain([0]).collect();
    assert_eq!(args[1].buffer().unwrap().to_i32(), want_i);
}

/// Every atomic read-modify-write, each on its own word.
#[oxmera_kernel::kernel(block = [64])]
fn every_atomic(x: &[f32], words: &[u32], fl: &mut [f32], int: &mut [i32], bits: &mut [u32]) {
    let i = thread_idx_x();
    let v = x[i];
    let w = words[i];
    atomic_min(fl, 0, v);
    atomic_max(fl, 1, v);
    atomic_add(fl, 2, 1.0);
    atomic_sub(int, 0, i as i32);
    atomic_add(int, 1, i as i32);
    atomic_and(bits, 0, w);
    atomic_or(bits, 1, w);
    atomic_xor(bits, 2, w);
    atomic_inc(bits, 3, 9u32);
    atomic_sub(bits, 4, w);
}

/// What `every_atomic` leaves, computed on the host.
fn every_atomic_host(x: &[f32], words: &[u32]) -> (Vec<f32>, Vec<i32>, Vec<u32>) {
    let n = x.len();
    let fl = vec![
        x.iter().fold(f32::INFINITY, |m, v| m.min(*v)),
        x.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v)),
        n as f32,
    ];
    let int = vec![-((0..n as i32).sum::<i32>()), (0..n as i32).sum()];
    let mut inc = 0u32;
    for _ in 0..n {
        inc = if inc >= 9 { 0 } else { inc + 1 };
    }
    let bits = vec![
        words.iter().fold(u32::MAX, |a, w| a & w),
        words.iter().fold(0, |a, w| a | w),
        words.iter().fold(0, |a, w| a ^ w),
        inc,
        words.iter().fold(0u32, |a, w| a.wrapping_sub(*w)),
    ];
    (fl, int, bits)
}

#[test]
fn every_atomic_leaves_what_the_host_computes() {
    let mut x: Vec<f32> = (0..64)
        .map(|i| ((i * 37 % 64) as f32 - 30.5) * 0.25)
        .collect();
    x[5] = f32::NAN; // min and max skip a NaN, as f32::min does
    let words: Vec<u32> = (0..64u32)
        .map(|i| i.wrapping_mul(0x9e37_79b9) | 1 << (i % 32))
        .collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::from_u32(&words)),
        Arg::Buffer(Buffer::from_f32(&[f32::INFINITY, f32::NEG_INFINITY, 0.0])),
        Arg::Buffer(Buffer::from_i32(&[0, 0])),
        Arg::Buffer(Buffer::from_u32(&[u32::MAX, 0, 0, 0, 0])),
    ];
    sim::run(
        every_atomic(),
        LaunchConfig::linear(1, 64),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let (fl, int, bits) = every_atomic_host(&x, &words);
    assert_eq!(args[2].buffer().unwrap().to_f32(), fl);
    assert_eq!(args[3].buffer().unwrap().to_i32(), int);
    assert_eq!(args[4].buffer().unwrap().to_u32(), bits);
    // 64 increments that wrap at 9: 64 mod 10.
    assert_eq!(bits[3], 4);
}

/// Inclusive ranges, to the end of the type and with `continue`.
#[oxmera_kernel::kernel(block = [1])]
fn inclusive_ranges(out: &mut [u32], signed: &mut [i32]) {
    let mut n = 0u32;
    for i in (0u32..=u32::MAX).step_by(0x8000_0000) {
        n += 1;
        out[n] = i;
    }
    out[0] = n;
    let mut sum = 0i32;
    let mut seen = 0i32;
    for j in -3i32..=3 {
        seen += 1;
        if j == 0 {
            continue;
        }
        sum += j * j;
    }
    signed[0] = sum;
    signed[1] = seen;
    let mut m = 0i32;
    for k in (i32::MAX - 4..=i32::MAX).step_by(2) {
        m += 1;
        signed[1 + m as u32] = k;
    }
    signed[5] = m;
    let mut empty = 0u32;
    for _e in 5u32..=4 {
        empty += 1;
    }
    out[3] = empty;
}

#[test]
fn inclusive_ranges_run_every_value_rust_runs() {
    let mut args = vec![
        Arg::Buffer(Buffer::from_u32(&[9; 4])),
        Arg::Buffer(Buffer::from_i32(&[0; 6])),
    ];
    let k = inclusive_ranges();
    sim::run(
        k,
        LaunchConfig::linear(1, 1),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    let walked: Vec<u32> = (0u32..=u32::MAX).step_by(0x8000_0000).collect();
    assert_eq!(walked, [0, 0x8000_0000]);
    assert_eq!(args[0].buffer().unwrap().to_u32(), [2, 0, 0x8000_0000, 0]);
    let tail: Vec<i32> = (i32::MAX - 4..=i32::MAX).step_by(2).collect();
    assert_eq!(tail.len(), 3);
    let sum: i32 = (-3i32..=3).filter(|j| *j != 0).map(|j| j * j).sum();
    assert_eq!(
        args[1].buffer().unwrap().to_i32(),
        [sum, 7, tail[0], tail[1], tail[2], 3]
    );
    let printed = oxmera_kernel::pretty::print(k);
    assert!(printed.contains("..=4294967295u32"), "{printed}");
}

/// Every thread reads `s[0]`, then thread 0 overwrites it with no barrier
/// between: a write-after-read race, whose other side is a reader other
/// than the writer itself.
#[kernel]
fn overwrite_what_all_read(out: &mut [f32]) {
    let s = shared::<f32>(32);
    let t = thread_idx_x();
    s[t] = 1.0;
    sync_threads();
    out[t] = s[0];
    if t == 0 {
        s[0] = 2.0;
    }
}

#[test]
fn a_write_after_many_reads_names_another_reader_not_the_writer() {
    use oxmera_kernel::sim::ReportKind;
    let mut args = vec![Arg::Buffer(Buffer::from_f32(&[0.0; 32]))];
    let e = sim::run(
        overwrite_what_all_read(),
        LaunchConfig::linear(1, 32),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap_err();
    let SimError::Report(r) = e else {
        panic!("expected a race report, got {e}")
    };
    match r.kind {
        ReportKind::SharedRace {
            index,
            first,
            first_write,
            second,
            second_write,
            ..
        } => {
            assert_eq!(index, 0);
            assert_eq!((second, second_write), (0, true));
            assert!(!first_write);
            assert_ne!(first, 0, "thread 0 cannot race with itself");
        }
        other => panic!("expected a shared race, got {other:?}"),
    }
}
