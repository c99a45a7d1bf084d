//! The f64 ops computed on the device, on devices with f64 and i64
//! shader types (wgpu's SHADER_F64 and SHADER_INT64 — lavapipe has both,
//! Metal neither; PTX has both on every NVIDIA part): elementwise arithmetic (a scalar operand filled once
//! and broadcast), the exact unary ops, comparisons, sums and means, and
//! matmul, by the f64 siblings of the f32 kernels
//! (`oxmera_kernel::library::wide`), launched with the f32 kernels'
//! parameters; scatter-add, cumsum and cumprod in order
//! (`wide_accumulate`, wired in `structural.rs`). The rest of f64 goes
//! through the host fallback; data movement (copies, cat, pad, flip,
//! where, index_select) and casts move f64 as word pairs.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::Value;
use oxmera_kernel::library::{self, binary_math_code, unary_code, wide_math_code as m};
use oxmera_tensor::{BinaryOp, CmpOp, SELU_ALPHA, SELU_SCALE, Storage, Tensor, UnaryOp};

use crate::backend::GpuBackend;
use crate::device::GpuDevice;
use crate::native::{Strided, binary_code_of, compare_code_of};

/// The unary ops `unary_strided_f64` computes (exact, or correctly
/// rounded: `sqrt` and `1 / x`), with their codes.
const F64_UNARY: [(UnaryOp, u32); 8] = [
    (UnaryOp::Neg, unary_code::NEG),
    (UnaryOp::Abs, unary_code::ABS),
    (UnaryOp::Relu, unary_code::RELU),
    (UnaryOp::Sqrt, unary_code::SQRT),
    (UnaryOp::Recip, unary_code::RECIP),
    (UnaryOp::Square, unary_code::SQUARE),
    (UnaryOp::Floor, unary_code::FLOOR),
    (UnaryOp::Ceil, unary_code::CEIL),
];

/// The `unary_math_f64` code of an f64 unary op, with its two scalars
/// (see `oxmera_kernel::library::wide_math` for each function's error
/// against the conformance bound); `None` for the ops it lacks (sin, cos,
/// tan, the inverse trigonometric functions, erf, GELU's erf form).
fn math_f64_of(op: UnaryOp) -> Option<(u32, f64, f64)> {
    use UnaryOp::*;
    let plain = |code| Some((code, 0.0, 0.0));
    match op {
        Exp => plain(m::EXP),
        Log => plain(m::LOG),
        Log1p => plain(m::LOG1P),
        Expm1 => plain(m::EXPM1),
        Sigmoid => plain(m::SIGMOID),
        Tanh => plain(m::TANH),
        Softplus => plain(m::SOFTPLUS),
        Silu => plain(m::SILU),
        Logsigmoid => plain(m::LOGSIGMOID),
        Elu(alpha) => Some((m::ELU, alpha, 1.0)),
        Selu => Some((m::ELU, SELU_ALPHA, SELU_SCALE)),
        Exp2 => plain(m::EXP2),
        Log2 => plain(m::LOG2),
        Log10 => plain(m::LOG10),
        Sinh => plain(m::SINH),
        Cosh => plain(m::COSH),
        Rsqrt => plain(m::RSQRT),
        Sign => plain(m::SIGN),
        Trunc => plain(m::TRUNC),
        Round => plain(m::ROUND),
        Clamp { min, max } => Some((
            m::CLAMP,
            min.unwrap_or(f64::NEG_INFINITY),
            max.unwrap_or(f64::INFINITY),
        )),
        Hardtanh { min, max } => Some((m::CLAMP, min, max)),
        LeakyRelu(slope) => Some((m::LEAKY_RELU, slope, 0.0)),
        GeluTanh => plain(m::GELU_TANH),
        Mish => plain(m::MISH),
        Hardsigmoid => plain(m::HARDSIGMOID),
        Hardswish => plain(m::HARDSWISH),
        Powf(p) => Some((m::POWF, p, 0.0)),
        _ => None,
    }
}

/// The ops computed natively for f64 (where the adapter has f64 and
/// i64), by the name [`oxmera_tensor::Backend::support`] is asked with.
pub(crate) fn native_f64(op: &str) -> bool {
    matches!(
        op,
        "matmul"
            | "scatter_add"
            | "cumsum"
            | "cumprod"
            | "sum"
            | "mean"
            | "add"
            | "sub"
            | "mul"
            | "div"
            | "maximum"
            | "minimum"
            | "eq"
            | "ne"
            | "lt"
            | "le"
            | "gt"
            | "ge"
            | "pow"
            | "hypot"
            // Composed of the ops above (`crate::long`).
            | "layer_norm"
    ) || F64_UNARY.iter().any(|(u, _)| u.name() == op)
        || F64_MATH_NAMES.contains(&op)
}

