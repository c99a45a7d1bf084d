//! The ops a GPU backend computes on the device: each a launch of a
//! library kernel (checked by the analysis for its launch before it runs),
//! or `None` where a size does not fit the kernel's 32-bit arithmetic or
//! one dispatch — the caller then hands the op to the host.
//!
//! Most kernels here are strided elementwise kernels, and they share one
//! parameter order so one helper (`GpuBackend::strided`) launches them
//! all: the input buffers, the output, the output's shape, each input's
//! strides, `ndim`, `n` (the outputs), each input's offset, then the op's
//! own scalars. The others (matmul, scatter-add) have shapes of their own
//! and their own launch code; the reductions, softmax and layer norm are
//! in `crate::reduce`.

use oxmera_core::{DType, Result};
use oxmera_kernel::ir::{Dim3, Kernel, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{
    self, binary_code, binary_math_code, compare_code, math_code, scalar_code, unary_code,
};
use oxmera_tensor::fallback::on_host;
use oxmera_tensor::{
    Backend, BinaryOp, CmpOp, Generator, HostBuffer, SELU_ALPHA, SELU_SCALE, Storage, Tensor,
    UnaryOp,
};

use crate::backend::GpuBackend;
use crate::copy::Place;
use crate::device::{DeviceMemory, GpuDevice};

/// The block the elementwise kernels run with: one of the sizes they
/// declare, and a multiple of every subgroup width a device reports.
pub(crate) const ELEMENTWISE_BLOCK: u32 = 256;

/// The block `softmax_strided` runs with (the one it declares).
pub(crate) const SOFTMAX_BLOCK: u32 = 64;

/// The longest walk one thread makes in `scatter_add_strided` (along the
/// scattered dim), `argbest_strided` and `count_bytes_strided` (over the
/// reduced elements): llvmpipe stops a loop after 65535 iterations.
pub(crate) const SCATTER_MAX_ALONG: usize = 16384;

/// One launch of a strided elementwise kernel (the shared parameter order
/// is in the module docs).
pub(crate) struct Strided<'a> {
    /// The library kernel.
    pub kernel: &'static Kernel,
    /// The op's public name, for errors.
    pub name: &'static str,
    /// The operands, read through their layouts.
    pub inputs: &'a [&'a Tensor],
    /// The output's shape, which the kernel walks.
    pub shape: &'a [usize],
    /// The output's dtype.
    pub out: DType,
    /// Outputs one thread writes: 1, or 4 for bytes packed in a word.
    pub per_thread: usize,
    /// The op's own scalars, after the offsets.
    pub extra: Vec<Value>,
}

/// The strides and offset of a view in the kernels' i32, or `None` if one
/// does not fit (the word kernels' [`Place`] at one word an element).
pub(crate) fn view_of(x: &Tensor) -> Option<(Vec<u32>, i32)> {
    Place::of(x).words(1)
}

/// Dims in the kernels' u32, or `None` if one does not fit.
pub(crate) fn dims_of(dims: &[usize]) -> Option<Vec<u32>> {
    dims.iter().map(|&d| u32::try_from(d).ok()).collect()
}

/// How many outputs a reduction of `x` over `dims` has, and how many
/// elements each sums.
pub(crate) fn reduce_sizes(x: &Tensor, dims: &[usize]) -> (usize, usize) {
    let n_reduced = dims.iter().map(|&d| x.dims()[d]).product();
    let n_out = (0..x.dims().len())
        .filter(|d| !dims.contains(d))
        .map(|d| x.dims()[d])
        .product();
    (n_out, n_reduced)
}

impl<D: GpuDevice> GpuBackend<D> {
    /// Launches a kernel with one thread per output, `block` threads a
    /// block.
    pub(crate) fn linear(
        &self,
        kernel: &'static Kernel,
        block: u32,
        buffers: &[&D::Raw],
        scalars: &[Value],
        n: usize,
        op: &'static str,
    ) -> Result<()> {
        let launch = LaunchConfig {
            grid: Dim3::x((n as u32).div_ceil(block)),
            block: Dim3::x(block),
        };
        self.gpu().launch(kernel, launch, buffers, scalars, op)
    }

    /// Whether a launch of `threads` elementwise threads fits one dispatch
    /// (and the kernels' i32 indexing).
    pub(crate) fn fits(&self, threads: usize) -> bool {
        let max = u64::from(self.gpu().max_grid().x);
        (threads as u64) <= max * ELEMENTWISE_BLOCK as u64 && threads < i32::MAX as usize
    }

