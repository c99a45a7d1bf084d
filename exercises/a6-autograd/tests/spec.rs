//! The spec of A6. Hand-computed gradients are chosen where the answer is
//! exact or known in closed form (`tanh(ln 3 / 2) = 1/2`, `e^(ln 2) = 2`).
//! The properties run random programs, which make random graphs with
//! shared values and diamonds: the topological order is checked edge by
//! edge, and every gradient against a central difference of the forward
//! pass, with a tolerance derived from the step.

use std::collections::{HashMap, HashSet};

use a6::{Var, topo_order};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 64,
        failure_persistence: None,
        // The same cases every run, so two checks of the same code print
        // the same bytes: a fixed seed for a named generator.
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0xA6),
        ..ProptestConfig::default()
    }
}

/// Equal up to a few roundings, for gradients that pass through `exp` or
/// `tanh` (whose results are correctly rounded at best).
fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-12 * (1.0 + want.abs())
}

// ── Hand-computed cases ─────────────────────────────────────────────────

#[test]
fn the_gradient_of_x_times_x_is_2x() {
    for (x0, want) in [(3.0, 6.0), (-1.5, -3.0), (0.0, 0.0)] {
        let x = Var::leaf(x0);
        x.mul(&x).backward();
        assert_eq!(x.grad(), want, "d(x*x)/dx at x = {x0}");
    }
}

#[test]
fn add_hands_the_gradient_to_both_sides() {
    let (x, y) = (Var::leaf(2.0), Var::leaf(-7.0));
    x.add(&y).backward();
    assert_eq!(
        (x.grad(), y.grad()),
        (1.0, 1.0),
        "(dx, dy) of x + y at x = 2, y = -7"
    );
}

#[test]
fn sub_negates_the_right_side() {
    let (x, y) = (Var::leaf(2.0), Var::leaf(-7.0));
    x.sub(&y).backward();
    assert_eq!(
        (x.grad(), y.grad()),
        (1.0, -1.0),
        "(dx, dy) of x - y at x = 2, y = -7"
    );
}

#[test]
fn neg_negates() {
    let x = Var::leaf(4.0);
    x.neg().backward();
    assert_eq!(x.grad(), -1.0, "dx of -x at x = 4");
}

#[test]
fn mul_hands_each_side_the_other() {
    let (x, y) = (Var::leaf(3.0), Var::leaf(5.0));
    x.mul(&y).backward();
    assert_eq!(
        (x.grad(), y.grad()),
        (5.0, 3.0),
        "(dx, dy) of x * y at x = 3, y = 5"
    );
}

#[test]
fn exp_is_its_own_derivative() {
    // d e^x / dx = e^x, which is 2 at x = ln 2.
    let x = Var::leaf(std::f64::consts::LN_2);
    x.exp().backward();
    assert!(close(x.grad(), 2.0), "got {}", x.grad());
}

#[test]
fn the_derivative_of_tanh_is_one_minus_tanh_squared() {
    // tanh(ln 3 / 2) = (3 - 1) / (3 + 1) = 1/2, so the slope is 1 - 1/4.
    let x = Var::leaf(3f64.ln() / 2.0);
    x.tanh().backward();
    assert!(close(x.grad(), 0.75), "got {}", x.grad());
    let zero = Var::leaf(0.0);
    zero.tanh().backward();
    assert_eq!(zero.grad(), 1.0, "at 0");
}

#[test]
fn sum_hands_the_gradient_to_every_term() {
    let (x, y) = (Var::leaf(1.0), Var::leaf(2.0));
    let s = Var::sum(&[x.clone(), y.clone(), x.clone()]);
    assert_eq!(s.value(), 4.0, "sum of [x, y, x] at x = 1, y = 2");
    s.backward();
    assert_eq!((x.grad(), y.grad()), (2.0, 1.0), "x is a term twice");
}

#[test]
fn a_diamond_accumulates() {
    // out = (x·p)·(x + q) at x = 2, p = 3, q = 5: x reaches out along two
    // paths. d out/dx = (x + q)·p + x·p = 7·3 + 6 = 27,
    // d out/dp = x·(x + q) = 14, d out/dq = x·p = 6.
    let (x, p, q) = (Var::leaf(2.0), Var::leaf(3.0), Var::leaf(5.0));
    let out = x.mul(&p).mul(&x.add(&q));
    assert_eq!(out.value(), 42.0, "x·p·(x + q) at x = 2, p = 3, q = 5");
    out.backward();
    assert_eq!(
        (x.grad(), p.grad(), q.grad()),
        (27.0, 14.0, 6.0),
        "(dx, dp, dq) of x·p·(x + q) at x = 2, p = 3, q = 5"
    );
}

