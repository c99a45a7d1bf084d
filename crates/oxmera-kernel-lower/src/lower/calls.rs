//! Calls: the builtins a kernel may call — thread and block indices, math
//! intrinsics, `from_bits`, warp shuffles and votes, atomics — each with its
//! arity and argument types checked here, so the IR never holds a call it
//! cannot run.

use oxmera_kernel_ir::ir::*;
use quote::ToTokens;

use super::Lowering;
use crate::span::err;

type AxisBuiltin = fn(Axis) -> Builtin;

pub(super) const AXIS_BUILTINS: [(&str, AxisBuiltin); 4] = [
    ("thread_idx_", Builtin::ThreadIdx),
    ("block_idx_", Builtin::BlockIdx),
    ("block_dim_", Builtin::BlockDim),
    ("grid_dim_", Builtin::GridDim),
];

pub(super) fn builtin_named(name: &str) -> Option<Builtin> {
    match name {
        "lane_id" => return Some(Builtin::LaneId),
        "warp_id" => return Some(Builtin::WarpId),
        "warp_size" => return Some(Builtin::WarpSize),
        _ => {}
    }
    for (prefix, f) in AXIS_BUILTINS {
        if let Some(rest) = name.strip_prefix(prefix) {
            return match rest {
                "x" => Some(f(Axis::X)),
                "y" => Some(f(Axis::Y)),
                "z" => Some(f(Axis::Z)),
                _ => None,
            };
        }
    }
    None
}

pub(super) fn math_named(name: &str) -> Option<MathFn> {
    Some(match name {
        "exp" => MathFn::Exp,
        "log" | "ln" => MathFn::Log,
        "sqrt" => MathFn::Sqrt,
        "rsqrt" => MathFn::Rsqrt,
        "fma" | "mul_add" => MathFn::Fma,
        "abs" => MathFn::Abs,
        "min" => MathFn::Min,
        "max" => MathFn::Max,
        "tanh" => MathFn::Tanh,
        "floor" => MathFn::Floor,
        "ceil" => MathFn::Ceil,
        "sin" => MathFn::Sin,
        "cos" => MathFn::Cos,
        "exp2" => MathFn::Exp2,
        "log2" => MathFn::Log2,
        "pow" | "powf" => MathFn::Pow,
        "erf" => MathFn::Erf,
        "count_ones" => MathFn::CountOnes,
        "leading_zeros" => MathFn::LeadingZeros,
        "trailing_zeros" => MathFn::TrailingZeros,
        _ => return None,
    })
}

impl Lowering {
    pub(super) fn math<T: ToTokens>(
        &mut self,
        f: MathFn,
        args: Vec<Expr>,
        span: SpanId,
        node: T,
    ) -> syn::Result<Expr> {
        if args.len() != f.arity() {
            return Err(err(
                node,
                &format!("`{}` takes {} arguments", f.name(), f.arity()),
                "check the call",
            ));
        }
        if args.iter().any(|a| a.ty != args[0].ty) {
            return Err(err(
                node,
                "math arguments must have one type",
                "convert with `as`",
            ));
        }
        let ty = oxmera_kernel_ir::eval::math_type(f, args[0].ty).ok_or_else(|| {
            err(
                &node,
                &format!("`{}` does not take {}", f.name(), args[0].ty),
                "math functions take floats; abs the signed types; min/max every number; bit counts integers",
            )
        })?;
        Ok(Expr {
            kind: ExprKind::Math { func: f, args },
            ty,
            span,
        })
    }

