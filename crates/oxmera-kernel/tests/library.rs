//! Every library kernel: correct in the simulator at every block size it
//! declares, and clean under the analysis at each of those launches.

use oxmera_kernel::analysis::{CheckOptions, check};
use oxmera_kernel::ir::Dim3;
use oxmera_kernel::library;
use oxmera_kernel::registry::Origin;

fn declared_blocks(name: &str) -> Vec<Dim3> {
    let e = oxmera_kernel::registry::find(name).unwrap();
    let k = (e.kernel)();
    if k.launch.blocks.is_empty() {
        vec![Dim3::x(32)]
    } else {
        k.launch.blocks.clone()
    }
}

#[test]
fn every_library_kernel_matches_the_host_at_every_declared_block() {
    for e in library::entries() {
        assert_eq!(e.origin, Origin::Library);
        for block in declared_blocks(e.name) {
            for seed in [1, 2] {
                let out = library::demo(e.name, block, seed)
                    .expect("a demo")
                    .unwrap_or_else(|err| {
                        panic!("{} at block {block}: {err:?}", e.name);
                    });
                assert!(
                    out.passed,
                    "{} at block {block}, seed {seed}: max error {}",
                    e.name, out.max_abs_err
                );
            }
        }
    }
}

#[test]
fn no_library_kernel_is_flagged_at_a_declared_launch() {
    for e in library::entries() {
        for block in declared_blocks(e.name) {
            let d = library::demos_launch(e.name, block);
            let f = check((e.kernel)(), &CheckOptions::new(d)).unwrap();
            assert!(f.is_empty(), "{} at {d}: {:#?}", e.name, f);
        }
    }
}