#[test]
fn a_composite_by_hand() {
    // f = tanh(x)·e^y - x at x = ln 3 / 2, y = ln 2, where tanh(x) = 1/2
    // and e^y = 2: df/dx = (1 - 1/4)·2 - 1 = 1/2, df/dy = 1/2·2 = 1.
    let x = Var::leaf(3f64.ln() / 2.0);
    let y = Var::leaf(std::f64::consts::LN_2);
    let f = x.tanh().mul(&y.exp()).sub(&x);
    f.backward();
    assert!(close(x.grad(), 0.5), "df/dx = {}", x.grad());
    assert!(close(y.grad(), 1.0), "df/dy = {}", y.grad());
}

#[test]
fn a_leaf_is_its_own_output() {
    let x = Var::leaf(9.0);
    x.backward();
    assert_eq!(x.grad(), 1.0, "dx/dx");
}

#[test]
fn a_leaf_the_output_does_not_use_gets_nothing() {
    let (x, unused) = (Var::leaf(1.0), Var::leaf(2.0));
    x.exp().backward();
    assert_eq!(unused.grad(), 0.0, "d exp(x) / d unused");
}

#[test]
fn calling_backward_twice_accumulates() {
    let x = Var::leaf(3.0);
    let y = x.mul(&x);
    y.backward();
    y.backward();
    assert_eq!(x.grad(), 12.0, "6 from each call");
    // Through a diamond too: intermediate values must not carry their
    // gradients from the first call into the second.
    let (x, p, q) = (Var::leaf(2.0), Var::leaf(3.0), Var::leaf(5.0));
    let out = x.mul(&p).mul(&x.add(&q));
    out.backward();
    out.backward();
    assert_eq!(
        (x.grad(), p.grad(), q.grad()),
        (54.0, 28.0, 12.0),
        "(dx, dp, dq) after two backward passes of x·p·(x + q) at x = 2, p = 3, q = 5"
    );
}

#[test]
fn zero_grad_clears_the_graph_and_only_the_graph() {
    let (x, y, other) = (Var::leaf(3.0), Var::leaf(5.0), Var::leaf(1.0));
    let out = x.mul(&y);
    out.backward();
    other.backward();
    assert_eq!(
        (x.grad(), y.grad(), other.grad()),
        (5.0, 3.0, 1.0),
        "(dx, dy) of x * y at x = 3, y = 5, and d other / d other"
    );
    out.zero_grad();
    assert_eq!((x.grad(), y.grad()), (0.0, 0.0), "out's leaves are cleared");
    assert_eq!(
        other.grad(),
        1.0,
        "a leaf out does not use keeps its gradient"
    );
    other.zero_grad();
    assert_eq!(other.grad(), 0.0, "a leaf clears itself");
}

#[test]
fn after_zero_grad_backward_starts_over() {
    let x = Var::leaf(3.0);
    let y = x.mul(&x);
    y.backward();
    y.zero_grad();
    y.backward();
    assert_eq!(x.grad(), 6.0, "not 12");
}

#[test]
fn topo_order_of_a_small_graph() {
    // out = x·y + x: four values, x used twice but listed once.
    let (x, y) = (Var::leaf(1.0), Var::leaf(2.0));
    let xy = x.mul(&y);
    let out = xy.add(&x);
    let ids: Vec<usize> = topo_order(&out).iter().map(Var::id).collect();
    assert_eq!(ids.len(), 4, "x, y, x·y and out, each once");
    let at = |v: &Var| ids.iter().position(|&id| id == v.id()).unwrap();
    assert!(at(&x) < at(&xy) && at(&y) < at(&xy), "x·y after its inputs");
    assert_eq!(at(&out), 3, "the output last");
    assert_eq!(
        topo_order(&x).iter().map(Var::id).collect::<Vec<_>>(),
        [x.id()],
        "topo_order(x).iter().map(Var::id).collect::<Vec<_>>()"
    );
}

// ── A deep chain ────────────────────────────────────────────────────────

/// What the chain prints once it has passed every check: the parent looks
/// for it instead of reading libtest's report, whose wording is not a
/// promise, and a run that selected no test (it also exits 0) lacks it.
const CHAIN_DONE: &str = "a 10,000-node chain: every check passed";

