//! The runner: every case, in every dtype and layout class it lists, on
//! the device and on the reference, compared.

use std::panic::{AssertUnwindSafe, catch_unwind};

use oxmera_core::{DType, Device, Result, Shape};
use oxmera_tensor::{HostBuffer, Support, Tensor, fallback, registry};

use crate::corpus::{Case, Corpus};
use crate::layout::{self, LayoutClass};
use crate::ops::Op;
use crate::report::{Builder, Declined, Failure, Phase, Report, Tally};
use crate::tolerance::{self, Comparison};
use crate::values;

/// Runs every case of `corpus` whose id or op name contains `filter` (all
/// of them for `None`) on `device`, compares each result with the
/// reference's, and reports.
///
/// A run whose device side returns an error or panics is a failure of
/// that run, not of the whole suite. A case the reference itself rejects
/// is reported as a failure too (the corpus is wrong), which is why the
/// reference run against itself must pass.
///
/// Before running a case in a dtype, the runner asks the device's
/// capabilities: a dtype of an input the device does not store, or an op
/// it declares [`Support::Unsupported`], declines the case in that dtype —
/// listed in the report with the reason, never run and never passed. Each
/// run that is made is counted as native or as a fallback run by whether
/// any op fell back to the host during it ([`fallback`]'s counts).
pub fn run_corpus(corpus: &Corpus, device: Device, filter: Option<&str>) -> Report {
    let mut report = Builder::new(device);
    for case in corpus.cases() {
        let name = case.op.name();
        if let Some(f) = filter {
            if !case.id.contains(f) && !name.contains(f) {
                continue;
            }
        }
        report.case();
        for &dtype in &case.dtypes {
            if let Some(reason) = declined(case, dtype, device) {
                report.decline(Declined {
                    case: case.id.clone(),
                    op: name,
                    dtype,
                    runs: case.layouts.len(),
                    reason,
                });
                continue;
            }
            for &class in &case.layouts {
                let before = fallback::total(device);
                let outcome =
                    match catch_unwind(AssertUnwindSafe(|| run_one(case, dtype, class, device))) {
                        Ok(o) => o,
                        Err(panic) => Outcome {
                            forward: Err(format!(
                                "panicked: {}",
                                oxmera_tensor::panic_message(&*panic)
                            )),
                            backward: Vec::new(),
                        },
                    };
                let fell_back = fallback::total(device) > before;
                record(&mut report, case, dtype, class, outcome, fell_back);
            }
        }
    }
    report.finish()
}

/// A comparison and the shape it was made over, or why none could be.
type Checked = std::result::Result<(Comparison, Shape), String>;

/// What one run found.
#[derive(Debug)]
struct Outcome {
    forward: Checked,
    /// One entry per input that has a gradient: its position and result.
    backward: Vec<(usize, Checked)>,
}

/// Why `device` declines `case` in `dtype`, if it does: an input dtype it
/// cannot store, or the op declared unsupported.
fn declined(case: &Case, dtype: DType, device: Device) -> Option<String> {
    // No backend at all is every run's error, reported where it happens.
    let backend = registry::backend(device).ok()?;
    for i in 0..case.inputs.len() {
        let d = case.input_dtype(i, dtype);
        if !backend.stores(d) {
            return Some(format!("{device} does not store {d}"));
        }
    }
    // A cast's result has a dtype of its own, which the device must store.
    if let Op::Cast(to) = case.op
        && !backend.stores(to)
    {
        return Some(format!("{device} does not store {to}"));
    }
    let op = case.op.name();
    (backend.support(op, dtype) == Support::Unsupported)
        .then(|| format!("{} declares {op} on {dtype} unsupported", backend.name()))
}

fn record(
    report: &mut Builder,
    case: &Case,
    dtype: DType,
    class: LayoutClass,
    o: Outcome,
    fell_back: bool,
) {
    let op = case.op.name();
    let mut failures = Vec::new();
    let row = report.row(op, dtype, class);
    row.fallback += usize::from(fell_back);
    let mut note = |tally: &mut Tally, phase, result: &Checked| match result {
        Ok((c, shape)) => {
            tally.add(c.ratio, c.passed());
            if !c.passed() {
                failures.push((phase, describe(c, shape)));
            }
        }
        Err(message) => {
            tally.add(f64::INFINITY, false);
            failures.push((phase, message.clone()));
        }
    };
    note(&mut row.forward, Phase::Forward, &o.forward);
    for (input, result) in &o.backward {
        let tally = row.backward.get_or_insert_with(Tally::default);
        note(tally, Phase::Backward { input: *input }, result);
    }
    for (phase, message) in failures {
        report.fail(Failure {
            case: case.id.clone(),
            op,
            dtype,
            layout: class,
            phase,
            message,
        });
    }
}