    /// Every dtype: its bytes repeat with a period of at most 8, so one
    /// kernel writes the two words of the pattern.
    pub(crate) fn fill_pattern(&self, dtype: DType, len: usize, value: f64) -> Result<Storage> {
        let size = dtype.size_in_bytes();
        let bytes = len * size;
        let words = bytes.div_ceil(4);
        // A buffer past the binding limit is refused before the host builds
        // one; past one dispatch, the host builds it and uploads (counted).
        self.gpu().check_binding(bytes as u64, "fill")?;
        if !self.fits(words) {
            return on_host(self).fill(dtype, len, value);
        }
        let out = self.gpu().alloc(bytes as u64, "fill")?;
        let pattern = HostBuffer::filled(dtype, 8 / size, value).to_le_bytes();
        let word = |k: usize| u32::from_le_bytes(pattern[k..k + 4].try_into().expect("4 bytes"));
        if words > 0 {
            self.linear(
                library::fill_words(),
                ELEMENTWISE_BLOCK,
                &[out.raw()],
                &[
                    Value::U32(words as u32),
                    Value::U32(word(0)),
                    Value::U32(word(4)),
                ],
                words,
                "fill",
            )?;
        }
        Ok(self.store(dtype, len, out))
    }

    /// Launches one strided elementwise kernel; `None` where a size does
    /// not fit.
    pub(crate) fn strided(&self, l: Strided<'_>) -> Result<Option<Storage>> {
        let n: usize = l.shape.iter().product();
        let threads = n.div_ceil(l.per_thread);
        let views: Option<Vec<(Vec<u32>, i32)>> = l.inputs.iter().map(|x| view_of(x)).collect();
        let (Some(shape), Some(views)) = (dims_of(l.shape), views) else {
            return Ok(None);
        };
        if n >= i32::MAX as usize || !self.fits(threads) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let out = gpu.alloc((n * l.out.size_in_bytes()) as u64, l.name)?;
        if n > 0 {
            let sources = l
                .inputs
                .iter()
                .map(|x| self.buffer(x.storage(), l.name))
                .collect::<Result<Vec<_>>>()?;
            let shape_meta = gpu.metadata(&shape)?;
            let stride_metas: Vec<D::Raw> = views
                .iter()
                .map(|(s, _)| gpu.metadata(s))
                .collect::<Result<_>>()?;
            let mut buffers: Vec<&D::Raw> = sources.iter().map(|b| b.buffer.raw()).collect();
            buffers.push(out.raw());
            buffers.push(&shape_meta);
            buffers.extend(stride_metas.iter());
            let mut scalars = vec![Value::U32(shape.len() as u32), Value::U32(n as u32)];
            scalars.extend(views.iter().map(|&(_, o)| Value::I32(o)));
            scalars.extend(l.extra);
            self.linear(
                l.kernel,
                ELEMENTWISE_BLOCK,
                &buffers,
                &scalars,
                threads,
                l.name,
            )?;
        }
        Ok(Some(self.store(l.out, n, out)))
    }

