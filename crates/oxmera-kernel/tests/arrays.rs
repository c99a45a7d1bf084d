//! Local (register) arrays, 2-D shared arrays and launch-sized shared
//! memory, through every layer: the printer, the analysis, the simulator
//! (values a reader can check by hand, out-of-bounds reports), OXK004 with
//! dynamic bytes, and both emitters.

use oxmera_kernel::analysis::{CheckOptions, Rule, check};
use oxmera_kernel::emit::ptx::{PtxOptions, assemble, find_ptxas, ptx};
use oxmera_kernel::emit::wgsl::{WgslOptions, wgsl};
use oxmera_kernel::ir::{Dim3, Kernel, Value};
use oxmera_kernel::kernel;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::limits::ComputeCapability;
use oxmera_kernel::pretty::print;
use oxmera_kernel::sim::{self, Arg, Buffer, ReportKind, SimError, SimOptions};

fn run(k: &Kernel, block: u32, args: &mut [Arg]) -> Result<(), SimError> {
    sim::run(
        k,
        LaunchConfig::linear(1, block),
        args,
        &SimOptions::default(),
    )
    .map(|_| ())
}

/// A simulator report's kind and its rendered text.
fn report_text(k: &Kernel, e: SimError) -> (ReportKind, String) {
    match e {
        SimError::Report(r) => (r.kind.clone(), sim::render_report(k, &r)),
        other => panic!("expected a report, got {other}"),
    }
}

/// A 1-D register array sized by a `const` item, and a 2-D one.
#[kernel]
fn register_rows(x: &[f32], out: &mut [f32]) {
    const N: u32 = 4;
    let t = thread_idx_x();
    let mut acc = [0.0f32; N];
    let mut c = [[0.0f32; 3]; 2];
    for k in 0..N {
        acc[k] = x[t * N + k] * (k + 1) as f32;
    }
    for r in 0..2u32 {
        for q in 0..3u32 {
            c[r][q] = acc[r + q];
        }
    }
    c[1][2] += 10.0;
    let mut s = 0.0;
    for r in 0..2u32 {
        for q in 0..3u32 {
            s += c[r][q];
        }
    }
    out[t] = s;
}

#[test]
fn register_arrays_hold_each_threads_own_values() {
    let x: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F32, 2)),
    ];
    run(register_rows(), 2, &mut args).unwrap();
    // Thread 0: acc = [0·1, 1·2, 2·3, 3·4] = [0, 2, 6, 12]; rows
    // [0, 2, 6] and [2, 6, 12 + 10]: 38. Thread 1: acc = [4, 10, 18, 28];
    // rows [4, 10, 18] and [10, 18, 38]: 98.
    assert_eq!(args[1].buffer().unwrap().to_f32(), vec![38.0, 98.0]);
}

/// A length from a specialization constant; the last element set apart.
#[kernel]
fn spec_len<const K: u32 = 3>(out: &mut [u32]) {
    let mut a = [1u32; K];
    a[K - 1] = 5;
    let mut s = 0u32;
    for i in 0..K {
        s += a[i];
    }
    out[thread_idx_x()] = s;
}

#[test]
fn a_specialization_constant_sizes_a_register_array() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::U32,
        4,
    ))];
    run(spec_len(), 4, &mut args).unwrap();
    // 1 + 1 + 5.
    assert_eq!(args[0].buffer().unwrap().to_u32(), vec![7; 4]);
    let p = sim::Program::compile_with(spec_len(), &[5]);
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::U32,
        4,
    ))];
    sim::run_program(
        &p,
        LaunchConfig::linear(1, 4),
        &mut args,
        &SimOptions::default(),
    )
    .unwrap();
    // 1 + 1 + 1 + 1 + 5.
    assert_eq!(args[0].buffer().unwrap().to_u32(), vec![9; 4]);
}

