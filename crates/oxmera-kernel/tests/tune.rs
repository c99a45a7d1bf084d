//! The tuner on the simulator: enumeration and pruning deterministic, the
//! unsafe configurations refused with their findings, a tail bug refused as
//! a wrong result, and refused-but-faster found where the fastest tile is
//! over the shared-memory budget.

use oxmera_kernel::analysis::Rule;
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::kernel;
use oxmera_kernel::library;
use oxmera_kernel::space::configurations;
use oxmera_kernel::target::Target;
use oxmera_kernel::tune::{TuneOptions, Verdict, render, tune};

fn codes(r: &oxmera_kernel::tune::TuneReport) -> Vec<(String, Option<&'static str>)> {
    r.rows
        .iter()
        .map(|row| {
            let code = match &row.verdict {
                Verdict::Refused(x) => x.code,
                _ => None,
            };
            (row.label.clone(), code)
        })
        .collect()
}

#[test]
fn flip_is_refused_past_one_warp_with_oxk001_and_its_finding() {
    let k = library::flip();
    let r = tune(k, "flip", &TuneOptions::new(Target::generic()), None).unwrap();
    println!("{}", render(&r));
    assert_eq!(
        codes(&r),
        [
            ("block 32".to_string(), None),
            ("block 64".to_string(), Some("OXK001")),
            ("block 128".to_string(), Some("OXK001")),
            ("block 256".to_string(), Some("OXK001")),
        ]
    );
    assert_eq!(r.rows[0].verdict, Verdict::Safe);
    let Verdict::Refused(x) = &r.rows[1].verdict else {
        panic!("block 64 ran")
    };
    assert!(x.rendered.contains("OXK001"), "{}", x.rendered);
    assert!(x.snippet.contains("sync_threads"), "{}", x.snippet);
    // A hang has no cost: nothing refused here can be called faster.
    assert!(r.rows[1].cost.is_none());
    let text = render(&r);
    assert!(text.contains("refused OXK001 at"), "{text}");
    assert!(!text.contains("refused but faster"), "{text}");
}

#[test]
fn on_lavapipe_flip_searches_its_own_space_and_is_safe_at_one_subgroup() {
    let r = tune(
        library::flip(),
        "flip",
        &TuneOptions::new(Target::lavapipe()),
        None,
    )
    .unwrap();
    let blocks: Vec<u32> = r.rows.iter().map(|row| row.config.block.x).collect();
    assert_eq!(blocks, [8, 16, 32, 64]);
    assert_eq!(r.rows[0].verdict, Verdict::Safe);
    assert!(
        r.rows[1..]
            .iter()
            .all(|row| matches!(&row.verdict, Verdict::Refused(x) if x.code == Some("OXK001")))
    );
}

#[test]
fn enumeration_and_pruning_are_deterministic() {
    let k = library::stencil3_tiled();
    let a = configurations(k, &Target::generic());
    assert_eq!(a, configurations(k, &Target::generic()));
    assert_eq!(a.len(), 12);
    let opts = TuneOptions::new(Target::generic());
    let one = tune(k, "stencil3_tiled", &opts, None).unwrap();
    let two = tune(k, "stencil3_tiled", &opts, None).unwrap();
    assert_eq!(one, two);
    assert_eq!(render(&one), render(&two));
}

#[test]
fn the_fastest_stencil_tile_is_refused_but_faster() {
    let k = library::stencil3_tiled();
    let r = tune(
        k,
        "stencil3_tiled",
        &TuneOptions::new(Target::generic()),
        None,
    )
    .unwrap();
    println!("{}", render(&r));
    // Block 96 divides no tile: refused by the kernel's own contract.
    for row in r.rows.iter().filter(|row| row.config.block == Dim3::x(96)) {
        assert!(
            matches!(&row.verdict, Verdict::Refused(x) if x.code == Some(Rule::LaunchContract.code())),
            "{:?}",
            row.verdict
        );
    }
    let faster = r.refused_but_faster();
    assert!(!faster.is_empty(), "{}", render(&r));
    for row in &faster {
        assert_eq!(row.config.specs, vec![16384]);
        let Verdict::Refused(x) = &row.verdict else {
            unreachable!()
        };
        assert_eq!(x.code, Some("OXK004"));
        assert!(x.snippet.contains("shared"), "{}", x.snippet);
    }
    let best = &r.rows[r.best().unwrap()];
    assert_eq!(best.config.specs, vec![4096]);
    assert!(render(&r).contains("refused but faster"));
}