/// The chain runs in a process of its own: a stack overflow aborts the
/// whole process instead of failing one test, so in this one it would take
/// every other test's result down with it.
#[test]
fn a_10000_node_chain_does_not_overflow_the_stack() {
    let exe = std::env::current_exe().expect("the spec's own test binary");
    let run = std::process::Command::new(exe)
        .args(["deep_chain_on_a_small_stack", "--exact", "--ignored"])
        .args(["--nocapture", "--test-threads", "1"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the spec's own test binary runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    let why = if stderr.contains("overflowed its stack") {
        "it overflowed a 256 KiB stack, so something recurses once per node"
    } else {
        "it failed"
    };
    assert!(
        run.status.success() && stdout.contains(CHAIN_DONE),
        "the 10,000-node chain, run in a process of its own: {why} ({}):\n{}",
        run.status,
        stderr.trim()
    );
}

#[test]
#[ignore = "a_10000_node_chain_does_not_overflow_the_stack runs it in a process of its own"]
fn deep_chain_on_a_small_stack() {
    const LEN: usize = 10_000;
    // 256 KiB is plenty for loops, and far too little for a stack frame
    // per value: recursion 10,000 deep overflows it.
    let worker = std::thread::Builder::new()
        .name("a 10,000-node chain".into())
        .stack_size(256 * 1024)
        .spawn(|| {
            let (x, one) = (Var::leaf(0.5), Var::leaf(1.0));
            let mut y = x.clone();
            for _ in 0..LEN {
                y = y.add(&one);
            }
            assert_eq!(topo_order(&y).len(), LEN + 2, "x, one and the adds");
            y.backward();
            assert_eq!(x.grad(), 1.0, "dy/dx");
            assert_eq!(one.grad(), LEN as f64, "one is added {LEN} times");
            y.zero_grad();
            assert_eq!(
                (x.grad(), one.grad()),
                (0.0, 0.0),
                "(dx, d one) after zero_grad"
            );
        })
        .expect("a thread for the chain");
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
    println!("{CHAIN_DONE}");
}

// ── Random programs ─────────────────────────────────────────────────────

/// One step of a program: an op, and which earlier values it reads (an
/// index taken modulo the number of values made so far, so any earlier
/// value can be read, any number of times).
#[derive(Debug, Clone)]
enum Step {
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    Neg(usize),
    Exp(usize),
    Tanh(usize),
    Sum(Vec<usize>),
}

#[derive(Debug, Clone)]
struct Program {
    leaves: Vec<f64>,
    steps: Vec<Step>,
}

impl Program {
    /// Runs the program, with `leaves` as its inputs, through the forward
    /// pass: every value made, leaves first; the last is the output.
    fn run(&self, leaves: &[f64]) -> Vec<Var> {
        let mut made: Vec<Var> = leaves.iter().map(|&v| Var::leaf(v)).collect();
        for step in &self.steps {
            let at = |i: &usize| &made[i % made.len()];
            let next = match step {
                Step::Add(a, b) => at(a).add(at(b)),
                Step::Sub(a, b) => at(a).sub(at(b)),
                Step::Mul(a, b) => at(a).mul(at(b)),
                Step::Neg(a) => at(a).neg(),
                Step::Exp(a) => at(a).exp(),
                Step::Tanh(a) => at(a).tanh(),
                Step::Sum(terms) => {
                    Var::sum(&terms.iter().map(|i| at(i).clone()).collect::<Vec<_>>())
                }
            };
            made.push(next);
        }
        made
    }

    /// The output's value with leaf `i` moved by `dx`.
    fn output_at(&self, i: usize, dx: f64) -> f64 {
        let mut leaves = self.leaves.clone();
        leaves[i] += dx;
        self.run(&leaves)
            .last()
            .expect("a program has a value")
            .value()
    }
}

fn step() -> impl Strategy<Value = Step> {
    let i = || 0usize..64;
    prop_oneof![
        (i(), i()).prop_map(|(a, b)| Step::Add(a, b)),
        (i(), i()).prop_map(|(a, b)| Step::Sub(a, b)),
        (i(), i()).prop_map(|(a, b)| Step::Mul(a, b)),
        i().prop_map(Step::Neg),
        i().prop_map(Step::Exp),
        i().prop_map(Step::Tanh),
        prop::collection::vec(i(), 0..4).prop_map(Step::Sum),
    ]
}

fn program() -> impl Strategy<Value = Program> {
    (
        prop::collection::vec(-1.0f64..1.0, 1..4),
        prop::collection::vec(step(), 1..10),
    )
        .prop_map(|(leaves, steps)| Program { leaves, steps })
}

/// Σ |value| over every value a run made: what the roundings of the
/// output scale with.
fn magnitude(made: &[Var]) -> f64 {
    made.iter().map(|v| v.value().abs()).sum()
}

/// The central-difference step, about u^(1/3) for `f64`: it balances the
/// truncation error (∝ h²) against the rounding error (∝ u/h).
const H: f64 = 6e-6;

/// Roundings of u = 2⁻⁵³ each allowed along a program (a generous bound
/// for at most ten ops).
const ROUNDINGS: f64 = 64.0;

proptest! {
    #![proptest_config(config())]

    #[test]
    fn topo_order_lists_each_value_once_after_its_inputs(p in program()) {
        let made = p.run(&p.leaves);
        let out = made.last().unwrap();
        let order = topo_order(out);
        let mut position = HashMap::new();
        for (i, v) in order.iter().enumerate() {
            prop_assert!(position.insert(v.id(), i).is_none(), "{:?} is listed twice", v);
        }
        prop_assert_eq!(order.last().map(Var::id), Some(out.id()), "the output comes last");
        let mut used = HashSet::new();
        for (i, v) in order.iter().enumerate() {
            for input in v.inputs() {
                let j = position.get(&input.id()).copied();
                prop_assert!(j.is_some(), "{:?} at {} uses {:?}, which is missing", v, i, input);
                prop_assert!(j < Some(i), "{:?} at {:?} comes after {:?} at {}, which uses it", input, j, v, i);
                used.insert(input.id());
            }
        }
        // With every input listed earlier, this makes the order exactly
        // what the output depends on: nothing listed is unused.
        for v in &order[..order.len() - 1] {
            prop_assert!(used.contains(&v.id()), "{:?} is listed but nothing uses it", v);
        }
    }

    #[test]
    fn gradients_match_central_differences(p in program()) {
        let made = p.run(&p.leaves);
        let scale = magnitude(&made);
        // exp of exp of exp… can overflow; such programs say nothing here.
        prop_assume!(scale < 1e100);
        made.last().unwrap().backward();
        for (i, leaf) in made[..p.leaves.len()].iter().enumerate() {
            let d_h = (p.output_at(i, H) - p.output_at(i, -H)) / (2.0 * H);
            let d_2h = (p.output_at(i, 2.0 * H) - p.output_at(i, -2.0 * H)) / (4.0 * H);
            // A central difference errs by truncation, h²/6·f''', and by
            // rounding, about R·u·scale/h. d_2h - d_h = 3·h²/6·f''' to
            // leading order, so a third of it measures the truncation at h
            // (Richardson); the sum gets a safety factor of 4.
            let rounding = ROUNDINGS * (f64::EPSILON / 2.0) * scale / H;
            let tolerance = 4.0 * ((d_2h - d_h).abs() / 3.0 + rounding);
            prop_assert!(
                (leaf.grad() - d_h).abs() <= tolerance,
                "d out/d leaf {}: backward gives {}, the central difference {} (tolerance {:e})",
                i, leaf.grad(), d_h, tolerance
            );
        }
    }

    #[test]
    fn a_second_backward_adds_the_same_gradients_again(p in program()) {
        let made = p.run(&p.leaves);
        prop_assume!(magnitude(&made) < 1e100);
        let (out, leaves) = (made.last().unwrap(), &made[..p.leaves.len()]);
        out.backward();
        let once: Vec<f64> = leaves.iter().map(Var::grad).collect();
        out.backward();
        for (i, (leaf, g)) in leaves.iter().zip(&once).enumerate() {
            prop_assert!(close(leaf.grad(), 2.0 * g), "leaf {}: {} after two calls, {} after one", i, leaf.grad(), g);
        }
        out.zero_grad();
        for (i, leaf) in leaves.iter().enumerate() {
            prop_assert_eq!(leaf.grad(), 0.0, "leaf {} after zero_grad", i);
        }
        out.backward();
        for (i, (leaf, g)) in leaves.iter().zip(&once).enumerate() {
            prop_assert!(close(leaf.grad(), *g), "leaf {}: {} after zero_grad and backward, {} at first", i, leaf.grad(), g);
        }
    }
}
