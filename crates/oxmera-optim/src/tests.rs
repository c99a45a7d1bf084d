//! Tests that cut across the optimizers: state-dict round trips, exact
//! resume, every load error, and the laws.

use std::collections::BTreeMap;

use oxmera_core::{DType, Device, Error, Shape, StateDictProblem};
use oxmera_nn::Param;
use oxmera_reference as _;
use oxmera_tensor::Tensor;
use proptest::prelude::*;

use crate::{
    Adam, AdamConfig, AdamW, AdamWConfig, CosineAnnealing, LinearWarmup, Optimizer, Sgd, SgdConfig,
    apply_schedule, clip_grad_norm,
};

const DEV: Device = Device::Reference;

/// A trainable f64 parameter of shape `[n]`.
pub(crate) fn param(values: &[f64]) -> Param {
    Param::new(Tensor::from_slice(values, [values.len()], DEV).unwrap()).unwrap()
}

/// Puts `grad` into `p`'s gradient, as a backward pass would.
pub(crate) fn set_grad(p: &Param, grad: &[f64]) {
    let g = Tensor::from_slice(grad, [grad.len()], DEV).unwrap();
    p.tensor().set_grad(Some(g)).unwrap();
}

/// `p`'s current value.
pub(crate) fn values(p: &Param) -> Vec<f64> {
    p.tensor().to_vec::<f64>().unwrap()
}

/// The optimizers under test, each with every feature that has state or
/// changes the arithmetic turned on somewhere.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Plain,
    Momentum,
    Nesterov,
    Adam,
    AdamW,
}

const KINDS: [Kind; 5] = [
    Kind::Plain,
    Kind::Momentum,
    Kind::Nesterov,
    Kind::Adam,
    Kind::AdamW,
];

fn build(kind: Kind, params: Vec<(String, Param)>) -> Box<dyn Optimizer> {
    match kind {
        Kind::Plain => Box::new(
            Sgd::new(
                params,
                SgdConfig {
                    lr: 0.1,
                    weight_decay: 1e-2,
                    ..SgdConfig::default()
                },
            )
            .unwrap(),
        ),
        Kind::Momentum => Box::new(
            Sgd::new(
                params,
                SgdConfig {
                    lr: 0.05,
                    momentum: 0.9,
                    dampening: 0.1,
                    ..SgdConfig::default()
                },
            )
            .unwrap(),
        ),
        Kind::Nesterov => Box::new(
            Sgd::new(
                params,
                SgdConfig {
                    lr: 0.05,
                    momentum: 0.8,
                    nesterov: true,
                    weight_decay: 1e-3,
                    ..SgdConfig::default()
                },
            )
            .unwrap(),
        ),
        Kind::Adam => Box::new(
            Adam::new(
                params,
                AdamConfig {
                    lr: 0.05,
                    weight_decay: 1e-3,
                    ..AdamConfig::default()
                },
            )
            .unwrap(),
        ),
        Kind::AdamW => Box::new(
            AdamW::new(
                params,
                AdamWConfig {
                    lr: 0.05,
                    ..AdamWConfig::default()
                },
            )
            .unwrap(),
        ),
    }
}

/// A tiny f32 regression, `y = x·w + b`, with its data.
struct Problem {
    x: Tensor,
    y: Tensor,
}

impl Problem {
    fn new() -> Problem {
        let x = Tensor::from_vec(
            vec![
                0.5f32, -1.0, 2.0, //
                1.5, 0.25, -0.5, //
                -2.0, 1.0, 0.75, //
                0.1, 0.2, 0.3,
            ],
            [4, 3],
            DEV,
        )
        .unwrap();
        let y = Tensor::from_vec(vec![1.0f32, -0.5, 2.0, 0.3], [4, 1], DEV).unwrap();
        Problem { x, y }
    }

    fn fresh_params() -> Vec<(String, Param)> {
        let w = Tensor::from_vec(vec![0.3f32, -0.2, 0.1], [3, 1], DEV).unwrap();
        let b = Tensor::from_vec(vec![0.05f32], [1], DEV).unwrap();
        vec![
            ("0.weight".to_string(), Param::new(w).unwrap()),
            ("0.bias".to_string(), Param::new(b).unwrap()),
        ]
    }

