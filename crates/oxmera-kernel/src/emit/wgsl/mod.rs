//! WGSL from the kernel IR.
//!
//! WGSL is the shading language of WebGPU; wgpu translates it to SPIR-V for
//! Vulkan, MSL for Metal and HLSL for DX12. This module writes one kernel,
//! for one target and one block size, as one WGSL compute shader. The rules
//! it follows, each with the reason:
//!
//! - **Bindings in parameter order.** Buffer parameters become
//!   `var<storage>` bindings 0, 1, … of group 0 in the order the kernel
//!   declares them (`read` for `&[T]`, `read_write` for `&mut [T]`); the
//!   scalar parameters travel together in one `var<uniform>` struct at the
//!   next binding, as values (never as one-element buffers). A uniform
//!   value is uniform for WGSL's own analysis too, so a loop bound read from
//!   it may enclose a barrier.
//! - **The launch is compiled in.** `block_dim_x()` is the workgroup size
//!   the shader declares, `warp_size()` the target's warp width and
//!   specialization constants their values: the same values the analysis
//!   checked the kernel with. A different block is a different shader.
//! - **Warps are the target's.** `lane_id()` and `warp_id()` are the linear
//!   thread index modulo and divided by the target's warp width. Shuffles
//!   and votes become subgroup operations, correct only when the adapter's
//!   subgroups have exactly that width; [`WgslKernel::subgroup_width`] says
//!   so, and a backend must refuse to launch on any other adapter.
//!   Shuffle lanes wrap or stay as the simulator's do (`shfl_down` past the
//!   warp's end returns the lane's own value), with a `select` where WGSL
//!   leaves the value undefined.
//! - **Values as Rust computes them.** Where WGSL's conversions or builtins
//!   differ from Rust's (`f32 as i32` of NaN is 0, `f32::min` ignores a
//!   NaN, shift amounts wrap at 32, `tanh` of a large argument is ±1), a
//!   small helper function makes the emitted code compute what the
//!   simulator computes.
//! - **What WGSL lacks is lowered.** `bool` buffers hold one `u32` word per
//!   element (WGSL's `bool` is not host-shareable); a memory an atomic
//!   touches is declared `atomic<…>` and every plain access to it becomes
//!   `atomicLoad`/`atomicStore`; `f32` atomics are compare-exchange loops on
//!   the bits, so they run on adapters without float atomics; CUDA's
//!   `atomicCAS` is strong where WGSL's compare-exchange is weak, so it
//!   retries a spurious failure.
//! - **64-bit types where the target has them.** `f64`, `i64` and `u64`
//!   are WGSL types only behind adapter features (wgpu's SHADER_F64 and
//!   SHADER_INT64, naga's FLOAT64 and SHADER_INT64 capabilities), so they
//!   are written only for a target whose dtypes hold them, and refused by
//!   name elsewhere; the f64 transcendentals, which Vulkan's GLSL.std.450
//!   lacks, are refused naming the builtin.
//! - **Barriers order both memories.** CUDA's `__syncthreads()` makes the
//!   block's global writes visible too, WGSL's `workgroupBarrier()` only
//!   workgroup memory, so a kernel that writes a global buffer gets a
//!   `storageBarrier()` beside each of its barriers.
//!
//! Uniformity, WGSL's and oxmera's: the WGSL specification asks a compiler
//! to reject a barrier under control flow its *static* analysis cannot
//! prove uniform, and `local_invocation_index` is never uniform to it. So
//! `flip` (a barrier under `if warp_id() == 0`), which oxmera's launch-aware
//! analysis passes at block 32 on a 32-wide target, is invalid WGSL by the
//! letter of the specification at every block. naga — wgpu's compiler,
//! which validates every shader oxmera emits in its tests — does not
//! enforce that rule: it accepts `flip` at block 32 *and* at 64, and every
//! divergent barrier of the broken corpus. On wgpu, then, oxmera's analysis
//! is the only guard, and the backend runs it for the adapter's warp width
//! before every launch; the emitter writes the shader as the IR says.

use std::fmt::Write as _;

use crate::ir::{
    ArrayId, Axis, BinOp, Builtin, Dim3, Expr, ExprKind, Kernel, Mem, ParamId, ParamKind, Scalar,
    Stmt, StmtKind, UnOp, Value, VoteKind,
};
use crate::target::Target;

use super::Survey;

