//! The corpus: cases read from TOML files and checked before any runs.
//!
//! The schema is documented, with an example, in `CORPUS.md` beside this
//! crate's `Cargo.toml`. Parsing is strict: an unknown field, an unknown
//! op, dtype or value name, a parameter the op does not take, the wrong
//! number of inputs or a layout class that applies to none of a case's
//! inputs is a [`CorpusError`] naming the file and case, so a typo never
//! silently shrinks the corpus.

use std::collections::BTreeSet;
use std::path::Path;

use oxmera_core::{DType, Shape};
use serde::Deserialize;

use crate::CorpusError;
use crate::layout::LayoutClass;
use crate::ops::{Op, Params};
use crate::values::{Scalar, ValueSpec};

/// The built-in corpus files, embedded so that the suite needs no paths
/// at run time.
const BUILTIN: &[(&str, &str)] = &[
    ("unary.toml", include_str!("../corpus/unary.toml")),
    ("binary.toml", include_str!("../corpus/binary.toml")),
    ("math.toml", include_str!("../corpus/math.toml")),
    ("activation.toml", include_str!("../corpus/activation.toml")),
    ("mask.toml", include_str!("../corpus/mask.toml")),
    ("scan.toml", include_str!("../corpus/scan.toml")),
    ("shape.toml", include_str!("../corpus/shape.toml")),
    ("sort.toml", include_str!("../corpus/sort.toml")),
    ("einsum.toml", include_str!("../corpus/einsum.toml")),
    ("attention.toml", include_str!("../corpus/attention.toml")),
    ("compare.toml", include_str!("../corpus/compare.toml")),
    ("reduce.toml", include_str!("../corpus/reduce.toml")),
    ("softmax.toml", include_str!("../corpus/softmax.toml")),
    ("norm.toml", include_str!("../corpus/norm.toml")),
    ("matmul.toml", include_str!("../corpus/matmul.toml")),
    ("index.toml", include_str!("../corpus/index.toml")),
    ("conv.toml", include_str!("../corpus/conv.toml")),
    ("pad.toml", include_str!("../corpus/pad.toml")),
    ("cast.toml", include_str!("../corpus/cast.toml")),
    ("large.toml", include_str!("../corpus/large.toml")),
    ("empty.toml", include_str!("../corpus/empty.toml")),
];

/// One input of a case.
#[derive(Debug, Clone, PartialEq)]
pub struct InputSpec {
    /// The logical shape the op sees.
    pub shape: Shape,
    /// How the values are chosen.
    pub values: ValueSpec,
    /// A fixed dtype (an index or a condition), or `None` for the dtype
    /// of the run.
    pub dtype: Option<DType>,
    /// A fixed layout class, or `None` for the class of the run.
    pub layout: Option<LayoutClass>,
}

/// One case: an op, its inputs, and the dtypes and layout classes it runs
/// in.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// A unique id, `op/what` by convention.
    pub id: String,
    /// The file the case came from.
    pub file: String,
    /// The operation.
    pub op: Op,
    /// The dtypes the case runs in (each a separate run).
    pub dtypes: Vec<DType>,
    /// The layout classes the case runs in (each a separate run).
    pub layouts: Vec<LayoutClass>,
    /// Whether gradients are compared too (where the op and dtype have
    /// them).
    pub grad: bool,
    /// The inputs, in the op's argument order.
    pub inputs: Vec<InputSpec>,
}

impl Case {
    /// The class input `i` is built in during a run in `class`: its pinned
    /// class, else `class` where that applies to its rank, else contiguous.
    pub fn input_layout(&self, i: usize, class: LayoutClass) -> LayoutClass {
        let input = &self.inputs[i];
        match input.layout {
            Some(pinned) => pinned,
            None if class.applies_to(input.shape.rank()) => class,
            None => LayoutClass::Contiguous,
        }
    }

    /// The dtype input `i` has during a run in `dtype`.
    pub fn input_dtype(&self, i: usize, dtype: DType) -> DType {
        self.inputs[i].dtype.unwrap_or(dtype)
    }
}

/// A checked set of cases.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Corpus {
    cases: Vec<Case>,
}

impl Corpus {
    /// The corpus that ships with this crate.
    ///
    /// # Errors
    /// A [`CorpusError`] if an embedded file is malformed (the crate's
    /// tests make sure none is).
    pub fn builtin() -> Result<Corpus, CorpusError> {
        let mut corpus = Corpus::default();
        for (name, text) in BUILTIN {
            corpus.add_file(name, text)?;
        }
        Ok(corpus)
    }