    /// Forward and backward; returns the loss.
    fn backward(&self, params: &[(String, Param)]) -> f64 {
        let w = params[0].1.tensor();
        let b = params[1].1.tensor();
        let pred = self.x.matmul(&w).unwrap().add(&b).unwrap();
        let loss = pred
            .sub(&self.y)
            .unwrap()
            .square()
            .unwrap()
            .mean_all()
            .unwrap();
        loss.backward().unwrap();
        loss.item().unwrap()
    }
}

/// Copies every tensor through host memory, as saving to a file and
/// loading back would.
fn through_host(dict: &BTreeMap<String, Tensor>) -> BTreeMap<String, Tensor> {
    dict.iter()
        .map(|(k, t)| {
            let copy =
                Tensor::from_host(t.to_host().unwrap(), t.shape().clone(), DEV, "test").unwrap();
            (k.clone(), copy)
        })
        .collect()
}

/// The bits of every parameter and state tensor: what "bit-identical"
/// compares.
fn fingerprint(opt: &dyn Optimizer) -> Vec<(String, Vec<u64>)> {
    let mut out = Vec::new();
    for (name, p) in opt.params() {
        let bits = p
            .tensor()
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits() as u64)
            .collect();
        out.push((name.clone(), bits));
    }
    for (key, t) in opt.state_dict().unwrap() {
        let bits = match t.dtype() {
            DType::F32 => t
                .to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|x| x.to_bits() as u64)
                .collect(),
            DType::I64 => t
                .to_vec::<i64>()
                .unwrap()
                .iter()
                .map(|&x| x as u64)
                .collect(),
            other => panic!("unexpected state dtype {other}"),
        };
        out.push((key, bits));
    }
    out
}

/// Trains `total` steps under a warmup-then-cosine schedule with clipping.
/// At `resume_at`, the run stops: its parameters and (if `load`) its
/// optimizer state go through host memory into fresh slots and a freshly
/// built optimizer, which carries on.
fn train(kind: Kind, total: u64, resume_at: Option<u64>, load: bool) -> Vec<(String, Vec<u64>)> {
    let problem = Problem::new();
    let schedule =
        LinearWarmup::new(CosineAnnealing::new(0.05, 8, 0.005).unwrap(), 3, 0.1).unwrap();
    let mut opt = build(kind, Problem::fresh_params());
    for step in 0..total {
        if resume_at == Some(step) {
            let saved = through_host(&opt.state_dict().unwrap());
            let params: Vec<(String, Param)> = opt
                .params()
                .iter()
                .map(|(name, p)| {
                    let t = p.tensor();
                    let copy =
                        Tensor::from_host(t.to_host().unwrap(), t.shape().clone(), DEV, "test")
                            .unwrap();
                    (name.clone(), Param::new(copy).unwrap())
                })
                .collect();
            opt = build(kind, params);
            if load {
                opt.load_state_dict(&saved).unwrap();
            }
        }
        let lr = apply_schedule(&schedule, opt.as_mut());
        assert!(lr > 0.0);
        problem.backward(opt.params());
        let slots: Vec<Param> = opt.params().iter().map(|(_, p)| p.clone()).collect();
        clip_grad_norm(&slots, 1.0).unwrap();
        opt.step().unwrap();
        opt.zero_grad();
    }
    fingerprint(opt.as_ref())
}

#[test]
fn resuming_from_a_state_dict_is_bit_identical() {
    for kind in KINDS {
        let straight = train(kind, 10, None, true);
        for k in [1, 3, 7] {
            assert_eq!(
                train(kind, 10, Some(k), true),
                straight,
                "{kind:?} resumed at {k}"
            );
        }
    }
}

#[test]
fn resuming_without_the_state_diverges() {
    // The test above can fail: dropping the state changes the schedule's
    // step and (for stateful optimizers) the buffers, and so the result.
    for kind in KINDS {
        assert_ne!(
            train(kind, 10, Some(5), false),
            train(kind, 10, None, true),
            "{kind:?}"
        );
    }
}

#[test]
fn every_optimizer_fits_the_regression() {
    let problem = Problem::new();
    for kind in KINDS {
        let mut opt = build(kind, Problem::fresh_params());
        let first = problem.backward(opt.params());
        opt.zero_grad();
        let mut last = first;
        for _ in 0..200 {
            last = problem.backward(opt.params());
            opt.step().unwrap();
            opt.zero_grad();
        }
        assert!(last < 0.5 * first, "{kind:?}: loss {first} -> {last}");
    }
}

