//! PTX from the kernel IR.
//!
//! PTX is NVIDIA's virtual instruction set: the CUDA driver compiles it to
//! the machine code of the GPU it finds (a JIT, once per module), and
//! NVIDIA's `ptxas` assembles it offline for any `sm_XY` with no GPU and no
//! driver — which is how CI proves every emitted kernel valid. This module
//! writes one kernel, for one compute capability and one block size, as one
//! PTX module with one `.entry`. The rules it follows, each with the reason:
//!
//! - **Readable first.** Learners read this output. Every IR local is a
//!   named register (`%acc_3` is the local `acc`, id 3), every parameter
//!   one too (`%n_arg`, `%x_arg`), each statement is preceded by its source
//!   line as a comment, and labels say what they close (`$L4_else`,
//!   `$L7_break`). Temporaries are `%r` (32-bit integers), `%f` (`f32`),
//!   `%p` (predicates), `%rd` (64-bit integers and addresses), `%fd`
//!   (`f64`) and `%h` (16-bit halves in transit); `ptxas` allocates the
//!   real registers.
//! - **The launch is compiled in.** `block_dim_x()` is the block size the
//!   options name, and the entry declares it with `.reqntid`, so a launch
//!   with any other block is refused by the driver instead of running a
//!   kernel whose uniformity was proved for another block.
//! - **Values as Rust computes them.** Arithmetic is IEEE with
//!   round-to-nearest written out (`add.rn.f32`), which also forbids
//!   `ptxas` from fusing a multiply and an add the source kept apart — the
//!   simulator's result, bit for bit (NaN payloads aside: the GPU writes
//!   its canonical NaN where the host writes its own). `f32 as i32` is `cvt.rzi`, which
//!   saturates and maps NaN to 0 as Rust does; negation and `abs` of an
//!   `f32` work on the sign bit, so a NaN keeps its payload; shift amounts
//!   are masked to the width as Rust's wrapping shifts are. `u8`/`u16`
//!   results are masked to their width, `f16`/`bf16` ones computed in
//!   `f32` and rounded once to the half (see [`Class`]), and a signed
//!   division by -1 is guarded so that `MIN / -1` wraps, as eval defines.
//! - **Approximations are named.** `exp`, `ln` and `tanh` lower to the
//!   hardware's approximations (`ex2.approx`, `lg2.approx`, `tanh.approx`),
//!   as CUDA's `__expf` does; their error bounds are in `docs/kernels.md`
//!   and differ from the simulator's correctly rounded values. `sqrt` is
//!   `sqrt.rn` and `rsqrt` is `1 / sqrt.rn` (`rcp.rn`): exact as the
//!   simulator computes them.
//! - **Warps are 32 wide.** Every NVIDIA part runs warps of 32, so
//!   `lane_id()` is the linear thread index modulo 32 and the collectives
//!   are `shfl.sync` / `vote.sync` with the kernel's member mask. Shuffle
//!   offsets are clamped so that lanes past the warp's end read their own
//!   value, as the simulator's do (PTX reads only the offset's low 5 bits).
//! - **Memories.** Buffers are `.u64` pointers converted to the global
//!   window once; each element sits at its own width (a `u8` in a byte,
//!   an `f64` in 8), but `bool` elements are one 32-bit word, as everywhere
//!   in the language. A memory an atomic touches is read and written `.volatile`
//!   elsewhere, so a spin on it is not hoisted out of its loop. Shared
//!   arrays are static `.shared` up to the 48 KiB static limit; beyond it
//!   they are carved out of one dynamic `.extern .shared` block whose size
//!   the launcher must pass ([`PtxKernel::dynamic_shared_bytes`]). A
//!   `shared_dynamic` array is that block too (after any carved arrays),
//!   sized by the launch. A thread's local arrays are `.local` memory,
//!   addressed through a 64-bit base (`ld.local`/`st.local`).
//! - **Barriers.** `sync_threads()` is `bar.sync 0`, which also orders the
//!   block's global and shared writes, as `__syncthreads()` does.
//!
//! The PTX ISA version is the lowest that knows the target
//! ([`isa_for`]): the older the version, the older the drivers that
//! JIT-compile the module.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::ir::{
    ArrayId, Axis, Builtin, Dim3, Kernel, LocalId, Mem, ParamId, ParamKind, Scalar, Stmt,
};
use crate::limits::ComputeCapability;
use crate::target::Target;

