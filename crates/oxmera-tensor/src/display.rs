//! Printing tensors the way PyTorch does: nested brackets, aligned
//! columns, the middle of large tensors elided, then shape, dtype, device.

use std::fmt;

use oxmera_core::DType;

use crate::Tensor;

/// Above this many elements, only the first and last `EDGE` entries of
/// each dim are printed.
const SUMMARIZE_ABOVE: usize = 1000;
const EDGE: usize = 3;

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = match self.to_f64_vec() {
            Ok(v) => v,
            Err(e) => return write!(f, "tensor(<unreadable: {e}>)"),
        };
        let dims = self.dims().to_vec();
        let summarize = values.len() > SUMMARIZE_ABOVE;
        let style = Style::choose(self.dtype(), &values);
        let width = values
            .iter()
            .map(|&v| style.format(v).len())
            .max()
            .unwrap_or(0);
        let mut out = String::from("tensor(");
        let indent = out.len();
        write_nested(
            &mut out, &values, &dims, 0, 0, indent, width, &style, summarize,
        );
        write!(
            f,
            "{out}, shape={}, dtype={}, device={})",
            self.shape(),
            self.dtype(),
            self.device()
        )
    }
}

enum Style {
    Bool,
    Int,
    /// Floats that are all whole numbers print as `3.`.
    WholeFloat,
    Fixed,
    Scientific,
}

impl Style {
    fn choose(dtype: DType, values: &[f64]) -> Style {
        if dtype.is_bool() {
            return Style::Bool;
        }
        if dtype.is_int() {
            return Style::Int;
        }
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if finite.iter().all(|v| v.fract() == 0.0 && v.abs() < 1e8) {
            return Style::WholeFloat;
        }
        let max = finite.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let min = finite
            .iter()
            .filter(|v| **v != 0.0)
            .fold(f64::INFINITY, |m, v| m.min(v.abs()));
        if max >= 1e8 || min < 1e-4 {
            Style::Scientific
        } else {
            Style::Fixed
        }
    }

    fn format(&self, v: f64) -> String {
        match self {
            Style::Bool => (v != 0.0).to_string(),
            Style::Int => format!("{}", v as i64),
            _ if v.is_nan() => "nan".into(),
            _ if v.is_infinite() => if v > 0.0 { "inf" } else { "-inf" }.into(),
            Style::WholeFloat => format!("{v}."),
            Style::Fixed => format!("{v:.4}"),
            Style::Scientific => format!("{v:.4e}"),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn write_nested(
    out: &mut String,
    values: &[f64],
    dims: &[usize],
    depth: usize,
    base: usize,
    indent: usize,
    width: usize,
    style: &Style,
    summarize: bool,
) {
    if dims.is_empty() {
        out.push_str(&style.format(values[base]));
        return;
    }
    let n = dims[depth];
    let inner: usize = dims[depth + 1..].iter().product();
    let last = depth + 1 == dims.len();
    out.push('[');
    let shown: Vec<Option<usize>> = if summarize && n > 2 * EDGE {
        (0..EDGE)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - EDGE..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    for (k, item) in shown.iter().enumerate() {
        if k > 0 {
            if last {
                out.push_str(", ");
            } else {
                out.push(',');
                out.push_str(&"\n".repeat(dims.len() - depth - 1));
                out.push_str(&" ".repeat(indent + depth + 1));
            }
        }
        match item {
            None if last => out.push_str("..."),
            None => out.push_str("..."),
            Some(i) if last => {
                out.push_str(&format!("{:>width$}", style.format(values[base + i])));
            }
            Some(i) => write_nested(
                out,
                values,
                dims,
                depth + 1,
                base + i * inner,
                indent,
                width,
                style,
                summarize,
            ),
        }
    }
    out.push(']');
}
