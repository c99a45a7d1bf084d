//! Helper functions through the file front door: where a call's statements
//! land, what a helper may not do, and which mistakes are refused with
//! which hint.

use oxmera_kernel_ir::ir::{ExprKind, Kernel, Stmt, StmtKind};
use oxmera_kernel_ir::pretty::print;
use oxmera_kernel_lower::file::lower_source;

fn kernel(text: &str, name: &str) -> Kernel {
    let f = lower_source("h.rs", text).unwrap_or_else(|e| panic!("{e}"));
    let k = f.get(name).expect("the kernel").clone();
    oxmera_kernel_ir::validate::validate(&k).unwrap();
    k
}

fn refused(text: &str) -> String {
    match lower_source("h.rs", text) {
        Ok(_) => panic!("lowered:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const OFFSET: &str = "
#[helper]
fn offset(i: u32, cols: u32, s0: u32, s1: u32) -> u32 {
    let r = i / cols;
    r * s0 + (i % cols) * s1
}
";

#[test]
fn a_call_is_inlined_before_its_statement_with_its_spans_recorded() {
    let text = format!(
        "{OFFSET}
#[kernel]
fn transpose(x: &[f32], out: &mut [f32], rows: u32, cols: u32) {{
    let i = thread_idx_x();
    if i < rows * cols {{
        out[i] = x[offset(i, cols, 1, rows)];
    }}
}}
"
    );
    let k = kernel(&text, "transpose");
    // One call, its spans inside the table, its call named.
    assert_eq!(k.inlined.len(), 1);
    let call = &k.inlined[0];
    assert_eq!(call.helper, "offset");
    assert_eq!(k.snippet(call.call), "offset(i, cols, 1, rows)");
    assert!(call.spans.start < call.spans.end);
    // The helper's line is a span of the call: the file's line 4.
    let inner = (call.spans.start..call.spans.end)
        .map(|s| k.span(s).line)
        .collect::<Vec<_>>();
    assert!(inner.contains(&4), "{inner:?}");
    assert_eq!(k.call_chain(call.spans.start).len(), 1);
    assert!(k.call_chain(call.call).is_empty());
    // Inside the `if`: the parameters, the helper's local, its value, then
    // the store that reads it.
    let StmtKind::If { then, .. } = &k.body[1].kind else {
        panic!("{}", print(&k))
    };
    let names: Vec<&str> = then
        .iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { local, .. } => Some(k.locals[*local as usize].name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["i", "cols", "s0", "s1", "r", "offset_value"]);
    assert!(matches!(then.last().unwrap().kind, StmtKind::Store { .. }));
}

#[test]
fn calls_in_branches_stay_in_their_branch() {
    // An `else if` condition and a value branch: their calls run only
    // where the source evaluates them.
    let text = format!(
        "{OFFSET}
#[kernel]
fn k(x: &[f32], out: &mut [f32], n: u32) {{
    let i = thread_idx_x();
    if i >= n {{
        return;
    }} else if x[offset(i, 4, 1, 4)] > 0.0 {{
        out[i] = 1.0;
    }}
    let v = if i > 2 {{ x[offset(i, 2, 2, 1)] }} else {{ 0.0 }};
    out[i] = v;
}}
"
    );
    let k = kernel(&text, "k");
    assert_eq!(k.inlined.len(), 2);
    // Top level: `let i`, the first `if`, the value `if`, the store; no
    // inlined statement leaked out of a branch.
    let top: Vec<String> = k.body.iter().map(kind).collect();
    assert_eq!(top, ["assign i", "if", "if", "store"], "{}", print(&k));
    let StmtKind::If { otherwise, .. } = &k.body[1].kind else {
        unreachable!()
    };
    // The `else` holds the call's statements, then the inner `if`.
    assert_eq!(kind(otherwise.last().unwrap()), "if");
    assert!(otherwise.len() > 1);
}

fn kind(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Assign { .. } => "assign i".into(),
        StmtKind::If { .. } => "if".into(),
        StmtKind::Store { .. } => "store".into(),
        _ => "other".into(),
    }
}

#[test]
fn helpers_call_helpers_and_write_through_buffer_parameters() {
    let text = format!(
        "{OFFSET}
#[helper]
fn put(out: &mut [f32], i: u32, cols: u32, v: f32) {{
    out[offset(i, cols, cols, 1)] = v;
}}
#[kernel]
fn k(out: &mut [f32]) {{
    let t = thread_idx_x();
    put(out, t, 8, 2.0);
}}
"
    );
    let k = kernel(&text, "k");
    assert_eq!(k.inlined.len(), 2);
    // The inner call lies inside the outer one's spans.
    let (outer, inner) = if k.inlined[0].helper == "put" {
        (&k.inlined[0], &k.inlined[1])
    } else {
        (&k.inlined[1], &k.inlined[0])
    };
    assert!(outer.spans.start <= inner.spans.start && inner.spans.end <= outer.spans.end);
    let chain: Vec<&str> = k
        .call_chain(inner.spans.start)
        .iter()
        .map(|c| c.helper.as_str())
        .collect();
    assert_eq!(chain, ["offset", "put"]);
    // The store went to the kernel's own buffer.
    let stores = k
        .body
        .iter()
        .filter(|s| matches!(s.kind, StmtKind::Store { .. }))
        .count();
    assert_eq!(stores, 1);
}

#[test]
fn a_helper_returning_an_if_value_and_a_mut_parameter() {
    let text = "
#[helper]
fn clamp_index(mut i: u32, n: u32) -> u32 {
    if i >= n { i = n - 1; }
    if i == 0 { 0 } else { i }
}
#[kernel]
fn k(x: &[f32], out: &mut [f32], n: u32) {
    let t = thread_idx_x();
    out[t] = x[clamp_index(t, n)];
}
";
    let k = kernel(text, "k");
    assert_eq!(k.inlined.len(), 1);
    let i = k.locals.iter().find(|l| l.name == "i").unwrap();
    assert!(i.mutable);
    assert!(
        k.body
            .iter()
            .any(|s| matches!(&s.kind, StmtKind::Assign { value, .. } if matches!(value.kind, ExprKind::Local(_))))
    );
}

#[test]
fn mistakes_are_refused_with_a_hint() {
    let cases: &[(&str, &str)] = &[
        (
            "#[helper] fn f(n: u32) -> u32 { f(n - 1) }
             #[kernel] fn k(out: &mut [u32]) { out[0] = f(3); }",
            "calls itself",
        ),
        (
            "#[helper] fn bump(out: &mut [u32], i: u32) -> u32 { out[i] = 1; i }
             #[kernel] fn k(out: &mut [u32]) { let v = bump(out, 0) + 1; out[1] = v; }",
            "is called as a statement",
        ),
        (
            "#[helper] fn ok(i: u32) -> bool { i > 1 }
             #[kernel] fn k(out: &mut [u32], n: u32) { let i = thread_idx_x(); if i < n && ok(i) { out[i] = 1; } }",
            "the right side of `&&`/`||`",
        ),
        (
            "#[helper] fn more(i: u32) -> bool { i < 8 }
             #[kernel] fn k(out: &mut [u32]) { let mut i = 0u32; while more(i) { i += 1; } out[0] = i; }",
            "`while` condition",
        ),
        (
            "#[helper] fn f(i: u32) -> u32 { if i > 0 { return 1; } 2 }
             #[kernel] fn k(out: &mut [u32]) { out[0] = f(1); }",
            "`return` inside the helper `f`",
        ),
        (
            "#[helper] fn f(i: u32) -> f32 { let s = shared::<f32>(32); s[i] = 1.0; s[0] }
             #[kernel] fn k(out: &mut [f32]) { out[0] = f(0); }",
            "shared array declared inside the helper",
        ),
        (
            "#[helper] fn f(i: u32, j: u32) -> u32 { i + j }
             #[kernel] fn k(out: &mut [u32]) { out[0] = f(1); }",
            "takes 2 arguments, 1 given",
        ),
        (
            "#[helper] fn f(x: &mut [u32]) { x[0] = 1; }
             #[kernel] fn k(x: &[u32]) { f(x); }",
            "is a buffer: pass a buffer parameter",
        ),
        (
            "#[helper] fn f(x: &[f32]) -> f32 { x[0] }
             #[kernel] fn k(x: &[u32], out: &mut [f32]) { out[0] = f(x); }",
            "expected a [f32] buffer, found [u32]",
        ),
        (
            "#[helper] fn f(i: u32) -> u32 { i }
             #[kernel] fn k(c: &mut [u32]) { let v = atomic_add(c, 0, 1) + f(2); c[1] = v; }",
            "is called after an atomic in the same statement",
        ),
        (
            "#[helper] fn twice(v: u32) -> u32 { v * 2 }
             #[kernel] fn k(c: &mut [u32]) { let v = c[1] + twice(atomic_add(c, 0, 1u32)); c[2] = v; }",
            "(in the helper or its arguments)",
        ),
        (
            "#[helper] fn ballot_sync(x: u32) -> u32 { x }
             #[kernel] fn k(out: &mut [u32]) { out[0] = 1; }",
            "`ballot_sync` is the name of a builtin",
        ),
        (
            "#[helper] fn exp(x: f32) -> f32 { x }
             #[kernel] fn k(out: &mut [f32]) { out[0] = 1.0; }",
            "`exp` is the name of a builtin",
        ),
        (
            "#[helper] fn f(i: u32) {}
             #[helper] fn f(i: u32) {}
             #[kernel] fn k(out: &mut [f32]) { out[0] = 1.0; }",
            "a second helper named `f`",
        ),
        (
            "#[helper] fn f(i: u32) {}
             #[kernel] fn k(out: &mut [f32]) { out[0] = f(1); }",
            "returns nothing",
        ),
        (
            "#[helper] fn f(x: f32) -> u32 { x }
             #[kernel] fn k(out: &mut [u32]) { out[0] = f(1.0); }",
            "expected u32, found f32",
        ),
        (
            "#[helper] fn f(i: u32) -> u32 { n }
             #[kernel] fn k(out: &mut [u32], n: u32) { out[0] = f(1); }",
            "unknown name `n`",
        ),
        (
            "#[helper] fn f(i: u32) -> u32 { let s = 0u32; s }
             #[kernel] fn k(out: &mut [u32]) { for i in 0..4u32 { f(i); break_out(); } }",
            "unknown function `break_out`",
        ),
        (
            "#[helper] fn f(i: u32) { break; }
             #[kernel] fn k(out: &mut [u32]) { for i in 0..4u32 { f(i); } }",
            "`break` outside a loop",
        ),
    ];
    for (text, want) in cases {
        let shown = refused(text);
        assert!(shown.contains(want), "wanted `{want}` in:\n{shown}");
        assert!(shown.contains("hint:"), "no hint in:\n{shown}");
    }
}

#[test]
fn an_atomic_in_a_calls_arguments_runs_before_it_as_in_rust() {
    let text = "
#[helper] fn twice(v: u32) -> u32 { v * 2 }
#[kernel] fn k(c: &mut [u32]) { let old = twice(atomic_add(c, 0, 1u32)); c[1] = old; }
";
    let k = kernel(text, "k");
    assert_eq!(k.inlined.len(), 1);
}

#[test]
fn a_helper_returns_a_tuple_to_a_tuple_pattern() {
    let text = "
#[helper]
fn min_max(a: f32, b: f32) -> (f32, f32) {
    if a < b { (a, b) } else { (b, a) }
}
#[helper]
fn offsets(i: u32, xs: u32, os: u32) -> (u32, u32, bool) {
    (i * xs, i * os, i % 2 == 0)
}
#[kernel]
fn k(x: &[f32], out: &mut [f32]) {
    let i = thread_idx_x();
    let (xi, mut oi, _) = offsets(i, 2, 1);
    oi += 0;
    let (lo, hi) = min_max(x[xi], x[xi + 1]);
    out[oi] = hi - lo;
}
";
    // A value `if` ending in tuples is not a tuple literal: refused.
    let shown = refused(text);
    assert!(shown.contains("end it with one"), "{shown}");
    let text = text.replace(
        "if a < b { (a, b) } else { (b, a) }",
        "let lo = if a < b { a } else { b };\n    (lo, a + b - lo)",
    );
    let k = kernel(&text, "k");
    assert_eq!(k.inlined.len(), 2);
    let names: Vec<&str> = k.locals.iter().map(|l| l.name.as_str()).collect();
    for n in ["xi", "oi", "lo", "hi"] {
        assert!(names.contains(&n), "{names:?}");
    }
    assert!(k.locals.iter().any(|l| l.name == "oi" && l.mutable));
}

#[test]
fn tuples_are_refused_where_they_do_not_fit() {
    let cases: &[(&str, &str)] = &[
        (
            "#[helper] fn two(a: u32) -> (u32, u32) { (a, a) }
             #[kernel] fn k(out: &mut [u32]) { out[0] = two(1); }",
            "returns 2 values",
        ),
        (
            "#[helper] fn two(a: u32) -> (u32, u32) { (a, a) }
             #[kernel] fn k(out: &mut [u32]) { let (a, b, c) = two(1); out[0] = a; }",
            "returns 2 values, the pattern names 3",
        ),
        (
            "#[kernel] fn k(out: &mut [u32]) { let (a, b) = (1u32, 2u32); out[0] = a; }",
            "only a helper's tuple can be destructured",
        ),
        (
            "#[helper] fn two(a: u32) -> (u32, u32) { (a, a, a) }
             #[kernel] fn k(out: &mut [u32]) { let (a, b) = two(1); out[0] = a; }",
            "expected 2 values, found 3",
        ),
        (
            "#[helper] fn two(a: u32) -> (u32, [u32; 2]) { (a, a) }
             #[kernel] fn k(out: &mut [u32]) { let (a, b) = two(1); out[0] = a; }",
            "a tuple of scalars",
        ),
    ];
    for (text, want) in cases {
        let shown = refused(text);
        assert!(shown.contains(want), "wanted `{want}` in:\n{shown}");
    }
}

#[test]
fn a_helper_in_another_module_is_not_in_scope() {
    let text = "
mod a {
    #[helper] fn f(i: u32) -> u32 { i }
}
#[kernel] fn k(out: &mut [u32]) { out[0] = f(1); }
";
    assert!(refused(text).contains("unknown function `f`"));
}