use super::{EmitError, Survey};

mod assemble;
mod atomic;
mod expr;
mod math;
mod special;
mod stmt;
mod types;

pub use assemble::{Assembled, PtxasError, assemble, assemble_source, find_ptxas};

/// What the PTX emitter needs besides the kernel: the part and one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct PtxOptions {
    /// The compute capability the module targets (`.target sm_XY`).
    pub cc: ComputeCapability,
    /// The block size compiled in (and declared with `.reqntid`).
    pub block: Dim3,
    /// Specialization values; `None`: the kernel's defaults.
    pub specs: Option<Vec<i64>>,
}

impl PtxOptions {
    /// Options for `block` on compute capability `cc` with default specs.
    pub fn new(cc: ComputeCapability, block: Dim3) -> PtxOptions {
        PtxOptions {
            cc,
            block,
            specs: None,
        }
    }
}

/// The PTX ISA a module for one compute capability is written in, and the
/// oldest CUDA release (and its Linux driver) that JIT-compiles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxIsa {
    /// `.version major.minor`.
    pub version: (u32, u32),
    /// The first public CUDA release that knows that version.
    pub cuda: &'static str,
    /// The driver branch that release shipped with; the driver's JIT must
    /// be at least that new (CUDA's minor-version compatibility, which lets
    /// newer runtimes run on older drivers, does not extend to PTX).
    pub min_driver: &'static str,
}

/// The lowest PTX ISA version whose `.target` list includes `sm_XY` for
/// this compute capability, and no lower than 7.0 (`tanh.approx` needs it).
///
/// Measured with `ptxas` 12.9: each version below is accepted for its
/// targets and the one before it is refused ("PTX .version 7.7 does not
/// support .target sm_90"). The driver branches are those each CUDA
/// release shipped with (CUDA Toolkit release notes).
pub fn isa_for(cc: ComputeCapability) -> PtxIsa {
    let isa = |version, cuda, min_driver| PtxIsa {
        version,
        cuda,
        min_driver,
    };
    match (cc.major, cc.minor) {
        (0..=7, _) | (8, 0..=5) => isa((7, 0), "11.0", "R450"),
        (8, 6) => isa((7, 1), "11.1", "R455"),
        (8, 7) => isa((7, 4), "11.4", "R470"),
        (8, _) | (9, _) => isa((7, 8), "11.8", "R520"),
        // PTX 8.6 first shipped publicly with CUDA 12.8.
        (10, _) => isa((8, 6), "12.8", "R570"),
        // sm_120, and a part newer than this table: the newest version
        // known here (a driver then names what it lacks).
        _ => isa((8, 7), "12.8", "R570"),
    }
}

/// An emitted module and what a launcher needs to load and launch it.
///
/// The entry's parameters are the kernel's, in order: a buffer is a `.u64`
/// device pointer; a 64-bit scalar its 8 bytes; any other scalar 4 bytes,
/// the value's bits zero-extended (`bool` as a `u32` word, nonzero is
/// true; a `u8`, `u16` or half as its bits).
#[derive(Debug, Clone, PartialEq)]
pub struct PtxKernel {
    /// The PTX source.
    pub source: String,
    /// The entry point's name.
    pub entry_point: String,
    /// The block size compiled in (`.reqntid`).
    pub block: Dim3,
    /// The compute capability of `.target`.
    pub cc: ComputeCapability,
    /// The ISA version of `.version`.
    pub isa: PtxIsa,
    /// Bytes of dynamic shared memory the launch must request (0 when every
    /// shared array fits the 48 KiB static limit); past 48 KiB the launcher
    /// must also opt the function in to that much. A kernel with a
    /// `shared_dynamic` array (see `launch_sized_shared`) needs the
    /// launch's own bytes on top: its array starts right after these.
    pub dynamic_shared_bytes: u32,
    /// The kernel declares `shared_dynamic::<T>()`: the launch adds the
    /// bytes it gives that array to `dynamic_shared_bytes`.
    pub launch_sized_shared: bool,
}

