//! The kernel IR: one typed, structured tree per kernel.
//!
//! Control flow stays structured (if/else, loops, break/continue/return) on
//! purpose: the convergence analysis reasons about *where threads rejoin*, and
//! the simulator reconverges warps at exactly those points. A flat CFG would
//! have to rediscover both.

use std::fmt;

/// The scalar types of the kernel language.
///
/// Every list of "all scalars" and every "which scalars are floats or
/// integers" question is answered here ([`Scalar::ALL`],
/// [`Scalar::is_float`], [`Scalar::is_int`], [`Scalar::is_signed`]) so that
/// the lowering, the validator, the simulator, the emitters and generic
/// kernels agree on one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// 32-bit IEEE float.
    F32,
    /// 32-bit signed integer (wrapping arithmetic).
    I32,
    /// 32-bit unsigned integer (wrapping arithmetic).
    U32,
    /// Boolean.
    Bool,
    /// 64-bit IEEE float.
    F64,
    /// 64-bit signed integer (wrapping arithmetic).
    I64,
    /// 64-bit unsigned integer (wrapping arithmetic).
    U64,
    /// 8-bit unsigned integer (wrapping arithmetic at 8 bits).
    U8,
    /// 16-bit unsigned integer (wrapping arithmetic at 16 bits).
    U16,
    /// IEEE binary16 half float: every operation is computed in `f32` and
    /// rounded once to `f16`, to nearest, ties to even (see
    /// [`crate::half`]).
    F16,
    /// bfloat16 (the top 16 bits of an `f32`): computed in `f32` and rounded
    /// once, to nearest, ties to even.
    BF16,
}

impl Scalar {
    /// Every scalar type, in declaration order: also the order in which a
    /// generic kernel's instances are listed (see [`crate::dtype::admitted`]).
    pub const ALL: [Scalar; 11] = [
        Scalar::F32,
        Scalar::I32,
        Scalar::U32,
        Scalar::Bool,
        Scalar::F64,
        Scalar::I64,
        Scalar::U64,
        Scalar::U8,
        Scalar::U16,
        Scalar::F16,
        Scalar::BF16,
    ];
    /// Size of one element in bytes, as a buffer or shared array holds it
    /// (bools are stored as 4-byte words).
    pub fn size_bytes(self) -> u64 {
        match self {
            Scalar::U8 => 1,
            Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::F32 | Scalar::I32 | Scalar::U32 | Scalar::Bool => 4,
            Scalar::F64 | Scalar::I64 | Scalar::U64 => 8,
        }
    }
    /// Width of the value in bits (`bool`: 32, its storage).
    pub fn bits(self) -> u32 {
        self.size_bytes() as u32 * 8
    }
    /// True for the integer types: `i32`, `u32`, `i64`, `u64`, `u8`, `u16`.
    pub fn is_int(self) -> bool {
        matches!(
            self,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::U8 | Scalar::U16
        )
    }
    /// True for the float types: `f32`, `f64`, `f16`, `bf16`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16)
    }
    /// True for the types with a sign, which unary `-` and `abs` apply to:
    /// `i32`, `i64` and every float. (`is_int() && is_signed()` are the
    /// signed integers.)
    pub fn is_signed(self) -> bool {
        matches!(self, Scalar::I32 | Scalar::I64) || self.is_float()
    }
    /// True for `f16` and `bf16`: stored in 16 bits, computed in `f32`.
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }
    /// True for every type but `bool`.
    pub fn is_numeric(self) -> bool {
        !matches!(self, Scalar::Bool)
    }
    /// The unsigned integer type of the same width, whose value
    /// `to_bits`/`from_bits` exchange with a float (`f32`↔`u32`,
    /// `f64`↔`u64`, `f16`/`bf16`↔`u16`); `None` for non-floats.
    pub fn bits_type(self) -> Option<Scalar> {
        match self {
            Scalar::F32 => Some(Scalar::U32),
            Scalar::F64 => Some(Scalar::U64),
            Scalar::F16 | Scalar::BF16 => Some(Scalar::U16),
            _ => None,
        }
    }
    /// The Rust spelling of the type.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::Bool => "bool",
            Scalar::F64 => "f64",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
        }
    }
    /// The type spelled `name` (`"f64"`, `"bf16"`, ...).
    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A scalar value. The half floats are held as their 16-bit patterns
