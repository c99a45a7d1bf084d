//! The builtins `pow`/`powf`, `erf`, `sync_warp` and `thread_fence`, and
//! `step_by`'s step, through the file front door: what they lower to, and
//! which mistakes are refused with which hint.

use oxmera_kernel_ir::pretty::print;
use oxmera_kernel_lower::file::lower_source;

fn printed(text: &str) -> String {
    let f = lower_source("b.rs", text).unwrap_or_else(|e| panic!("{e}"));
    let k = f.pick(None).expect("one kernel").clone();
    oxmera_kernel_ir::validate::validate(&k).unwrap();
    print(&k)
}

fn refused(text: &str) -> String {
    match lower_source("b.rs", text) {
        Ok(_) => panic!("lowered:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn pow_and_erf_lower_to_math_intrinsics() {
    let ir = printed(
        "#[kernel]\nfn k(x: &[f32], out: &mut [f32]) {\n    let i = thread_idx_x();\n    \
         out[i] = x[i].powf(2.5) + pow(x[i], 0.5) + erf(x[i]) + x[i].erf();\n}\n",
    );
    assert!(ir.contains("pow.f32(global x[%0 i], 2.5f32)"), "{ir}");
    assert!(ir.contains("pow.f32(global x[%0 i], 0.5f32)"), "{ir}");
    assert!(ir.contains("erf.f32(global x[%0 i])"), "{ir}");
}

#[test]
fn pow_and_erf_take_f32_and_their_arity() {
    let e = refused("#[kernel]\nfn k(out: &mut [f32]) {\n    out[0] = erf(1u32) as f32;\n}\n");
    assert!(e.contains("`erf` does not take u32"), "{e}");
    let e = refused("#[kernel]\nfn k(out: &mut [f32]) {\n    out[0] = pow(2.0);\n}\n");
    assert!(e.contains("`pow` takes 2 arguments"), "{e}");
    let e = refused("#[kernel]\nfn k(out: &mut [i32]) {\n    out[0] = 2i32.powf(3i32);\n}\n");
    assert!(e.contains("`pow` does not take i32"), "{e}");
}

#[test]
fn sync_warp_and_thread_fence_are_statements() {
    let ir = printed(
        "#[kernel]\nfn k(out: &mut [u32]) {\n    let t = thread_idx_x();\n    out[t] = 1;\n    \
         thread_fence();\n    sync_warp(0xffff_ffff);\n}\n",
    );
    assert!(ir.contains("fence.device;  // line 5"), "{ir}");
    assert!(
        ir.contains("barrier.warp(4294967295u32);  // line 6"),
        "{ir}"
    );
    let e = refused("#[kernel]\nfn k(out: &mut [u32]) {\n    out[0] = sync_warp(1);\n}\n");
    assert!(e.contains("`sync_warp(..)` is a statement"), "{e}");
    let e = refused("#[kernel]\nfn k(out: &mut [u32]) {\n    sync_warp();\n}\n");
    assert!(e.contains("`sync_warp` takes one argument"), "{e}");
    let e = refused("#[kernel]\nfn k(out: &mut [u32]) {\n    sync_warp(1.0);\n}\n");
    assert!(e.contains("expected u32"), "{e}");
    let e = refused("#[kernel]\nfn k(out: &mut [u32]) {\n    thread_fence(1);\n}\n");
    assert!(e.contains("`thread_fence` takes no arguments"), "{e}");
}

#[test]
fn a_literal_step_of_zero_or_below_is_refused() {
    let e = refused(
        "#[kernel]\nfn k(out: &mut [u32]) {\n    for i in (0..8).step_by(0) {\n        \
         out[i] = i;\n    }\n}\n",
    );
    assert!(e.contains("`step_by(0)` never advances"), "{e}");
    let e = refused(
        "#[kernel]\nfn k(out: &mut [i32]) {\n    for i in (0i32..8).step_by(-2) {\n        \
         out[0] = i;\n    }\n}\n",
    );
    assert!(e.contains("cannot be negative"), "{e}");
    // A step computed at run time is the simulator's to check.
    printed(
        "#[kernel]\nfn k(s: &[u32], out: &mut [u32]) {\n    for i in (0..8).step_by(s[0]) {\n        \
         out[i] = i;\n    }\n}\n",
    );
}
