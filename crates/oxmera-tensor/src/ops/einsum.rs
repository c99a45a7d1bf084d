//! `einsum`: Einstein summation, as PyTorch's `torch.einsum` — a
//! composite of views, sums and batched matrix products, so every backend
//! runs it with the kernels it has and autograd differentiates it through
//! its parts.
//!
//! How an equation is computed:
//!
//! 1. Each operand's repeated labels (`ii`) become a diagonal
//!    ([`Tensor::diagonal`], a view where the layout allows).
//! 2. A label that appears in one operand only and not in the output is
//!    summed out there, before any product.
//! 3. Operands are combined left to right, two at a time: labels both carry
//!    that are still needed (by the output or a later operand) are batch
//!    dims, labels both carry that are not are contracted, the rest are the
//!    rows of one side and the columns of the other — one batched matmul
//!    `[batch, rows, k] @ [batch, k, cols]`.
//! 4. What is left is summed over the labels the output lacks and permuted
//!    into the output's order.
//!
//! The left-to-right order is PyTorch's default (no contraction-path
//! optimization); a size-1 dim broadcasts against its label's size in
//! another operand, as in PyTorch.

use oxmera_core::{DType, Error, Result};

use crate::Tensor;

const OP: &str = "einsum";

/// A label: a letter (`A`–`Z` as 0–25, `a`–`z` as 26–51), or one of the
/// dims an ellipsis covers (52 and up, right-aligned across operands).
type Label = usize;
const LETTERS: Label = 52;

fn letter(c: char) -> Option<Label> {
    match c {
        'A'..='Z' => Some(c as usize - 'A' as usize),
        'a'..='z' => Some(26 + c as usize - 'a' as usize),
        _ => None,
    }
}

fn name(label: Label) -> String {
    match label {
        0..=25 => char::from(b'A' + label as u8).to_string(),
        26..=51 => char::from(b'a' + (label - 26) as u8).to_string(),
        _ => "...".to_string(),
    }
}

fn bad(message: String) -> Error {
    Error::invalid(OP, "equation", message)
}

/// One side of the arrow's term: its letters, and where its ellipsis
/// stands among them (if it has one).
struct Term {
    letters: Vec<Label>,
    ellipsis: Option<usize>,
}

fn parse_term(term: &str, which: &str) -> Result<Term> {
    let mut letters = Vec::new();
    let mut ellipsis = None;
    let mut rest = term;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("...") {
            if ellipsis.is_some() {
                return Err(bad(format!("{which} {term:?} has more than one '...'")));
            }
            ellipsis = Some(letters.len());
            rest = after;
            continue;
        }
        let Some(l) = letter(c) else {
            return Err(bad(format!(
                "{which} {term:?}: {c:?} is not a subscript (letters a-z and A-Z, and one '...')"
            )));
        };
        letters.push(l);
        rest = &rest[c.len_utf8()..];
    }
    Ok(Term { letters, ellipsis })
}

/// The parsed equation: each operand's label per dim, and the output's.
struct Equation {
    inputs: Vec<Vec<Label>>,
    output: Vec<Label>,
}