/// (Rust has no stable `f16`); [`Value::as_f32`] widens them exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An `f32`.
    F32(f32),
    /// An `i32`.
    I32(i32),
    /// A `u32`.
    U32(u32),
    /// A `bool`.
    Bool(bool),
    /// An `f64`.
    F64(f64),
    /// An `i64`.
    I64(i64),
    /// A `u64`.
    U64(u64),
    /// A `u8`.
    U8(u8),
    /// A `u16`.
    U16(u16),
    /// An `f16`, as its IEEE binary16 bit pattern.
    F16(u16),
    /// A `bf16`, as its bit pattern (the top half of an `f32`'s).
    BF16(u16),
}

impl Value {
    /// The type of the value.
    pub fn ty(self) -> Scalar {
        match self {
            Value::F32(_) => Scalar::F32,
            Value::I32(_) => Scalar::I32,
            Value::U32(_) => Scalar::U32,
            Value::Bool(_) => Scalar::Bool,
            Value::F64(_) => Scalar::F64,
            Value::I64(_) => Scalar::I64,
            Value::U64(_) => Scalar::U64,
            Value::U8(_) => Scalar::U8,
            Value::U16(_) => Scalar::U16,
            Value::F16(_) => Scalar::F16,
            Value::BF16(_) => Scalar::BF16,
        }
    }
    /// The bit pattern the simulator stores for this value, zero-extended
    /// to 64 bits (an `i32` is its 32-bit two's complement, not
    /// sign-extended).
    pub fn to_bits(self) -> u64 {
        match self {
            Value::F32(v) => v.to_bits() as u64,
            Value::I32(v) => v as u32 as u64,
            Value::U32(v) => v as u64,
            Value::Bool(v) => v as u64,
            Value::F64(v) => v.to_bits(),
            Value::I64(v) => v as u64,
            Value::U64(v) => v,
            Value::U8(v) => v as u64,
            Value::U16(v) | Value::F16(v) | Value::BF16(v) => v as u64,
        }
    }
    /// Reads a value of type `ty` back from its bit pattern (the bits above
    /// the type's width are ignored).
    pub fn from_bits(ty: Scalar, bits: u64) -> Value {
        match ty {
            Scalar::F32 => Value::F32(f32::from_bits(bits as u32)),
            Scalar::I32 => Value::I32(bits as u32 as i32),
            Scalar::U32 => Value::U32(bits as u32),
            Scalar::Bool => Value::Bool(bits as u32 != 0),
            Scalar::F64 => Value::F64(f64::from_bits(bits)),
            Scalar::I64 => Value::I64(bits as i64),
            Scalar::U64 => Value::U64(bits),
            Scalar::U8 => Value::U8(bits as u8),
            Scalar::U16 => Value::U16(bits as u16),
            Scalar::F16 => Value::F16(bits as u16),
            Scalar::BF16 => Value::BF16(bits as u16),
        }
    }
    /// The value of a float as `f32`: exact for `f32`, `f16` and `bf16`
    /// (both halves widen exactly), rounded for `f64`; `None` for
    /// non-floats.
    pub fn as_f32(self) -> Option<f32> {
        match self {
            Value::F32(v) => Some(v),
            Value::F64(v) => Some(v as f32),
            Value::F16(b) => Some(crate::half::f16_to_f32(b)),
            Value::BF16(b) => Some(crate::half::bf16_to_f32(b)),
            _ => None,
        }
    }
    /// Bit-exact equality (so that NaN equals itself and -0.0 differs from 0.0).
    pub fn same(self, other: Value) -> bool {
        self.ty() == other.ty() && self.to_bits() == other.to_bits()
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::F32(v) => write!(f, "{v:?}f32"),
            Value::I32(v) => write!(f, "{v}i32"),
            Value::U32(v) => write!(f, "{v}u32"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v:?}f64"),
            Value::I64(v) => write!(f, "{v}i64"),
            Value::U64(v) => write!(f, "{v}u64"),
            Value::U8(v) => write!(f, "{v}u8"),
            Value::U16(v) => write!(f, "{v}u16"),
            Value::F16(b) => write!(f, "{:?}f16", crate::half::f16_to_f32(*b)),
            Value::BF16(b) => write!(f, "{:?}bf16", crate::half::bf16_to_f32(*b)),
        }
    }
}

