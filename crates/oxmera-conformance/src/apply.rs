//! How a case's op is applied: through the public [`Tensor`] methods, so
//! the front end's validation, broadcasting views and autograd recording
//! are the same for every device, and a case is exactly what a user
//! would run.

use oxmera_core::Result;
use oxmera_tensor::{BinaryOp, CmpOp, ReduceOp, ScanOp, ScatterMode, Tensor, UnaryOp};

use crate::ops::Op;

impl Op {
    /// Applies the op to `x` through the tensor front end.
    pub(crate) fn apply(&self, x: &[Tensor]) -> Result<Tensor> {
        match self {
            Op::Unary(u) => unary(*u, &x[0]),
            Op::Binary(b) => binary(*b, &x[0], &x[1]),
            Op::Compare(c) => compare(*c, &x[0], &x[1]),
            Op::Where => Tensor::where_(&x[0], &x[1], &x[2]),
            Op::Reduce { op, dims, keepdim } => reduce(*op, &x[0], dims.as_deref(), *keepdim),
            Op::Softmax { dim, log: false } => x[0].softmax(*dim),
            Op::Softmax { dim, log: true } => x[0].log_softmax(*dim),
            Op::Scan {
                op: ScanOp::Sum,
                dim,
            } => x[0].cumsum(*dim),
            Op::Scan {
                op: ScanOp::Prod,
                dim,
            } => x[0].cumprod(*dim),
            Op::Scan {
                op: ScanOp::LogSumExp,
                dim,
            } => x[0].logcumsumexp(*dim),
            Op::LayerNorm {
                normalized_dims,
                eps,
            } => x[0].layer_norm(*normalized_dims, *eps),
            Op::Matmul => x[0].matmul(&x[1]),
            Op::Cat { dim } => Tensor::cat(x, *dim),
            Op::IndexSelect { dim } => x[0].index_select(*dim, &x[1]),
            Op::Gather { dim } => x[0].gather(*dim, &x[1]),
            Op::Scatter {
                dim,
                mode: ScatterMode::Replace,
            } => x[0].scatter(*dim, &x[1], &x[2]),
            Op::Scatter {
                dim,
                mode: ScatterMode::Add,
            } => x[0].scatter_add(*dim, &x[1], &x[2]),
            Op::Pad { pads, value } => x[0].pad(pads, *value),
            Op::Flip { dims } => x[0].flip(dims),
            Op::Triangle {
                diagonal,
                upper: false,
            } => x[0].tril(*diagonal),
            Op::Triangle {
                diagonal,
                upper: true,
            } => x[0].triu(*diagonal),
            Op::Conv2d(params) => x[0].conv2d(&x[1], x.get(2), *params),
            Op::MaxPool2d(params) => x[0].max_pool2d(*params),
            Op::AvgPool2d(params) => x[0].avg_pool2d(*params),
            Op::Cast(dtype) => x[0].to_dtype(*dtype),
            Op::Contiguous => x[0].contiguous(),
            Op::Composite(c) => c.apply(x),
        }
    }
}

fn unary(op: UnaryOp, x: &Tensor) -> Result<Tensor> {
    use UnaryOp::*;
    match op {
        Neg => x.neg(),
        Abs => x.abs(),
        Sign => x.sign(),
        Exp => x.exp(),
        Log => x.log(),
        Log1p => x.log1p(),
        Sqrt => x.sqrt(),
        Rsqrt => x.rsqrt(),
        Recip => x.recip(),
        Square => x.square(),
        Sin => x.sin(),
        Cos => x.cos(),
        Tanh => x.tanh(),
        Sigmoid => x.sigmoid(),
        Relu => x.relu(),
        LeakyRelu(slope) => x.leaky_relu(slope),
        GeluErf => x.gelu(),
        GeluTanh => x.gelu_tanh(),
        Silu => x.silu(),
        Softplus => x.softplus(),
        Erf => x.erf(),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Round => x.round(),
        Clamp { min, max } => x.clamp(min, max),
        Powf(p) => x.powf(p),
        Not => x.logical_not(),
        Expm1 => x.expm1(),
        Log2 => x.log2(),
        Log10 => x.log10(),
        Exp2 => x.exp2(),
        Tan => x.tan(),
        Atan => x.atan(),
        Asin => x.asin(),
        Acos => x.acos(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Trunc => x.trunc(),
        Elu(alpha) => x.elu(alpha),
        Selu => x.selu(),
        Mish => x.mish(),
        Hardtanh { min, max } => x.hardtanh(min, max),
        Hardsigmoid => x.hardsigmoid(),
        Hardswish => x.hardswish(),
        Logsigmoid => x.logsigmoid(),
    }
}

fn binary(op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    use BinaryOp::*;
    match op {
        Add => a.add(b),
        Sub => a.sub(b),
        Mul => a.mul(b),
        Div => a.div(b),
        Pow => a.pow(b),
        Maximum => a.maximum(b),
        Minimum => a.minimum(b),
        Rem => a.rem(b),
        And => a.logical_and(b),
        Or => a.logical_or(b),
        Xor => a.logical_xor(b),
        Atan2 => a.atan2(b),
        Fmod => a.fmod(b),
        Hypot => a.hypot(b),
    }
}

fn compare(op: CmpOp, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    match op {
        CmpOp::Eq => a.eq(b),
        CmpOp::Ne => a.ne(b),
        CmpOp::Lt => a.lt(b),
        CmpOp::Le => a.le(b),
        CmpOp::Gt => a.gt(b),
        CmpOp::Ge => a.ge(b),
    }
}

fn reduce(op: ReduceOp, x: &Tensor, dims: Option<&[isize]>, keepdim: bool) -> Result<Tensor> {
    use ReduceOp::*;
    match dims {
        None => match op {
            Sum => x.sum_all(),
            Mean => x.mean_all(),
            Prod => x.prod_all(),
            Max => x.max_all(),
            Min => x.min_all(),
            ArgMax => x.argmax_all(),
            ArgMin => x.argmin_all(),
            Var { correction } => x.var_all(correction),
            Std { correction } => x.std_all(correction),
            LogSumExp => x.logsumexp_all(),
            All => x.all_all(),
            Any => x.any_all(),
        },
        Some(d) => match op {
            Sum => x.sum(d, keepdim),
            Mean => x.mean(d, keepdim),
            Prod => x.prod(d, keepdim),
            Max => x.max(d, keepdim),
            Min => x.min(d, keepdim),
            // The parser guarantees one dim for these.
            ArgMax => x.argmax(d[0], keepdim),
            ArgMin => x.argmin(d[0], keepdim),
            Var { correction } => x.var(d, correction, keepdim),
            Std { correction } => x.std(d, correction, keepdim),
            LogSumExp => x.logsumexp(d, keepdim),
            All => x.all(d, keepdim),
            Any => x.any(d, keepdim),
        },
    }
}
