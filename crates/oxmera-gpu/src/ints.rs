//! Integer (`i32`, `u8`, `i64`) and bool ops on the device, by the
//! library's integer kernels (`oxmera_kernel::library::int_*`, and
//! `i64_*` for `i64`): elementwise arithmetic and comparisons (with a
//! tensor or a scalar operand), the reductions, and matmul — each bit for
//! bit the reference's, which computes in `i64` and wraps into the dtype
//! (see the kernels' modules for why `i32` arithmetic gives the same
//! bits, and how the `i64` kernels compute in word pairs). `u8` and bool
//! tensors are bytes four to a word; a kernel writing bytes computes four
//! outputs a thread. Each returns `None` where a size does not fit the kernels'
//! 32-bit arithmetic, one dispatch, or llvmpipe's loop limit (a walk of
//! more than `SCATTER_MAX_ALONG` elements): the caller then hands the op
//! to the host.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::Value;
use oxmera_kernel::library::{self, int_code, int_kind, int_out, int_reduce_code};
use oxmera_tensor::{BinaryOp, CmpOp, ReduceOp, Storage, Tensor, UnaryOp};

use crate::backend::GpuBackend;
use crate::device::{DeviceMemory, GpuDevice};
use crate::native::{
    ELEMENTWISE_BLOCK, SCATTER_MAX_ALONG, Strided, dims_of, reduce_sizes, view_of,
};

/// How the integer kernels read elements of `dtype`, if they take it.
fn kind_of(dtype: DType) -> Option<u32> {
    match dtype {
        DType::I32 => Some(int_kind::I32),
        DType::U8 => Some(int_kind::U8),
        DType::Bool => Some(int_kind::BOOL),
        _ => None,
    }
}

/// Whether elements of `dtype` are bytes four to a word.
fn is_bytes(dtype: DType) -> bool {
    matches!(dtype, DType::U8 | DType::Bool)
}

/// The inclusive range of `i32`, `u8` or `i64`.
fn int_range(dtype: DType) -> (i64, i64) {
    match dtype {
        DType::U8 => (0, 255),
        DType::I64 => (i64::MIN, i64::MAX),
        _ => (i32::MIN.into(), i32::MAX.into()),
    }
}

/// A clamp's bounds as the reference narrows them: to the integers they
/// admit (`ceil` of the lower, `floor` of the upper), saturated to the
/// dtype's range, so the clamp's result is always representable.
fn int_bounds(dtype: DType, min: Option<f64>, max: Option<f64>) -> (i64, i64) {
    let (lo, hi) = int_range(dtype);
    let saturate = |v: f64| {
        if v <= lo as f64 {
            lo
        } else if v >= hi as f64 {
            hi
        } else {
            v as i64
        }
    };
    (
        min.map_or(lo, |m| saturate(m.ceil())),
        max.map_or(hi, |m| saturate(m.floor())),
    )
}

/// The `int_code` of a unary op on an `i32`, `u8` or `i64` tensor, with
/// a clamp's bounds (in the dtype's range); `None` where the op has no
/// integer meaning (`neg` of an unsigned dtype is refused by the
/// reference, so it goes there).
fn unary_code(op: UnaryOp, dtype: DType) -> Option<(u32, i64, i64)> {
    use UnaryOp::*;
    let code = match op {
        Neg if dtype != DType::U8 => int_code::NEG,
        Abs => int_code::ABS,
        Sign => int_code::SIGN,
        Square => int_code::SQUARE,
        Relu => int_code::RELU,
        Floor | Ceil | Round | Trunc => int_code::COPY,
        Clamp { min, max } => {
            let (lo, hi) = int_bounds(dtype, min, max);
            return Some((int_code::CLAMP, lo, hi));
        }
        _ => return None,
    };
    Some((code, 0, 0))
}

/// The `int_code` of a binary op on integers.
fn binary_code(op: BinaryOp) -> Option<u32> {
    use BinaryOp::*;
    Some(match op {
        Add => int_code::ADD,
        Sub => int_code::SUB,
        Mul => int_code::MUL,
        Div => int_code::DIV,
        Rem => int_code::REM,
        Fmod => int_code::FMOD,
        Pow => int_code::POW,
        Maximum => int_code::MAX,
        Minimum => int_code::MIN,
        _ => return None,
    })
}

