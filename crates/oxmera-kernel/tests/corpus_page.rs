//! `docs/corpus-ptx.md` is what `corpus::ptx_page` writes for sm_80: the
//! analysis's verdict per corpus launch, and PTX only for the clean ones.
//! Regenerate it with `OXMERA_BLESS=1 cargo test -p oxmera-kernel --test
//! corpus_page` after changing the corpus, the analysis or the emitter.

use oxmera_kernel::corpus::ptx_page;
use oxmera_kernel::limits::ComputeCapability;

#[test]
fn the_corpus_page_is_current() {
    let page = ptx_page(ComputeCapability { major: 8, minor: 0 });
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/corpus-ptx.md");
    if std::env::var_os("OXMERA_BLESS").is_some() {
        std::fs::write(path, &page).unwrap();
    }
    let shipped = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        shipped == page,
        "docs/corpus-ptx.md is stale: regenerate it with \
         `OXMERA_BLESS=1 cargo test -p oxmera-kernel --test corpus_page`"
    );
    // flip's twin: divergent at block 64 (refused, no PTX), clean at 32.
    let section = page
        .split("\n## ")
        .find(|s| s.starts_with("`barrier_warp_guard`"))
        .expect("the kernel's section");
    assert!(
        section.contains("| (64, 1, 1) | (1, 1, 1) | OXK001"),
        "{section}"
    );
    assert!(
        section.contains("| (32, 1, 1) | (1, 1, 1) | clean"),
        "{section}"
    );
    assert_eq!(section.matches("<details>").count(), 1, "{section}");
    assert!(section.contains("<summary>PTX at block (32, 1, 1)</summary>"));
}