/// An axis of a 3-D index space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// The fastest-varying axis.
    X,
    /// The middle axis.
    Y,
    /// The slowest axis.
    Z,
}

impl Axis {
    /// Lower-case letter of the axis.
    pub fn letter(self) -> char {
        match self {
            Axis::X => 'x',
            Axis::Y => 'y',
            Axis::Z => 'z',
        }
    }
}

/// A thread-geometry builtin; all are `u32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `thread_idx_x()` etc.
    ThreadIdx(Axis),
    /// `block_idx_x()` etc.
    BlockIdx(Axis),
    /// `block_dim_x()` etc.
    BlockDim(Axis),
    /// `grid_dim_x()` etc.
    GridDim(Axis),
    /// `lane_id()`: linear thread index in the block modulo the target's
    /// warp width.
    LaneId,
    /// `warp_id()`: linear thread index in the block divided by the target's
    /// warp width.
    WarpId,
    /// `warp_size()`: the target's warp width (32 on the generic target).
    WarpSize,
}

impl Builtin {
    /// The source spelling, e.g. `thread_idx_x()`.
    pub fn source_name(self) -> String {
        match self {
            Builtin::ThreadIdx(a) => format!("thread_idx_{}()", a.letter()),
            Builtin::BlockIdx(a) => format!("block_idx_{}()", a.letter()),
            Builtin::BlockDim(a) => format!("block_dim_{}()", a.letter()),
            Builtin::GridDim(a) => format!("grid_dim_{}()", a.letter()),
            Builtin::LaneId => "lane_id()".into(),
            Builtin::WarpId => "warp_id()".into(),
            Builtin::WarpSize => "warp_size()".into(),
        }
    }
}

/// Binary operators. Arithmetic wraps on integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&` (short-circuit: the right side runs only where the left is true)
    And,
    /// `||` (short-circuit)
    Or,
}

impl BinOp {
    /// The operator's source symbol.
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }
    /// True for comparisons (result `bool`, operands of one type).
    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation (the signed types: `i32`, `i64`, every float).
    Neg,
    /// Logical not on `bool`, bitwise not on integers.
    Not,
}

/// Math intrinsics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// e^x
    Exp,
    /// natural logarithm
    Log,
    /// square root
    Sqrt,
    /// 1/sqrt(x)
    Rsqrt,
    /// fused a*b+c
    Fma,
    /// absolute value (f32, i32)
    Abs,
    /// minimum (f32, i32, u32)
    Min,
    /// maximum (f32, i32, u32)
    Max,
    /// hyperbolic tangent
    Tanh,
    /// round down
    Floor,
    /// round up
    Ceil,
    /// sine (radians)
    Sin,
    /// cosine (radians)
    Cos,
    /// 2^x
    Exp2,
    /// base-2 logarithm
    Log2,
    /// set bits of an `i32`/`u32` (`count_ones`), as `u32`
    CountOnes,
    /// zero bits above the highest set bit (`leading_zeros`; 32 for 0), as `u32`
    LeadingZeros,
    /// zero bits below the lowest set bit (`trailing_zeros`; 32 for 0), as `u32`
    TrailingZeros,
    /// `x^y` (`x.powf(y)`, `pow(x, y)`), with the special cases of Rust's
    /// `f32::powf` (IEEE 754 / C99 `pow`): `x^0 = 1` and `1^y = 1` even for
    /// a NaN, a negative `x` to a non-integer `y` is NaN
    Pow,
    /// the error function `erf(x) = 2/√π ∫₀ˣ e^(-t²) dt` (`erf(x)`; Rust's
    /// `f32` has no `erf` method on stable)
    Erf,
}

impl MathFn {
    /// The source spelling.
    pub fn name(self) -> &'static str {
        use MathFn::*;
        match self {
            Exp => "exp",
            Log => "log",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Fma => "fma",
            Abs => "abs",
            Min => "min",
            Max => "max",
            Tanh => "tanh",
            Floor => "floor",
            Ceil => "ceil",
            Sin => "sin",
            Cos => "cos",
            Exp2 => "exp2",
            Log2 => "log2",
            CountOnes => "count_ones",
            LeadingZeros => "leading_zeros",
            TrailingZeros => "trailing_zeros",
            Pow => "pow",
            Erf => "erf",
        }
    }
    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Fma => 3,
            MathFn::Min | MathFn::Max | MathFn::Pow => 2,
            _ => 1,
        }
    }
}