/// The `int_code` of a comparison.
fn compare_code(op: CmpOp) -> u32 {
    match op {
        CmpOp::Eq => int_code::EQ,
        CmpOp::Ne => int_code::NE,
        CmpOp::Lt => int_code::LT,
        CmpOp::Le => int_code::LE,
        CmpOp::Gt => int_code::GT,
        CmpOp::Ge => int_code::GE,
    }
}

/// The ops computed natively for `dtype` (`i32`, `u8`, bool, and `all`/
/// `any` of `f32`) by the integer kernels, by the name
/// `Backend::support` is asked with.
pub(crate) fn native_int(op: &str, dtype: DType) -> bool {
    const COMPARE: [&str; 6] = ["eq", "ne", "lt", "le", "gt", "ge"];
    const REDUCE: [&str; 8] = [
        "sum", "prod", "max", "min", "argmax", "argmin", "all", "any",
    ];
    const ARITH: [&str; 19] = [
        "abs", "sign", "square", "relu", "floor", "ceil", "round", "trunc", "clamp", "add", "sub",
        "mul", "div", "rem", "fmod", "pow", "maximum", "minimum", "matmul",
    ];
    match dtype {
        DType::I32 => {
            op == "neg" || COMPARE.contains(&op) || REDUCE.contains(&op) || ARITH.contains(&op)
        }
        // Comparisons of i64 have their own kernel (`compare_i64`); all
        // and any are not walked in pairs.
        DType::I64 => op == "neg" || REDUCE[..6].contains(&op) || ARITH.contains(&op),
        DType::U8 => COMPARE.contains(&op) || REDUCE.contains(&op) || ARITH.contains(&op),
        DType::Bool => COMPARE.contains(&op) || REDUCE.contains(&op),
        DType::F32 => matches!(op, "all" | "any"),
        _ => false,
    }
}

impl<D: GpuDevice> GpuBackend<D> {
    /// One launch of `int_elementwise`: `op` on `a` and `b` (`a` again for
    /// a unary op or a scalar one), the scalar `s` placed by `scalar` (0
    /// none, 1 second, 2 first). Comparisons write bool bytes; the rest
    /// the input's dtype.
    #[allow(clippy::too_many_arguments)]
    fn int_launch(
        &self,
        name: &'static str,
        op: u32,
        a: &Tensor,
        b: &Tensor,
        scalar: u32,
        s: i32,
        bounds: (i32, i32),
    ) -> Result<Option<Storage>> {
        let Some(kind) = kind_of(a.dtype()) else {
            return Ok(None);
        };
        let compare = op >= int_code::EQ;
        let out = if compare { DType::Bool } else { a.dtype() };
        let packed = is_bytes(out);
        self.strided(Strided {
            kernel: library::int_elementwise(),
            name,
            inputs: &[a, b],
            shape: a.dims(),
            out,
            per_thread: if packed { 4 } else { 1 },
            extra: vec![
                Value::U32(op),
                Value::U32(kind),
                Value::Bool(packed),
                Value::U32(scalar),
                Value::I32(s),
                Value::I32(bounds.0),
                Value::I32(bounds.1),
            ],
        })
    }

    /// One launch of `i64_elementwise`: as [`Self::int_launch`] with the
    /// operands, the scalar and a clamp's bounds as `i64` word pairs.
    #[allow(clippy::too_many_arguments)]
    fn i64_launch(
        &self,
        name: &'static str,
        op: u32,
        a: &Tensor,
        b: &Tensor,
        scalar: u32,
        s: i64,
        bounds: (i64, i64),
    ) -> Result<Option<Storage>> {
        let mut extra = vec![Value::U32(op), Value::U32(scalar)];
        for v in [s, bounds.0, bounds.1] {
            extra.extend([
                Value::U32(v as u64 as u32),
                Value::U32((v as u64 >> 32) as u32),
            ]);
        }
        self.strided(Strided {
            kernel: library::i64_elementwise(),
            name,
            inputs: &[a, b],
            shape: a.dims(),
            out: DType::I64,
            per_thread: 1,
            extra,
        })
    }