/// The worst element of a failed comparison, in words, with its
/// multi-index in `shape`.
fn describe(c: &Comparison, shape: &Shape) -> String {
    match &c.worst {
        None => "no element compared".into(),
        Some(w) => {
            let at = format!("element {:?} of {shape}", shape.unravel(w.index));
            match w.reason {
                Some(reason) => format!("{at}: got {}, want {} ({reason})", w.got, w.want),
                None => format!(
                    "{at}: got {}, want {} (error {:.3e} > tolerance {:.3e}, ratio {:.3})",
                    w.got, w.want, w.error, w.allowed, c.ratio
                ),
            }
        }
    }
}

/// One side of a run: the inputs as built on a device, and the output.
struct Side {
    inputs: Vec<layout::Built>,
    out: Tensor,
}

/// The values of every input of `case` in a run of `dtype` and `class`:
/// drawn from the case id and the input's position only, so every device,
/// dtype and class sees the same numbers (before rounding into the dtype).
fn draw(case: &Case, dtype: DType, class: LayoutClass) -> Result<Vec<Vec<f64>>> {
    (0..case.inputs.len())
        .map(|i| {
            let spec = &case.inputs[i];
            let source = case.input_layout(i, class).source_shape(&spec.shape);
            values::generate(
                &spec.values,
                &source,
                case.input_dtype(i, dtype),
                values::seed_of(&case.id, &[i as u64]),
            )
        })
        .collect()
}

fn build_side(
    case: &Case,
    dtype: DType,
    class: LayoutClass,
    values: &[Vec<f64>],
    device: Device,
    grad: bool,
) -> Result<Side> {
    let mut inputs = Vec::with_capacity(case.inputs.len());
    for (i, spec) in case.inputs.iter().enumerate() {
        let d = case.input_dtype(i, dtype);
        inputs.push(layout::build(
            case.input_layout(i, class),
            &spec.shape,
            d,
            &values[i],
            device,
            grad && d.is_float(),
        )?);
    }
    let views: Vec<Tensor> = inputs.iter().map(|b| b.view.clone()).collect();
    let out = case.op.apply(&views)?;
    Ok(Side { inputs, out })
}

fn run_one(case: &Case, dtype: DType, class: LayoutClass, device: Device) -> Outcome {
    let fail = |message: String| Outcome {
        forward: Err(message),
        backward: Vec::new(),
    };
    let values = match draw(case, dtype, class) {
        Ok(v) => v,
        Err(e) => return fail(format!("cannot draw the inputs: {e}")),
    };
    let grad = case.grad && case.op.differentiable() && dtype.is_float();
    let want = match build_side(case, dtype, class, &values, Device::Reference, grad) {
        Ok(s) => s,
        Err(e) => return fail(format!("the reference rejects the case: {e}")),
    };
    let got = match build_side(case, dtype, class, &values, device, grad) {
        Ok(s) => s,
        Err(e) => return fail(format!("{device} returned an error: {e}")),
    };
    let views: Vec<Tensor> = want.inputs.iter().map(|b| b.view.clone()).collect();
    let n = tolerance::terms(&case.op, &views);
    let forward = compare_forward(case, device, &views, &got.out, &want.out, n);
    let backward = if grad && forward.is_ok() {
        compare_backward(case, class, &got, &want, n)
    } else {
        Vec::new()
    };
    Outcome { forward, backward }
}

/// Checks shape, dtype and device of an output, then its values.
fn compare_forward(
    case: &Case,
    device: Device,
    ref_inputs: &[Tensor],
    got: &Tensor,
    want: &Tensor,
    n: usize,
) -> Checked {
    same_kind(got, want, device)?;
    let shape = want.shape().clone();
    let err = |e: oxmera_core::Error| format!("cannot read the output: {e}");
    let g = got.to_host().map_err(err)?;
    let w = want.to_host().map_err(err)?;
    if !want.dtype().is_float() {
        return Ok((tolerance::compare_exact(&g, &w), shape));
    }
    let (g, w) = (floats(&g), floats(&w));
    let tol = tolerance::forward(&case.op, n);
    let unit = tolerance::eps(tolerance::acc_dtype(want.dtype()));
    let s = tolerance::scale(&tol, &case.op, ref_inputs, &w, n, unit)
        .map_err(|e| format!("cannot form the tolerance scale: {e}"))?;
    Ok((
        tolerance::compare_forward(&g, &w, want.dtype(), &tol, &s),
        shape,
    ))
}

fn floats(b: &HostBuffer) -> Vec<f64> {
    (0..b.len()).map(|i| b.get_f64(i)).collect()
}