    /// `op x` for f32 (`contiguous` is the copy code).
    pub(crate) fn unary_f32(
        &self,
        code: u32,
        x: &Tensor,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::unary_strided(),
            name,
            inputs: &[x],
            shape: x.dims(),
            out: DType::F32,
            per_thread: 1,
            extra: vec![Value::U32(code)],
        })
    }

    /// `f x` for f32 by `unary_math_strided`, with the op's code and its
    /// two scalars (see [`math_unary_of`]).
    pub(crate) fn unary_math_f32(
        &self,
        (code, p0, p1): (u32, f32, f32),
        x: &Tensor,
        name: &'static str,
    ) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::unary_math_strided(),
            name,
            inputs: &[x],
            shape: x.dims(),
            out: DType::F32,
            per_thread: 1,
            extra: vec![Value::U32(code), Value::F32(p0), Value::F32(p1)],
        })
    }

    /// `a op b` for f32, where the GPU has `op` (`binary_strided`'s
    /// arithmetic, or `binary_math_strided`'s functions).
    pub(crate) fn binary_f32(
        &self,
        op: BinaryOp,
        a: &Tensor,
        b: &Tensor,
    ) -> Result<Option<Storage>> {
        let (kernel, code) = match (binary_code_of(op), binary_math_code_of(op)) {
            (Some(code), _) => (library::binary_strided(), code),
            (None, Some(code)) => (library::binary_math_strided(), code),
            (None, None) => return Ok(None),
        };
        self.strided(Strided {
            kernel,
            name: op.name(),
            inputs: &[a, b],
            shape: a.dims(),
            out: DType::F32,
            per_thread: 1,
            extra: vec![Value::U32(code)],
        })
    }

    /// A logical op on bool (byte) operands, as bytes four to a word;
    /// `not` reads `a` twice.
    pub(crate) fn logical_bytes(
        &self,
        code: u32,
        name: &'static str,
        a: &Tensor,
        b: &Tensor,
    ) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::logical_packed(),
            name,
            inputs: &[a, b],
            shape: a.dims(),
            out: DType::Bool,
            per_thread: 4,
            extra: vec![Value::U32(code)],
        })
    }

    /// `x op value` (or `value op x`) for f32, where the GPU has `op`.
    pub(crate) fn scalar_f32(
        &self,
        op: BinaryOp,
        x: &Tensor,
        value: f64,
        scalar_first: bool,
    ) -> Result<Option<Storage>> {
        let Some(&(_, code)) = NATIVE_SCALAR.iter().find(|(b, _)| *b == op) else {
            return Ok(None);
        };
        self.strided(Strided {
            kernel: library::scalar_strided(),
            name: op.name(),
            inputs: &[x],
            shape: x.dims(),
            out: DType::F32,
            per_thread: 1,
            extra: vec![
                Value::U32(code),
                Value::F32(value as f32),
                Value::Bool(scalar_first),
            ],
        })
    }

    /// `clamp` and `hardtanh` (one launch per bound, in the reference's
    /// order) and leaky ReLU for f32, by `scalar_strided`'s bound and
    /// slope codes. A bound rounded to f32 selects exactly as the f64 one:
    /// an f32 `x` below the f64 bound is below its nearest f32 or equal
    /// to it, and either way the result is that f32.
    pub(crate) fn clamp_or_leaky_f32(&self, op: UnaryOp, x: &Tensor) -> Result<Option<Storage>> {
        let steps: Vec<(u32, f64)> = match op {
            UnaryOp::Hardtanh { min, max } => {
                vec![(scalar_code::AT_LEAST, min), (scalar_code::AT_MOST, max)]
            }
            UnaryOp::Clamp { min, max } => min
                .map(|lo| (scalar_code::AT_LEAST, lo))
                .into_iter()
                .chain(max.map(|hi| (scalar_code::AT_MOST, hi)))
                .collect(),
            UnaryOp::LeakyRelu(slope) => vec![(scalar_code::LEAKY_RELU, slope)],
            _ => return Ok(None),
        };
        let Some((&(code, s), firsts)) = steps.split_last() else {
            // A clamp with neither bound is a copy.
            return self.unary_f32(unary_code::COPY, x, op.name());
        };
        let launch = |input: &Tensor, code: u32, s: f64| {
            self.strided(Strided {
                kernel: library::scalar_strided(),
                name: op.name(),
                inputs: &[input],
                shape: x.dims(),
                out: DType::F32,
                per_thread: 1,
                extra: vec![Value::U32(code), Value::F32(s as f32), Value::Bool(false)],
            })
        };
        let mut held: Option<Tensor> = None;
        for &(code, s) in firsts {
            let Some(out) = launch(held.as_ref().unwrap_or(x), code, s)? else {
                return Ok(None);
            };
            held = Some(Tensor::from_storage(out, x.shape().clone()));
        }
        launch(held.as_ref().unwrap_or(x), code, s)
    }

    /// `a op b` (or `a op s` when `b` is `None`) for f32 operands, as
    /// bytes four to a word.
    pub(crate) fn compare_f32(
        &self,
        op: CmpOp,
        a: &Tensor,
        b: Option<&Tensor>,
        s: f64,
    ) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::compare_packed(),
            name: op.name(),
            inputs: &[a, b.unwrap_or(a)],
            shape: a.dims(),
            out: DType::Bool,
            per_thread: 4,
            extra: vec![
                Value::U32(compare_code_of(op)),
                Value::Bool(b.is_none()),
                Value::F32(s as f32),
            ],
        })
    }

    /// `a op b` for i64 operands (word pairs), as bytes four to a word.
    pub(crate) fn compare_i64(&self, op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::compare_i64_packed(),
            name: op.name(),
            inputs: &[a, b],
            shape: a.dims(),
            out: DType::Bool,
            per_thread: 4,
            extra: vec![Value::U32(compare_code_of(op))],
        })
    }

    /// Bool and u8 to f32 (their bytes, read four to a word), and i64 to
    /// i32 (the low words).
    pub(crate) fn cast_native(&self, x: &Tensor, dtype: DType) -> Result<Option<Storage>> {
        let kernel = match (x.dtype(), dtype) {
            (DType::Bool | DType::U8, DType::F32) => library::bytes_to_f32(),
            (DType::I64, DType::I32) => library::i64_to_i32(),
            _ => return Ok(None),
        };
        self.strided(Strided {
            kernel,
            name: "cast",
            inputs: &[x],
            shape: x.dims(),
            out: dtype,
            per_thread: 1,
            extra: vec![],
        })
    }

    /// `x` gathered along `dim` by i32 `index` (f32 values).
    pub(crate) fn gather_f32(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
    ) -> Result<Option<Storage>> {
        self.strided(Strided {
            kernel: library::gather_strided(),
            name: "gather",
            inputs: &[x, index],
            shape: index.dims(),
            out: DType::F32,
            per_thread: 1,
            extra: vec![Value::U32(dim as u32)],
        })
    }

    /// `len` uniform f32 values in `[low, high)` by `philox_uniform`: the
    /// host's Philox blocks, so `[0, 1)` draws equal the host's bit for bit
    /// (other bounds: within the three roundings of the f32 map).
    pub(crate) fn uniform_f32(
        &self,
        low: f64,
        high: f64,
        rng: Generator,
        len: usize,
    ) -> Result<Option<Storage>> {
        if len >= i32::MAX as usize || !self.fits(len) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let out = gpu.alloc((len * 4) as u64, "uniform")?;
        if len > 0 {
            let word = |v: u64| Value::U32(v as u32);
            let (offset, seed) = (rng.offset(), rng.seed());
            self.linear(
                library::philox_uniform(),
                ELEMENTWISE_BLOCK,
                &[out.raw()],
                &[
                    Value::U32(len as u32),
                    word(offset),
                    word(offset >> 32),
                    word(seed),
                    word(seed >> 32),
                    Value::U32(10),
                    Value::F32(low as f32),
                    Value::F32(high as f32),
                ],
                len,
                "uniform",
            )?;
        }
        Ok(Some(self.store(DType::F32, len, out)))
    }

    /// `x` with f32 `src` added at i32 `index` along `dim`, a thread per
    /// output (deterministic: see the kernel).
    pub(crate) fn scatter_add_f32(
        &self,
        x: &Tensor,
        dim: usize,
        index: &Tensor,
        src: &Tensor,
    ) -> Result<Option<Storage>> {
        let name = "scatter_add";
        let n = x.shape().numel();
        let (Some(xshape), Some(ishape)) = (dims_of(x.dims()), dims_of(index.dims())) else {
            return Ok(None);
        };
        let (Some((xs, xo)), Some((is, io)), Some((ss, so))) =
            (view_of(x), view_of(index), view_of(src))
        else {
            return Ok(None);
        };
        if index.dims()[dim] > SCATTER_MAX_ALONG || !self.fits(n) {
            return Ok(None);
        }
        let gpu = self.gpu();
        let out = gpu.alloc((n * 4) as u64, name)?;
        if n > 0 {
            let (bx, bi, bs) = (
                self.buffer(x.storage(), name)?,
                self.buffer(index.storage(), name)?,
                self.buffer(src.storage(), name)?,
            );
            let (mxs, mis) = (gpu.metadata(&xshape)?, gpu.metadata(&ishape)?);
            let (mx, mi, ms) = (gpu.metadata(&xs)?, gpu.metadata(&is)?, gpu.metadata(&ss)?);
            self.linear(
                library::scatter_add_strided(),
                ELEMENTWISE_BLOCK,
                &[
                    bx.buffer.raw(),
                    bi.buffer.raw(),
                    bs.buffer.raw(),
                    out.raw(),
                    &mxs,
                    &mis,
                    &mx,
                    &mi,
                    &ms,
                ],
                &[
                    Value::U32(xshape.len() as u32),
                    Value::U32(dim as u32),
                    Value::U32(n as u32),
                    Value::I32(xo),
                    Value::I32(io),
                    Value::I32(so),
                ],
                n,
                name,
            )?;
        }
        Ok(Some(self.store(DType::F32, n, out)))
    }
}