fn parse(equation: &str, operands: &[&Tensor]) -> Result<Equation> {
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match equation.split_once("->") {
        Some((_, r)) if r.contains("->") => {
            return Err(bad(format!("{equation:?} has more than one '->'")));
        }
        Some((l, r)) => (l, Some(r)),
        None => (equation.as_str(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != operands.len() {
        return Err(bad(format!(
            "{equation:?} names {} operand(s) but {} were given",
            terms.len(),
            operands.len()
        )));
    }
    let parsed = terms
        .iter()
        .enumerate()
        .map(|(i, t)| parse_term(t, &format!("operand {i}'s subscripts")))
        .collect::<Result<Vec<_>>>()?;
    // How many dims each ellipsis covers, and how many the widest does.
    let mut covered = Vec::with_capacity(parsed.len());
    for (i, (term, x)) in parsed.iter().zip(operands).enumerate() {
        let n = term.letters.len();
        let fits = match term.ellipsis {
            Some(_) => x.rank() >= n,
            None => x.rank() == n,
        };
        if !fits {
            return Err(bad(format!(
                "operand {i} has rank {} but its subscripts {:?} name {n} dim(s){}",
                x.rank(),
                terms[i],
                if term.ellipsis.is_some() {
                    " and '...'"
                } else {
                    ""
                }
            )));
        }
        covered.push(x.rank() - n);
    }
    let width = covered.iter().copied().max().unwrap_or(0);
    let expand = |term: &Term, k: usize| -> Vec<Label> {
        let mut labels = term.letters.clone();
        if let Some(at) = term.ellipsis {
            let dots = (width - k..width).map(|j| LETTERS + j);
            labels.splice(at..at, dots);
        }
        labels
    };
    let inputs: Vec<Vec<Label>> = parsed
        .iter()
        .zip(&covered)
        .map(|(t, &k)| expand(t, k))
        .collect();
    let output = match rhs {
        Some(r) => {
            let term = parse_term(r, "the output's subscripts")?;
            for (i, l) in term.letters.iter().enumerate() {
                if term.letters[..i].contains(l) {
                    return Err(bad(format!("the output {r:?} names {} twice", name(*l))));
                }
                if !parsed.iter().any(|t| t.letters.contains(l)) {
                    return Err(bad(format!(
                        "the output {r:?} names {}, which no operand has",
                        name(*l)
                    )));
                }
            }
            if term.ellipsis.is_some() && !parsed.iter().any(|t| t.ellipsis.is_some()) {
                return Err(bad(format!(
                    "the output {r:?} has '...' but no operand does"
                )));
            }
            expand(&term, width)
        }
        // Implicit output: the ellipsis dims, then every letter that
        // appears exactly once, in alphabetical order (capitals first).
        None => {
            let mut out: Vec<Label> = (LETTERS..LETTERS + width).collect();
            out.extend((0..LETTERS).filter(|l| {
                parsed
                    .iter()
                    .map(|t| t.letters.iter().filter(|&x| x == l).count())
                    .sum::<usize>()
                    == 1
            }));
            out
        }
    };
    Ok(Equation { inputs, output })
}

/// An operand on its way through the contraction: the tensor and the label
/// of each of its dims.
struct Part {
    x: Tensor,
    labels: Vec<Label>,
}

impl Part {
    fn position(&self, l: Label) -> Option<usize> {
        self.labels.iter().position(|&x| x == l)
    }

    /// Sums out the dims whose labels `keep` rejects, keeping the dtype
    /// (an integer sum is `i64` otherwise; einsum keeps its operands').
    fn sum_out(self, keep: impl Fn(Label) -> bool) -> Result<Part> {
        let dims: Vec<isize> = (0..self.labels.len())
            .filter(|&d| !keep(self.labels[d]))
            .map(|d| d as isize)
            .collect();
        if dims.is_empty() {
            return Ok(self);
        }
        let dtype = self.x.dtype();
        let mut x = self.x.sum(&dims, false)?;
        if x.dtype() != dtype {
            x = x.to_dtype(dtype)?;
        }
        let labels = self.labels.into_iter().filter(|&l| keep(l)).collect();
        Ok(Part { x, labels })
    }

    /// The dims of `labels`, in that order, broadcast to `sizes` and
    /// merged into one dim per group.
    fn arrange(&self, groups: &[&[Label]], sizes: &[usize]) -> Result<Tensor> {
        let perm: Vec<isize> = groups
            .iter()
            .flat_map(|g| g.iter())
            .map(|&l| self.position(l).expect("a label of this part") as isize)
            .collect();
        let full: Vec<usize> = groups
            .iter()
            .flat_map(|g| g.iter())
            .map(|&l| sizes[l])
            .collect();
        // broadcast_to refuses a shape past the element limit, so the
        // groups' products below cannot overflow.
        let spread = self.x.permute(&perm)?.broadcast_to(full)?;
        let merged: Vec<usize> = groups
            .iter()
            .map(|g| g.iter().map(|&l| sizes[l]).product())
            .collect();
        spread.reshape(merged)
    }
}

impl Tensor {
    /// Einstein summation, as PyTorch's `torch.einsum(equation,
    /// *operands)`: each operand's dims are named by letters, and the result
    /// has the dims the output names, every other label summed over the
    /// products of the operands' elements. `"ij,jk->ik"` is a matrix
    /// product, `"ii->"` a trace, `"ii->i"` a diagonal, `"i,j->ij"` an outer
    /// product, `"bij,bjk->bik"` a batched product, `"...ij->...ji"` a
    /// transpose of the last two dims of any rank. Without `->` the output
    /// is every letter that appears once, in alphabetical order (capitals
    /// first), after the ellipsis dims. A size-1 dim broadcasts against the
    /// same label's size elsewhere.
    ///
    /// The operands share one dtype ([`Error::DTypeMismatch`]) and device
    /// ([`Error::DeviceMismatch`]); `bool` is [`Error::UnsupportedDType`].
    /// A malformed equation — an unknown character, a count of subscripts
    /// that differs from an operand's rank, an output label no operand has
    /// or one named twice, two `...` or two `->`, the wrong number of
    /// operands — and one label given two sizes (neither 1) are
    /// [`Error::InvalidArgument`] saying which. The result keeps the
    /// operands' dtype (integers too, as `matmul`). Differentiable through
    /// its parts (views, sums and batched matmuls; see the module docs).
    ///
    /// ```
    /// # use oxmera_reference as _;
    /// use oxmera_core::Device;
    /// use oxmera_tensor::Tensor;
    /// // [[1, 2],      [[5, 6],
    /// //  [3, 4]]  and  [7, 8]]
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2], Device::Reference)?;
    /// let b = Tensor::from_vec(vec![5.0f32, 6.0, 7.0, 8.0], [2, 2], Device::Reference)?;
    /// let ab = Tensor::einsum("ij,jk->ik", &[&a, &b])?;
    /// assert_eq!(ab.to_vec::<f32>()?, vec![19.0, 22.0, 43.0, 50.0]);
    /// assert_eq!(Tensor::einsum("ii", &[&a])?.item()?, 5.0); // the trace
    /// assert_eq!(Tensor::einsum("ji", &[&a])?.to_vec::<f32>()?, vec![1.0, 3.0, 2.0, 4.0]);
    /// let bad = Tensor::einsum("ij,jk->il", &[&a, &b]).unwrap_err();
    /// assert!(bad.to_string().contains("names l, which no operand has"));
    /// # Ok::<(), oxmera_core::Error>(())
    /// ```
    pub fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
        let Some(first) = operands.first() else {
            return Err(bad("einsum needs at least one operand".into()));
        };
        for x in &operands[1..] {
            if x.device() != first.device() {
                return Err(Error::DeviceMismatch {
                    op: OP,
                    lhs: first.device(),
                    rhs: x.device(),
                });
            }
            if x.dtype() != first.dtype() {
                return Err(Error::DTypeMismatch {
                    op: OP,
                    lhs: first.dtype(),
                    rhs: x.dtype(),
                });
            }
        }
        if first.dtype() == DType::Bool {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: DType::Bool,
                hint: "cast to an integer or float dtype first",
            });
        }
        let eq = parse(equation, operands)?;
        let sizes = label_sizes(&eq, operands)?;

        let mut parts = Vec::with_capacity(operands.len());
        for (i, (x, labels)) in operands.iter().zip(&eq.inputs).enumerate() {
            parts.push(diagonals(x, labels, i)?);
        }
        // Which labels are still needed after operand `i`: the output's and
        // those of operands `i + 1..`.
        let needed_after =
            |i: usize, l: Label| eq.output.contains(&l) || parts_labels(&eq, i + 1).any(|x| x == l);
        let mut parts = parts.into_iter().enumerate();
        let (_, first) = parts.next().expect("one operand at least");
        let mut acc = first.sum_out(|l| needed_after(0, l))?;
        for (i, part) in parts {
            let part = part.sum_out(|l| acc.position(l).is_some() || needed_after(i, l))?;
            acc = contract(acc, part, |l| needed_after(i, l), &sizes)?;
        }
        let acc = acc.sum_out(|l| eq.output.contains(&l))?;
        let perm: Vec<isize> = eq
            .output
            .iter()
            .map(|&l| acc.position(l).expect("every output label survives") as isize)
            .collect();
        acc.x.permute(&perm)
    }
}

