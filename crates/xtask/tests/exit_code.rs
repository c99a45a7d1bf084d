//! CI relies on the exit status: a violation must fail the run.

use std::process::Command;

fn run(metadata: &str) -> std::process::Output {
    let dir = std::env::temp_dir().join(format!("xtask-layering-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.json", metadata.len()));
    std::fs::write(&path, metadata).unwrap();
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["layering", path.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn a_violation_exits_non_zero() {
    let bad = r#"{"packages":[
        {"name":"oxmera-core","dependencies":[{"name":"oxmera-tensor","kind":null,"optional":false}]},
        {"name":"oxmera-tensor","dependencies":[{"name":"oxmera-core","kind":null,"optional":false}]}
    ]}"#;
    let out = run(bad);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("oxmera-core depends on oxmera-tensor"),
        "{stderr}"
    );
}

#[test]
fn a_clean_graph_exits_zero() {
    let good = r#"{"packages":[
        {"name":"oxmera-core","dependencies":[]},
        {"name":"oxmera-tensor","dependencies":[{"name":"oxmera-core","kind":null,"optional":false}]}
    ]}"#;
    assert_eq!(run(good).status.code(), Some(0));
}