    /// Parses one file's text and adds its cases.
    ///
    /// # Errors
    /// [`CorpusError::Parse`] for invalid TOML or fields of the wrong
    /// type, [`CorpusError::Invalid`] for a case that names something
    /// unknown or inconsistent, or whose id is already taken.
    pub fn add_file(&mut self, file: &str, text: &str) -> Result<(), CorpusError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| CorpusError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        for raw_case in raw.case {
            let case = raw_case.check(file)?;
            if self.cases.iter().any(|c| c.id == case.id) {
                return Err(CorpusError::invalid(
                    &case.id,
                    format!("{file}: the id is used by another case"),
                ));
            }
            self.cases.push(case);
        }
        Ok(())
    }

    /// Reads every `*.toml` file of a directory, in name order.
    ///
    /// # Errors
    /// [`CorpusError::Io`] when the directory or a file cannot be read;
    /// otherwise as [`Corpus::add_file`].
    pub fn from_dir(dir: &Path) -> Result<Corpus, CorpusError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CorpusError::Io { path, source }
        };
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(io(dir))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        let mut corpus = Corpus::default();
        for path in files {
            let text = std::fs::read_to_string(&path).map_err(io(&path))?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            corpus.add_file(&name, &text)?;
        }
        Ok(corpus)
    }

    /// The cases, in file order.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// The names of the ops the corpus covers.
    pub fn op_names(&self) -> BTreeSet<&'static str> {
        self.cases.iter().map(|c| c.op.name()).collect()
    }
}

/// A file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    case: Vec<RawCase>,
}

/// A case as written; [`RawCase::check`] turns it into a [`Case`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    op: String,
    dtypes: Vec<String>,
    layouts: Option<Vec<LayoutClass>>,
    grad: Option<bool>,
    inputs: Vec<RawInput>,
    /// Free text: why the case exists. Not used by the runner.
    #[allow(dead_code)]
    why: Option<String>,
    dim: Option<i64>,
    dims: Option<Vec<i64>>,
    keepdim: Option<bool>,
    correction: Option<f64>,
    slope: Option<f64>,
    alpha: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    exponent: Option<f64>,
    to: Option<String>,
    pads: Option<Vec<[usize; 2]>>,
    value: Option<f64>,
    diagonal: Option<i64>,
    stride: Option<Vec<usize>>,
    padding: Option<Vec<usize>>,
    dilation: Option<Vec<usize>>,
    groups: Option<usize>,
    kernel: Option<Vec<usize>>,
    normalized_dims: Option<usize>,
    eps: Option<f64>,
    nan: Option<f64>,
    posinf: Option<f64>,
    neginf: Option<f64>,
    shifts: Option<Vec<i64>>,
    repeats: Option<Vec<usize>>,
    descending: Option<bool>,
    largest: Option<bool>,
    k: Option<usize>,
    ord: Option<f64>,
    mode: Option<String>,
    output_size: Option<Vec<usize>>,
    scale: Option<Vec<f64>>,
    align_corners: Option<bool>,
    output_padding: Option<Vec<usize>>,
    reduce: Option<String>,
    include_self: Option<bool>,
    equation: Option<String>,
    causal: Option<bool>,
    ceil_mode: Option<bool>,
}

/// An input as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInput {
    shape: Vec<usize>,
    values: Option<ValueSpec>,
    dtype: Option<String>,
    layout: Option<LayoutClass>,
}

fn parse_dtype(id: &str, field: &str, name: &str) -> Result<DType, CorpusError> {
    name.parse::<DType>().map_err(|_| {
        CorpusError::invalid(
            id,
            format!(
                "`{field}`: unknown dtype `{name}` (one of {})",
                DType::ALL.map(|d| d.name()).join(", ")
            ),
        )
    })
}