/// The names of the ops [`math_f64_of`] maps, the f64 walks
/// (`walk_f64`) and the f64 logcumsumexp.
const F64_MATH_NAMES: [&str; 39] = [
    "softmax",
    "log_softmax",
    "prod",
    "max",
    "min",
    "argmax",
    "argmin",
    "var",
    "std",
    "logsumexp",
    "powf",
    "logcumsumexp",
    "exp",
    "log",
    "log1p",
    "expm1",
    "sigmoid",
    "tanh",
    "softplus",
    "silu",
    "logsigmoid",
    "elu",
    "selu",
    "exp2",
    "log2",
    "log10",
    "sinh",
    "cosh",
    "rsqrt",
    "sign",
    "trunc",
    "round",
    "clamp",
    "hardtanh",
    "leaky_relu",
    "gelu_tanh",
    "mish",
    "hardsigmoid",
    "hardswish",
];

impl<D: GpuDevice> GpuBackend<D> {
    /// Whether f64 ops run on the device: the part has f64 and i64 shader
    /// types (the kernels read an f64's bits as a u64; on wgpu, after
    /// `OXMERA_WGPU_MASK`).
    pub(crate) fn f64_native(&self) -> bool {
        self.gpu().has_feature("f64") && self.gpu().has_feature("i64")
    }

    /// `op x` for an f64 `x`, where `unary_strided_f64` (the exact and
    /// correctly rounded ops) or `unary_math_f64` (the library functions
    /// and the rest of the exact ones) has `op`.
    pub(crate) fn unary_f64(&self, op: UnaryOp, x: &Tensor) -> Result<Option<Storage>> {
        let Some(&(_, code)) = F64_UNARY.iter().find(|(u, _)| *u == op) else {
            let Some((code, p0, p1)) = math_f64_of(op) else {
                return Ok(None);
            };
            return self.strided(Strided {
                kernel: library::unary_math_f64(),
                name: op.name(),
                inputs: &[x],
                shape: x.dims(),
                out: DType::F64,
                per_thread: 1,
                extra: vec![Value::U32(code), Value::F64(p0), Value::F64(p1)],
            });
        };
        self.strided(Strided {
            kernel: library::unary_strided_f64(),
            name: op.name(),
            inputs: &[x],
            shape: x.dims(),
            out: DType::F64,
            per_thread: 1,
            extra: vec![Value::U32(code)],
        })
    }

    /// `a op b` for f64 operands: arithmetic, maximum and minimum by
    /// `binary_strided_f64`, `pow` and `hypot` by `binary_math_f64`.
    pub(crate) fn binary_f64(
        &self,
        op: BinaryOp,
        a: &Tensor,
        b: &Tensor,
    ) -> Result<Option<Storage>> {
        let (kernel, code) = match op {
            BinaryOp::Pow => (library::binary_math_f64(), binary_math_code::POW),
            BinaryOp::Hypot => (library::binary_math_f64(), binary_math_code::HYPOT),
            _ => match binary_code_of(op) {
                Some(code) => (library::binary_strided_f64(), code),
                None => return Ok(None),
            },
        };
        self.strided(Strided {
            kernel,
            name: op.name(),
            inputs: &[a, b],
            shape: a.dims(),
            out: DType::F64,
            per_thread: 1,
            extra: vec![Value::U32(code)],
        })
    }

    /// `value` of `dtype` as a tensor on this device with `like`'s shape:
    /// one element filled on the device, read through stride-0 views (no
    /// copy), so that a scalar operand can take the tensor-operand path of
    /// a kernel that has no scalar form.
    pub(crate) fn scalar_like(&self, dtype: DType, value: f64, like: &Tensor) -> Result<Tensor> {
        let one = Tensor::from_storage(self.fill_pattern(dtype, 1, value)?, Vec::<usize>::new());
        one.expand(like.shape().clone())
    }

    /// `x op value` (or `value op x` when `scalar_first`) for an f64 `x`,
    /// by `binary_strided_f64` with the value filled once and broadcast.
    pub(crate) fn binary_scalar_f64(
        &self,
        op: BinaryOp,
        x: &Tensor,
        value: f64,
        scalar_first: bool,
    ) -> Result<Option<Storage>> {
        if binary_code_of(op).is_none() {
            return Ok(None);
        }
        let s = self.scalar_like(DType::F64, value, x)?;
        if scalar_first {
            self.binary_f64(op, &s, x)
        } else {
            self.binary_f64(op, x, &s)
        }
    }

    /// `a op b` (or `a op s` when `b` is `None`) for f64 operands, as
    /// bytes four to a word.
    pub(crate) fn compare_f64(
        &self,
        op: CmpOp,
        a: &Tensor,
        b: Option<&Tensor>,
        s: f64,
    ) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::compare_packed_f64(),
            name: op.name(),
            inputs: &[a, b.unwrap_or(a)],
            shape: a.dims(),
            out: DType::Bool,
            per_thread: 4,
            extra: vec![
                Value::U32(compare_code_of(op)),
                Value::Bool(b.is_none()),
                Value::F64(s),
            ],
        })
    }

    /// `a @ b` for f64 operands, at the contract's tile of 16.
    pub(crate) fn matmul_f64(&self, a: &Tensor, b: &Tensor) -> Result<Option<Storage>> {
        self.matmul_with(library::matmul_strided_f64(), 16, DType::F64, a, b)
    }
}