/// A `let` inside a loop makes a fresh array every iteration; a runtime
/// fill value and a list of elements.
#[kernel]
fn fresh_each_iteration(out: &mut [u32]) {
    let t = thread_idx_x();
    let mut total = 0u32;
    for round in 0..3u32 {
        let mut a = [t; 2];
        a[0] += round;
        total += a[0] + a[1];
    }
    let picks = [10u32, 20, 30];
    out[t] = total + picks[t % 3];
}

#[test]
fn a_let_in_a_loop_refills_its_array() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::U32,
        5,
    ))];
    run(fresh_each_iteration(), 5, &mut args).unwrap();
    // Thread t: (2t + 0) + (2t + 1) + (2t + 2) = 6t + 3, plus picks[t % 3].
    assert_eq!(
        args[0].buffer().unwrap().to_u32(),
        vec![3 + 10, 9 + 20, 15 + 30, 21 + 10, 27 + 20]
    );
}

#[kernel]
fn register_oob(out: &mut [f32]) {
    let mut a = [0.0f32; 4];
    let t = thread_idx_x();
    a[t] = 1.0;
    out[t] = a[0];
}

#[kernel]
fn register_oob_2d(out: &mut [f32]) {
    let c = [[0.0f32; 3]; 2];
    let t = thread_idx_x();
    out[t] = c[t][0];
}

#[test]
fn an_index_past_a_register_array_names_the_thread_the_array_and_the_index() {
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::F32,
        8,
    ))];
    let (kind, text) = report_text(
        register_oob(),
        run(register_oob(), 8, &mut args).unwrap_err(),
    );
    match kind {
        ReportKind::OutOfBounds {
            lane,
            thread,
            index,
            buffer,
            len,
            write,
            ..
        } => {
            assert_eq!((lane, thread, index, len, write), (4, 4, 4, 4, true));
            assert_eq!(buffer, "a");
        }
        k => panic!("{k:?}"),
    }
    assert!(
        text.contains("`a[4]` (length 4) by lane 4 (thread 4)"),
        "{text}"
    );
    let (_, text) = report_text(
        register_oob_2d(),
        run(register_oob_2d(), 4, &mut args).unwrap_err(),
    );
    // Thread 2 reads row 2 of a 2-row array: flat element 6 of 6.
    assert!(
        text.contains(
            "load of `c[2][0]` (flat index 6) (length 6: 2 rows of 3) by lane 2 (thread 2)"
        ),
        "{text}"
    );
}

/// An array each thread indexes by its own id: thread-private, so the
/// barrier after it is reached by every thread.
#[kernel(block = [64])]
fn thread_indexed_registers(x: &[f32], out: &mut [f32]) {
    let s = shared::<f32>(64);
    let t = thread_idx_x();
    let mut a = [0.0f32; 64];
    a[t] = x[t];
    s[t] = a[t];
    sync_threads();
    out[t] = s[63 - t];
}

#[kernel]
fn divergent_store_then_barrier(out: &mut [f32]) {
    let t = thread_idx_x();
    let mut a = [0.0f32; 2];
    if t < 5 {
        a[0] = 1.0;
    }
    if a[0] > 0.5 {
        sync_threads();
    }
    out[t] = a[0];
}

#[kernel]
fn thread_indexed_store_then_barrier(out: &mut [f32]) {
    let t = thread_idx_x();
    let mut a = [0.0f32; 2];
    a[t % 2] = 1.0;
    if a[0] > 0.5 {
        sync_threads();
    }
    out[t] = a[1];
}

#[kernel]
fn uniform_store_then_barrier(out: &mut [f32]) {
    let t = thread_idx_x();
    let mut a = [0.0f32; 2];
    for k in 0..2u32 {
        a[k] = 1.0 + k as f32;
    }
    if a[1] > 0.5 {
        sync_threads();
    }
    out[t] = a[0];
}

fn findings(k: &Kernel, block: u32) -> Vec<oxmera_kernel::analysis::Finding> {
    check(k, &CheckOptions::new(LaunchConfig::linear(1, block))).unwrap()
}