mod lowered;
mod names;
mod special;

use names::{entry_name, literal};

/// What the WGSL emitter needs besides the kernel: one concrete launch.
#[derive(Debug, Clone, PartialEq)]
pub struct WgslOptions {
    /// The target the kernel was checked for (its warp width decides what
    /// `lane_id()` means and which subgroup size the shader needs).
    pub target: Target,
    /// The block (workgroup) size compiled into the shader.
    pub block: Dim3,
    /// Specialization values; `None`: the kernel's defaults.
    pub specs: Option<Vec<i64>>,
}

impl WgslOptions {
    /// Options for `block` on the generic target with default specs.
    pub fn new(block: Dim3) -> WgslOptions {
        WgslOptions {
            target: Target::generic(),
            block,
            specs: None,
        }
    }

    /// The same options for another target.
    pub fn with_target(mut self, target: Target) -> WgslOptions {
        self.target = target;
        self
    }
}

/// Why a kernel could not be written as WGSL: the emitters' one error.
pub type WgslError = super::EmitError;

/// One buffer binding of an emitted shader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferBinding {
    /// The `@binding` index in group 0.
    pub binding: u32,
    /// The kernel parameter it is.
    pub param: ParamId,
    /// The parameter's name.
    pub name: String,
    /// The element type as the kernel sees it (`bool` is one `u32` word).
    pub elem: Scalar,
    /// `&mut [T]`: bound `read_write`.
    pub writable: bool,
}

/// One scalar parameter's place in the uniform struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniformField {
    /// The kernel parameter it is.
    pub param: ParamId,
    /// Its byte offset in the struct.
    pub offset: u32,
    /// Its type (`bool` travels as a `u32` word).
    pub ty: Scalar,
}

/// An emitted shader and what a backend needs to bind and launch it.
#[derive(Debug, Clone, PartialEq)]
pub struct WgslKernel {
    /// The WGSL source.
    pub source: String,
    /// The entry point's name.
    pub entry_point: String,
    /// The workgroup size compiled in.
    pub block: Dim3,
    /// Buffer parameters, by binding.
    pub buffers: Vec<BufferBinding>,
    /// The binding of the scalar parameters' uniform struct, if any.
    pub uniform_binding: Option<u32>,
    /// The scalar parameters' layout in it.
    pub uniforms: Vec<UniformField>,
    /// `Some(w)`: the shader uses subgroup operations and is correct only on
    /// an adapter whose subgroups are exactly `w` lanes wide.
    pub subgroup_width: Option<u32>,
}

impl WgslKernel {
    /// The uniform struct's bytes for the scalar arguments, given in the
    /// kernel's parameter order (one value per scalar parameter). The size
    /// is rounded up to 16 bytes, as uniform bindings want.
    pub fn uniform_bytes(&self, scalars: &[Value]) -> Vec<u8> {
        let end = self
            .uniforms
            .last()
            .map_or(0, |f| (f.offset + uniform_size(f.ty)) as usize);
        let mut bytes = vec![0u8; end.div_ceil(16).max(1) * 16];
        for (field, v) in self.uniforms.iter().zip(scalars) {
            let o = field.offset as usize;
            let size = uniform_size(field.ty) as usize;
            bytes[o..o + size].copy_from_slice(&v.to_bits().to_le_bytes()[..size]);
        }
        bytes
    }
}

/// A scalar parameter's bytes (and alignment) in the uniform struct: 8 for
/// the 64-bit types, else one 4-byte word (`bool` travels as a `u32`).
fn uniform_size(ty: Scalar) -> u32 {
    if ty.bits() == 64 { 8 } else { 4 }
}

