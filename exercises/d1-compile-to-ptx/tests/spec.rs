//! The spec of D1. Each test names what it checks in your `SAXPY_PTX`.
//! The module is read the way NVIDIA's tools read it: `ptxas`, the PTX
//! assembler, turns it into machine code for sm_90 (no GPU and no driver
//! needed) and refuses what the driver would refuse, with the line; the
//! other tests read the instructions themselves, and compare the entry
//! with what oxmera emits for your `saxpy`.

use std::path::PathBuf;

use d1::{SAXPY_PTX, saxpy};
use oxmera_kernel::emit::ptx::{PtxOptions, assemble_source, find_ptxas, ptx};
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::limits::ComputeCapability;

/// Hopper, the part the module is for.
fn sm_90() -> ComputeCapability {
    ComputeCapability { major: 9, minor: 0 }
}

/// The module, once it says it is for sm_90: every test reads it as such.
fn module() -> &'static str {
    let target = SAXPY_PTX
        .lines()
        .find(|l| l.trim_start().starts_with(".target"))
        .unwrap_or("(no .target line)");
    assert!(
        target.split_whitespace().nth(1) == Some("sm_90"),
        "SAXPY_PTX says `{}`: the module must target sm_90 (Hopper), so write `.target sm_90`, \
         and a `.version` whose ISA knows sm_90",
        target.trim()
    );
    SAXPY_PTX
}

/// NVIDIA's assembler: `OXMERA_PTXAS`, `ptxas` on `PATH`, under
/// `CUDA_HOME`, or where oxmera's CI installs it.
fn ptxas() -> PathBuf {
    if let Some(p) = find_ptxas() {
        return p;
    }
    let cached = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/oxmera-ptxas-12.9.86/nvidia/cuda_nvcc/bin/ptxas"));
    match cached {
        Some(p) if p.is_file() => p,
        _ => panic!(
            "D1 needs NVIDIA's PTX assembler, ptxas, and none was found (no GPU is needed, only \
             the assembler). Install it from pip, as oxmera's CI does:\n    \
             python3 -m pip install --target ~/.cache/oxmera-ptxas-12.9.86 nvidia-cuda-nvcc-cu12==12.9.86\n\
             (the spec finds it there), or set OXMERA_PTXAS to a ptxas you have."
        ),
    }
}

/// The instructions of the body, trimmed, without comments, labels or
/// declarations: `(opcode, operands)`, operands without `[ ]` and `;`.
fn instructions(src: &str) -> Vec<(String, Vec<String>)> {
    let body = src.split_once('{').map(|(_, b)| b).unwrap_or("");
    body.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| !l.is_empty() && !l.starts_with('.') && !l.ends_with(':') && *l != "}")
        .map(|l| {
            let l = l.trim_end_matches(';');
            let (op, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            let operands = rest
                .split(',')
                .map(|o| {
                    o.trim()
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_string()
                })
                .filter(|o| !o.is_empty())
                .collect();
            (op.to_string(), operands)
        })
        .collect()
}

/// The lines from `.visible .entry` to `.reqntid` (or to the body's `{`).
fn entry(src: &str) -> Vec<String> {
    src.lines()
        .map(str::trim)
        .skip_while(|l| !l.starts_with(".visible .entry"))
        .take_while(|l| *l != "{")
        .map(String::from)
        .collect()
}

#[test]
fn ptxas_assembles_it_for_sm_90() {
    let src = module();
    let assembler = ptxas();
    match assemble_source(&assembler, src, sm_90()) {
        Ok(report) => assert!(
            report.spill_stores.unwrap_or(0) == 0,
            "ptxas assembles SAXPY_PTX for sm_90 but spills to local memory:\n{}",
            report.info
        ),
        Err(e) => panic!("SAXPY_PTX for sm_90: {e}"),
    }
}