/// The labels of operands `from..` as the equation wrote them (before
/// diagonals, which keep the set of labels).
fn parts_labels(eq: &Equation, from: usize) -> impl Iterator<Item = Label> + '_ {
    eq.inputs.iter().skip(from).flatten().copied()
}

/// Each label's size: equal wherever it appears, or 1 (which broadcasts).
fn label_sizes(eq: &Equation, operands: &[&Tensor]) -> Result<Vec<usize>> {
    let count = eq.inputs.iter().flatten().max().map_or(0, |&l| l + 1);
    let mut sizes = vec![1usize; count.max(LETTERS)];
    // The first operand that gave each label a size other than 1.
    let mut seen: Vec<Option<(usize, usize)>> = vec![None; sizes.len()];
    for (i, (x, labels)) in operands.iter().zip(&eq.inputs).enumerate() {
        for (d, &l) in labels.iter().enumerate() {
            let n = x.dims()[d];
            match seen[l] {
                Some((_, m)) if m == n || n == 1 => {}
                Some((_, 1)) => {
                    sizes[l] = n;
                    seen[l] = Some((i, n));
                }
                Some((j, m)) if j == i => return Err(unequal_diagonal(l, m, n, i)),
                Some((j, m)) => {
                    return Err(bad(format!(
                        "{} is {m} in operand {j} but {n} in operand {i} (sizes must agree or be 1)",
                        name(l)
                    )));
                }
                None => {
                    sizes[l] = n;
                    seen[l] = Some((i, n));
                }
            }
        }
    }
    Ok(sizes)
}