/// Warp shuffle flavours (CUDA's `__shfl_*_sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShuffleKind {
    /// Read from lane `lane ^ arg`.
    Xor,
    /// Read from lane `lane + arg` (own value if past the end).
    Down,
    /// Read from lane `lane - arg` (own value if before lane 0).
    Up,
    /// Read from lane `arg`.
    Idx,
}

impl ShuffleKind {
    /// Source spelling of the builtin.
    pub fn name(self) -> &'static str {
        match self {
            ShuffleKind::Xor => "shfl_xor_sync",
            ShuffleKind::Down => "shfl_down_sync",
            ShuffleKind::Up => "shfl_up_sync",
            ShuffleKind::Idx => "shfl_sync",
        }
    }
}

/// Warp votes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoteKind {
    /// Bit mask of lanes whose predicate is true (`u32`).
    Ballot,
    /// True if any lane's predicate is true.
    Any,
    /// True if every lane's predicate is true.
    All,
}

impl VoteKind {
    /// Source spelling of the builtin.
    pub fn name(self) -> &'static str {
        match self {
            VoteKind::Ballot => "ballot_sync",
            VoteKind::Any => "any_sync",
            VoteKind::All => "all_sync",
        }
    }
}

/// Atomic read-modify-write operations; each returns the old value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `old + v`
    Add,
    /// `old - v` (wrapping)
    Sub,
    /// `old & v`
    And,
    /// `old | v`
    Or,
    /// `old ^ v`
    Xor,
    /// `if old >= v { 0 } else { old + 1 }` (CUDA's `atomicInc`)
    Inc,
    /// `min(old, v)` (on `f32` as `f32::min`: a NaN yields the other)
    Min,
    /// `max(old, v)` (on `f32` as `f32::max`)
    Max,
    /// store `v`
    Exch,
    /// store `v` if `old == compare`
    Cas,
}

impl AtomicOp {
    /// Source spelling of the builtin.
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Inc => "atomic_inc",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Exch => "atomic_exch",
            AtomicOp::Cas => "atomic_cas",
        }
    }

    /// Whether the operation applies to a memory of `elem`: the bit
    /// operations and `sub` to integers, `inc` to `u32` (as CUDA has them),
    /// the rest to every numeric type of 32 or 64 bits. Nothing applies to
    /// the 8- and 16-bit types (`u8`, `u16`, `f16`, `bf16`): no hardware
    /// has portable atomics on them. Whether a target has a 64-bit
    /// operation is the emitter's to say.
    pub fn accepts(self, elem: Scalar) -> bool {
        if elem.size_bytes() < 4 {
            return false;
        }
        match self {
            AtomicOp::Sub | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => elem.is_int(),
            AtomicOp::Inc => elem == Scalar::U32,
            _ => elem.is_numeric(),
        }
    }

    /// Every operation, for messages and tests.
    pub const ALL: [AtomicOp; 10] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Inc,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Exch,
        AtomicOp::Cas,
    ];
}

/// Index of a source span in [`Kernel::spans`].
pub type SpanId = u32;
/// Index of a parameter in [`Kernel::params`].
pub type ParamId = u32;
/// Index of a local in [`Kernel::locals`].
pub type LocalId = u32;
/// Index of a shared array in [`Kernel::shared`].
pub type SharedId = u32;
/// Index of a specialization constant in [`Kernel::specs`].
pub type SpecId = u32;
/// Index of a thread's local array in [`Kernel::arrays`].
pub type ArrayId = u32;

/// A memory an index expression addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mem {
    /// A global buffer parameter.
    Global(ParamId),
    /// A shared array.
    Shared(SharedId),
    /// A local (register) array: every thread has its own, so it is never
    /// shared, never raced on and never the target of an atomic.
    Local(ArrayId),
}

/// A typed expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Scalar,
    /// Where it came from.
    pub span: SpanId,
}