#[test]
fn the_multiply_and_the_add_are_one_fma() {
    let ops = instructions(module());
    let fmas = ops.iter().filter(|(op, _)| op == "fma.rn.f32").count();
    let split: Vec<&str> = ops
        .iter()
        .filter(|(op, _)| {
            (op.starts_with("mul.") || op.starts_with("add.")) && op.ends_with(".f32")
        })
        .map(|(op, _)| op.as_str())
        .collect();
    assert!(
        fmas == 1 && split.is_empty(),
        "SAXPY_PTX has {fmas} `fma.rn.f32` and the f32 multiplies and adds {split:?}: `a * x[i] + y[i]` \
         should be exactly one `fma.rn.f32 d, a, x, y` (one rounding), and no f32 `mul` or `add` left"
    );
}

#[test]
fn the_fma_computes_a_times_x_plus_y_and_stores_it_to_y() {
    // Follows the registers: which parameter each address is computed
    // from, which address each f32 is loaded from, and where the fma's
    // result is stored.
    let ops = instructions(module());
    let mut address: Vec<(String, String)> = Vec::new(); // %rd -> "x" | "y"
    let mut loaded: Vec<(String, String)> = Vec::new(); // %f -> "x" | "y"
    let lookup = |v: &[(String, String)], r: &str| {
        v.iter().rev().find(|(k, _)| k == r).map(|(_, s)| s.clone())
    };
    let mut fma = None;
    let mut stored = Vec::new();
    for (op, o) in &ops {
        match op.as_str() {
            "add.s64" if o.len() == 3 => {
                for (param, name) in [("%x_arg", "x"), ("%y_arg", "y")] {
                    if o[1] == param || o[2] == param {
                        address.push((o[0].clone(), name.to_string()));
                    }
                }
            }
            "ld.global.f32" if o.len() == 2 => {
                if let Some(b) = lookup(&address, &o[1]) {
                    loaded.push((o[0].clone(), b));
                }
            }
            "fma.rn.f32" if o.len() == 4 => fma = Some(o.clone()),
            "st.global.f32" if o.len() == 2 => {
                stored.push((lookup(&address, &o[0]).unwrap_or_default(), o[1].clone()))
            }
            _ => {}
        }
    }
    let o = fma.expect("SAXPY_PTX has no `fma.rn.f32 d, a, b, c` with four operands");
    let what = |r: &str| {
        if r == "%a_arg" {
            "a".to_string()
        } else {
            lookup(&loaded, r)
                .map(|b| format!("{b}[i]"))
                .unwrap_or_else(|| format!("{r} (neither a nor a load)"))
        }
    };
    let (m1, m2, add) = (what(&o[1]), what(&o[2]), what(&o[3]));
    let product_ok = (m1 == "a" && m2 == "x[i]") || (m1 == "x[i]" && m2 == "a");
    assert!(
        product_ok && add == "y[i]",
        "`fma.rn.f32 {}` computes {m1} * {m2} + {add}; saxpy needs a * x[i] + y[i]",
        o.join(", ")
    );
    assert!(
        stored.iter().any(|(b, r)| b == "y" && *r == o[0]),
        "the fma's result {} is never stored to y (`st.global.f32 [y + 4i], {}`)",
        o[0],
        o[0]
    );
}

#[test]
fn the_entry_keeps_its_name_parameters_and_block() {
    // What the host and the driver see: the entry's name and parameters,
    // and the block it was compiled for, as oxmera emits them for sm_90.
    let src = module();
    let emitted = ptx(saxpy(), &PtxOptions::new(sm_90(), Dim3::x(256)))
        .unwrap_or_else(|e| panic!("oxmera could not emit PTX for saxpy: {e}"));
    let want = entry(&emitted.source);
    let got = entry(src);
    assert!(
        got == want,
        "SAXPY_PTX's entry reads\n    {}\nbut saxpy's is\n    {}\nkeep the name, the parameters in order, and `.reqntid 256, 1, 1` (the block \
         `block_dim_x()` was compiled in as)",
        got.join("\n    "),
        want.join("\n    ")
    );
}
