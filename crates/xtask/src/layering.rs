//! The layering rules.
//!
//! Workspace crates are listed bottom-up in [`LAYERS`]. A normal (non-dev)
//! dependency may only point to a crate *earlier* in the list: so the core
//! depends on no other oxmera crate, the tensor crate on no backend, the
//! reference backend on no other backend, and so on. Dev-dependencies are
//! exempt, because tests compare against the reference from anywhere.
//!
//! Two more rules keep the default build lean: the GPU libraries (`wgpu`,
//! `cudarc`) may be named only by their own backend crates, and crates above
//! those backends may reach them only through optional (feature-gated)
//! dependencies.

use serde_json::Value;

/// Workspace crates, bottom-up. A crate may depend only on crates before it.
pub const LAYERS: &[&str] = &[
    "oxmera-core",
    "oxmera-tensor",
    "oxmera-reference",
    "oxmera-cpu",
    "oxmera-loopback",
    "oxmera-data",
    "oxmera-checkpoint",
    "oxmera-tensorboard",
    "oxmera-nn-derive",
    "oxmera-nn",
    "oxmera-optim",
    "oxmera-kernel-ir",
    "oxmera-kernel-lower",
    "oxmera-kernel-macros",
    "oxmera-kernel",
    "oxmera-gpu",
    "oxmera-wgpu",
    "oxmera-cuda",
    "oxmera-conformance",
    "oxmera-ladder",
    "oxmera-learn",
    "oxmera",
    "oxmera-cli",
    "oxmera-bench",
];

/// Workspace members that are tooling, outside the layering.
pub const EXEMPT: &[&str] = &["xtask"];

/// External crates only a named backend crate may depend on.
pub const CONFINED: &[(&str, &str)] = &[("wgpu", "oxmera-wgpu"), ("cudarc", "oxmera-cuda")];

/// Light crates and the only workspace crates each may depend on, even
/// optionally: `oxmera-learn` is what a learner installs first, and must
/// build without the framework (no tensor, backend or kernel crate).
pub const LIGHT: &[(&str, &[&str])] = &[("oxmera-learn", &["oxmera-ladder"])];

/// GPU backend crates, which crates above them may use only optionally.
pub const GPU_BACKENDS: &[&str] = &["oxmera-wgpu", "oxmera-cuda"];