/// `stencil3_tiled` without its `require`: a block that does not divide
/// the tile leaves the tile's last outputs unwritten — a tail bug no rule
/// sees.
#[kernel(search(TILE = [64], block = [32, 48]))]
fn stencil_without_require<const TILE: u32 = 64>(x: &[f32], out: &mut [f32], n: u32) {
    let s = shared::<f32>(TILE + 2);
    let base = block_idx_x() * TILE;
    let tid = thread_idx_x();
    let mut j = tid;
    while j < TILE + 2 {
        let g = base + j;
        let mut v = 0.0;
        if g >= 1 && g - 1 < n {
            v = x[g - 1];
        }
        s[j] = v;
        j += block_dim_x();
    }
    sync_threads();
    let per = TILE / block_dim_x();
    for q in 0..per {
        let t = q * block_dim_x() + tid;
        let i = base + t;
        if i < n {
            out[i] = s[t] + s[t + 1] + s[t + 2];
        }
    }
}

#[test]
fn a_tail_bug_is_refused_as_a_wrong_result_with_its_first_index() {
    // The tuner's problem for the stencil, run by this kernel.
    let r = tune(
        stencil_without_require(),
        "stencil3_tiled",
        &TuneOptions::new(Target::generic()),
        None,
    )
    .unwrap();
    assert_eq!(r.rows[0].verdict, Verdict::Safe);
    // 64 / 48 = 1 pass of 48 threads: outputs 48..63 of the first tile.
    match &r.rows[1].verdict {
        Verdict::Wrong { on, index, .. } => {
            assert_eq!((*on, *index), ("simulator", 48));
        }
        other => panic!("{other:?}"),
    }
    assert!(render(&r).contains("wrong result (simulator) at [48]"));
}

#[test]
fn every_matmul_tile_is_safe_and_right_on_the_generic_target() {
    let r = tune(
        library::matmul_tiled(),
        "matmul_tiled",
        &TuneOptions::new(Target::generic()),
        None,
    )
    .unwrap();
    let tiles: Vec<i64> = r.rows.iter().map(|row| row.config.specs[0]).collect();
    assert_eq!(tiles, [4, 8, 16, 32]);
    for row in &r.rows {
        assert_eq!(row.verdict, Verdict::Safe, "{}", render(&r));
        assert_eq!(
            row.config.block,
            Dim3::new(row.config.specs[0] as u32, row.config.specs[0] as u32, 1)
        );
    }
}

/// A device for the tests: runs a launch in the simulator, and "times" it
/// as a fixed number of seconds per tile, recording the order of the
/// timed launches.
struct FakeDevice {
    order: Vec<i64>,
}

impl oxmera_kernel::tune::Device for FakeDevice {
    fn describe(&self) -> String {
        "fake".into()
    }
    fn run(
        &mut self,
        k: &'static oxmera_kernel::ir::Kernel,
        launch: oxmera_kernel::launch::LaunchConfig,
        args: &mut [oxmera_kernel::sim::Arg],
    ) -> Result<(), String> {
        oxmera_kernel::sim::run(k, launch, args, &Default::default())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    fn time(
        &mut self,
        k: &'static oxmera_kernel::ir::Kernel,
        _launch: oxmera_kernel::launch::LaunchConfig,
        _args: &[oxmera_kernel::sim::Arg],
    ) -> Result<f64, String> {
        let tile = k.default_specs()[0];
        self.order.push(tile);
        Ok(1.0 / tile as f64)
    }
}

#[test]
fn a_device_validates_then_times_interleaved_and_reports_tuned_against_default() {
    let mut dev = FakeDevice { order: Vec::new() };
    let mut opts = TuneOptions::new(Target::generic());
    opts.warmup = 1;
    opts.reps = 3;
    let r = tune(
        library::matmul_tiled(),
        "matmul_tiled",
        &opts,
        Some(&mut dev),
    )
    .unwrap();
    assert_eq!(r.device.as_deref(), Some("fake"));
    for row in &r.rows {
        assert_eq!(row.verdict, Verdict::Safe);
        assert_eq!(row.timing.as_ref().unwrap().samples.len(), 3);
    }
    // One warm-up each, then three rounds, each starting one later.
    assert_eq!(
        dev.order,
        [4, 8, 16, 32, 4, 8, 16, 32, 8, 16, 32, 4, 16, 32, 4, 8]
    );
    let best = r.best().unwrap();
    assert_eq!(r.rows[best].config.specs, vec![32]);
    assert_eq!(r.rows[r.default.unwrap()].config.specs, vec![16]);
    let text = render(&r);
    assert!(
        text.contains("tuned block 32x32, TILE=32 against the default block 16x16, TILE=16: 0.50"),
        "{text}"
    );
}
