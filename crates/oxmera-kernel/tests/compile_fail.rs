//! The macro rejects syntax outside the subset, and a declared launch space
//! with a confirmed divergent barrier fails the build.

#[test]
fn compile_fail() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