/// The expression forms.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Lit(Value),
    /// Read a local.
    Local(LocalId),
    /// Read a scalar parameter.
    Param(ParamId),
    /// A specialization constant.
    Spec(SpecId),
    /// A thread-geometry builtin.
    Builtin(Builtin),
    /// Load `mem[index]`.
    Load {
        /// The memory.
        mem: Mem,
        /// Element index (`u32` or `i32`).
        index: Box<Expr>,
    },
    /// A unary operation.
    Unary {
        /// The operator.
        op: UnOp,
        /// The operand.
        arg: Box<Expr>,
    },
    /// A binary operation.
    Binary {
        /// The operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `arg as ty` (the target type is [`Expr::ty`]).
    Cast(Box<Expr>),
    /// The same bits read as another type of the same width:
    /// `x.to_bits()` (a float to its [`Scalar::bits_type`]) and
    /// `f32::from_bits(u)` (back; likewise `f64`, `f16`, `bf16`). The exact way to
    /// test for NaN, to flip a sign bit or to order floats as integers —
    /// exact where a GPU compiler may assume float comparisons never meet a
    /// NaN.
    BitCast(Box<Expr>),
    /// A math intrinsic.
    Math {
        /// Which one.
        func: MathFn,
        /// Its arguments.
        args: Vec<Expr>,
    },
    /// A warp shuffle.
    Shuffle {
        /// Which flavour.
        kind: ShuffleKind,
        /// Participating lanes.
        mask: Box<Expr>,
        /// The value each lane offers.
        value: Box<Expr>,
        /// Lane mask / delta / source lane.
        arg: Box<Expr>,
    },
    /// A warp vote.
    Vote {
        /// Which vote.
        kind: VoteKind,
        /// Participating lanes.
        mask: Box<Expr>,
        /// The predicate.
        pred: Box<Expr>,
    },
    /// An atomic read-modify-write; evaluates to the old value.
    Atomic {
        /// Which operation.
        op: AtomicOp,
        /// The memory.
        mem: Mem,
        /// Element index.
        index: Box<Expr>,
        /// The operand.
        value: Box<Expr>,
        /// The expected old value (only for [`AtomicOp::Cas`]).
        compare: Option<Box<Expr>>,
    },
}

/// A statement with its span.
#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it came from.
    pub span: SpanId,
}

/// The statement forms.
#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    /// `local = value` (both `let` and plain assignment).
    Assign {
        /// Target local.
        local: LocalId,
        /// New value.
        value: Expr,
    },
    /// `mem[index] = value`.
    Store {
        /// Target memory.
        mem: Mem,
        /// Element index.
        index: Expr,
        /// Stored value.
        value: Expr,
    },
    /// An expression evaluated for its effect (an atomic, a collective).
    Eval(Expr),
    /// `if cond { then } else { otherwise }`.
    If {
        /// The condition (`bool`).
        cond: Expr,
        /// Taken where true.
        then: Vec<Stmt>,
        /// Taken where false (may be empty).
        otherwise: Vec<Stmt>,
    },
    /// `for var in (start..end).step_by(step) { body }` (or `..=`); `end`
    /// and `step` are evaluated once, before the first iteration, and the
    /// loop stops where the next value would pass the bound — never wraps —
    /// as in Rust.
    For {
        /// The loop variable (a fresh local).
        var: LocalId,
        /// First value.
        start: Expr,
        /// The bound: exclusive, or inclusive for `..=`.
        end: Expr,
        /// `start..=end`: `end` itself is a value of the loop.
        inclusive: bool,
        /// Positive step.
        step: Expr,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// `while cond { body }` (`loop` is `while true`).
    While {
        /// Tested before each iteration.
        cond: Expr,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// `break` out of the innermost loop.
    Break,
    /// `continue` the innermost loop.
    Continue,
    /// The thread leaves the kernel.
    Return,
    /// `sync_threads()`: every thread of the block waits here.
    Barrier,
    /// `sync_warp(mask)` (CUDA's `__syncwarp`): the lanes of the warp that
    /// `mask` names wait here for each other, and their memory accesses
    /// before it are ordered before those after it. A warp collective: every
    /// lane the mask names must reach it, and each lane reaching it must be
    /// named.
    WarpSync {
        /// The lanes taking part (`u32`; bit `i` names lane `i`).
        mask: Expr,
    },
    /// `thread_fence()` (CUDA's `__threadfence`): the thread's memory
    /// accesses before it are seen by every thread of the device before
    /// those after it. No thread waits.
    Fence,
}

/// What a parameter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A scalar passed by value, the same for every thread.
    Scalar(Scalar),
    /// A global buffer `&[T]` or `&mut [T]`.
    Buffer {
        /// Element type.
        elem: Scalar,
        /// `&mut [T]`.
        writable: bool,
    },
}