#[test]
fn state_dict_round_trips() {
    let problem = Problem::new();
    for kind in KINDS {
        let mut opt = build(kind, Problem::fresh_params());
        for _ in 0..3 {
            problem.backward(opt.params());
            opt.step().unwrap();
            opt.zero_grad();
        }
        let dict = opt.state_dict().unwrap();
        let mut fresh = build(kind, opt.params().to_vec());
        assert_eq!(fresh.steps_taken(), 0);
        fresh.load_state_dict(&through_host(&dict)).unwrap();
        assert_eq!(fresh.steps_taken(), 3);
        assert_eq!(
            fingerprint(fresh.as_ref()),
            fingerprint(opt.as_ref()),
            "{kind:?}"
        );
        let keys: Vec<String> = dict.keys().cloned().collect();
        let want: &[&str] = match kind {
            Kind::Plain => &["step"],
            Kind::Momentum | Kind::Nesterov => {
                &["0.bias.momentum_buffer", "0.weight.momentum_buffer", "step"]
            }
            Kind::Adam | Kind::AdamW => &[
                "0.bias.exp_avg",
                "0.bias.exp_avg_sq",
                "0.bias.step",
                "0.weight.exp_avg",
                "0.weight.exp_avg_sq",
                "0.weight.step",
                "step",
            ],
        };
        assert_eq!(keys, want, "{kind:?}");
    }
}

#[test]
fn a_fresh_state_loads_and_clears_the_state() {
    for kind in [Kind::Momentum, Kind::Adam] {
        let problem = Problem::new();
        let mut opt = build(kind, Problem::fresh_params());
        let empty = opt.state_dict().unwrap();
        assert_eq!(empty.keys().collect::<Vec<_>>(), vec!["step"]);
        problem.backward(opt.params());
        opt.step().unwrap();
        opt.load_state_dict(&empty).unwrap();
        assert_eq!(opt.steps_taken(), 0);
        assert_eq!(opt.state_dict().unwrap().len(), 1, "{kind:?}");
    }
}

/// An Adam and an SGD-with-momentum optimizer over `a` ([2]) and `b`
/// ([3]), both stepped once, with their state dicts.
fn stepped() -> Vec<(Box<dyn Optimizer>, BTreeMap<String, Tensor>)> {
    let mut out: Vec<(Box<dyn Optimizer>, BTreeMap<String, Tensor>)> = Vec::new();
    for adam in [true, false] {
        let a = param(&[1.0, 2.0]);
        let b = param(&[3.0, 4.0, 5.0]);
        let named = vec![("a".to_string(), a.clone()), ("b".to_string(), b.clone())];
        let mut opt: Box<dyn Optimizer> = if adam {
            Box::new(Adam::new(named, AdamConfig::default()).unwrap())
        } else {
            Box::new(
                Sgd::new(
                    named,
                    SgdConfig {
                        momentum: 0.9,
                        ..SgdConfig::default()
                    },
                )
                .unwrap(),
            )
        };
        set_grad(&a, &[0.5, -0.5]);
        set_grad(&b, &[1.0, 2.0, 3.0]);
        opt.step().unwrap();
        let dict = opt.state_dict().unwrap();
        out.push((opt, dict));
    }
    out
}

fn f64s(values: &[f64], shape: impl Into<Shape>) -> Tensor {
    Tensor::from_slice(values, shape, DEV).unwrap()
}

/// Loads `dict` edited by `edit` and returns the error, checking that the
/// optimizer's state did not change.
fn load_error(
    opt: &mut dyn Optimizer,
    dict: &BTreeMap<String, Tensor>,
    edit: impl FnOnce(&mut BTreeMap<String, Tensor>),
) -> Error {
    let mut bad = dict.clone();
    edit(&mut bad);
    // Make the state differ from `dict` first, so that a partial load
    // would show.
    opt.step().unwrap();
    let before = fingerprint_f64(opt);
    let err = opt.load_state_dict(&bad).unwrap_err();
    assert_eq!(
        fingerprint_f64(opt),
        before,
        "a failed load changed the state ({err})"
    );
    err
}

fn fingerprint_f64(opt: &dyn Optimizer) -> Vec<(String, Vec<u64>)> {
    let mut out: Vec<(String, Vec<u64>)> = opt
        .state_dict()
        .unwrap()
        .into_iter()
        .map(|(k, t)| {
            (
                k,
                t.to_f64_vec()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect(),
            )
        })
        .collect();
    out.push(("steps".into(), vec![opt.steps_taken()]));
    out
}