#[test]
fn a_register_array_indexed_by_thread_id_leaves_the_barrier_after_it_uniform() {
    assert_eq!(findings(thread_indexed_registers(), 64), vec![]);
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F32, 64)),
    ];
    run(thread_indexed_registers(), 64, &mut args).unwrap();
    let want: Vec<f32> = (0..64).map(|i| (63 - i) as f32).collect();
    assert_eq!(args[1].buffer().unwrap().to_f32(), want);
}

#[test]
fn a_value_stored_under_divergence_or_at_a_thread_index_is_thread_dependent() {
    for k in [
        divergent_store_then_barrier(),
        thread_indexed_store_then_barrier(),
    ] {
        let f = findings(k, 32);
        assert_eq!(f.len(), 1, "{}: {f:?}", k.name);
        assert_eq!(f[0].rule, Rule::DivergentBarrier);
        let notes: Vec<&str> = f[0].notes.iter().map(|s| s.text.as_str()).collect();
        assert!(
            notes
                .iter()
                .any(|n| n.contains("stored into the local array `a`")),
            "{}: {notes:?}",
            k.name
        );
    }
    // The simulator agrees: thread 0..5 wait at a barrier the rest skip.
    let mut args = vec![Arg::Buffer(Buffer::zeros(
        oxmera_kernel::ir::Scalar::F32,
        32,
    ))];
    let (kind, _) = report_text(
        divergent_store_then_barrier(),
        run(divergent_store_then_barrier(), 32, &mut args).unwrap_err(),
    );
    assert!(
        matches!(kind, ReportKind::DivergentBarrier { .. }),
        "{kind:?}"
    );
    // The same array filled the same way by every thread is uniform.
    assert_eq!(findings(uniform_store_then_barrier(), 32), vec![]);
}

/// A 4x4 transpose through a 2-D shared tile of 4 rows of 5 (the fifth
/// column pads the rows apart, as `transpose_tiled` does).
#[kernel(block = [16])]
fn transpose_4x4(x: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; 5]>(4);
    let t = thread_idx_x();
    let r = t / 4;
    let c = t % 4;
    tile[r][c] = x[t];
    sync_threads();
    out[t] = tile[c][r];
}

#[kernel]
fn transpose_racy(x: &[f32], out: &mut [f32]) {
    let tile = shared::<[f32; 5]>(4);
    let t = thread_idx_x();
    tile[t / 4][t % 4] = x[t];
    out[t] = tile[t % 4][t / 4];
}

#[test]
fn a_2d_shared_tile_transposes_and_its_race_names_row_and_column() {
    assert_eq!(findings(transpose_4x4(), 16), vec![]);
    let k = transpose_4x4();
    assert_eq!(k.shared_bytes(&[]), Some(4 * 5 * 4));
    let x: Vec<f32> = (0..16).map(|i| i as f32).collect();
    let mut args = vec![
        Arg::Buffer(Buffer::from_f32(&x)),
        Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F32, 16)),
    ];
    run(k, 16, &mut args).unwrap();
    // out[4r + c] = x[4c + r]: the rows of x become the columns.
    let want: Vec<f32> = (0..16).map(|t| ((t % 4) * 4 + t / 4) as f32).collect();
    assert_eq!(args[1].buffer().unwrap().to_f32(), want);
    // Without the barrier thread 1 reads tile[1][0], which thread 4 wrote.
    let (kind, text) = report_text(
        transpose_racy(),
        run(transpose_racy(), 16, &mut args).unwrap_err(),
    );
    match kind {
        ReportKind::SharedRace {
            index,
            first,
            second,
            row_len,
            ..
        } => assert_eq!((index, first, second, row_len), (5, 4, 1, Some(5))),
        k => panic!("{k:?}"),
    }
    assert!(
        text.contains("race on `tile[1][0]` (flat index 5)"),
        "{text}"
    );
}