/// A kernel parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Source name.
    pub name: String,
    /// What it is.
    pub kind: ParamKind,
    /// Where it was declared.
    pub span: SpanId,
}

/// A local variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Local {
    /// Source name (shadowed names get distinct locals).
    pub name: String,
    /// Its type.
    pub ty: Scalar,
    /// Declared `mut`.
    pub mutable: bool,
    /// Where it was declared.
    pub span: SpanId,
}

/// A compile-time length: literals and specialization constants.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstExpr {
    /// A literal.
    Lit(u64),
    /// A specialization constant.
    Spec(SpecId),
    /// Sum.
    Add(Box<ConstExpr>, Box<ConstExpr>),
    /// Difference.
    Sub(Box<ConstExpr>, Box<ConstExpr>),
    /// Product.
    Mul(Box<ConstExpr>, Box<ConstExpr>),
    /// Quotient.
    Div(Box<ConstExpr>, Box<ConstExpr>),
}

impl ConstExpr {
    /// Evaluates with the given specialization values; `None` on overflow,
    /// underflow or division by zero.
    pub fn eval(&self, specs: &[i64]) -> Option<u64> {
        Some(match self {
            ConstExpr::Lit(v) => *v,
            ConstExpr::Spec(s) => u64::try_from(*specs.get(*s as usize)?).ok()?,
            ConstExpr::Add(a, b) => a.eval(specs)?.checked_add(b.eval(specs)?)?,
            ConstExpr::Sub(a, b) => a.eval(specs)?.checked_sub(b.eval(specs)?)?,
            ConstExpr::Mul(a, b) => a.eval(specs)?.checked_mul(b.eval(specs)?)?,
            ConstExpr::Div(a, b) => a.eval(specs)?.checked_div(b.eval(specs)?)?,
        })
    }
}

/// A `shared::<T>(LEN)` array: one per block, visible to its threads.
///
/// A 2-D array, `shared::<[T; COLS]>(ROWS)`, is stored row-major and
/// indexed through one flat index `row * COLS + col`; `row_len` keeps COLS
/// so that the printer, the emitters and the simulator's reports can name
/// the element as `[row][col]`.
///
/// A dynamic array, `shared_dynamic::<T>()` (CUDA's `extern __shared__`),
/// has no length of its own: the launch gives it bytes
/// (`dynamic_shared_bytes` of the check and simulator options), and `len`
/// is its static part, `0`, so that [`Kernel::shared_bytes`] counts the
/// static arrays only.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedArray {
    /// Source name.
    pub name: String,
    /// Element type.
    pub elem: Scalar,
    /// Length in elements (all rows of a 2-D array; 0 for a dynamic one).
    pub len: ConstExpr,
    /// Elements per row of a 2-D array; `None` for a 1-D one.
    pub row_len: Option<ConstExpr>,
    /// Sized by the launch (`shared_dynamic::<T>()`).
    pub dynamic: bool,
    /// Where it was declared.
    pub span: SpanId,
}

/// A thread's own array, `let mut acc = [0.0f32; 4];` or the 2-D
/// `let mut c = [[0.0f32; 4]; 4];` (a register tile): it lives as long as
/// the thread, no other thread sees it, and it is stored row-major and
/// indexed through one flat index like a 2-D shared array. The IR has no
/// declaration statement for it: the `let` is lowered to a loop that
/// fills every element, so that a `let` inside a loop resets the array on
/// every iteration, as in Rust.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalArray {
    /// Source name.
    pub name: String,
    /// Element type.
    pub elem: Scalar,
    /// Length in elements (all rows of a 2-D array).
    pub len: ConstExpr,
    /// Elements per row of a 2-D array; `None` for a 1-D one.
    pub row_len: Option<ConstExpr>,
    /// Where it was declared.
    pub span: SpanId,
}

/// A specialization constant (a `const` generic of the kernel function).
#[derive(Debug, Clone, PartialEq)]
pub struct SpecConst {
    /// Source name.
    pub name: String,
    /// `u32` or `i32`.
    pub ty: Scalar,
    /// Default value.
    pub default: i64,
}

/// A block or grid size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// x extent.
    pub x: u32,
    /// y extent.
    pub y: u32,
    /// z extent.
    pub z: u32,
}