/// Writes `kernel` as a PTX module for one compute capability and block.
pub fn ptx(kernel: &Kernel, options: &PtxOptions) -> Result<PtxKernel, EmitError> {
    let e = Emitter::new(kernel, options)?;
    // Every type is written; a half only where the part converts it.
    let has = Target::cuda(options.cc).dtypes();
    if let Some(t) = super::first_unwritten_type(kernel, has) {
        let needs = if t == Scalar::BF16 {
            "`cvt.rn.bf16.f32`, which rounds every bf16 result, needs sm_80"
        } else {
            "`Target::cuda` admits f16 from sm_53, the first part with f16 arithmetic"
        };
        return Err(e.unsupported(
            &format!("a value of type `{t}`"),
            &format!(
                "sm_{}{} has no {t}: {needs}",
                options.cc.major, options.cc.minor
            ),
        ));
    }
    e.run()
}

/// The static shared-memory limit per block: past it, shared arrays must be
/// dynamic (CUDA C++ Programming Guide, "Shared Memory": static allocations
/// are limited to 48 KB).
const STATIC_SHARED_LIMIT: u64 = 48 * 1024;

/// A register class: what a value of each scalar type lives in.
///
/// `u8` and `u16` live in 32-bit registers, always zero-extended (each
/// operation that could carry past the type's width masks its result), so
/// the unsigned 32-bit compare, divide and shift are theirs too. `f16` and
/// `bf16` live in `f32` registers holding a value the half represents
/// exactly: the language computes a half in `f32` and rounds the result
/// once (`half.rs`), so each half operation is the `f32` one followed by a
/// round trip through a 16-bit register (`B16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Pred,
    B32,
    F32,
    B64,
    F64,
    B16,
}

impl Class {
    const ALL: [Class; 6] = [
        Class::Pred,
        Class::B16,
        Class::B32,
        Class::F32,
        Class::B64,
        Class::F64,
    ];
    pub(super) fn of(ty: Scalar) -> Class {
        match ty {
            Scalar::Bool => Class::Pred,
            Scalar::F32 | Scalar::F16 | Scalar::BF16 => Class::F32,
            Scalar::I32 | Scalar::U32 | Scalar::U8 | Scalar::U16 => Class::B32,
            Scalar::I64 | Scalar::U64 => Class::B64,
            Scalar::F64 => Class::F64,
        }
    }
    fn decl(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B32 => ".b32",
            Class::F32 => ".f32",
            Class::B64 => ".b64",
            Class::F64 => ".f64",
            Class::B16 => ".b16",
        }
    }
    fn prefix(self) -> &'static str {
        match self {
            Class::Pred => "p",
            Class::B32 => "r",
            Class::F32 => "f",
            Class::B64 => "rd",
            Class::F64 => "fd",
            Class::B16 => "h",
        }
    }
    fn index(self) -> usize {
        self as usize
    }
}

/// The PTX type suffix an instruction on a value of type `ty` takes, in
/// the register it lives in (see [`Class`]): `u8`/`u16` are `u32`, the
/// halves `f32`.
pub(super) fn suffix(ty: Scalar) -> &'static str {
    match ty {
        Scalar::F32 | Scalar::F16 | Scalar::BF16 => "f32",
        Scalar::I32 => "s32",
        Scalar::U32 | Scalar::U8 | Scalar::U16 => "u32",
        Scalar::I64 => "s64",
        Scalar::U64 => "u64",
        Scalar::F64 => "f64",
        Scalar::Bool => "pred",
    }
}

/// The untyped suffix of a value's register: `b32` or `b64` (`pred` for
/// `bool`).
pub(super) fn bits(ty: Scalar) -> &'static str {
    match Class::of(ty) {
        Class::Pred => "pred",
        Class::B64 | Class::F64 => "b64",
        _ => "b32",
    }
}

