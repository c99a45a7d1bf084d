//! Emitters: the kernel IR written out in a GPU's own language.
//!
//! Each emitter reads the IR and nothing else — not the simulator's
//! compiled form, not another emitter's text — so that what runs on a GPU
//! and what the analysis and the simulator judged are the same program,
//! seen from one source. An emitter takes the [`Target`](crate::target::Target)
//! the kernel was checked for and one concrete launch (block size and
//! specialization values), because what it writes depends on both: the
//! warp width decides what `lane_id()` means, and the block size is
//! compiled into the shader as its workgroup size.
//!
//! - [`wgsl`]: WGSL for wgpu (Vulkan, Metal, DX12).
//! - [`ptx`]: PTX for NVIDIA GPUs (the CUDA driver JIT-compiles it; NVIDIA's
//!   `ptxas` assembles it offline with no GPU).
//!
//! What the two share lives here: the one error type, the polynomial
//! both write for `erf` ([`erf_approx`]), the survey of what a
//! body holds (atomics, collectives, global writes), and the check of the
//! specialization values.

use std::collections::HashSet;

use thiserror::Error;

use crate::ir::{Expr, ExprKind, Kernel, Mem, Stmt, StmtKind};

pub mod erf_approx;
pub mod ptx;
pub mod wgsl;

/// Why a kernel could not be written in a GPU's language.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EmitError {
    /// The construct has no form in that language on this target.
    #[error(
        "kernel `{kernel}`: {construct} cannot be written as {language} for target {target}: {why}"
    )]
    Unsupported {
        /// The kernel.
        kernel: String,
        /// The construct, as the source spells it.
        construct: String,
        /// The language: `WGSL` or `PTX`.
        language: &'static str,
        /// The target.
        target: String,
        /// Why not.
        why: String,
    },
    /// A length or a specialization value does not evaluate.
    #[error("kernel `{kernel}`: {what}")]
    Specialization {
        /// The kernel.
        kernel: String,
        /// What failed.
        what: String,
    },
}

/// The first scalar type in `k` outside `written`, the set an emitter
/// writes (for PTX, every type the target has), which it refuses by name
/// rather than write wrong code.
pub(crate) fn first_unwritten_type(
    k: &Kernel,
    written: crate::target::ScalarSet,
) -> Option<oxmera_kernel_ir::ir::Scalar> {
    crate::target::dtypes_used(k)
        .into_iter()
        .find(|t| !written.contains(*t))
}

/// The specialization values an emitter compiles in: the given ones, or the
/// kernel's defaults; a count that does not match is an error.
pub(crate) fn specs_for(k: &Kernel, given: Option<&[i64]>) -> Result<Vec<i64>, EmitError> {
    let specs = given
        .map(<[i64]>::to_vec)
        .unwrap_or_else(|| k.default_specs());
    if specs.len() != k.specs.len() {
        return Err(EmitError::Specialization {
            kernel: k.name.clone(),
            what: format!(
                "{} specialization values for {} constants",
                specs.len(),
                k.specs.len()
            ),
        });
    }
    Ok(specs)
}

/// What an emitter must know about a body before it writes a line: which
/// memories an atomic touches (their plain accesses change form), whether
/// warp collectives appear, and whether the kernel writes global memory.
#[derive(Debug, Clone, Default)]
pub(crate) struct Survey {
    /// Memories an atomic touches.
    pub atomic: HashSet<Mem>,
    /// A shuffle or a vote appears.
    pub collectives: bool,
    /// A store or an atomic writes a global buffer.
    pub writes_global: bool,
}

impl Survey {
    /// Surveys the kernel's body.
    pub fn of(k: &Kernel) -> Survey {
        let mut s = Survey::default();
        s.block(&k.body);
        s
    }

    fn block(&mut self, body: &[Stmt]) {
        for st in body {
            match &st.kind {
                StmtKind::Assign { value, .. } => self.expr(value),
                StmtKind::Store { mem, index, value } => {
                    self.writes_global |= matches!(mem, Mem::Global(_));
                    self.expr(index);
                    self.expr(value);
                }
                StmtKind::Eval(e) => self.expr(e),
                StmtKind::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    self.expr(cond);
                    self.block(then);
                    self.block(otherwise);
                }
                StmtKind::For {
                    start,
                    end,
                    step,
                    body,
                    ..
                } => {
                    self.expr(start);
                    self.expr(end);
                    self.expr(step);
                    self.block(body);
                }
                StmtKind::While { cond, body } => {
                    self.expr(cond);
                    self.block(body);
                }
                StmtKind::WarpSync { mask } => self.expr(mask),
                StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Return
                | StmtKind::Barrier
                | StmtKind::Fence => {}
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Load { index, .. } => self.expr(index),
            ExprKind::Unary { arg, .. } | ExprKind::Cast(arg) | ExprKind::BitCast(arg) => {
                self.expr(arg)
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Math { args, .. } => args.iter().for_each(|a| self.expr(a)),
            ExprKind::Shuffle {
                mask, value, arg, ..
            } => {
                self.collectives = true;
                [mask, value, arg].into_iter().for_each(|a| self.expr(a));
            }
            ExprKind::Vote { mask, pred, .. } => {
                self.collectives = true;
                self.expr(mask);
                self.expr(pred);
            }
            ExprKind::Atomic {
                mem,
                index,
                value,
                compare,
                ..
            } => {
                self.atomic.insert(*mem);
                self.writes_global |= matches!(mem, Mem::Global(_));
                self.expr(index);
                self.expr(value);
                if let Some(c) = compare {
                    self.expr(c);
                }
            }
            ExprKind::Lit(_)
            | ExprKind::Local(_)
            | ExprKind::Param(_)
            | ExprKind::Spec(_)
            | ExprKind::Builtin(_) => {}
        }
    }
}
