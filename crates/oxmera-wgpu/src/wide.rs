//! The f64 ops computed on the device, on adapters with f64 and i64
//! shader types (wgpu's SHADER_F64 and SHADER_INT64; lavapipe has both,
//! Metal neither): elementwise arithmetic (a scalar operand filled once
//! and broadcast), the exact unary ops, comparisons, sums and means, and
//! matmul, by the f64 siblings of the f32 kernels
//! (`oxmera_kernel::library::wide`), launched with the f32 kernels'
//! parameters; scatter-add, cumsum and cumprod in order
//! (`wide_accumulate`, wired in `structural.rs`). The rest of f64 goes
//! through the host fallback; data movement (copies, cat, pad, flip,
//! where, index_select) and casts move f64 as word pairs.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::Value;
use oxmera_kernel::library::{self, unary_code};
use oxmera_tensor::{BinaryOp, CmpOp, Storage, Tensor, UnaryOp};

use crate::backend::WgpuBackend;
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
    ) || F64_UNARY.iter().any(|(u, _)| u.name() == op)
}

impl WgpuBackend {
    /// Whether f64 ops run on the device: the adapter's features (after
    /// `OXMERA_WGPU_MASK`) have f64 and i64 shader types (the kernels read
    /// an f64's bits as a u64).
    pub(crate) fn f64_native(&self) -> bool {
        let f = &self.gpu().report.features;
        f.contains(&"f64") && f.contains(&"i64")
    }

    /// `op x` for an f64 `x`, where `unary_strided_f64` has `op`.
    pub(crate) fn unary_f64(&self, op: UnaryOp, x: &Tensor) -> Result<Option<Storage>> {
        let Some(&(_, code)) = F64_UNARY.iter().find(|(u, _)| *u == op) else {
            return Ok(None);
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

    /// `a op b` for f64 operands.
    pub(crate) fn binary_f64(
        &self,
        op: BinaryOp,
        a: &Tensor,
        b: &Tensor,
    ) -> Result<Option<Storage>> {
        let Some(code) = binary_code_of(op) else {
            return Ok(None);
        };
        self.strided(Strided {
            kernel: library::binary_strided_f64(),
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