    /// A builtin or helper call.
    pub(super) fn call(
        &mut self,
        c: &syn::ExprCall,
        hint: Option<Scalar>,
        span: SpanId,
    ) -> syn::Result<Expr> {
        let syn::Expr::Path(_) = &*c.func else {
            return Err(err(
                &c.func,
                "only builtins and helpers can be called by name",
                "see docs/kernels.md for the builtins",
            ));
        };
        let name = call_name(c);
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let arity = |n: usize| -> syn::Result<()> {
            if args.len() != n {
                return Err(err(
                    c,
                    &format!("`{name}` takes {n} arguments"),
                    "check the call",
                ));
            }
            Ok(())
        };
        if let Some(b) = builtin_named(&name) {
            arity(0)?;
            return Ok(Expr {
                kind: ExprKind::Builtin(b),
                ty: Scalar::U32,
                span,
            });
        }
        if name == "from_bits" {
            arity(1)?;
            // `f64::from_bits(u)`: the float the path names (`f32` when
            // the call is a bare `from_bits`).
            let float = match &*c.func {
                syn::Expr::Path(p) if p.path.segments.len() == 2 => {
                    let t = p.path.segments[0].ident.to_string();
                    Scalar::from_name(&t)
                        .filter(|t| t.is_float())
                        .ok_or_else(|| {
                            err(
                                &c.func,
                                &format!("`{t}::from_bits` is not a float's"),
                                "write f32::from_bits, f64::from_bits, f16::from_bits or bf16::from_bits",
                            )
                        })?
                }
                _ => Scalar::F32,
            };
            let bits_ty = float.bits_type().expect("floats have a bits type");
            let bits = self.expect(args[0], bits_ty)?;
            return Ok(Expr {
                kind: ExprKind::BitCast(Box::new(bits)),
                ty: float,
                span,
            });
        }
        if let Some(f) = math_named(&name) {
            arity(f.arity())?;
            let first = self.expr(args[0], hint.filter(|h| *h != Scalar::Bool))?;
            let mut v = vec![first];
            for a in &args[1..] {
                let ty = v[0].ty;
                v.push(self.expect(a, ty)?);
            }
            return self.math(f, v, span, c);
        }
        let shuffle = match name.as_str() {
            "shfl_xor_sync" => Some(ShuffleKind::Xor),
            "shfl_down_sync" => Some(ShuffleKind::Down),
            "shfl_up_sync" => Some(ShuffleKind::Up),
            "shfl_sync" => Some(ShuffleKind::Idx),
            _ => None,
        };
        if let Some(kind) = shuffle {
            arity(3)?;
            let mask = self.expect(args[0], Scalar::U32)?;
            let value = self.expr(args[1], hint)?;
            if value.ty == Scalar::Bool {
                return Err(err(
                    args[1],
                    "shuffles move numbers",
                    "shuffle `x as u32` and compare",
                ));
            }
            let arg = self.expect(args[2], Scalar::U32)?;
            let ty = value.ty;
            return Ok(Expr {
                kind: ExprKind::Shuffle {
                    kind,
                    mask: Box::new(mask),
                    value: Box::new(value),
                    arg: Box::new(arg),
                },
                ty,
                span,
            });
        }
        let vote = match name.as_str() {
            "ballot_sync" => Some((VoteKind::Ballot, Scalar::U32)),
            "any_sync" => Some((VoteKind::Any, Scalar::Bool)),
            "all_sync" => Some((VoteKind::All, Scalar::Bool)),
            _ => None,
        };
        if let Some((kind, ty)) = vote {
            arity(2)?;
            let mask = self.expect(args[0], Scalar::U32)?;
            let pred = self.expect(args[1], Scalar::Bool)?;
            return Ok(Expr {
                kind: ExprKind::Vote {
                    kind,
                    mask: Box::new(mask),
                    pred: Box::new(pred),
                },
                ty,
                span,
            });
        }
        let atomic = AtomicOp::ALL.into_iter().find(|op| op.name() == name);
        if let Some(op) = atomic {
            arity(if op == AtomicOp::Cas { 4 } else { 3 })?;
            let (mem, elem) = self.memory(args[0], true)?;
            if let Mem::Local(_) = mem {
                return Err(err(
                    args[0],
                    &format!("`{name}` on a local array, which only its own thread sees"),
                    "update it with a plain `a[i] += v`: no other thread can race on it",
                ));
            }
            if self.row_len_of(mem).is_some() {
                return Err(err(
                    args[0],
                    &format!("`{name}` on a 2-D shared array"),
                    "declare a 1-D `shared::<T>(LEN)` array for atomics and index it as `row * COLS + col`",
                ));
            }
            if !op.accepts(elem) {
                return Err(err(
                    c,
                    &format!("`{name}` does not take {elem}"),
                    "atomic_add/min/max/exch/cas take f32, f64, i32, u32, i64, u64; \
                     atomic_sub/and/or/xor take i32, u32, i64, u64; atomic_inc takes u32; \
                     no atomic takes u8, u16, f16 or bf16 (no portable hardware has them)",
                ));
            }
            let index = self.index(args[1])?;
            let compare = if op == AtomicOp::Cas {
                Some(Box::new(self.expect(args[2], elem)?))
            } else {
                None
            };
            let value = self.expect(args[args.len() - 1], elem)?;
            self.atomics += 1;
            return Ok(Expr {
                kind: ExprKind::Atomic {
                    op,
                    mem,
                    index: Box::new(index),
                    value: Box::new(value),
                    compare,
                },
                ty: elem,
                span,
            });
        }
        match name.as_str() {
            "sync_threads" | "sync_warp" | "thread_fence" => Err(err(
                c,
                &format!("`{name}(..)` is a statement"),
                "call it on its own line",
            )),
            "shared" => Err(err(
                c,
                "shared arrays are declared with `let`",
                "write `let s = shared::<f32>(N);`",
            )),
            _ => {
                if let Some(f) = self.helper(&name) {
                    return self.inline_call(c, &f, span)?.ok_or_else(|| {
                        err(
                            c,
                            &format!("the helper `{name}` returns nothing"),
                            &format!("call it as a statement: `{name}(..);`"),
                        )
                    });
                }
                Err(err(
                    c,
                    &format!("unknown function `{name}`"),
                    "kernels call builtins and `#[helper]` functions beside them (in one \
                     `#[kernels] mod`, or one file for `oxmera kernel`); see docs/kernels.md",
                ))
            }
        }
    }
}

/// The called function's name: the path's last segment.
pub(super) fn call_name(c: &syn::ExprCall) -> String {
    match &*c.func {
        syn::Expr::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}
