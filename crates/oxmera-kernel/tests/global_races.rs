//! Races between blocks: the simulator runs blocks one after another, so an
//! unordered pair of accesses would run in one order and look fine; it
//! tracks which blocks touched each global element instead, and reports
//! the pair with both blocks, threads and the element.

use oxmera_kernel::corpus;
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::launch::LaunchConfig;
use oxmera_kernel::sim::{ReportKind, SimError, render_report};

fn race(name: &str, launch: LaunchConfig) -> (ReportKind, String) {
    let run = corpus::simulate(name, launch, 1).expect("a corpus kernel");
    let Err(SimError::Report(r)) = run else {
        panic!("{name}: {run:?}")
    };
    let entry = corpus::entries()
        .into_iter()
        .find(|e| e.name == name)
        .unwrap();
    (r.kind.clone(), render_report((entry.kernel)(), &r))
}

#[test]
fn a_plain_accumulation_across_blocks_names_both_blocks_and_the_element() {
    let (kind, shown) = race("global_accumulate_plain", LaunchConfig::linear(2, 32));
    let ReportKind::GlobalRace {
        buffer,
        index,
        first,
        first_how,
        second,
        second_how,
    } = kind
    else {
        panic!("{shown}")
    };
    assert_eq!((buffer.as_str(), index), ("out", 0));
    // Block 0's thread 0 wrote out[0]; block 1's thread 0 then reads it.
    assert_eq!(first, (Dim3::new(0, 0, 0), 0));
    assert_eq!((first_how, second, second_how), ("writes", 0, "reads"));
    assert!(shown.contains("error[sim:global-race]"), "{shown}");
    assert!(
        shown.contains("thread 0 of block (0, 0, 0) writes it and thread 0 of block (1, 0, 0)"),
        "{shown}"
    );
    assert!(shown.contains("out[0] = out[0] + x[i]"), "{shown}");
}

#[test]
fn a_stencil_reading_across_a_block_edge_is_witnessed_at_the_edge() {
    let (kind, shown) = race("stencil_in_place", LaunchConfig::linear(2, 32));
    let ReportKind::GlobalRace {
        index,
        first,
        second,
        ..
    } = kind
    else {
        panic!("{shown}")
    };
    // Thread 31 of block 0 wrote out[31]; thread 0 of block 1 reads it.
    assert_eq!((index, first.1, second), (31, 31, 0));
}

#[test]
fn one_block_and_atomics_never_race() {
    for (name, launch) in [
        ("global_accumulate_plain", LaunchConfig::linear(1, 32)),
        ("global_accumulate_atomic", LaunchConfig::linear(4, 64)),
        ("stencil_two_buffers", LaunchConfig::linear(4, 64)),
    ] {
        let run = corpus::simulate(name, launch, 1).unwrap();
        assert!(run.is_ok(), "{name} at {launch}: {run:?}");
    }
}