fn state_problem(err: Error) -> (String, StateDictProblem) {
    match err {
        Error::StateDict { name, problem, .. } => (name, problem),
        other => panic!("expected a StateDict error, got {other:?}"),
    }
}

#[test]
fn every_load_error_names_the_tensor_and_changes_nothing() {
    for (mut opt, dict) in stepped() {
        let opt = opt.as_mut();
        let is_adam = dict.contains_key("a.exp_avg");
        let field = if is_adam {
            "exp_avg"
        } else {
            "momentum_buffer"
        };
        let a_key = format!("a.{field}");
        let b_key = format!("b.{field}");

        // "step" missing
        let err = load_error(opt, &dict, |d| {
            d.remove("step");
        });
        assert_eq!(
            state_problem(err),
            ("step".into(), StateDictProblem::Missing)
        );

        // "step" of the wrong dtype and shape
        let err = load_error(opt, &dict, |d| {
            d.insert("step".into(), f64s(&[1.0], []));
        });
        assert_eq!(
            state_problem(err),
            (
                "step".into(),
                StateDictProblem::DType {
                    expected: DType::I64,
                    got: DType::F64
                }
            )
        );
        let err = load_error(opt, &dict, |d| {
            d.insert(
                "step".into(),
                Tensor::from_vec(vec![1i64], [1], DEV).unwrap(),
            );
        });
        assert_eq!(
            state_problem(err),
            (
                "step".into(),
                StateDictProblem::Shape {
                    expected: Shape::scalar(),
                    got: Shape::from([1])
                }
            )
        );

        // a negative count
        let err = load_error(opt, &dict, |d| {
            d.insert("step".into(), Tensor::scalar(-1i64, DEV).unwrap());
        });
        match err {
            Error::InvalidArgument { message, .. } => {
                assert!(message.contains("\"step\""), "{message}")
            }
            other => panic!("unexpected {other:?}"),
        }

        // the last parameter's buffer of the wrong shape (the first
        // parameter validated fine, and still nothing changed)
        let err = load_error(opt, &dict, |d| {
            d.insert(b_key.clone(), f64s(&[0.0, 0.0], [2]));
        });
        assert_eq!(
            state_problem(err),
            (
                b_key.clone(),
                StateDictProblem::Shape {
                    expected: Shape::from([3]),
                    got: Shape::from([2])
                }
            )
        );

        // a buffer of the wrong dtype
        let err = load_error(opt, &dict, |d| {
            d.insert(
                a_key.clone(),
                Tensor::from_vec(vec![0.0f32, 0.0], [2], DEV).unwrap(),
            );
        });
        assert_eq!(
            state_problem(err),
            (
                a_key.clone(),
                StateDictProblem::DType {
                    expected: DType::F64,
                    got: DType::F32
                }
            )
        );

        // a key naming no parameter, and a field this optimizer lacks
        let err = load_error(opt, &dict, |d| {
            d.insert(format!("c.{field}"), f64s(&[0.0], [1]));
        });
        assert_eq!(
            state_problem(err),
            (format!("c.{field}"), StateDictProblem::Unexpected)
        );
        let foreign = if is_adam {
            "a.momentum_buffer"
        } else {
            "a.exp_avg"
        };
        let err = load_error(opt, &dict, |d| {
            d.insert(foreign.into(), f64s(&[0.0, 0.0], [2]));
        });
        assert_eq!(
            state_problem(err),
            (foreign.to_string(), StateDictProblem::Unexpected)
        );

        if is_adam {
            // part of a parameter's state: the first missing field is named
            let err = load_error(opt, &dict, |d| {
                d.remove("b.exp_avg_sq");
            });
            assert_eq!(
                state_problem(err),
                ("b.exp_avg_sq".into(), StateDictProblem::Missing)
            );
            let err = load_error(opt, &dict, |d| {
                d.remove("a.step");
            });
            assert_eq!(
                state_problem(err),
                ("a.step".into(), StateDictProblem::Missing)
            );
            // a per-parameter count of the wrong dtype, and a negative one
            let err = load_error(opt, &dict, |d| {
                d.insert("b.step".into(), f64s(&[1.0], []));
            });
            assert_eq!(
                state_problem(err),
                (
                    "b.step".into(),
                    StateDictProblem::DType {
                        expected: DType::I64,
                        got: DType::F64
                    }
                )
            );
            let err = load_error(opt, &dict, |d| {
                d.insert("b.step".into(), Tensor::scalar(-3i64, DEV).unwrap());
            });
            match err {
                Error::InvalidArgument { op, message, .. } => {
                    assert_eq!(op, "Adam::load_state_dict");
                    assert!(message.contains("\"b.step\""), "{message}");
                }
                other => panic!("unexpected {other:?}"),
            }
        }

        // and the original loads
        opt.load_state_dict(&dict).unwrap();
        assert_eq!(opt.steps_taken(), 1);
    }
}

