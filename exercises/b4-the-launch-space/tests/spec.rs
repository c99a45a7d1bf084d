//! The spec of B4. It runs oxmera's tuner (`oxmera_kernel::tune`) on your
//! `stencil` for the generic target, on a problem of its own: 65499
//! seeded values (a ragged last tile for every configuration), compared
//! with the host's stencil. Each configuration of your search space goes
//! through the space's `require`, the analysis, the simulator and its cost
//! model; the tests then hold your search space and your `decide()` to
//! what the tuner found, and print its report where they disagree.

use b4::{Decision, Pick, decide, stencil};
use oxmera_kernel::ir::{Dim3, Value};
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::library::{Demo, rng_f32};
use oxmera_kernel::sim::{Arg, Buffer};
use oxmera_kernel::space::{Config, configurations};
use oxmera_kernel::target::Target;
use oxmera_kernel::tune::{
    RefusedBy, Row, Scale, TuneOptions, TuneReport, Verdict, render, tune_with,
};

/// Values in the problem: 65536 - 37, so every tile leaves a ragged end.
const N: u32 = 65_499;

/// The host's stencil in f64, and each element's bound (two f32 roundings).
fn expected(x: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let at = |i: isize| -> f64 {
        if i < 0 || i as usize >= x.len() {
            0.0
        } else {
            x[i as usize] as f64
        }
    };
    (0..x.len() as isize)
        .map(|i| {
            let (a, b, c) = (at(i - 1), at(i), at(i + 1));
            (
                a + b + c,
                2.0 * f32::EPSILON as f64 * (a.abs() + b.abs() + c.abs()),
            )
        })
        .unzip()
}

/// The problem for one configuration: the same inputs, the grid cut for
/// its tile.
fn problem(config: &Config, _scale: Scale) -> Option<Demo> {
    let tile = u32::try_from(*config.specs.first()?).ok()?.max(1);
    let x = rng_f32(4, N as usize);
    let (expected, tolerance) = expected(&x);
    Some(Demo {
        launch: LaunchConfig {
            grid: Dim3::x(N.div_ceil(tile)),
            block: config.block,
        },
        args: vec![
            Arg::Buffer(Buffer::from_f32(&x)),
            Arg::Buffer(Buffer::from_f32(&vec![0.0; N as usize])),
            Arg::Scalar(Value::U32(N)),
        ],
        output: 1,
        expected,
        tolerance,
        summary: format!("three-point stencil over {N} seeded values"),
    })
}

/// The tuner's report on your kernel, or the reason there is none.
fn report() -> Result<TuneReport, String> {
    tune_with(
        stencil(),
        &problem,
        &TuneOptions::new(Target::generic()),
        None,
    )
    .map_err(|e| e.to_string())
}

fn pick(row: &Row) -> Pick {
    Pick {
        block: row.config.block.x,
        tile: row.config.specs[0] as u32,
    }
}

fn row_of(r: &TuneReport, p: Pick) -> Option<&Row> {
    r.rows.iter().find(|row| pick(row) == p)
}

fn report_or_fail() -> TuneReport {
    report().unwrap_or_else(|e| {
        panic!(
            "the tuner has nothing to search: {e}\n\
             Give `stencil` a search space beside its contract (README, \"The grammar\")."
        )
    })
}

#[test]
fn the_search_space_holds_every_block_and_tile() {
    let k = stencil();
    assert_eq!(
        k.launch.blocks,
        [Dim3::x(256)],
        "keep the contract `block = [256]`: it is what the compiler proves, and what runs before any tuning"
    );
    let mut got: Vec<(u32, i64)> = configurations(k, &Target::generic())
        .iter()
        .map(|(c, _)| (c.block.x, c.specs[0]))
        .collect();
    got.sort();
    let mut want = Vec::new();
    for block in [64, 96, 128, 256] {
        for tile in [1024, 4096, 16384] {
            want.push((block, tile));
        }
    }
    assert_eq!(
        got, want,
        "the search space for the generic target lists (block, TILE) = {got:?}; it should be every block of 64, 96, 128, 256 with every TILE of 1024, 4096, 16384 (`oxmera kernel space b4-the-launch-space/src/lib.rs stencil` prints yours)"
    );
}

#[test]
fn blocks_that_do_not_divide_the_tile_are_refused_by_the_kernels_contract() {
    let r = report_or_fail();
    for row in r.rows.iter().filter(|row| row.config.block.x == 96) {
        match &row.verdict {
            Verdict::Refused(x) if x.by == RefusedBy::Contract => {}
            other => panic!(
                "{} should be refused before it runs — 96 divides no tile, so each thread's `TILE / 96` \
                 outputs leave the tile's end unwritten — but the tuner's verdict is {other:?}.\n\
                 State what the tile needs of the block in the search space (`require = [..]`).\n\n{}",
                row.label,
                render(&r)
            ),
        }
    }
}

#[test]
fn your_choice_is_the_best_safe_configuration() {
    let r = report_or_fail();
    let Decision { choice, .. } = decide();
    let Some(best) = r.best() else {
        panic!("the tuner found no safe configuration:\n\n{}", render(&r));
    };
    let Some(row) = row_of(&r, choice) else {
        panic!(
            "your choice {choice:?} is not a configuration of the search space:\n\n{}",
            render(&r)
        );
    };
    match &row.verdict {
        Verdict::Safe => {}
        Verdict::Refused(x) => panic!(
            "your choice, {}, was refused: {} {} — shipping it means a launch the target cannot run.\n\n{}",
            row.label,
            x.code.unwrap_or("launch"),
            x.message,
            render(&r)
        ),
        other => panic!(
            "your choice, {}, is not safe: {other:?}\n\n{}",
            row.label,
            render(&r)
        ),
    }
    assert_eq!(
        pick(&r.rows[best]),
        choice,
        "your choice, {}, is safe but costs {:.2} times the best safe configuration, {} (the row marked `best`):\n\n{}",
        row.label,
        r.ratio(row).unwrap_or(f64::NAN),
        r.rows[best].label,
        render(&r)
    );
}

#[test]
fn your_refused_but_faster_pick_was_refused_for_the_reason_you_give() {
    let r = report_or_fail();
    let d = decide();
    let faster = r.refused_but_faster();
    assert!(
        !faster.is_empty(),
        "the report has no refused-but-faster section: the search space holds no configuration the cost model prefers and the analysis refuses (which TILE would not fit?)\n\n{}",
        render(&r)
    );
    let Some(row) = faster.iter().find(|row| pick(row) == d.refused_but_faster) else {
        let listed: Vec<&str> = faster.iter().map(|row| row.label.as_str()).collect();
        panic!(
            "{:?} is not in the refused-but-faster section, which lists {}\n\n{}",
            d.refused_but_faster,
            listed.join("; "),
            render(&r)
        );
    };
    let Verdict::Refused(x) = &row.verdict else {
        unreachable!("the section lists refused rows only")
    };
    assert_eq!(
        Some(d.refusal),
        x.code,
        "{} was refused as {} ({}), not as {}; `oxmera kernel explain {}` says what that rule checks",
        row.label,
        x.code.unwrap_or("an impossible launch"),
        x.message,
        d.refusal,
        x.code.unwrap_or("OXK004")
    );
}