/// The launch sizes `s`: each thread stages its element, then reads the
/// mirror one.
#[kernel]
fn dynamic_reverse(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared_dynamic::<f32>();
    let t = thread_idx_x();
    s[t] = x[t];
    sync_threads();
    out[t] = s[n - 1 - t];
}

#[test]
fn a_dynamic_shared_array_is_as_long_as_the_launch_says() {
    let x: Vec<f32> = (0..32).map(|i| i as f32).collect();
    let args = || {
        vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::zeros(oxmera_kernel::ir::Scalar::F32, 32)),
            Arg::Scalar(Value::U32(32)),
        ]
    };
    let opts = |bytes| SimOptions {
        dynamic_shared_bytes: bytes,
        ..SimOptions::default()
    };
    let mut a = args();
    sim::run(
        dynamic_reverse(),
        LaunchConfig::linear(1, 32),
        &mut a,
        &opts(32 * 4),
    )
    .unwrap();
    let want: Vec<f32> = (0..32).map(|i| (31 - i) as f32).collect();
    assert_eq!(a[1].buffer().unwrap().to_f32(), want);
    // 64 bytes hold 16 floats: thread 16's store is past the end.
    let mut a = args();
    let e = sim::run(
        dynamic_reverse(),
        LaunchConfig::linear(1, 32),
        &mut a,
        &opts(64),
    )
    .unwrap_err();
    let (_, text) = report_text(dynamic_reverse(), e);
    assert!(
        text.contains("store of `s[16]` (length 16) by lane 16 (thread 16)"),
        "{text}"
    );
    // The static part is nothing; the analysis counts the launch's bytes.
    assert_eq!(dynamic_reverse().shared_bytes(&[]), Some(0));
    assert_eq!(findings(dynamic_reverse(), 32), vec![]);
}

/// 32 KiB of static shared memory beside a launch-sized array.
#[kernel]
fn static_and_dynamic(out: &mut [f32]) {
    let fixed = shared::<f32>(8192);
    let extra = shared_dynamic::<f32>();
    let t = thread_idx_x();
    fixed[t] = 1.0;
    extra[t] = 2.0;
    sync_threads();
    out[t] = fixed[t] + extra[t];
}

#[test]
fn oxk004_counts_the_static_and_the_dynamic_bytes() {
    let at = |bytes| {
        let opts = CheckOptions::new(LaunchConfig::linear(1, 32)).with_dynamic_shared(bytes);
        check(static_and_dynamic(), &opts).unwrap()
    };
    // 32768 + 16384 = 49152: exactly the generic target's 48 KiB.
    assert_eq!(at(16384), vec![]);
    let f = at(16388);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].rule, Rule::SharedOverBudget);
    assert!(f[0].message.contains("49156 bytes"), "{}", f[0].message);
    assert!(
        f[0].extra
            .iter()
            .any(|e| e == "`extra`: dynamic, 16388 bytes from the launch (4097 x f32)"),
        "{:?}",
        f[0].extra
    );
    // Bytes a kernel without a dynamic array is launched with count too.
    let opts = CheckOptions::new(LaunchConfig::linear(1, 16)).with_dynamic_shared(49152);
    let f = check(transpose_4x4(), &opts).unwrap();
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].extra.iter().any(|e| e.contains("which no array uses")),
        "{f:?}"
    );
}

#[test]
fn the_printer_shows_each_arrays_shape() {
    let text = print(register_rows());
    assert!(text.contains("    local acc: [f32; 4]\n"), "{text}");
    assert!(text.contains("    local c: [[f32; 3]; 2]\n"), "{text}");
    assert!(text.contains("local acc[%"), "{text}");
    let text = print(transpose_4x4());
    assert!(text.contains("    shared tile: [[f32; 5]; 4]\n"), "{text}");
    let text = print(dynamic_reverse());
    assert!(
        text.contains("    shared s: [f32; dynamic]  // sized by the launch\n"),
        "{text}"
    );
    let text = print(spec_len());
    assert!(text.contains("    local a: [u32; K]\n"), "{text}");
}