/// Checks that a device's result has the reference's shape and dtype,
/// and lives on the device (a backend that hands back another device's
/// storage breaks the next op).
fn same_kind(got: &Tensor, want: &Tensor, device: Device) -> std::result::Result<(), String> {
    if got.device() != device {
        return Err(format!(
            "the result is stored on {} instead of {device}",
            got.device()
        ));
    }
    if got.shape() != want.shape() {
        return Err(format!(
            "shape {} where the reference has {}",
            got.shape(),
            want.shape()
        ));
    }
    if got.dtype() != want.dtype() {
        return Err(format!(
            "dtype {} where the reference has {}",
            got.dtype(),
            want.dtype()
        ));
    }
    Ok(())
}

/// Backpropagates one seeded upstream gradient on both sides and compares
/// the gradient of every input leaf.
fn compare_backward(
    case: &Case,
    class: LayoutClass,
    got: &Side,
    want: &Side,
    n: usize,
) -> Vec<(usize, Checked)> {
    let out = &want.out;
    if !out.dtype().is_float() || !out.requires_grad() {
        return Vec::new();
    }
    let dtype = out.dtype();
    let upstream = |device| -> Result<(Tensor, f64)> {
        let g = values::generate(
            &values::ValueSpec::Normal,
            out.shape(),
            dtype,
            values::seed_of(&case.id, &[u64::MAX]),
        )?;
        let buffer = HostBuffer::from_f64s(dtype, g);
        let norm = (0..buffer.len())
            .map(|i| buffer.get_f64(i).abs())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        Ok((
            Tensor::from_host(buffer, out.shape().clone(), device, "conformance gradient")?,
            norm,
        ))
    };
    let (g_ref, g_norm) = match upstream(Device::Reference) {
        Ok(g) => g,
        Err(e) => return vec![(0, Err(format!("cannot draw the upstream gradient: {e}")))],
    };
    if let Err(e) = want.out.backward_with(&g_ref) {
        return vec![(0, Err(format!("the reference cannot backpropagate: {e}")))];
    }
    let ref_views: Vec<Tensor> = want.inputs.iter().map(|b| b.view.clone()).collect();
    let kappa = match tolerance::backward_conditioning(&case.op, &ref_views) {
        Ok(k) => k,
        Err(e) => return vec![(0, Err(format!("cannot form the gradient tolerance: {e}")))],
    };
    let device = got.out.device();
    let dev_result = upstream(device).and_then(|(g, _)| got.out.backward_with(&g));
    let mut results = Vec::new();
    for (i, spec) in case.inputs.iter().enumerate() {
        let leaf_ref = &want.inputs[i].leaf;
        if !leaf_ref.requires_grad() {
            continue;
        }
        if let Err(e) = &dev_result {
            results.push((i, Err(format!("{device} cannot backpropagate: {e}"))));
            continue;
        }
        // How many outputs one stored element feeds, on average: the
        // broadcast and index fan-in the gradient accumulates over.
        let source = case
            .input_layout(i, class)
            .source_shape(&spec.shape)
            .numel();
        let fan_in = out.numel().div_ceil(source.max(1)).max(1);
        // An input's gradient is rounded into, and summed over a broadcast
        // in, the input's own dtype: for an op that changes dtype (a cast
        // from f32 to f64) that is the coarser one, and the bound's ε is
        // its. For every other op the two dtypes are the same.
        let grad_dtype = leaf_ref.dtype();
        let tol_dtype = if tolerance::eps(grad_dtype) > tolerance::eps(dtype) {
            grad_dtype
        } else {
            dtype
        };
        let tol = tolerance::backward(&case.op, tol_dtype, n * fan_in, kappa);
        let result = match (got.inputs[i].leaf.grad(), leaf_ref.grad()) {
            (None, None) => continue,
            (Some(_), None) => Err("a gradient where the reference has none".to_string()),
            (None, Some(_)) => Err("no gradient where the reference has one".to_string()),
            (Some(g), Some(w)) => compare_grads(&g, &w, device, &tol, g_norm),
        };
        results.push((i, result));
    }
    results
}

fn compare_grads(
    got: &Tensor,
    want: &Tensor,
    device: Device,
    tol: &tolerance::BackwardTolerance,
    g_norm: f64,
) -> Checked {
    same_kind(got, want, device)?;
    let g = got
        .to_f64_vec()
        .map_err(|e| format!("cannot read the gradient: {e}"))?;
    let w = want
        .to_f64_vec()
        .map_err(|e| format!("cannot read the gradient: {e}"))?;
    Ok((
        tolerance::compare_backward(&g, &w, tol, g_norm),
        want.shape().clone(),
    ))
}
