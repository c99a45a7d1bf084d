//! Printing tensors the way PyTorch does: nested brackets, aligned
//! columns, the middle of large tensors elided, then shape, dtype, device.
//!
//! Only the elements shown are read: a large tensor prints the first and
//! last `EDGE` entries of each dim, read as small corner views, so printing
//! a broadcast view of 2^40 elements reads a few hundred. Integers print
//! exactly (an `i64` above 2^53 does not pass through `f64`).

use std::fmt;

use oxmera_core::{DType, Result};

use crate::Tensor;

/// Above this many elements, only the first and last `EDGE` entries of
/// each dim are printed.
const SUMMARIZE_ABOVE: usize = 1000;
const EDGE: usize = 3;

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let summarize = self.numel() > SUMMARIZE_ABOVE;
        let shown = match Shown::read(self, summarize) {
            Ok(s) => s,
            Err(e) => return write!(f, "tensor(<unreadable: {e}>)"),
        };
        let style = Style::choose(self.dtype(), &shown.floats);
        let width = (0..shown.len())
            .map(|i| shown.format(&style, i).len())
            .max()
            .unwrap_or(0);
        let mut out = String::from("tensor(");
        let indent = out.len();
        let layout = Nesting {
            dims: &shown.dims,
            elided: &shown.elided,
            indent,
            width,
            style: &style,
        };
        layout.write(&mut out, &shown, 0, 0);
        write!(
            f,
            "{out}, shape={}, dtype={}, device={})",
            self.shape(),
            self.dtype(),
            self.device()
        )
    }
}

/// The elements a print shows: every element, or for a summarized tensor
/// the first and last `EDGE` of each long dim, in row-major order of the
/// shown sub-tensor.
struct Shown {
    /// The extent of each dim as shown.
    dims: Vec<usize>,
    /// Per dim: whether an ellipsis stands after its first `EDGE` entries.
    elided: Vec<bool>,
    /// The values as `f64` (style choice and float printing).
    floats: Vec<f64>,
    /// The values exactly, for integer and bool dtypes.
    ints: Option<Vec<i64>>,
}

impl Shown {
    fn read(x: &Tensor, summarize: bool) -> Result<Shown> {
        let elided: Vec<bool> = x
            .dims()
            .iter()
            .map(|&n| summarize && n > 2 * EDGE)
            .collect();
        let dims: Vec<usize> = x
            .dims()
            .iter()
            .zip(&elided)
            .map(|(&n, &e)| if e { 2 * EDGE } else { n })
            .collect();
        let count: usize = dims.iter().product();
        let exact = !x.dtype().is_float();
        let mut floats = vec![0.0; count];
        let mut ints = exact.then(|| vec![0i64; count]);
        // One corner view per choice of "head" or "tail" on each elided
        // dim: each is small, and together they are exactly what is shown.
        let corners = 1usize << elided.iter().filter(|&&e| e).count();
        for corner in 0..corners {
            let mut view = x.clone();
            let mut origin = vec![0usize; dims.len()];
            let mut bit = 0;
            for (d, &e) in elided.iter().enumerate() {
                if e {
                    let tail = corner >> bit & 1 == 1;
                    bit += 1;
                    let start = if tail { x.dims()[d] - EDGE } else { 0 };
                    view = view.narrow(d as isize, start, EDGE)?;
                    origin[d] = if tail { EDGE } else { 0 };
                }
            }
            let host = view.to_host()?;
            for (k, multi) in Multi::new(view.dims()).enumerate() {
                let at = multi
                    .iter()
                    .zip(&origin)
                    .zip(&dims)
                    .fold(0, |acc, ((&i, &o), &n)| acc * n + i + o);
                floats[at] = host.get_f64(k);
                if let Some(ints) = ints.as_mut() {
                    ints[at] = host.get_i64(k);
                }
            }
        }
        Ok(Shown {
            dims,
            elided,
            floats,
            ints,
        })
    }

    fn len(&self) -> usize {
        self.floats.len()
    }

    fn format(&self, style: &Style, i: usize) -> String {
        match &self.ints {
            Some(ints) if matches!(style, Style::Bool) => (ints[i] != 0).to_string(),
            Some(ints) => ints[i].to_string(),
            None => style.format(self.floats[i]),
        }
    }
}

/// Multi-indices of a shape in row-major order.
struct Multi {
    dims: Vec<usize>,
    next: Option<Vec<usize>>,
}

impl Multi {
    fn new(dims: &[usize]) -> Multi {
        let empty = dims.contains(&0);
        Multi {
            dims: dims.to_vec(),
            next: (!empty).then(|| vec![0; dims.len()]),
        }
    }
}

impl Iterator for Multi {
    type Item = Vec<usize>;