impl Dim3 {
    /// A 3-D size.
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Dim3 { x, y, z }
    }
    /// A 1-D size `(x, 1, 1)`.
    pub const fn x(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
    /// Number of points, `x*y*z`.
    pub fn count(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
    /// Extent along an axis.
    pub fn get(self, a: Axis) -> u32 {
        match a {
            Axis::X => self.x,
            Axis::Y => self.y,
            Axis::Z => self.z,
        }
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

/// The launch space a kernel declares in its attribute: the launch
/// contract (`block`, `grid`, proven at compile time) and, apart from it,
/// the search spaces a tuner may explore.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LaunchSpace {
    /// Allowed block sizes (empty: any).
    pub blocks: Vec<Dim3>,
    /// Allowed grid sizes (empty: any).
    pub grids: Vec<Dim3>,
    /// The target the attribute names (`target = ".."` or `cc = ..`), which
    /// the gate checked; `None`: the generic default. Tools that are given
    /// no target use this one.
    pub target: Option<crate::target::Target>,
    /// The search spaces (`search(..)`): configurations a tuner explores
    /// and checks at tune time, never gated at compile time (see
    /// [`crate::space`]).
    pub search: Vec<crate::space::SearchSpace>,
}

/// A source location, filled in where the kernel was compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceSpan {
    /// 1-based line of the first token.
    pub line: u32,
    /// 1-based column of the first token.
    pub column: u32,
    /// 1-based line of the last token.
    pub end_line: u32,
    /// 1-based column just past the last token.
    pub end_column: u32,
}

/// The kernel's source text, for diagnostics.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceText {
    /// File the kernel is in, as `file!()` reports it.
    pub file: String,
    /// Line where `text` starts.
    pub first_line: u32,
    /// Column (1-based) where `text` starts.
    pub first_column: u32,
    /// The text of the kernel body, from its opening brace.
    pub text: String,
}

impl SourceText {
    /// The full text of a 1-based source line, if the body covers it.
    pub fn line(&self, line: u32) -> Option<String> {
        if line < self.first_line || self.text.is_empty() {
            return None;
        }
        let k = (line - self.first_line) as usize;
        let l = self.text.lines().nth(k)?;
        if k == 0 {
            // The body text starts mid-line, at its brace; pad to its column.
            Some(format!(
                "{}{}",
                " ".repeat(self.first_column.saturating_sub(1) as usize),
                l
            ))
        } else {
            Some(l.to_string())
        }
    }
}

/// One kernel: its signature, declarations and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// The function's name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Specialization constants.
    pub specs: Vec<SpecConst>,
    /// Every local (including loop variables).
    pub locals: Vec<Local>,
    /// Shared arrays.
    pub shared: Vec<SharedArray>,
    /// Local (register) arrays.
    pub arrays: Vec<LocalArray>,
    /// The body.
    pub body: Vec<Stmt>,
    /// The declared launch space (contract).
    pub launch: LaunchSpace,
    /// Span table indexed by [`SpanId`].
    pub spans: Vec<SourceSpan>,
    /// The source snippet of each span, parallel to `spans`.
    pub snippets: Vec<String>,
    /// The kernel body's text.
    pub source: SourceText,
    /// The helper calls inlined into the body, each with the span ids its
    /// body received; empty for a kernel that calls no helper.
    pub inlined: Vec<InlinedCall>,
    /// For one instance of a generic kernel (`fn axpy<T: Float>` lowered
    /// with `T = f32`), each type parameter's name and the scalar it stands
    /// for, in declaration order; empty for a kernel with no type
    /// parameters. `name` then spells the instance (`axpy<f32>`, see
    /// [`crate::dtype::instance_name`]).
    pub type_args: Vec<(String, Scalar)>,
}

/// One call of a helper function, inlined where it stands: the statements
/// and expressions lowered from the helper's body carry span ids in
/// `spans`, and `call` is the call expression in the caller (the kernel or
/// an outer helper), so a finding inside a helper can name both places.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlinedCall {
    /// The helper's name.
    pub helper: String,
    /// The call expression.
    pub call: SpanId,
    /// The span ids created while lowering this call's copy of the helper:
    /// `spans.start..spans.end` (nested calls lie inside).
    pub spans: std::ops::Range<SpanId>,
}