/// Text PTX accepts in a comment: `ptxas` refuses a module holding any
/// non-ASCII character, even inside a comment, so each is written as its
/// code point (`x·y` becomes `x\u{b7}y`).
pub(super) fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() && (c == '\t' || !c.is_ascii_control()) {
            out.push(c);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

/// An identifier PTX accepts: ASCII letters, digits and `_`; anything else
/// (Rust allows Unicode identifiers) becomes its code point in hex.
pub(super) fn ident(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            let _ = write!(out, "u{:x}", c as u32);
        }
    }
    out
}

pub(super) struct Emitter<'k> {
    pub(super) k: &'k Kernel,
    pub(super) cc: ComputeCapability,
    pub(super) block: Dim3,
    pub(super) specs: Vec<i64>,
    pub(super) survey: Survey,
    /// The body's instructions, written before the declarations they need.
    pub(super) body: String,
    /// Temporaries handed out, per class.
    temps: [u32; 6],
    labels: u32,
    /// `(continue, break)` labels of the enclosing loops, innermost last.
    pub(super) loops: Vec<(String, String)>,
    /// The source line last written as a comment.
    last_line: u32,
    /// Geometry the body reads, set up once at the entry.
    pub(super) geometry: BTreeSet<Geometry>,
}

/// The thread-geometry registers the prologue sets up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Geometry {
    Thread(u8),
    Block(u8),
    Grid(u8),
    Lane,
    Warp,
}

fn axis_index(a: Axis) -> u8 {
    match a {
        Axis::X => 0,
        Axis::Y => 1,
        Axis::Z => 2,
    }
}

const AXES: [char; 3] = ['x', 'y', 'z'];