#[test]
fn sgd_without_momentum_refuses_a_momentum_buffer() {
    let p = param(&[1.0]);
    let mut opt = Sgd::new(vec![("p".into(), p)], SgdConfig::default()).unwrap();
    let mut dict = opt.state_dict().unwrap();
    dict.insert("p.momentum_buffer".into(), f64s(&[0.0], [1]));
    match opt.load_state_dict(&dict) {
        Err(Error::StateDict {
            op: "Sgd::load_state_dict",
            name,
            problem: StateDictProblem::Unexpected,
        }) => assert_eq!(name, "p.momentum_buffer"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn load_error_messages_read_well() {
    let (mut opt, mut dict) = stepped().remove(0);
    dict.insert("a.exp_avg".into(), f64s(&[0.0; 3], [3]));
    let err = opt.load_state_dict(&dict).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Adam::load_state_dict: tensor \"a.exp_avg\": expected shape [2], got [3]"
    );
}

#[test]
fn buffers_are_never_updated() {
    let w = param(&[1.0]);
    let running = Param::buffer(f64s(&[7.0], [1]));
    let named = vec![
        ("w".to_string(), w.clone()),
        ("running".to_string(), running.clone()),
    ];
    let mut opt = Adam::new(named, AdamConfig::default()).unwrap();
    set_grad(&w, &[1.0]);
    opt.step().unwrap();
    assert_eq!(values(&running), vec![7.0]);
    assert!(
        !opt.state_dict()
            .unwrap()
            .keys()
            .any(|k| k.starts_with("running"))
    );
}

#[test]
fn optimizers_are_send_trait_objects() {
    fn is_send<T: Send>() {}
    is_send::<Sgd>();
    is_send::<Adam>();
    is_send::<AdamW>();
    is_send::<Box<dyn Optimizer>>();
}

#[test]
fn f32_updates_are_deterministic() {
    // Two independent runs agree to the bit (no hidden order dependence).
    for kind in KINDS {
        assert_eq!(
            train(kind, 6, None, true),
            train(kind, 6, None, true),
            "{kind:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// SGD with lr = 0 leaves every parameter unchanged, whatever its
    /// momentum, dampening, Nesterov flag, weight decay and gradients;
    /// so do Adam and AdamW (whose decoupled decay is scaled by lr).
    #[test]
    fn zero_lr_leaves_params_unchanged(
        init in prop::collection::vec(-10.0f64..10.0, 1..5),
        grads in prop::collection::vec(prop::collection::vec(-10.0f64..10.0, 5), 1..4),
        momentum in 0.0f64..1.0,
        dampening in 0.0f64..1.0,
        nesterov in any::<bool>(),
        weight_decay in 0.0f64..1.0,
        which in 0usize..3,
    ) {
        let p = param(&init);
        let named = vec![("p".to_string(), p.clone())];
        let mut opt: Box<dyn Optimizer> = match which {
            0 => {
                let dampening = if nesterov { 0.0 } else { dampening };
                let momentum = if nesterov { momentum.max(0.1) } else { momentum };
                Box::new(Sgd::new(named, SgdConfig { lr: 0.0, momentum, dampening, nesterov, weight_decay }).unwrap())
            }
            1 => Box::new(Adam::new(named, AdamConfig { lr: 0.0, weight_decay, ..AdamConfig::default() }).unwrap()),
            _ => Box::new(AdamW::new(named, AdamWConfig { lr: 0.0, weight_decay, ..AdamWConfig::default() }).unwrap()),
        };
        for g in &grads {
            set_grad(&p, &g[..init.len()]);
            opt.step().unwrap();
        }
        prop_assert_eq!(values(&p), init);
    }
}