    fn next(&mut self) -> Option<Vec<usize>> {
        let current = self.next.take()?;
        let mut following = current.clone();
        for d in (0..self.dims.len()).rev() {
            following[d] += 1;
            if following[d] < self.dims[d] {
                self.next = Some(following);
                break;
            }
            following[d] = 0;
        }
        Some(current)
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

    /// A float in this style. Integers and bools never reach here:
    /// [`Shown::format`] prints them from their exact values.
    fn format(&self, v: f64) -> String {
        match self {
            Style::Bool | Style::Int => unreachable!("integer dtypes print exactly"),
            _ if v.is_nan() => "nan".into(),
            _ if v.is_infinite() => if v > 0.0 { "inf" } else { "-inf" }.into(),
            Style::WholeFloat => format!("{v}."),
            Style::Fixed => format!("{v:.4}"),
            Style::Scientific => format!("{v:.4e}"),
        }
    }
}

/// How the shown elements are laid out as nested brackets.
struct Nesting<'a> {
    dims: &'a [usize],
    elided: &'a [bool],
    indent: usize,
    width: usize,
    style: &'a Style,
}

impl Nesting<'_> {
    /// Writes the sub-tensor at `depth` whose first element is `base`.
    fn write(&self, out: &mut String, shown: &Shown, depth: usize, base: usize) {
        let dims = self.dims;
        if dims.is_empty() {
            out.push_str(&shown.format(self.style, base));
            return;
        }
        let n = dims[depth];
        let inner: usize = dims[depth + 1..].iter().product();
        let last = depth + 1 == dims.len();
        out.push('[');
        for i in 0..n {
            if i > 0 {
                self.separate(out, depth, last);
                if self.elided[depth] && i == EDGE {
                    out.push_str("...");
                    self.separate(out, depth, last);
                }
            }
            if last {
                let text = shown.format(self.style, base + i);
                out.push_str(&format!("{text:>width$}", width = self.width));
            } else {
                self.write(out, shown, depth + 1, base + i * inner);
            }
        }
        out.push(']');
    }

    /// The separator between two entries of dim `depth`.
    fn separate(&self, out: &mut String, depth: usize, last: bool) {
        if last {
            out.push_str(", ");
        } else {
            out.push(',');
            out.push_str(&"\n".repeat(self.dims.len() - depth - 1));
            out.push_str(&" ".repeat(self.indent + depth + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use oxmera_core::Device;

    use super::*;
    use crate::{Backend, HostBuffer, Storage, registry};

    /// A host backend on a device of its own, so the test can hand the
    /// front end a tensor without linking a concrete backend.
    #[derive(Debug)]
    struct Host(Device);

    impl Backend for Host {
        fn name(&self) -> &'static str {
            "display-test"
        }
        fn device(&self) -> Device {
            self.0
        }
        fn from_host(&self, data: HostBuffer) -> Result<Storage> {
            Ok(Storage::host(self.0, data))
        }
        fn download(&self, storage: &Storage) -> Result<HostBuffer> {
            crate::host_device::download(storage)
        }
    }

    fn dev() -> Device {
        let d = Device::custom("display-test", 0).unwrap();
        registry::register(std::sync::Arc::new(Host(d)));
        d
    }

    #[test]
    fn small_tensors_print_every_element_aligned() {
        let d = dev();
        let x = Tensor::from_vec(vec![1.0f32, -2.5, 3.0, 4.25], [2, 2], d).unwrap();
        assert_eq!(
            x.to_string(),
            "tensor([[ 1.0000, -2.5000],\n        [ 3.0000,  4.2500]], shape=[2, 2], dtype=f32, device=display-test:0)"
        );
        let b = Tensor::from_vec(vec![true, false], [2], d).unwrap();
        assert!(b.to_string().starts_with("tensor([ true, false]"), "{b}");
    }

    #[test]
    fn integers_print_exactly_beyond_f64() {
        let d = dev();
        let big = (1i64 << 53) + 1;
        let x = Tensor::from_vec(vec![big, -big, i64::MAX], [3], d).unwrap();
        let s = x.to_string();
        assert!(
            s.contains("9007199254740993") && s.contains("-9007199254740993"),
            "{s}"
        );
        assert!(s.contains(&i64::MAX.to_string()), "{s}");
    }

    #[test]
    fn a_huge_broadcast_view_prints_its_corners_without_materializing() {
        let d = dev();
        let row =
            Tensor::from_vec((0..8).map(|v| v as f32).collect::<Vec<_>>(), [1, 8], d).unwrap();
        // 2^40 rows of one stored row: materializing would need 32 TiB.
        let huge = row.broadcast_to([1usize << 40, 8]).unwrap();
        let s = huge.to_string();
        assert!(
            s.starts_with("tensor([[0., 1., 2., ..., 5., 6., 7.],"),
            "{s}"
        );
        assert!(s.contains("...,"), "{s}");
        assert!(s.ends_with("shape=[1099511627776, 8], dtype=f32, device=display-test:0)"));
        // The same corners as a small tensor's summary.
        let long = Tensor::arange(0.0, 2000.0, 1.0, DType::F64, d).unwrap();
        assert!(
            long.to_string()
                .starts_with("tensor([   0.,    1.,    2., ..., 1997., 1998., 1999.]"),
            "{long}"
        );
    }
}