/// The unary ops the GPU computes, with their `unary_strided` codes.
///
/// `relu` keeps NaN by testing the bits (`to_bits`): on lavapipe (LLVM) a
/// float comparison may assume no NaN — `x != x` folds to false. `exp` and
/// `sigmoid` use the kernel's own exp (range reduction and a polynomial,
/// within 2 ulp), and `log` and `tanh` its own ln and tanh (within 2 ulp
/// in the simulator), not the driver's: WGSL specifies its `log` only to
/// 3 + 2|x| ULP and `tanh` only absolutely, looser than the conformance
/// rows. `log1p`, `softplus`, `silu` and `gelu_tanh` are built in the same
/// kernel from that exp and ln (`ln(1 + t)` by Goldberg's identity).
/// Measured: `oxmera conformance --device wgpu` on lavapipe.
const NATIVE_UNARY: [(UnaryOp, u32); 19] = [
    (UnaryOp::Log1p, unary_code::LOG1P),
    (UnaryOp::Softplus, unary_code::SOFTPLUS),
    (UnaryOp::Silu, unary_code::SILU),
    (UnaryOp::GeluTanh, unary_code::GELU_TANH),
    (UnaryOp::Log, unary_code::LOG),
    (UnaryOp::Tanh, unary_code::TANH),
    (UnaryOp::Sign, unary_code::SIGN),
    (UnaryOp::Round, unary_code::ROUND),
    (UnaryOp::Relu, unary_code::RELU),
    (UnaryOp::Exp, unary_code::EXP),
    (UnaryOp::Sigmoid, unary_code::SIGMOID),
    (UnaryOp::Neg, unary_code::NEG),
    (UnaryOp::Abs, unary_code::ABS),
    (UnaryOp::Sqrt, unary_code::SQRT),
    (UnaryOp::Rsqrt, unary_code::RSQRT),
    (UnaryOp::Recip, unary_code::RECIP),
    (UnaryOp::Square, unary_code::SQUARE),
    (UnaryOp::Floor, unary_code::FLOOR),
    (UnaryOp::Ceil, unary_code::CEIL),
];