impl RawCase {
    fn check(self, file: &str) -> Result<Case, CorpusError> {
        let id = self.id.clone();
        let bad = |message: String| CorpusError::invalid(&id, format!("{file}: {message}"));
        if id.trim().is_empty() {
            return Err(CorpusError::Invalid {
                case: "(no id)".into(),
                message: format!("{file}: a case has an empty id"),
            });
        }
        let params = Params {
            dim: self.dim,
            dims: self.dims,
            keepdim: self.keepdim,
            correction: self.correction,
            slope: self.slope,
            alpha: self.alpha,
            min: self.min,
            max: self.max,
            exponent: self.exponent,
            to: match &self.to {
                Some(t) => Some(parse_dtype(&id, "to", t)?),
                None => None,
            },
            pads: self.pads,
            value: self.value,
            diagonal: self.diagonal,
            stride: self.stride,
            padding: self.padding,
            dilation: self.dilation,
            groups: self.groups,
            kernel: self.kernel,
            normalized_dims: self.normalized_dims,
            eps: self.eps,
            nan: self.nan,
            posinf: self.posinf,
            neginf: self.neginf,
            shifts: self.shifts,
            repeats: self.repeats,
            descending: self.descending,
            largest: self.largest,
            k: self.k,
            ord: self.ord,
            mode: self.mode,
            output_size: self.output_size,
            scale: self.scale,
            align_corners: self.align_corners,
            output_padding: self.output_padding,
            reduce: self.reduce,
            include_self: self.include_self,
            equation: self.equation,
            causal: self.causal,
            ceil_mode: self.ceil_mode,
        };
        let op = Op::parse(&self.op, params).map_err(&bad)?;

        if self.dtypes.is_empty() {
            return Err(bad("`dtypes` is empty".into()));
        }
        let dtypes = self
            .dtypes
            .iter()
            .map(|d| parse_dtype(&id, "dtypes", d))
            .collect::<Result<Vec<_>, _>>()?;

        let (least, most) = op.arity();
        let n = self.inputs.len();
        if n < least || n > most {
            let wanted = if least == most {
                format!("{least}")
            } else if most == usize::MAX {
                format!("at least {least}")
            } else {
                format!("{least} to {most}")
            };
            return Err(bad(format!(
                "op `{}` takes {wanted} inputs, the case gives {n}",
                op.name()
            )));
        }

        let mut inputs = Vec::with_capacity(n);
        for (i, raw) in self.inputs.into_iter().enumerate() {
            let values = raw.values.unwrap_or(ValueSpec::Normal);
            check_values(&values).map_err(|m| bad(format!("input {i}: {m}")))?;
            let dtype = match raw.dtype {
                Some(d) => Some(parse_dtype(&id, &format!("inputs[{i}].dtype"), &d)?),
                None => None,
            };
            let shape = Shape::from(raw.shape);
            if let Some(class) = raw.layout {
                if !class.applies_to(shape.rank()) {
                    return Err(bad(format!(
                        "input {i}: layout `{class}` does not apply to rank {}",
                        shape.rank()
                    )));
                }
            }
            inputs.push(InputSpec {
                shape,
                values,
                dtype,
                layout: raw.layout,
            });
        }

        let layouts = match self.layouts {
            Some(list) => {
                if list.is_empty() {
                    return Err(bad("`layouts` is empty".into()));
                }
                for class in &list {
                    let applies = inputs
                        .iter()
                        .any(|inp| inp.layout.is_none() && class.applies_to(inp.shape.rank()));
                    if *class != LayoutClass::Contiguous && !applies {
                        return Err(bad(format!(
                            "layout `{class}` applies to none of the inputs"
                        )));
                    }
                }
                list
            }
            // By default every class that changes something for some input.
            None => LayoutClass::ALL
                .into_iter()
                .filter(|class| {
                    *class == LayoutClass::Contiguous
                        || inputs
                            .iter()
                            .any(|inp| inp.layout.is_none() && class.applies_to(inp.shape.rank()))
                })
                .collect(),
        };
        let mut seen = BTreeSet::new();
        for class in &layouts {
            if !seen.insert(*class) {
                return Err(bad(format!("layout `{class}` is listed twice")));
            }
        }

        Ok(Case {
            id: self.id,
            file: file.to_string(),
            op,
            dtypes,
            layouts,
            grad: self.grad.unwrap_or(true),
            inputs,
        })
    }
}