/// Checks `cargo metadata` output; returns a summary, or every violation.
pub fn check(metadata: &Value) -> Result<String, Vec<String>> {
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let members: Vec<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    let rank = |name: &str| LAYERS.iter().position(|l| *l == name);
    let mut violations = Vec::new();
    let mut edges = 0;
    for pkg in &packages {
        let name = pkg["name"].as_str().unwrap_or("?");
        if EXEMPT.contains(&name) {
            continue;
        }
        let Some(own) = rank(name) else {
            violations.push(format!(
                "{name} is not in the layer table (crates/xtask/src/layering.rs): place it"
            ));
            continue;
        };
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().unwrap_or("?");
            let is_dev = dep["kind"].as_str() == Some("dev");
            if is_dev {
                continue;
            }
            if let Some((_, owner)) = CONFINED.iter().find(|(c, _)| *c == dep_name) {
                if name != *owner {
                    violations.push(format!(
                        "{name} depends on {dep_name}, which only {owner} may use"
                    ));
                }
            }
            if !members.iter().any(|m| m == dep_name) {
                continue;
            }
            edges += 1;
            if let Some((_, allowed)) = LIGHT.iter().find(|(l, _)| *l == name) {
                if !allowed.contains(&dep_name) {
                    violations.push(format!(
                        "{name} depends on {dep_name}; it must stay light (only {} allowed)",
                        allowed.join(", ")
                    ));
                }
            }
            match rank(dep_name) {
                Some(r) if r < own => {}
                Some(_) => violations.push(format!(
                    "{name} depends on {dep_name}, which sits at or above it in the layers"
                )),
                None => violations.push(format!(
                    "{name} depends on {dep_name}, which is not in the layer table"
                )),
            }
            let optional = dep["optional"].as_bool().unwrap_or(false);
            if GPU_BACKENDS.contains(&dep_name) && !optional {
                violations.push(format!(
                    "{name} depends on {dep_name} unconditionally; GPU backends must sit behind a cargo feature"
                ));
            }
        }
    }
    if violations.is_empty() {
        Ok(format!(
            "layering ok: {} crates, {edges} internal dependency edges checked",
            members.len()
        ))
    } else {
        Err(violations)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pkg(name: &str, deps: &[(&str, &str, bool)]) -> Value {
        json!({
            "name": name,
            "dependencies": deps.iter().map(|(n, kind, optional)| json!({
                "name": n,
                "kind": if kind.is_empty() { Value::Null } else { json!(kind) },
                "optional": optional,
            })).collect::<Vec<_>>(),
        })
    }

    fn meta(pkgs: Vec<Value>) -> Value {
        json!({ "packages": pkgs })
    }

    #[test]
    fn the_intended_graph_passes() {
        let m = meta(vec![
            pkg("oxmera-core", &[("thiserror", "", false)]),
            pkg(
                "oxmera-tensor",
                &[
                    ("oxmera-core", "", false),
                    ("oxmera-reference", "dev", false),
                ],
            ),
            pkg(
                "oxmera-reference",
                &[("oxmera-core", "", false), ("oxmera-tensor", "", false)],
            ),
            pkg(
                "oxmera-wgpu",
                &[("oxmera-tensor", "", false), ("wgpu", "", false)],
            ),
            pkg(
                "oxmera",
                &[("oxmera-reference", "", false), ("oxmera-wgpu", "", true)],
            ),
        ]);
        assert!(check(&m).is_ok(), "{:?}", check(&m));
    }

    #[test]
    fn the_light_binary_may_depend_only_on_the_ladder() {
        let ok = meta(vec![
            pkg("oxmera-ladder", &[]),
            pkg(
                "oxmera-learn",
                &[("oxmera-ladder", "", false), ("clap", "", false)],
            ),
        ]);
        assert!(check(&ok).is_ok(), "{:?}", check(&ok));
        let heavy = meta(vec![
            pkg("oxmera-core", &[]),
            pkg("oxmera-ladder", &[]),
            pkg(
                "oxmera-learn",
                &[("oxmera-ladder", "", false), ("oxmera-core", "", true)],
            ),
        ]);
        let v = check(&heavy).unwrap_err();
        assert!(v.iter().any(|m| m.contains("must stay light")), "{v:?}");
    }

    #[test]
    fn core_depending_on_tensor_fails() {
        let m = meta(vec![
            pkg("oxmera-core", &[("oxmera-tensor", "", false)]),
            pkg("oxmera-tensor", &[("oxmera-core", "", false)]),
        ]);
        let v = check(&m).unwrap_err();
        assert_eq!(v.len(), 1);
        assert!(
            v[0].contains("oxmera-core depends on oxmera-tensor"),
            "{v:?}"
        );
    }

    #[test]
    fn tensor_depending_on_a_backend_fails() {
        let m = meta(vec![
            pkg("oxmera-tensor", &[("oxmera-reference", "", false)]),
            pkg("oxmera-reference", &[]),
        ]);
        assert!(check(&m).is_err());
    }

    #[test]
    fn reference_depending_on_another_backend_fails() {
        let m = meta(vec![
            pkg("oxmera-reference", &[("oxmera-cpu", "", false)]),
            pkg("oxmera-cpu", &[]),
        ]);
        assert!(check(&m).is_err());
    }

    #[test]
    fn gpu_libraries_are_confined_and_optional() {
        let m = meta(vec![
            pkg("oxmera-tensor", &[("wgpu", "", false)]),
            pkg("oxmera-wgpu", &[]),
            pkg("oxmera-cli", &[("oxmera-wgpu", "", false)]),
        ]);
        let v = check(&m).unwrap_err();
        assert_eq!(v.len(), 2, "{v:?}");
    }

    #[test]
    fn unknown_crates_must_be_placed() {
        let m = meta(vec![pkg("oxmera-mystery", &[])]);
        assert!(check(&m).unwrap_err()[0].contains("not in the layer table"));
    }
}