    /// A unary op on an `i32`, `u8` or `i64` tensor.
    pub(crate) fn unary_int(&self, op: UnaryOp, x: &Tensor) -> Result<Option<Storage>> {
        if !matches!(x.dtype(), DType::I32 | DType::U8 | DType::I64) {
            return Ok(None);
        }
        let Some((code, lo, hi)) = unary_code(op, x.dtype()) else {
            return Ok(None);
        };
        if x.dtype() == DType::I64 {
            return self.i64_launch(op.name(), code, x, x, 0, 0, (lo, hi));
        }
        // Both bounds lie in the dtype's range, which `i32` holds.
        self.int_launch(op.name(), code, x, x, 0, 0, (lo as i32, hi as i32))
    }

    /// `a op b` (or `a op value`, `value op a` by `scalar`) for `i32`,
    /// `u8` or `i64`; `value` is exact in the dtype (the front end's
    /// contract).
    pub(crate) fn binary_int(
        &self,
        op: BinaryOp,
        a: &Tensor,
        b: Option<&Tensor>,
        value: f64,
        scalar_first: bool,
    ) -> Result<Option<Storage>> {
        if !matches!(a.dtype(), DType::I32 | DType::U8 | DType::I64) {
            return Ok(None);
        }
        let Some(code) = binary_code(op) else {
            return Ok(None);
        };
        let scalar = match (b, scalar_first) {
            (Some(_), _) => 0,
            (None, false) => 1,
            (None, true) => 2,
        };
        if a.dtype() == DType::I64 {
            let b = b.unwrap_or(a);
            return self.i64_launch(op.name(), code, a, b, scalar, value as i64, (0, 0));
        }
        self.int_launch(
            op.name(),
            code,
            a,
            b.unwrap_or(a),
            scalar,
            value as i32,
            (0, 0),
        )
    }

    /// `a op b` (or `a op value`) for `i32`, `u8` or bool, as bool bytes.
    pub(crate) fn compare_int(
        &self,
        op: CmpOp,
        a: &Tensor,
        b: Option<&Tensor>,
        value: f64,
    ) -> Result<Option<Storage>> {
        let scalar = if b.is_some() { 0 } else { 1 };
        let code = compare_code(op);
        self.int_launch(
            op.name(),
            code,
            a,
            b.unwrap_or(a),
            scalar,
            value as i32,
            (0, 0),
        )
    }

    /// A reduction of an `i32`, `u8` or bool tensor (or `all`/`any` of an
    /// `f32` one) over `dims` by `int_reduce_strided`, a thread per output
    /// (four for byte outputs); of an `i64` one (sum, product, max, min and
    /// their positions) by `i64_reduce_strided`.
    pub(crate) fn reduce_int(
        &self,
        op: ReduceOp,
        x: &Tensor,
        dims: &[usize],
        out_dtype: DType,
    ) -> Result<Option<Storage>> {
        let wide = x.dtype() == DType::I64;
        let kind = match (x.dtype(), op) {
            (DType::F32, ReduceOp::All | ReduceOp::Any) => int_kind::F32_TRUTH,
            (DType::I64, ReduceOp::All | ReduceOp::Any) => return Ok(None),
            (DType::I64, _) => 0,
            (dtype, _) => match kind_of(dtype) {
                Some(k) => k,
                None => return Ok(None),
            },
        };
        let (code, want) = match op {
            ReduceOp::Sum => (int_reduce_code::SUM, DType::I64),
            ReduceOp::Prod => (int_reduce_code::PROD, DType::I64),
            ReduceOp::Max => (int_reduce_code::MAX, x.dtype()),
            ReduceOp::Min => (int_reduce_code::MIN, x.dtype()),
            ReduceOp::ArgMax => (int_reduce_code::ARGMAX, DType::I64),
            ReduceOp::ArgMin => (int_reduce_code::ARGMIN, DType::I64),
            ReduceOp::All => (int_reduce_code::ALL, DType::Bool),
            ReduceOp::Any => (int_reduce_code::ANY, DType::Bool),
            _ => return Ok(None),
        };
        if out_dtype != want {
            return Ok(None);
        }
        let (out_kind, per) = match out_dtype {
            DType::I64 => (int_out::PAIR, 1),
            DType::I32 => (int_out::WORD, 1),
            _ => (int_out::BYTES, 4),
        };
        let name = op.name();
        let (n_out, n_walked) = reduce_sizes(x, dims);
        let (Some(shape), Some((strides, offset))) = (dims_of(x.dims()), view_of(x)) else {
            return Ok(None);
        };
        let threads = n_out.div_ceil(per);
        if n_walked > SCATTER_MAX_ALONG || n_out >= i32::MAX as usize || !self.fits(threads) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let out = gpu.alloc((n_out * out_dtype.size_in_bytes()) as u64, name)?;
        if n_out > 0 {
            let src = self.buffer(x.storage(), name)?;
            let marks: Vec<u32> = (0..shape.len())
                .map(|d| u32::from(dims.contains(&d)))
                .collect();
            let (s, st, r) = (
                gpu.metadata(&shape)?,
                gpu.metadata(&strides)?,
                gpu.metadata(&marks)?,
            );
            let mut scalars = vec![
                Value::U32(shape.len() as u32),
                Value::U32(n_out as u32),
                Value::U32(n_walked as u32),
                Value::I32(offset),
                Value::U32(code),
            ];
            let kernel = if wide {
                library::i64_reduce_strided()
            } else {
                scalars.extend([Value::U32(kind), Value::U32(out_kind)]);
                library::int_reduce_strided()
            };
            self.linear(
                kernel,
                ELEMENTWISE_BLOCK,
                &[src.buffer.raw(), out.raw(), &s, &st, &r],
                &scalars,
                threads,
                name,
            )?;
        }
        Ok(Some(self.store(out_dtype, n_out, out)))
    }