/// Rejects value specs that cannot be meant.
fn check_values(spec: &ValueSpec) -> Result<(), String> {
    match spec {
        ValueSpec::Spike([big, small]) if !(big.is_finite() && small.is_finite()) => {
            Err(format!("a spike needs finite values, got [{big}, {small}]"))
        }
        ValueSpec::Uniform([lo, hi]) | ValueSpec::LogUniform([lo, hi])
            if !(lo.is_finite() && hi.is_finite() && lo < hi) =>
        {
            Err(format!("a range needs finite low < high, got [{lo}, {hi}]"))
        }
        ValueSpec::Int([lo, hi]) if lo >= hi => Err(format!(
            "an integer range needs low < high, got [{lo}, {hi}]"
        )),
        ValueSpec::List(list) if list.is_empty() => Err("an empty value list".into()),
        ValueSpec::List(list) => {
            for s in list {
                if let Scalar::Name(name) = s {
                    if s.resolve(DType::F32).is_none() {
                        return Err(format!(
                            "unknown value name `{name}` (max, min_normal, subnormal, max_subnormal, eps, each optionally with a leading `-`)"
                        ));
                    }
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
[[case]]
id = "exp/example"
op = "exp"
dtypes = ["f32", "f16"]
inputs = [{ shape = [2, 3], values = { uniform = [-2, 2] } }]

[[case]]
id = "gather/example"
op = "gather"
dim = 1
dtypes = ["f32"]
layouts = ["contiguous", "sliced"]
inputs = [
  { shape = [2, 3] },
  { shape = [2, 4], dtype = "i64", values = { int = [0, 3] } },
]
"#;

    fn one(text: &str) -> Result<Corpus, CorpusError> {
        let mut c = Corpus::default();
        c.add_file("t.toml", text)?;
        Ok(c)
    }

    #[test]
    fn parses_cases_with_defaults() {
        let c = one(EXAMPLE).unwrap();
        assert_eq!(c.cases().len(), 2);
        let exp = &c.cases()[0];
        assert_eq!(exp.dtypes, vec![DType::F32, DType::F16]);
        assert_eq!(exp.layouts, LayoutClass::ALL.to_vec());
        assert!(exp.grad);
        let gather = &c.cases()[1];
        assert_eq!(gather.op, Op::Gather { dim: 1 });
        assert_eq!(gather.inputs[1].dtype, Some(DType::I64));
        assert_eq!(gather.input_dtype(1, DType::F32), DType::I64);
        assert_eq!(gather.input_dtype(0, DType::F32), DType::F32);
    }

    #[test]
    fn default_layouts_skip_classes_that_apply_to_nothing() {
        let c = one(r#"[[case]]
id = "a"
op = "exp"
dtypes = ["f32"]
inputs = [{ shape = [5] }]"#)
        .unwrap();
        assert_eq!(
            c.cases()[0].layouts,
            vec![
                LayoutClass::Contiguous,
                LayoutClass::Sliced,
                LayoutClass::Broadcast,
                LayoutClass::Offset
            ]
        );
        assert_eq!(
            c.cases()[0].input_layout(0, LayoutClass::Permuted),
            LayoutClass::Contiguous
        );
    }

    #[test]
    fn mistakes_name_the_case_and_field() {
        let cases = [
            (r#"op = "exq""#, "unknown op `exq`"),
            (
                r#"op = "exp"
slope = 1.0"#,
                "`slope`",
            ),
            (r#"op = "add""#, "takes 2 inputs"),
            (
                r#"op = "exp"
layouts = ["permuted"]"#,
                "applies to none",
            ),
        ];
        for (body, needle) in cases {
            let text = format!(
                "[[case]]\nid = \"bad\"\ndtypes = [\"f32\"]\ninputs = [{{ shape = [3] }}]\n{body}\n"
            );
            let err = one(&text).unwrap_err().to_string();
            assert!(err.contains("bad") && err.contains(needle), "{err}");
        }
        let err = one("[[case]]\nid = \"x\"\nop = \"exp\"\ndtypes = [\"f31\"]\ninputs = []\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown dtype `f31`"), "{err}");
        let err = one("[[case]]\nid = \"x\"\nop = \"exp\"\ndtypes = [\"f32\"]\ninputs = [{ shape = [2], values = { list = [\"huge\"] } }]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("`huge`"), "{err}");
        let err = one("[[case]]\nid = \"x\"\nop = \"exp\"\ndtype = [\"f32\"]\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("t.toml"), "{err}");
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let mut c = one(EXAMPLE).unwrap();
        let err = c.add_file("u.toml", EXAMPLE).unwrap_err().to_string();
        assert!(
            err.contains("exp/example") && err.contains("used by another"),
            "{err}"
        );
    }
}