fn naga_ok(source: &str) {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{}\n{source}", e.emit_to_string(source)));
    let mut v = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    );
    v.validate(&module)
        .unwrap_or_else(|e| panic!("{}\n{source}", e.emit_to_string(source)));
}

#[test]
fn wgsl_declares_register_arrays_and_refuses_dynamic_shared_memory() {
    let w = wgsl(register_rows(), &WgslOptions::new(Dim3::x(64))).unwrap();
    assert!(
        w.source.contains("    var a_acc_0: array<f32, 4>;"),
        "{}",
        w.source
    );
    assert!(
        w.source.contains("    var a_c_1: array<f32, 6>;"),
        "{}",
        w.source
    );
    naga_ok(&w.source);
    for k in [
        spec_len(),
        fresh_each_iteration(),
        thread_indexed_registers(),
    ] {
        naga_ok(&wgsl(k, &WgslOptions::new(Dim3::x(64))).unwrap().source);
    }
    let w = wgsl(transpose_4x4(), &WgslOptions::new(Dim3::x(16))).unwrap();
    assert!(
        w.source.contains("var<workgroup> s_tile: array<f32, 20>;"),
        "{}",
        w.source
    );
    naga_ok(&w.source);
    let e = wgsl(dynamic_reverse(), &WgslOptions::new(Dim3::x(32))).unwrap_err();
    assert!(
        e.to_string()
            .contains("the dynamic shared array `s` cannot be written as WGSL")
            && e.to_string()
                .contains("no dynamically sized workgroup memory"),
        "{e}"
    );
}

#[test]
fn ptx_puts_register_arrays_in_local_memory_and_dynamic_shared_in_the_extern_block() {
    let cc: ComputeCapability = "8.0".parse().unwrap();
    let p = ptx(register_rows(), &PtxOptions::new(cc, Dim3::x(64))).unwrap();
    for needle in [
        ".local .align 4 .b8 l_acc_0[16];",
        ".local .align 4 .b8 l_c_1[24];",
        "mov.u64 %acc_local_0, l_acc_0;",
        "st.local.f32",
        "ld.local.f32",
    ] {
        assert!(p.source.contains(needle), "{needle} missing:\n{}", p.source);
    }
    assert!(!p.launch_sized_shared);
    let d = ptx(dynamic_reverse(), &PtxOptions::new(cc, Dim3::x(32))).unwrap();
    assert!(d.launch_sized_shared);
    assert_eq!(d.dynamic_shared_bytes, 0);
    assert!(
        d.source
            .contains(".extern .shared .align 16 .b8 oxmera_dynamic_shared[];")
            && d.source
                .contains("mov.u32 %s_shared, oxmera_dynamic_shared;"),
        "{}",
        d.source
    );
    let both = ptx(static_and_dynamic(), &PtxOptions::new(cc, Dim3::x(32))).unwrap();
    assert!(
        both.source.contains(".shared .align 4 .b8 s_fixed[32768];"),
        "{}",
        both.source
    );
    let Some(ptxas) = find_ptxas() else {
        assert!(
            std::env::var_os("OXMERA_REQUIRE_PTXAS").is_none(),
            "OXMERA_REQUIRE_PTXAS is set but ptxas is missing"
        );
        return;
    };
    for part in ["8.0", "9.0"] {
        let cc: ComputeCapability = part.parse().unwrap();
        for (k, block) in [
            (register_rows(), 64),
            (spec_len(), 64),
            (fresh_each_iteration(), 64),
            (thread_indexed_registers(), 64),
            (transpose_4x4(), 16),
            (dynamic_reverse(), 32),
            (static_and_dynamic(), 32),
        ] {
            let p = ptx(k, &PtxOptions::new(cc, Dim3::x(block))).unwrap();
            assemble(&ptxas, &p)
                .unwrap_or_else(|e| panic!("{} sm_{part}: {e}\n{}", k.name, p.source));
        }
    }
}