/// Writes `kernel` as a WGSL compute shader for one launch.
pub fn wgsl(kernel: &Kernel, options: &WgslOptions) -> Result<WgslKernel, WgslError> {
    let e = Emitter::new(kernel, options)?;
    for t in crate::target::dtypes_used(kernel) {
        match t {
            Scalar::F32 | Scalar::I32 | Scalar::U32 | Scalar::Bool => {}
            // The 64-bit types are shader types only where the adapter has
            // them (wgpu's SHADER_F64, SHADER_INT64; naga's FLOAT64,
            // SHADER_INT64 capabilities): the target says which.
            Scalar::F64 | Scalar::I64 | Scalar::U64 if !options.target.dtypes().contains(t) => {
                let feature = if t == Scalar::F64 {
                    "SHADER_F64"
                } else {
                    "SHADER_INT64"
                };
                return Err(e.unsupported(
                    &format!("a value of type `{t}`"),
                    &format!(
                        "the target has no `{t}` (the adapter lacks wgpu's {feature} feature)"
                    ),
                ));
            }
            Scalar::F64 | Scalar::I64 | Scalar::U64 => {}
            _ => {
                return Err(e.unsupported(
                    &format!("a value of type `{t}`"),
                    "the WGSL emitter writes f32, i32, u32, bool, and f64, i64, u64 where \
                     the target has them; not the 8- and 16-bit types so far",
                ));
            }
        }
    }
    e.run()
}

/// How a memory is declared and accessed in the shader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repr {
    /// `array<T>` read and written directly.
    Plain(Scalar),
    /// `array<u32>`: one word per `bool`.
    BoolWord,
    /// `array<atomic<T>>`; an `f32` memory is `atomic<u32>` holding bits.
    Atomic(Scalar),
}

struct Emitter<'k> {
    k: &'k Kernel,
    target: Target,
    block: Dim3,
    specs: Vec<i64>,
    warp: u32,
    /// The atomics, collectives and global writes the body holds.
    survey: Survey,
    /// Helper functions the body needs, by name, with their text.
    helpers: std::collections::BTreeMap<String, String>,
    body: String,
    fresh: u32,
}