/// An operand with each repeated label replaced by the diagonal over its
/// dims (which must be one size: a diagonal of a non-square pair would
/// silently drop elements).
fn diagonals(x: &Tensor, labels: &[Label], operand: usize) -> Result<Part> {
    let mut part = Part {
        x: x.clone(),
        labels: labels.to_vec(),
    };
    while let Some((p, q)) = first_repeat(&part.labels) {
        let (np, nq) = (part.x.dims()[p], part.x.dims()[q]);
        if np != nq {
            return Err(unequal_diagonal(part.labels[p], np, nq, operand));
        }
        let l = part.labels[p];
        // `diagonal` removes both dims and appends theirs last.
        part.x = part.x.diagonal(0, p as isize, q as isize)?;
        part.labels.remove(q);
        part.labels.remove(p);
        part.labels.push(l);
    }
    Ok(part)
}

fn unequal_diagonal(label: Label, m: usize, n: usize, operand: usize) -> Error {
    bad(format!(
        "{} names dims of sizes {m} and {n} in operand {operand} (a diagonal needs equal sizes)",
        name(label)
    ))
}

fn first_repeat(labels: &[Label]) -> Option<(usize, usize)> {
    (0..labels.len()).find_map(|q| {
        labels[..q]
            .iter()
            .position(|&l| l == labels[q])
            .map(|p| (p, q))
    })
}

/// `a` and `b` combined into one part by a batched matmul: labels both
/// have and `needed` wants are batch dims, labels both have and `needed`
/// does not are contracted, the rest are `a`'s rows and `b`'s columns.
fn contract(a: Part, b: Part, needed: impl Fn(Label) -> bool, sizes: &[usize]) -> Result<Part> {
    let shared = |l: &Label| b.position(*l).is_some();
    let batch: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| shared(l) && needed(*l))
        .collect();
    let summed: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| shared(l) && !needed(*l))
        .collect();
    let rows: Vec<Label> = a.labels.iter().copied().filter(|l| !shared(l)).collect();
    let cols: Vec<Label> = b
        .labels
        .iter()
        .copied()
        .filter(|l| a.position(*l).is_none())
        .collect();
    let lhs = a.arrange(&[&batch, &rows, &summed], sizes)?;
    let rhs = b.arrange(&[&batch, &summed, &cols], sizes)?;
    let product = lhs.matmul(&rhs)?;
    let labels: Vec<Label> = batch.iter().chain(&rows).chain(&cols).copied().collect();
    let dims: Vec<usize> = labels.iter().map(|&l| sizes[l]).collect();
    Ok(Part {
        x: product.reshape(dims)?,
        labels,
    })
}