impl Kernel {
    /// Default values of the specialization constants.
    pub fn default_specs(&self) -> Vec<i64> {
        self.specs.iter().map(|s| s.default).collect()
    }
    /// Total static shared memory in bytes under the given specialization
    /// (a dynamic array counts nothing here: the launch sizes it).
    pub fn shared_bytes(&self, specs: &[i64]) -> Option<u64> {
        let mut total = 0u64;
        for s in self.shared.iter().filter(|s| !s.dynamic) {
            total = total.checked_add(s.len.eval(specs)?.checked_mul(s.elem.size_bytes())?)?;
        }
        Some(total)
    }
    /// The dynamic shared array, if the kernel declares one (at most one:
    /// the lowering refuses a second).
    pub fn dynamic_shared(&self) -> Option<(SharedId, &SharedArray)> {
        self.shared
            .iter()
            .enumerate()
            .find(|(_, s)| s.dynamic)
            .map(|(i, s)| (i as SharedId, s))
    }
    /// Elements per row of a memory that is 2-D, under the given
    /// specialization: `None` for a buffer or a 1-D array.
    pub fn row_len(&self, mem: Mem, specs: &[i64]) -> Option<u64> {
        let r = match mem {
            Mem::Global(_) => None,
            Mem::Shared(s) => self.shared[s as usize].row_len.as_ref(),
            Mem::Local(a) => self.arrays[a as usize].row_len.as_ref(),
        };
        r.and_then(|c| c.eval(specs)).filter(|&n| n > 0)
    }
    /// An element of a memory for messages: `[i]`, or `[row][col]` for a
    /// 2-D array.
    pub fn element_text(&self, mem: Mem, index: i64, specs: &[i64]) -> String {
        match self.row_len(mem, specs) {
            Some(cols) if index >= 0 => {
                format!("[{}][{}]", index as u64 / cols, index as u64 % cols)
            }
            _ => format!("[{index}]"),
        }
    }
    /// The source span of a span id (a zero span if out of range).
    pub fn span(&self, id: SpanId) -> SourceSpan {
        self.spans.get(id as usize).cloned().unwrap_or(SourceSpan {
            line: 0,
            column: 0,
            end_line: 0,
            end_column: 0,
        })
    }
    /// The source snippet of a span id.
    pub fn snippet(&self, id: SpanId) -> &str {
        self.snippets
            .get(id as usize)
            .map(String::as_str)
            .unwrap_or("")
    }
    /// Replaces each single-line snippet by the exact source text it spans
    /// (the macro only has token text; the source is known at run time).
    pub fn refresh_snippets(&mut self) {
        for (i, sp) in self.spans.iter().enumerate() {
            if sp.line == 0 || sp.line != sp.end_line || sp.end_column <= sp.column {
                continue;
            }
            if let Some(l) = self.source.line(sp.line) {
                let s: String = l
                    .chars()
                    .skip(sp.column as usize - 1)
                    .take((sp.end_column - sp.column) as usize)
                    .collect();
                if !s.trim().is_empty() && i < self.snippets.len() {
                    self.snippets[i] = s;
                }
            }
        }
    }
    /// The helper calls a span lies inside, innermost first: empty for a
    /// span of the kernel's own body.
    pub fn call_chain(&self, span: SpanId) -> Vec<&InlinedCall> {
        let mut chain: Vec<&InlinedCall> = self
            .inlined
            .iter()
            .filter(|c| c.spans.contains(&span))
            .collect();
        // Nested calls lie inside their caller's range: the narrowest first.
        chain.sort_by_key(|c| c.spans.end - c.spans.start);
        chain
    }
    /// The outermost call a span lies inside: the place in the kernel's own
    /// body that a finding inside a helper is reported at.
    pub fn outermost_call(&self, span: SpanId) -> Option<&InlinedCall> {
        self.call_chain(span).last().copied()
    }
    /// Finds a parameter by name.
    pub fn param_index(&self, name: &str) -> Option<ParamId> {
        self.params
            .iter()
            .position(|p| p.name == name)
            .map(|i| i as ParamId)
    }
    /// Name of a memory for messages.
    pub fn mem_name(&self, mem: Mem) -> &str {
        match mem {
            Mem::Global(p) => &self.params[p as usize].name,
            Mem::Shared(s) => &self.shared[s as usize].name,
            Mem::Local(a) => &self.arrays[a as usize].name,
        }
    }
}