impl<'k> Emitter<'k> {
    fn new(k: &'k Kernel, o: &WgslOptions) -> Result<Emitter<'k>, WgslError> {
        let specs = super::specs_for(k, o.specs.as_deref())?;
        Ok(Emitter {
            k,
            target: o.target,
            block: o.block,
            specs,
            warp: o.target.warp_width(),
            survey: Survey::of(k),
            helpers: Default::default(),
            body: String::new(),
            fresh: 0,
        })
    }

    fn unsupported(&self, construct: &str, why: &str) -> WgslError {
        WgslError::Unsupported {
            kernel: self.k.name.clone(),
            construct: construct.to_string(),
            language: "WGSL",
            target: self.target.to_string(),
            why: why.to_string(),
        }
    }

    fn elem_of(&self, mem: Mem) -> Scalar {
        match mem {
            Mem::Global(p) => match self.k.params[p as usize].kind {
                ParamKind::Buffer { elem, .. } => elem,
                ParamKind::Scalar(s) => s,
            },
            Mem::Shared(s) => self.k.shared[s as usize].elem,
            Mem::Local(a) => self.k.arrays[a as usize].elem,
        }
    }

    fn repr(&self, mem: Mem) -> Repr {
        let elem = self.elem_of(mem);
        if self.survey.atomic.contains(&mem) {
            Repr::Atomic(elem)
        } else if elem == Scalar::Bool {
            Repr::BoolWord
        } else {
            Repr::Plain(elem)
        }
    }

    fn storage_type(&self, mem: Mem) -> Result<String, WgslError> {
        Ok(match self.repr(mem) {
            Repr::Plain(s) => s.name().to_string(),
            Repr::BoolWord => "u32".into(),
            Repr::Atomic(Scalar::Bool) => {
                return Err(self.unsupported(
                    &format!("an atomic on the bool memory `{}`", self.k.mem_name(mem)),
                    "WGSL atomics hold i32 or u32",
                ));
            }
            Repr::Atomic(t) if t.bits() == 64 => {
                return Err(self.unsupported(
                    &format!("an atomic on the {t} memory `{}`", self.k.mem_name(mem)),
                    "oxmera's wgpu backend requests no 64-bit atomics \
                     (SHADER_INT64_ATOMIC_*), and WGSL has no f64 atomic",
                ));
            }
            Repr::Atomic(Scalar::I32) => "atomic<i32>".into(),
            Repr::Atomic(_) => "atomic<u32>".into(),
        })
    }

    fn mem_var(&self, mem: Mem) -> String {
        match mem {
            Mem::Global(p) => format!("g_{}", self.k.params[p as usize].name),
            Mem::Shared(s) => format!("s_{}", self.k.shared[s as usize].name),
            // Numbered like locals: two arrays may share a source name.
            Mem::Local(a) => {
                let name = self.k.arrays[a as usize].name.trim_start_matches('_');
                format!("a_{name}_{a}")
            }
        }
    }

    /// A local's WGSL name: its source name and its id, which no WGSL
    /// keyword ends in (leading underscores go: WGSL reserves `__`).
    fn local(&self, id: u32) -> String {
        let name = self.k.locals[id as usize].name.trim_start_matches('_');
        format!("{}_{id}", if name.is_empty() { "v" } else { name })
    }

    fn run(mut self) -> Result<WgslKernel, WgslError> {
        let k = self.k;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "// `{}`: WGSL written by oxmera from the kernel IR for target {}, block {}.",
            k.name, self.target, self.block
        );
        if !self.specs.is_empty() {
            let specs: Vec<String> = k
                .specs
                .iter()
                .zip(&self.specs)
                .map(|(s, v)| format!("{} = {v}", s.name))
                .collect();
            let _ = writeln!(out, "// Specialized with {}.", specs.join(", "));
        }
        if self.survey.collectives {
            let _ = writeln!(
                out,
                "// Uses subgroup operations: correct only where subgroups are {} lanes wide.",
                self.warp
            );
            // naga takes the subgroup builtins without `enable subgroups;` (it
            // does not parse that directive yet); wgpu gates them by feature.
        }
        out.push('\n');

        // Bindings: buffers in parameter order, then the scalars' uniform.
        let mut buffers = Vec::new();
        let mut uniforms = Vec::new();
        for (i, p) in k.params.iter().enumerate() {
            match p.kind {
                ParamKind::Buffer { elem, writable } => {
                    let mem = Mem::Global(i as ParamId);
                    let binding = buffers.len() as u32;
                    let access = if writable { "read_write" } else { "read" };
                    if self.survey.atomic.contains(&mem) && !writable {
                        return Err(self.unsupported(
                            &format!("an atomic on the read-only buffer `{}`", p.name),
                            "atomics need a `&mut` buffer",
                        ));
                    }
                    let _ = writeln!(
                        out,
                        "@group(0) @binding({binding}) var<storage, {access}> {}: array<{}>;",
                        self.mem_var(mem),
                        self.storage_type(mem)?
                    );
                    buffers.push(BufferBinding {
                        binding,
                        param: i as ParamId,
                        name: p.name.clone(),
                        elem,
                        writable,
                    });
                }
                ParamKind::Scalar(ty) => {
                    // WGSL's uniform layout: each field at a multiple of
                    // its own size (4, or 8 for the 64-bit types).
                    let size = uniform_size(ty);
                    let end = uniforms
                        .last()
                        .map_or(0, |f: &UniformField| f.offset + uniform_size(f.ty));
                    uniforms.push(UniformField {
                        param: i as ParamId,
                        offset: end.next_multiple_of(size),
                        ty,
                    });
                }
            }
        }
        let uniform_binding = (!uniforms.is_empty()).then_some(buffers.len() as u32);
        if let Some(b) = uniform_binding {
            out.push_str("\nstruct Params {\n");
            for f in &uniforms {
                let word = if f.ty == Scalar::Bool {
                    Scalar::U32
                } else {
                    f.ty
                };
                let _ = writeln!(out, "    p_{}: {},", k.params[f.param as usize].name, word);
            }
            out.push_str("}\n");
            let _ = writeln!(out, "@group(0) @binding({b}) var<uniform> params: Params;");
        }
        for (i, s) in k.shared.iter().enumerate() {
            let mem = Mem::Shared(i as u32);
            if s.dynamic {
                // An `override`-sized array would need the wgpu launch to
                // set the constant per dispatch; until it does, refuse.
                return Err(self.unsupported(
                    &format!("the dynamic shared array `{}`", s.name),
                    "WGSL has no dynamically sized workgroup memory; declare a \
                     `shared::<T>(LEN)` array whose LEN is a const generic instead",
                ));
            }
            let len = s
                .len
                .eval(&self.specs)
                .ok_or_else(|| WgslError::Specialization {
                    kernel: k.name.clone(),
                    what: format!("the length of shared array `{}` does not evaluate", s.name),
                })?;
            let _ = writeln!(
                out,
                "var<workgroup> {}: array<{}, {len}>;",
                self.mem_var(mem),
                self.storage_type(mem)?
            );
        }

        self.block_of(&k.body, 1)?;
        let body = std::mem::take(&mut self.body);
        for h in self.helpers.values() {
            out.push('\n');
            out.push_str(h);
        }
        let b = self.block;
        let _ = write!(
            out,
            "\n@compute @workgroup_size({}, {}, {})\nfn {}(\n    \
             @builtin(local_invocation_id) thread: vec3<u32>,\n    \
             @builtin(local_invocation_index) linear: u32,\n    \
             @builtin(workgroup_id) block: vec3<u32>,\n    \
             @builtin(num_workgroups) grid: vec3<u32>,\n) {{\n",
            b.x,
            b.y,
            b.z,
            entry_name(&k.entry_symbol())
        );
        for (i, l) in k.locals.iter().enumerate() {
            let ty = if l.ty == Scalar::Bool {
                "bool"
            } else {
                l.ty.name()
            };
            let _ = writeln!(out, "    var {}: {ty};", self.local(i as u32));
        }
        // Local arrays: function-scope (private to the invocation),
        // flattened row-major like the IR's index; the IR's own loop fills
        // them where the source's `let` stood.
        for (i, a) in k.arrays.iter().enumerate() {
            let mem = Mem::Local(i as ArrayId);
            let len = a
                .len
                .eval(&self.specs)
                .ok_or_else(|| WgslError::Specialization {
                    kernel: k.name.clone(),
                    what: format!("the length of local array `{}` does not evaluate", a.name),
                })?;
            let _ = writeln!(
                out,
                "    var {}: array<{}, {len}>;",
                self.mem_var(mem),
                self.storage_type(mem)?
            );
        }
        out.push_str(&body);
        out.push_str("}\n");
        Ok(WgslKernel {
            source: out,
            entry_point: entry_name(&k.entry_symbol()),
            block: self.block,
            buffers,
            uniform_binding,
            uniforms,
            subgroup_width: self.survey.collectives.then_some(self.warp),
        })
    }

    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.body.push_str("    ");
        }
        self.body.push_str(text);
        self.body.push('\n');
    }

    fn block_of(&mut self, stmts: &[Stmt], depth: usize) -> Result<(), WgslError> {
        for s in stmts {
            self.stmt(s, depth)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, d: usize) -> Result<(), WgslError> {
        match &s.kind {
            StmtKind::Assign { local, value } => {
                let v = self.expr(value)?;
                let t = format!("{} = {v};", self.local(*local));
                self.line(d, &t);
            }
            StmtKind::Store { mem, index, value } => {
                let i = self.expr(index)?;
                let v = self.expr(value)?;
                let var = self.mem_var(*mem);
                let t = match self.repr(*mem) {
                    Repr::Plain(_) => format!("{var}[{i}] = {v};"),
                    Repr::BoolWord => format!("{var}[{i}] = select(0u, 1u, {v});"),
                    Repr::Atomic(Scalar::F32) => {
                        format!("atomicStore(&{var}[{i}], bitcast<u32>({v}));")
                    }
                    Repr::Atomic(_) => format!("atomicStore(&{var}[{i}], {v});"),
                };
                self.line(d, &t);
            }
            StmtKind::Eval(e) => {
                let v = self.expr(e)?;
                self.line(d, &format!("_ = {v};"));
            }
            StmtKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond)?;
                self.line(d, &format!("if {c} {{"));
                self.block_of(then, d + 1)?;
                if otherwise.is_empty() {
                    self.line(d, "}");
                } else {
                    self.line(d, "} else {");
                    self.block_of(otherwise, d + 1)?;
                    self.line(d, "}");
                }
            }
            StmtKind::For {
                var,
                start,
                end,
                inclusive,
                step,
                body,
            } => {
                // Rust evaluates the bound and the step once, and stops
                // rather than wraps when the next value would pass the
                // bound; the distance left is computed in u32, which holds
                // it for i32 loops too.
                let n = self.fresh;
                self.fresh += 1;
                let v = self.local(*var);
                let ty = self.k.locals[*var as usize].ty;
                let (s, e, st) = (self.expr(start)?, self.expr(end)?, self.expr(step)?);
                // (u64 for a 64-bit loop.)
                let as_u32 = |x: &str| match ty {
                    Scalar::I32 => format!("bitcast<u32>({x})"),
                    Scalar::I64 => format!("bitcast<u64>({x})"),
                    _ => x.to_string(),
                };
                self.line(d, "{");
                self.line(d + 1, &format!("let end{n} = {e};"));
                self.line(d + 1, &format!("let step{n} = {st};"));
                self.line(d + 1, &format!("{v} = {s};"));
                self.line(d + 1, "loop {");
                let test = if *inclusive { "<=" } else { "<" };
                self.line(d + 2, &format!("if !({v} {test} end{n}) {{ break; }}"));
                self.block_of(body, d + 2)?;
                self.line(d + 2, "continuing {");
                self.line(
                    d + 3,
                    &format!(
                        "let left{n} = {} - {};",
                        as_u32(&format!("end{n}")),
                        as_u32(&v)
                    ),
                );
                self.line(d + 3, &format!("{v} = {v} + step{n};"));
                // Exclusive: stop when the step reaches the bound; inclusive:
                // when it passes it.
                let past = if *inclusive { ">" } else { ">=" };
                self.line(
                    d + 3,
                    &format!("break if {} {past} left{n};", as_u32(&format!("step{n}"))),
                );
                self.line(d + 2, "}");
                self.line(d + 1, "}");
                self.line(d, "}");
            }
            StmtKind::While { cond, body } => {
                self.line(d, "loop {");
                let c = self.expr(cond)?;
                self.line(d + 1, &format!("if !{c} {{ break; }}"));
                self.block_of(body, d + 1)?;
                self.line(d, "}");
            }
            StmtKind::Break => self.line(d, "break;"),
            StmtKind::Continue => self.line(d, "continue;"),
            StmtKind::Return => self.line(d, "return;"),
            StmtKind::Barrier => {
                if self.survey.writes_global {
                    self.line(d, "storageBarrier();");
                }
                self.line(d, "workgroupBarrier();");
            }
            StmtKind::WarpSync { .. } => {
                return Err(self.unsupported(
                    "`sync_warp(mask)`",
                    "WGSL has no barrier over a set of a subgroup's lanes; naga's \
                     `subgroupBarrier()` is a non-standard extension (wgpu's SUBGROUP_BARRIER \
                     feature) over the whole subgroup, which oxmera's wgpu backend does not \
                     request. Within a warp the lanes run together on every wgpu target \
                     oxmera knows; to order shared memory between them, use `sync_threads()`",
                ));
            }
            StmtKind::Fence => {
                return Err(self.unsupported(
                    "`thread_fence()`",
                    "WGSL has no device-scope memory fence: `storageBarrier()` orders storage \
                     memory only within the workgroup, and only as a barrier every invocation \
                     of it must reach. Use `sync_threads()` for the block, or two launches to \
                     order memory across blocks",
                ));
            }
        }
        Ok(())
    }

    fn helper(&mut self, name: &str, text: impl FnOnce() -> String) -> String {
        if matches!(
            name,
            "f32_as_i32"
                | "f32_as_u32"
                | "tanh_f32"
                | "min_f32"
                | "max_f32"
                | "pow_f32"
                | "erf_f32"
        ) {
            self.helpers.entry("is_nan".into()).or_insert_with(|| {
                "// NaN by its bits: a compiler may assume `x != x` is false.\n\
                 fn is_nan(x: f32) -> bool {\n    \
                 return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;\n}\n"
                    .to_string()
            });
        }
        if !self.helpers.contains_key(name) {
            let t = text();
            self.helpers.insert(name.to_string(), t);
        }
        name.to_string()
    }

    fn as_u32_index(&mut self, index: &Expr) -> Result<String, WgslError> {
        let i = self.expr(index)?;
        Ok(if index.ty == Scalar::I32 {
            format!("bitcast<u32>({i})")
        } else {
            i
        })
    }

    fn expr(&mut self, e: &Expr) -> Result<String, WgslError> {
        Ok(match &e.kind {
            ExprKind::Lit(v) => {
                if let Value::F64(x) = v
                    && !(x.is_finite() && (*x == 0.0 || x.is_normal()))
                    && !self.target.dtypes().contains(Scalar::U64)
                {
                    return Err(self.unsupported(
                        &format!("the f64 literal {x:?}"),
                        "an infinite, NaN or subnormal f64 is written by its bits, as a u64, \
                         and the target has no u64 (the adapter lacks SHADER_INT64)",
                    ));
                }
                literal(*v)
            }
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Param(p) => {
                let name = &self.k.params[*p as usize].name;
                if e.ty == Scalar::Bool {
                    format!("(params.p_{name} != 0u)")
                } else {
                    format!("params.p_{name}")
                }
            }
            ExprKind::Spec(s) => {
                let v = self.specs[*s as usize];
                match self.k.specs[*s as usize].ty {
                    Scalar::I32 => literal(Value::I32(v as i32)),
                    _ => literal(Value::U32(v as u32)),
                }
            }
            ExprKind::Builtin(b) => self.builtin(*b),
            ExprKind::Load { mem, index } => {
                let i = self.expr(index)?;
                let var = self.mem_var(*mem);
                match self.repr(*mem) {
                    Repr::Plain(_) => format!("{var}[{i}]"),
                    Repr::BoolWord => format!("({var}[{i}] != 0u)"),
                    Repr::Atomic(Scalar::F32) => {
                        format!("bitcast<f32>(atomicLoad(&{var}[{i}]))")
                    }
                    Repr::Atomic(_) => format!("atomicLoad(&{var}[{i}])"),
                }
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg)?;
                match (op, arg.ty) {
                    (UnOp::Neg, _) => format!("(-{a})"),
                    (UnOp::Not, Scalar::Bool) => format!("(!{a})"),
                    (UnOp::Not, _) => format!("(~{a})"),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs)?,
            ExprKind::Cast(arg) => self.cast(arg, e.ty)?,
            ExprKind::BitCast(arg) => format!("bitcast<{}>({})", e.ty, self.expr(arg)?),
            ExprKind::Math { func, args } => self.math(*func, args)?,
            ExprKind::Shuffle {
                kind,
                mask: _,
                value,
                arg,
            } => {
                // The mask is the analysis's business: a collective whose
                // lanes are not all converged is OXK002 before it gets here.
                let v = self.expr(value)?;
                let a = self.expr(arg)?;
                let a = if arg.ty == Scalar::I32 {
                    format!("bitcast<u32>({a})")
                } else {
                    a
                };
                let f = self.shuffle_helper(*kind, value.ty)?;
                format!("{f}({v}, {a}, linear % {}u)", self.warp)
            }
            ExprKind::Vote {
                kind,
                mask: _,
                pred,
            } => {
                let p = self.expr(pred)?;
                match kind {
                    VoteKind::Ballot => format!("subgroupBallot({p}).x"),
                    VoteKind::Any => format!("subgroupAny({p})"),
                    VoteKind::All => format!("subgroupAll({p})"),
                }
            }
            ExprKind::Atomic {
                op,
                mem,
                index,
                value,
                compare,
            } => self.atomic(*op, *mem, index, value, compare.as_deref())?,
        })
    }

    fn builtin(&self, b: Builtin) -> String {
        let axis = |a: Axis| a.letter();
        let dim = |a: Axis| self.block.get(a);
        match b {
            Builtin::ThreadIdx(a) => format!("thread.{}", axis(a)),
            Builtin::BlockIdx(a) => format!("block.{}", axis(a)),
            Builtin::BlockDim(a) => format!("{}u", dim(a)),
            Builtin::GridDim(a) => format!("grid.{}", axis(a)),
            Builtin::LaneId => format!("(linear % {}u)", self.warp),
            Builtin::WarpId => format!("(linear / {}u)", self.warp),
            Builtin::WarpSize => format!("{}u", self.warp),
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) -> Result<String, WgslError> {
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        Ok(match op {
            // Rust's wrapping shifts use the amount modulo 32; WGSL rejects
            // a constant amount of 32 or more, so the mask is explicit.
            BinOp::Shl | BinOp::Shr => {
                let mask = lhs.ty.bits() - 1;
                let amount = match rhs.ty {
                    Scalar::I32 => format!("(bitcast<u32>({b}) & {mask}u)"),
                    Scalar::I64 => format!("u32(bitcast<u64>({b}) & {mask}lu)"),
                    Scalar::U64 => format!("u32({b} & {mask}lu)"),
                    _ => format!("({b} & {mask}u)"),
                };
                format!("({a} {} {amount})", op.symbol())
            }
            BinOp::BitXor if lhs.ty == Scalar::Bool => format!("({a} != {b})"),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge if lhs.ty == Scalar::Bool => {
                format!("(select(0u, 1u, {a}) {} select(0u, 1u, {b}))", op.symbol())
            }
            _ => format!("({a} {} {b})", op.symbol()),
        })
    }
}
