//! What a launch may ask before any statement runs: the kernel's declared
//! launch space (OXK005) and the shared memory the target grants a block
//! (OXK004, from the arrays' lengths under the specialization constants).

use crate::ir::*;
use crate::target::TargetKind;

use super::{CheckError, CheckOptions, Finding, Rule};

pub(super) fn contract(k: &Kernel, opts: &CheckOptions, out: &mut Vec<Finding>) {
    let l = opts.launch;
    let mut bad = Vec::new();
    if !k.launch.blocks.is_empty() && !k.launch.blocks.contains(&l.block) {
        let allowed: Vec<String> = k.launch.blocks.iter().map(|d| d.to_string()).collect();
        bad.push(format!(
            "block {} is not one of the declared blocks {}",
            l.block,
            allowed.join(", ")
        ));
    }
    if !k.launch.grids.is_empty() && !k.launch.grids.contains(&l.grid) {
        let allowed: Vec<String> = k.launch.grids.iter().map(|d| d.to_string()).collect();
        bad.push(format!(
            "grid {} is not one of the declared grids {}",
            l.grid,
            allowed.join(", ")
        ));
    }
    if bad.is_empty() {
        return;
    }
    out.push(Finding {
        rule: Rule::LaunchContract,
        message: format!("launch contradicts the launch contract of `{}`", k.name),
        span: 0,
        label: "the kernel declares its launch space here".into(),
        notes: Vec::new(),
        extra: bad,
        help: "launch with a declared configuration, or add this one to `#[kernel(block = [...])]` (the macro then checks it too)".into(),
        lanes: None,
        confirmed: true,
        launch: l,
        target: opts.target,
    });
}

pub(super) fn shared_budget(
    k: &Kernel,
    opts: &CheckOptions,
    specs: &[i64],
    out: &mut Vec<Finding>,
) -> Result<(), CheckError> {
    let dynamic = opts.dynamic_shared_bytes;
    let mut total = dynamic;
    for s in k.shared.iter().filter(|s| !s.dynamic) {
        let n = s
            .len
            .eval(specs)
            .and_then(|n| n.checked_mul(s.elem.size_bytes()))
            .ok_or_else(|| CheckError::SharedLength {
                kernel: k.name.clone(),
                array: s.name.clone(),
            })?;
        total = total.saturating_add(n);
    }
    let limit = opts.target.shared_max();
    let what = opts.target.shared_limit_text();
    if total <= limit {
        return Ok(());
    }
    // A dynamic array's bytes are the launch's.
    let bytes = |s: &SharedArray| {
        if s.dynamic {
            dynamic
        } else {
            s.len.eval(specs).unwrap_or(0) * s.elem.size_bytes()
        }
    };
    let biggest = k
        .shared
        .iter()
        .max_by_key(|s| bytes(s))
        .map(|s| s.span)
        .unwrap_or(0);
    let mut extra: Vec<String> = k
        .shared
        .iter()
        .map(|s| {
            if s.dynamic {
                return format!(
                    "`{}`: dynamic, {dynamic} bytes from the launch ({} x {})",
                    s.name,
                    dynamic / s.elem.size_bytes(),
                    s.elem
                );
            }
            let n = s.len.eval(specs).unwrap_or(0);
            format!(
                "`{}`: {} x {} = {} bytes",
                s.name,
                n,
                s.elem,
                n * s.elem.size_bytes()
            )
        })
        .collect();
    if dynamic > 0 && k.dynamic_shared().is_none() {
        extra.push(format!(
            "{dynamic} bytes of dynamic shared memory from the launch, which no array uses"
        ));
    }
    out.push(Finding {
        rule: Rule::SharedOverBudget,
        message: format!("shared memory of {total} bytes per block exceeds {what} ({limit} bytes)"),
        span: biggest,
        label: "the largest shared array".into(),
        notes: Vec::new(),
        extra,
        help: if opts.target.kind() == TargetKind::Generic {
            "shrink the tile, or name a target with `--target` (e.g. `cuda:sm_80`) or `--cc` whose opt-in limit is larger".into()
        } else {
            "shrink the tile or the element count; this target cannot hold it".into()
        },
        lanes: None,
        confirmed: true,
        launch: opts.launch,
        target: opts.target,
    });
    Ok(())
}