impl<'k> Emitter<'k> {
    fn new(k: &'k Kernel, o: &PtxOptions) -> Result<Emitter<'k>, EmitError> {
        Ok(Emitter {
            k,
            cc: o.cc,
            block: o.block,
            specs: super::specs_for(k, o.specs.as_deref())?,
            survey: Survey::of(k),
            body: String::new(),
            temps: [0; 6],
            labels: 0,
            loops: Vec::new(),
            last_line: 0,
            geometry: BTreeSet::new(),
        })
    }

    pub(super) fn unsupported(&self, construct: &str, why: &str) -> EmitError {
        EmitError::Unsupported {
            kernel: self.k.name.clone(),
            construct: construct.to_string(),
            language: "PTX",
            target: Target::cuda(self.cc).to_string(),
            why: why.to_string(),
        }
    }

    /// A fresh temporary of a class.
    pub(super) fn temp(&mut self, c: Class) -> String {
        self.temps[c.index()] += 1;
        format!("%{}{}", c.prefix(), self.temps[c.index()])
    }

    /// A fresh label number.
    pub(super) fn label(&mut self) -> u32 {
        self.labels += 1;
        self.labels
    }

    /// One instruction, indented, with its semicolon.
    pub(super) fn ins(&mut self, text: impl AsRef<str>) {
        self.body.push_str("    ");
        self.body.push_str(text.as_ref());
        self.body.push_str(";\n");
    }

    /// A label line.
    pub(super) fn place(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
    }

    /// The statement's source line as a comment, once per line.
    pub(super) fn source_comment(&mut self, s: &Stmt) {
        let line = self.k.span(s.span).line;
        if line == 0 || line == self.last_line {
            return;
        }
        self.last_line = line;
        if let Some(text) = self.k.source.line(line) {
            let text = text.trim();
            if !text.is_empty() {
                let _ = writeln!(self.body, "    // {line}: {}", ascii(text));
            }
        }
    }

    /// A local's register: its source name and its id.
    pub(super) fn local(&self, l: LocalId) -> String {
        format!("%{}_{l}", ident(&self.k.locals[l as usize].name))
    }

    /// A parameter's register: a scalar's value or a buffer's global address.
    pub(super) fn param(&self, p: ParamId) -> String {
        format!("%{}_arg", ident(&self.k.params[p as usize].name))
    }

    /// A shared array's base-address register.
    pub(super) fn shared_base(&self, s: u32) -> String {
        format!("%{}_shared", ident(&self.k.shared[s as usize].name))
    }

    /// A local array's `.local` variable and its 64-bit base-address
    /// register (numbered: two arrays may share a source name).
    pub(super) fn local_array(&self, a: ArrayId) -> (String, String) {
        let name = ident(&self.k.arrays[a as usize].name);
        (format!("l_{name}_{a}"), format!("%{name}_local_{a}"))
    }

    pub(super) fn elem_of(&self, mem: Mem) -> Scalar {
        match mem {
            Mem::Global(p) => match self.k.params[p as usize].kind {
                ParamKind::Buffer { elem, .. } => elem,
                ParamKind::Scalar(s) => s,
            },
            Mem::Shared(s) => self.k.shared[s as usize].elem,
            Mem::Local(a) => self.k.arrays[a as usize].elem,
        }
    }

    /// The register of a geometry builtin (set up by the prologue), or the
    /// compiled-in value.
    pub(super) fn builtin(&mut self, b: Builtin) -> String {
        let g = match b {
            Builtin::BlockDim(a) => return self.block.get(a).to_string(),
            Builtin::WarpSize => return "32".into(),
            Builtin::ThreadIdx(a) => Geometry::Thread(axis_index(a)),
            Builtin::BlockIdx(a) => Geometry::Block(axis_index(a)),
            Builtin::GridDim(a) => Geometry::Grid(axis_index(a)),
            Builtin::LaneId => Geometry::Lane,
            Builtin::WarpId => Geometry::Warp,
        };
        if matches!(g, Geometry::Lane | Geometry::Warp) {
            // Both come from the linear index, which needs each axis the
            // block spans.
            self.geometry.insert(Geometry::Thread(0));
            if self.block.y > 1 || self.block.z > 1 {
                self.geometry.insert(Geometry::Thread(1));
                self.geometry.insert(Geometry::Thread(2));
            }
        }
        self.geometry.insert(g);
        geometry_register(g)
    }

    /// The lane or warp is read in a block of more than one row: the linear
    /// index gets a register of its own.
    fn needs_linear(&self) -> bool {
        (self.block.y > 1 || self.block.z > 1)
            && (self.geometry.contains(&Geometry::Lane) || self.geometry.contains(&Geometry::Warp))
    }

    fn run(mut self) -> Result<PtxKernel, EmitError> {
        let k = self.k;
        // The parameters' loads first: a half or a bool is read through
        // temporaries, declared with the body's.
        self.param_loads();
        let loads = std::mem::take(&mut self.body);
        for (i, p) in k.params.iter().enumerate() {
            if let ParamKind::Buffer {
                writable: false, ..
            } = p.kind
                && self.survey.atomic.contains(&Mem::Global(i as ParamId))
            {
                return Err(self.unsupported(
                    &format!("an atomic on the read-only buffer `{}`", p.name),
                    "atomics need a `&mut` buffer",
                ));
            }
        }
        self.block_of(&k.body)?;
        self.ins("ret");
        let body = std::mem::take(&mut self.body);

        let isa = isa_for(self.cc);
        let mut out = String::new();
        let b = self.block;
        let _ = writeln!(
            out,
            "//\n// `{}`: PTX written by oxmera from the kernel IR for sm_{}{}, block {}x{}x{}.",
            ascii(&k.name),
            self.cc.major,
            self.cc.minor,
            b.x,
            b.y,
            b.z
        );
        if !self.specs.is_empty() {
            let specs: Vec<String> = k
                .specs
                .iter()
                .zip(&self.specs)
                .map(|(s, v)| format!("{} = {v}", s.name))
                .collect();
            let _ = writeln!(out, "// Specialized with {}.", ascii(&specs.join(", ")));
        }
        let _ = writeln!(
            out,
            "// PTX ISA {}.{} (CUDA {}): JIT-compiled by {} drivers and newer.\n//",
            isa.version.0, isa.version.1, isa.cuda, isa.min_driver
        );
        let _ = writeln!(
            out,
            ".version {}.{}\n.target sm_{}{}\n.address_size 64\n",
            isa.version.0, isa.version.1, self.cc.major, self.cc.minor
        );

        // Shared memory: static arrays under the limit, else one dynamic block.
        let mut offsets = Vec::with_capacity(k.shared.len());
        let mut total = 0u64;
        for s in k.shared.iter().filter(|s| !s.dynamic) {
            let len = s
                .len
                .eval(&self.specs)
                .ok_or_else(|| EmitError::Specialization {
                    kernel: k.name.clone(),
                    what: format!("the length of shared array `{}` does not evaluate", s.name),
                })?;
            // Each array at its element's alignment (8 for the 64-bit types).
            let size = s.elem.size_bytes();
            total = total.div_ceil(size.max(4)) * size.max(4);
            offsets.push(total);
            total = total.saturating_add(len.saturating_mul(size).max(4));
        }
        let dynamic = total > STATIC_SHARED_LIMIT;
        if total > u32::MAX as u64 {
            return Err(EmitError::Specialization {
                kernel: k.name.clone(),
                what: format!("{total} bytes of shared memory do not fit a block"),
            });
        }
        // The launch-sized array (`shared_dynamic`) starts the dynamic
        // block, or follows the static arrays carved out of it, 16-aligned.
        let user_dynamic = k.dynamic_shared().map(|(id, _)| id);
        let user_offset = if dynamic { total.div_ceil(16) * 16 } else { 0 };
        if dynamic {
            out.push_str(
                "// The shared arrays pass the 48 KiB static limit: one dynamic block holds them.\n\
                 .extern .shared .align 16 .b8 oxmera_dynamic_shared[];\n\n",
            );
        } else if user_dynamic.is_some() {
            out.push_str(
                "// The launch-sized shared array: CUDA's `extern __shared__`, sized by the launch.\n\
                 .extern .shared .align 16 .b8 oxmera_dynamic_shared[];\n\n",
            );
        }

        let entry = ident(&k.entry_symbol());
        let _ = writeln!(out, ".visible .entry {entry}(");
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| {
                let ty = match p.kind {
                    ParamKind::Buffer { .. } => ".u64",
                    ParamKind::Scalar(t) => types::param_type(t),
                };
                format!("    .param {ty} p_{}", ident(&p.name))
            })
            .collect();
        out.push_str(&params.join(",\n"));
        let _ = writeln!(out, "\n)\n.reqntid {}, {}, {}\n{{", b.x, b.y, b.z);

        // Temporaries, then the named registers.
        for c in Class::ALL {
            let n = self.temps[c.index()];
            if n > 0 {
                let _ = writeln!(out, "    .reg {} %{}<{}>;", c.decl(), c.prefix(), n + 1);
            }
        }
        for (i, l) in k.locals.iter().enumerate() {
            let _ = writeln!(
                out,
                "    .reg {} {};  // {}: {}",
                Class::of(l.ty).decl(),
                self.local(i as LocalId),
                ascii(&l.name),
                l.ty
            );
        }
        for (i, p) in k.params.iter().enumerate() {
            let class = match p.kind {
                ParamKind::Buffer { .. } => Class::B64,
                ParamKind::Scalar(t) => Class::of(t),
            };
            let _ = writeln!(
                out,
                "    .reg {} {};",
                class.decl(),
                self.param(i as ParamId)
            );
        }
        for g in &self.geometry {
            let _ = writeln!(out, "    .reg .b32 {};", geometry_register(*g));
        }
        if self.needs_linear() {
            out.push_str("    .reg .b32 %linear;\n");
        }
        for (i, a) in k.arrays.iter().enumerate() {
            // A thread's own array: `.local` memory, which ptxas promotes to
            // registers where every index is known after unrolling.
            let (var, reg) = self.local_array(i as ArrayId);
            let len = a
                .len
                .eval(&self.specs)
                .ok_or_else(|| EmitError::Specialization {
                    kernel: k.name.clone(),
                    what: format!("the length of local array `{}` does not evaluate", a.name),
                })?;
            let size = a.elem.size_bytes();
            let _ = writeln!(
                out,
                "    .local .align {} .b8 {var}[{}];",
                size.max(4),
                (len * size).max(4)
            );
            let _ = writeln!(out, "    .reg .b64 {reg};");
        }
        for (i, s) in k.shared.iter().enumerate() {
            let _ = writeln!(out, "    .reg .b32 {};", self.shared_base(i as u32));
            if !dynamic && !s.dynamic {
                let len = s.len.eval(&self.specs).unwrap_or(0);
                let size = s.elem.size_bytes();
                let _ = writeln!(
                    out,
                    "    .shared .align {} .b8 s_{}[{}];",
                    size.max(4),
                    ident(&s.name),
                    (len * size).max(4)
                );
            }
        }

        out.push_str("\n    // Parameters.\n");
        out.push_str(&loads);
        if !k.shared.is_empty() {
            out.push_str("    // Shared arrays.\n");
        }
        let mut statics = offsets.iter();
        for (i, s) in k.shared.iter().enumerate() {
            let reg = self.shared_base(i as u32);
            if s.dynamic {
                let _ = writeln!(out, "    mov.u32 {reg}, oxmera_dynamic_shared;");
                if user_offset > 0 {
                    let _ = writeln!(out, "    add.u32 {reg}, {reg}, {user_offset};");
                }
            } else if dynamic {
                let offset = statics.next().expect("one offset per static array");
                let _ = writeln!(out, "    mov.u32 {reg}, oxmera_dynamic_shared;");
                let _ = writeln!(out, "    add.u32 {reg}, {reg}, {offset};");
            } else {
                let _ = writeln!(out, "    mov.u32 {reg}, s_{};", ident(&s.name));
            }
        }
        if !k.arrays.is_empty() {
            out.push_str("    // Local arrays.\n");
        }
        for i in 0..k.arrays.len() {
            let (var, reg) = self.local_array(i as ArrayId);
            let _ = writeln!(out, "    mov.u64 {reg}, {var};");
        }
        self.prologue_geometry(&mut out);
        out.push_str("\n    // The body.\n");
        out.push_str(&body);
        out.push_str("}\n");
        Ok(PtxKernel {
            source: out,
            entry_point: entry,
            block: self.block,
            cc: self.cc,
            isa,
            dynamic_shared_bytes: if dynamic {
                (if user_dynamic.is_some() {
                    user_offset
                } else {
                    total
                }) as u32
            } else {
                0
            },
            launch_sized_shared: user_dynamic.is_some(),
        })
    }

