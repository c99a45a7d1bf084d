//! The README's API tour is the `readme_tour` example, word for word, so
//! the code a newcomer reads first is code that compiles and runs (the
//! example is built by `cargo test` and run by CI).

#[test]
fn readme_api_tour_is_the_readme_tour_example() {
    let readme = include_str!("../../../README.md");
    let example = include_str!("../examples/readme_tour.rs");
    let block = readme
        .split("```rust\n")
        .find(|b| b.starts_with("use oxmera::prelude::*;"))
        .and_then(|b| b.split("```").next())
        .expect("the README has a Rust block starting with the prelude import");
    assert!(
        example.contains(block),
        "README.md's API tour and crates/oxmera/examples/readme_tour.rs differ; \
         update one from the other"
    );
}
