//! The README's API tour is the `readme_tour` example, word for word, and
//! docs/from-pytorch.md's oxmera program is the `mlp` example, so the code
//! a newcomer reads first is code that compiles and runs (the examples are
//! built by `cargo test` and run by CI). And no example puts a `?` inside
//! an arithmetic expression: operators chain on results.

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

/// The Rust block of a markdown page that starts with `first_line`.
fn rust_block<'a>(page: &'a str, first_line: &str) -> &'a str {
    page.split("```rust\n")
        .find(|b| b.starts_with(first_line))
        .and_then(|b| b.split("```").next())
        .unwrap_or_else(|| panic!("no Rust block starting with {first_line:?}"))
}

#[test]
fn the_pytorch_page_shows_the_mlp_example() {
    let page = include_str!("../../../docs/from-pytorch.md");
    let example = include_str!("../examples/mlp.rs");
    let block = rust_block(page, "use oxmera::data");
    assert!(
        example.contains(block),
        "docs/from-pytorch.md's program and crates/oxmera/examples/mlp.rs differ; \
         update one from the other"
    );
}

/// Lines where a `?` result is an operand of `+ - * /`: `(a + b)? * c`,
/// `x.matmul(&w)? + &b`. Comments are skipped.
fn question_marks_in_arithmetic(code: &str) -> Vec<String> {
    code.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .filter(|line| {
            let b = line.as_bytes();
            (0..b.len()).any(|i| {
                b[i] == b'?' && {
                    let rest = line[i + 1..].trim_start();
                    ["+ ", "- ", "* ", "/ "]
                        .iter()
                        .any(|op| rest.starts_with(op))
                }
            })
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn no_example_puts_a_question_mark_inside_arithmetic() {
    // The check itself catches what it is for.
    assert_eq!(
        question_marks_in_arithmetic("let y = (x.matmul(&w)? + &b).relu()?;").len(),
        1
    );
    assert_eq!(
        question_marks_in_arithmetic("let y = ((&a * 2.0)? - &b)?;").len(),
        1
    );
    assert!(question_marks_in_arithmetic("let y = (x.matmul(&w) + &b).relu()?;").is_empty());
    let sources = [
        ("README.md", include_str!("../../../README.md")),
        (
            "docs/from-pytorch.md",
            include_str!("../../../docs/from-pytorch.md"),
        ),
        (
            "examples/readme_tour.rs",
            include_str!("../examples/readme_tour.rs"),
        ),
        ("examples/mlp.rs", include_str!("../examples/mlp.rs")),
        (
            "examples/cnn_digits.rs",
            include_str!("../examples/cnn_digits.rs"),
        ),
        (
            "examples/regression.rs",
            include_str!("../examples/regression.rs"),
        ),
    ];
    for (name, code) in sources {
        let found = question_marks_in_arithmetic(code);
        assert!(found.is_empty(), "{name}: `?` inside arithmetic: {found:?}");
    }
}
