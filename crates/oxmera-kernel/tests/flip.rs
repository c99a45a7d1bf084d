//! The demonstration kernel: clean at block 32, a divergent barrier at 64.

use oxmera_kernel::analysis::{CheckOptions, Rule, check};
use oxmera_kernel::launch::LaunchConfig;

#[test]
fn flip_is_clean_at_block_32() {
    let k = oxmera_kernel::library::flip();
    let f = check(k, &CheckOptions::new(LaunchConfig::linear(4, 32))).unwrap();
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn flip_has_a_divergent_barrier_at_block_64_with_a_lane_map() {
    let k = oxmera_kernel::library::flip();
    let f = check(k, &CheckOptions::new(LaunchConfig::linear(4, 64))).unwrap();
    assert!(!f.is_empty());
    assert!(
        f.iter()
            .all(|x| x.rule == Rule::DivergentBarrier && x.confirmed)
    );
    let lanes = f[0].lanes.as_ref().unwrap();
    assert_eq!(lanes.warps, vec!["W".repeat(32), ".".repeat(32)]);
    let text = oxmera_kernel::diag::render(k, &f[0]);
    assert!(text.starts_with("error[OXK001]"), "{text}");
    assert!(text.contains("flip.rs:21:9"), "{text}");
    assert!(text.contains("`warp_id()`"), "{text}");
    assert!(text.contains("flows into `w`"), "{text}");
}