/// The unary ops `unary_math_strided` computes (see its module for each
/// function's error analysis against the conformance bound), with their
/// codes and the kernel's two scalars. `powf` passes its exponent rounded
/// to f32 and, in the second scalar, the f64 exponent's class (odd or
/// even integer, or not an integer), which that rounding may change past
/// 2^24: the class decides the result's sign and NaN, the rounding moves
/// its magnitude by under the op's bound `ε·|b·ln a|`.
pub(crate) fn math_unary_of(op: UnaryOp) -> Option<(u32, f32, f32)> {
    use math_code as c;
    let plain = |code| Some((code, 0.0, 0.0));
    match op {
        UnaryOp::Exp2 => plain(c::EXP2),
        UnaryOp::Expm1 => plain(c::EXPM1),
        UnaryOp::Sinh => plain(c::SINH),
        UnaryOp::Cosh => plain(c::COSH),
        UnaryOp::Log2 => plain(c::LOG2),
        UnaryOp::Log10 => plain(c::LOG10),
        UnaryOp::Trunc => plain(c::TRUNC),
        UnaryOp::Hardsigmoid => plain(c::HARDSIGMOID),
        UnaryOp::Hardswish => plain(c::HARDSWISH),
        UnaryOp::Logsigmoid => plain(c::LOGSIGMOID),
        UnaryOp::Mish => plain(c::MISH),
        UnaryOp::Erf => plain(c::ERF),
        UnaryOp::GeluErf => plain(c::GELU),
        UnaryOp::Atan => plain(c::ATAN),
        UnaryOp::Asin => plain(c::ASIN),
        UnaryOp::Acos => plain(c::ACOS),
        UnaryOp::Sin => plain(c::SIN),
        UnaryOp::Cos => plain(c::COS),
        UnaryOp::Tan => plain(c::TAN),
        UnaryOp::Elu(alpha) => Some((c::ELU, alpha as f32, 1.0)),
        // scale·alpha rounded once: one constant's rounding, not two.
        UnaryOp::Selu => Some((c::ELU, (SELU_SCALE * SELU_ALPHA) as f32, SELU_SCALE as f32)),
        UnaryOp::Powf(p) => {
            let class = if !p.is_finite() {
                0.0
            } else if p.fract() != 0.0 {
                3.0
            } else if p % 2.0 != 0.0 {
                1.0
            } else {
                2.0
            };
            Some((c::POWF, p as f32, class))
        }
        _ => None,
    }
}