    /// `a @ b` for `i32` or `u8` by `int_matmul_strided`, or `i64` by
    /// `i64_matmul_strided`, wrapping.
    pub(crate) fn matmul_int(&self, a: &Tensor, b: &Tensor) -> Result<Option<Storage>> {
        let kind = match a.dtype() {
            DType::I32 | DType::I64 => int_kind::I32,
            DType::U8 => int_kind::U8,
            _ => return Ok(None),
        };
        let per = if kind == int_kind::U8 { 4 } else { 1 };
        let (ad, bd) = (a.dims(), b.dims());
        let rank = ad.len();
        let (m, k, n) = (ad[rank - 2], ad[rank - 1], bd[rank - 1]);
        let count = ad[..rank - 2].iter().product::<usize>() * m * n;
        let (Some((sa, oa)), Some((sb, ob)), Some(batch)) =
            (view_of(a), view_of(b), dims_of(&ad[..rank - 2]))
        else {
            return Ok(None);
        };
        let threads = count.div_ceil(per);
        if k > SCATTER_MAX_ALONG || count >= i32::MAX as usize || !self.fits(threads) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let out = gpu.alloc((count * a.dtype().size_in_bytes()) as u64, "matmul")?;
        if count > 0 {
            let (ba, bb) = (
                self.buffer(a.storage(), "matmul")?,
                self.buffer(b.storage(), "matmul")?,
            );
            let (s, ma, mb) = (
                gpu.metadata(&batch)?,
                gpu.metadata(&sa[..rank - 2])?,
                gpu.metadata(&sb[..rank - 2])?,
            );
            let i = |v: u32| Value::I32(v as i32);
            let mut scalars = vec![
                Value::U32((rank - 2) as u32),
                Value::U32(count as u32),
                Value::U32(m as u32),
                Value::U32(n as u32),
                Value::U32(k as u32),
                i(sa[rank - 2]),
                i(sa[rank - 1]),
                i(sb[rank - 2]),
                i(sb[rank - 1]),
                Value::I32(oa),
                Value::I32(ob),
            ];
            let kernel = if a.dtype() == DType::I64 {
                library::i64_matmul_strided()
            } else {
                scalars.push(Value::U32(kind));
                library::int_matmul_strided()
            };
            self.linear(
                kernel,
                ELEMENTWISE_BLOCK,
                &[ba.buffer.raw(), bb.buffer.raw(), out.raw(), &s, &ma, &mb],
                &scalars,
                threads,
                "matmul",
            )?;
        }
        Ok(Some(self.store(a.dtype(), count, out)))
    }
}
