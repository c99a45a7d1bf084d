//! Arrays through the file front door: what a local (register) array, a
//! 2-D shared array and a launch-sized one lower to, and which mistakes
//! are refused with which hint.

use oxmera_kernel_ir::ir::{
    BinOp, ConstExpr, ExprKind, Kernel, LocalArray, Mem, Scalar, StmtKind, Value,
};
use oxmera_kernel_ir::validate::validate;
use oxmera_kernel_lower::file::lower_source;

fn kernel(text: &str) -> Kernel {
    let f = lower_source("a.rs", text).unwrap_or_else(|e| panic!("{e}"));
    let k = f.get("k").expect("a kernel").clone();
    validate(&k).unwrap();
    k
}

fn refused(text: &str) -> String {
    match lower_source("a.rs", text) {
        Ok(_) => panic!("lowered:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_register_array_is_declared_and_filled_by_a_loop() {
    let k = kernel(
        "#[kernel]
fn k(out: &mut [f32]) {
    let mut acc = [0.0f32; 4];
    acc[1] += 2.0;
    out[0] = acc[1];
}",
    );
    assert_eq!(
        k.arrays,
        vec![LocalArray {
            name: "acc".into(),
            elem: Scalar::F32,
            len: ConstExpr::Lit(4),
            row_len: None,
            span: k.arrays[0].span,
        }]
    );
    // The fill: `for acc_i in 0..4 { acc[acc_i] = 0.0 }`.
    let StmtKind::For { end, body, .. } = &k.body[0].kind else {
        panic!("{:?}", k.body[0])
    };
    assert_eq!(end.kind, ExprKind::Lit(Value::U32(4)));
    assert!(matches!(
        &body[0].kind,
        StmtKind::Store { mem: Mem::Local(0), value, .. } if value.kind == ExprKind::Lit(Value::F32(0.0))
    ));
    // `acc[1] += 2.0` is a load, the addition and a store of one element.
    let StmtKind::Store { mem, value, .. } = &k.body[1].kind else {
        panic!("{:?}", k.body[1])
    };
    assert_eq!(*mem, Mem::Local(0));
    assert!(
        matches!(&value.kind, ExprKind::Binary { op: BinOp::Add, lhs, .. }
        if matches!(lhs.kind, ExprKind::Load { mem: Mem::Local(0), .. }))
    );
}

#[test]
fn a_2d_index_is_row_times_columns_plus_column() {
    let k = kernel(
        "#[kernel]
fn k<const T: u32 = 3>(out: &mut [u32]) {
    let mut c = [[1u32; T]; 2];
    let t = thread_idx_x();
    c[1][t] = 5;
    out[t] = c[t][0];
}",
    );
    let a = &k.arrays[0];
    assert_eq!(a.row_len, Some(ConstExpr::Spec(0)));
    assert_eq!(a.len.eval(&[3]), Some(6));
    // The store's index: (1 * T) + t.
    let store = k
        .body
        .iter()
        .find_map(|s| match &s.kind {
            StmtKind::Store { index, .. } => Some(index),
            _ => None,
        })
        .unwrap();
    let ExprKind::Binary {
        op: BinOp::Add,
        lhs,
        rhs,
    } = &store.kind
    else {
        panic!("{store:?}")
    };
    assert!(matches!(rhs.kind, ExprKind::Local(_)));
    assert!(
        matches!(&lhs.kind, ExprKind::Binary { op: BinOp::Mul, rhs, .. } if rhs.kind == ExprKind::Spec(0))
    );
}

#[test]
fn shared_arrays_come_in_one_two_and_launch_sized_shapes() {
    let k = kernel(
        "#[kernel]
fn k(out: &mut [f32]) {
    let flat = shared::<f32>(8);
    let tile = shared::<[f32; 17]>(16);
    let rest = shared_dynamic::<f32>();
    let t = thread_idx_x();
    tile[t / 17][t % 17] = 1.0;
    rest[t] = flat[t % 8] + tile[0][t % 17];
    out[t] = rest[t];
}",
    );
    assert_eq!(k.shared[1].row_len, Some(ConstExpr::Lit(17)));
    assert_eq!(k.shared[1].len.eval(&[]), Some(16 * 17));
    assert!(k.shared[2].dynamic && !k.shared[1].dynamic);
    // The static bytes: 8 + 272 floats; the dynamic array counts none.
    assert_eq!(k.shared_bytes(&[]), Some((8 + 16 * 17) * 4));
    assert_eq!(k.element_text(Mem::Shared(1), 35, &[]), "[2][1]");
}

#[test]
fn mistakes_with_arrays_are_refused_with_a_hint() {
    let cases: [(&str, &str); 14] = [
        (
            "fn k(a: [f32; 4], out: &mut [f32]) {}",
            "arrays are not kernel parameters; hint: pass a buffer",
        ),
        (
            "fn k(out: &mut [f32]) { let a = [0.0f32; 4]; a[0] = 1.0; }",
            "`a` is not mutable; hint: declare it with `let mut a`",
        ),
        (
            "fn k(out: &mut [f32]) { let a = [0.0f32; 4]; let b = a; }",
            "`a` is an array: arrays are not values",
        ),
        (
            "fn k(out: &mut [f32]) { let mut a = [0.0f32; 4]; a = [1.0; 4]; }",
            "it is not assigned as a whole",
        ),
        (
            "fn k(out: &mut [f32]) { let mut a = [0u32; 4]; atomic_add(a, 0, 1u32); }",
            "`atomic_add` on a local array",
        ),
        (
            "fn k(out: &mut [f32]) { let mut c = [[0.0f32; 2]; 2]; out[0] = c[1]; }",
            "`c` is a 2-D array; hint: index an element as `c[row][col]`",
        ),
        (
            "fn k(out: &mut [f32]) { let a = [0.0f32; 4]; out[0] = a[1][2]; }",
            "`a` has one dimension; hint: index it as `a[i]`",
        ),
        (
            "fn k(out: &mut [f32], n: u32) { let a = [0.0f32; n]; }",
            "not a compile-time constant",
        ),
        (
            "fn k(out: &mut [f32]) { let a = [0.0f32; 0]; }",
            "an array of no elements",
        ),
        (
            "fn k(out: &mut [f32]) { let a = [[[0.0f32; 2]; 2]; 2]; }",
            "arrays have at most two dimensions",
        ),
        (
            "fn k(out: &mut [f32]) { let a: [f32; 3] = [0.0; 4]; }",
            "the annotated array type differs",
        ),
        (
            "fn k(out: &mut [f32]) { let s = shared_dynamic::<f32>(); let t = shared_dynamic::<f32>(); }",
            "a second dynamic shared array (`s` is one already)",
        ),
        (
            "fn k(out: &mut [f32]) { let s = shared_dynamic::<f32>(64); }",
            "`shared_dynamic` takes no length",
        ),
        (
            "fn k(out: &mut [u32]) { let t = shared::<[u32; 4]>(4); atomic_add(t, 0, 1u32); }",
            "`atomic_add` on a 2-D shared array",
        ),
    ];
    for (body, want) in cases {
        let e = refused(&format!("#[kernel]\n{body}"));
        assert!(e.contains(want), "{body}\n  gave: {e}\n  want: {want}");
    }
    // Helpers take no arrays, as parameters or as arguments.
    let e = refused(
        "#[helper]
fn first(a: [f32; 4]) -> f32 { 0.0 }
#[kernel]
fn k(out: &mut [f32]) { let a = [1.0f32; 4]; out[0] = first(a); }",
    );
    assert!(
        e.contains("unsupported helper parameter type")
            && e.contains("arrays `[T; N]` are not passed"),
        "{e}"
    );
    let e = refused(
        "#[helper]
fn first(a: &[f32]) -> f32 { a[0] }
#[kernel]
fn k(out: &mut [f32]) { let a = [1.0f32; 4]; out[0] = first(a); }",
    );
    assert!(
        e.contains("the local array passed as `a` of `first`"),
        "{e}"
    );
}

#[test]
fn local_arrays_past_a_threads_local_memory_are_refused_not_allocated() {
    // 2 × 65536 f32 = 512 KiB exactly: the most a thread may hold.
    let at_limit = "#[kernel] fn k(out: &mut [f32]) { let mut a = [0.0f32; 65536]; \
                    let mut b = [0.0f32; 65536]; a[0] = 1.0; b[0] = a[0]; out[0] = b[0]; }";
    let f = lower_source("a.rs", at_limit).unwrap_or_else(|e| panic!("{e}"));
    validate(f.get("k").unwrap()).unwrap();
    // One element more, or a 100-million-element array (25.6 GB a warp in
    // the simulator), is a validation error naming the limit.
    for text in [
        "#[kernel] fn k(out: &mut [f32]) { let mut a = [0.0f32; 65536]; \
         let mut b = [0.0f32; 65537]; a[0] = 1.0; b[0] = a[0]; out[0] = b[0]; }",
        "#[kernel] fn k(out: &mut [f32]) { let mut a = [0.0f32; 100000000]; a[0] = 1.0; out[0] = a[0]; }",
    ] {
        let msg = match lower_source("a.rs", text) {
            Err(e) => e.to_string(),
            Ok(f) => match f.get("k") {
                Some(k) => validate(k).unwrap_err().to_string(),
                None => panic!("no kernel k in {:?}", f.names()),
            },
        };
        assert!(msg.contains("524288"), "{msg}");
    }
}