/// The binary ops `binary_math_strided` computes, with their codes:
/// fmod and rem exactly (a long division), atan2, hypot and pow within
/// their conformance bounds.
const NATIVE_BINARY_MATH: [(BinaryOp, u32); 5] = [
    (BinaryOp::Atan2, binary_math_code::ATAN2),
    (BinaryOp::Hypot, binary_math_code::HYPOT),
    (BinaryOp::Pow, binary_math_code::POW),
    (BinaryOp::Fmod, binary_math_code::FMOD),
    (BinaryOp::Rem, binary_math_code::REM),
];

/// The unary ops of [`math_unary_of`] by name, plus `hardtanh` (two
/// clamps), for [`native_f32`].
const NATIVE_MATH_NAMES: [&str; 23] = [
    "exp2",
    "expm1",
    "sinh",
    "cosh",
    "log2",
    "log10",
    "trunc",
    "hardsigmoid",
    "hardswish",
    "logsigmoid",
    "mish",
    "erf",
    "gelu",
    "atan",
    "asin",
    "acos",
    "elu",
    "selu",
    "powf",
    "hardtanh",
    "sin",
    "cos",
    "tan",
];

/// The ops with a scalar operand the GPU computes, with their
/// `scalar_strided` codes.
const NATIVE_SCALAR: [(BinaryOp, u32); 4] = [
    (BinaryOp::Add, scalar_code::ADD),
    (BinaryOp::Sub, scalar_code::SUB),
    (BinaryOp::Mul, scalar_code::MUL),
    (BinaryOp::Div, scalar_code::DIV),
];

/// The binary ops the GPU computes, with their `binary_strided` codes
/// (`maximum`/`minimum` as IEEE 754-2019 defines them, NaN and signed
/// zeros tested on the bits).
const NATIVE_BINARY: [(BinaryOp, u32); 6] = [
    (BinaryOp::Add, binary_code::ADD),
    (BinaryOp::Sub, binary_code::SUB),
    (BinaryOp::Mul, binary_code::MUL),
    (BinaryOp::Div, binary_code::DIV),
    (BinaryOp::Maximum, binary_code::MAX),
    (BinaryOp::Minimum, binary_code::MIN),
];

pub(crate) fn compare_code_of(op: CmpOp) -> u32 {
    match op {
        CmpOp::Eq => compare_code::EQ,
        CmpOp::Ne => compare_code::NE,
        CmpOp::Lt => compare_code::LT,
        CmpOp::Le => compare_code::LE,
        CmpOp::Gt => compare_code::GT,
        CmpOp::Ge => compare_code::GE,
    }
}

pub(crate) fn unary_code_of(op: UnaryOp) -> Option<u32> {
    NATIVE_UNARY.iter().find(|(u, _)| *u == op).map(|(_, c)| *c)
}

fn binary_math_code_of(op: BinaryOp) -> Option<u32> {
    NATIVE_BINARY_MATH
        .iter()
        .find(|(b, _)| *b == op)
        .map(|(_, c)| *c)
}

pub(crate) fn binary_code_of(op: BinaryOp) -> Option<u32> {
    NATIVE_BINARY
        .iter()
        .find(|(b, _)| *b == op)
        .map(|(_, c)| *c)
}

/// The f32-native ops whose kernels read and write f32 elements
/// themselves, with no widening step that half tensors could go through.
pub(crate) const F32_ELEMENT_MOVERS: [&str; 10] = [
    "fill",
    "uniform",
    "gather",
    "scatter_add",
    "conv2d",
    "conv2d_backward",
    "max_pool2d",
    "max_pool2d_backward",
    "avg_pool2d",
    "avg_pool2d_backward",
];

/// The ops computed natively for f32, by the name [`Backend::support`] is
/// asked with.
pub(crate) fn native_f32(op: &str) -> bool {
    F32_ELEMENT_MOVERS.contains(&op)
        || matches!(
            op,
            "matmul"
                | "sum"
                | "mean"
                | "softmax"
                | "log_softmax"
                | "argmax"
                | "argmin"
                | "layer_norm"
                | "clamp"
                | "leaky_relu"
                | "var"
                | "std"
                | "max"
                | "min"
                | "prod"
                | "eq"
                | "ne"
                | "lt"
                | "le"
                | "gt"
                | "ge"
        )
        || NATIVE_UNARY.iter().any(|(u, _)| u.name() == op)
        || NATIVE_BINARY.iter().any(|(b, _)| b.name() == op)
        || NATIVE_BINARY_MATH.iter().any(|(b, _)| b.name() == op)
        || NATIVE_MATH_NAMES.contains(&op)
}