    /// Reads the special registers the body uses; the lane and warp come
    /// from the linear thread index, as the language defines them.
    fn prologue_geometry(&self, out: &mut String) {
        if self.geometry.is_empty() {
            return;
        }
        out.push_str("    // Thread geometry.\n");
        for g in &self.geometry {
            let (reg, special) = match g {
                Geometry::Thread(a) => {
                    (geometry_register(*g), format!("%tid.{}", AXES[*a as usize]))
                }
                Geometry::Block(a) => (
                    geometry_register(*g),
                    format!("%ctaid.{}", AXES[*a as usize]),
                ),
                Geometry::Grid(a) => (
                    geometry_register(*g),
                    format!("%nctaid.{}", AXES[*a as usize]),
                ),
                Geometry::Lane | Geometry::Warp => continue,
            };
            let _ = writeln!(out, "    mov.u32 {reg}, {special};");
        }
        let b = self.block;
        let linear = if self.needs_linear() {
            let _ = writeln!(
                out,
                "    mad.lo.u32 %linear, %thread_z, {}, %thread_y;\n    mad.lo.u32 %linear, %linear, {}, %thread_x;",
                b.y, b.x
            );
            "%linear"
        } else {
            "%thread_x"
        };
        if self.geometry.contains(&Geometry::Lane) {
            let _ = writeln!(out, "    and.b32 %lane, {linear}, 31;");
        }
        if self.geometry.contains(&Geometry::Warp) {
            let _ = writeln!(out, "    shr.u32 %warp, {linear}, 5;");
        }
    }
}

/// The register a geometry value lives in.
fn geometry_register(g: Geometry) -> String {
    match g {
        Geometry::Thread(a) => format!("%thread_{}", AXES[a as usize]),
        Geometry::Block(a) => format!("%block_{}", AXES[a as usize]),
        Geometry::Grid(a) => format!("%grid_{}", AXES[a as usize]),
        Geometry::Lane => "%lane".into(),
        Geometry::Warp => "%warp".into(),
    }
}
