//! `exercises/manifest.toml`: the tiers and the rungs in climbing order.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// A machine requirement of a tier or rung. `oxmera doctor` probes each one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Need {
    /// A Rust toolchain (`cargo`, `rustc`): every rung needs it.
    Rust,
    /// A GPU adapter that wgpu can open: Metal, Vulkan or DX12.
    WgpuAdapter,
    /// The NVIDIA driver library (`libcuda.so.1`, `nvcuda.dll`).
    CudaDriver,
}

impl Need {
    /// The word the manifest uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Need::Rust => "rust",
            Need::WgpuAdapter => "wgpu-adapter",
            Need::CudaDriver => "cuda-driver",
        }
    }
}

/// Whether a rung exists yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RungStatus {
    /// Skeleton, spec, hints and solution are in the tree, and `verify`
    /// checks them.
    Built,
    /// Named and described, not written yet.
    Planned,
}

/// A tier: a group of rungs that share what they need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    /// One letter, `A` to `D`.
    pub id: String,
    /// A short title ("Rust and the CPU").
    pub name: String,
    /// What climbing it costs ("$0", "metered").
    pub cost: String,
    /// What the machine must have for this tier to be open.
    #[serde(default)]
    pub needs: Vec<Need>,
}

/// One rung.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rung {
    /// Its id, the tier letter and a number (`A1`).
    pub id: String,
    /// A short title ("shape and strides").
    pub name: String,
    /// The tier's id.
    pub tier: String,
    /// Built or planned.
    pub status: RungStatus,
    /// One line: what the learner comes away with.
    pub teaches: String,
    /// What the machine must have.
    #[serde(default)]
    pub needs: Vec<Need>,
    /// What it costs to climb.
    pub cost: String,
    /// The rung's folder, relative to `exercises/`; required when built.
    #[serde(default)]
    pub path: Option<PathBuf>,
    /// The oxmera source files that do what the rung asks, relative to the
    /// repository root (the folder above `exercises/`): shown after a
    /// green check, since the solutions only call them.
    #[serde(default)]
    pub source: Vec<PathBuf>,
}

impl Rung {
    /// Whether the rung can be checked.
    pub fn is_built(&self) -> bool {
        self.status == RungStatus::Built
    }
}

/// The whole manifest, validated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Tiers in order.
    #[serde(rename = "tier")]
    pub tiers: Vec<Tier>,
    /// Rungs in climbing order.
    #[serde(rename = "rung")]
    pub rungs: Vec<Rung>,
}

impl Manifest {
    /// Reads and validates a manifest file.
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        Manifest::parse(path, &text)
    }

    /// Parses and validates manifest text; `path` is only used in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Manifest> {
        let manifest: Manifest = toml::from_str(text).map_err(|e| Error::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        manifest.validate(path)?;
        Ok(manifest)
    }

    fn validate(&self, path: &Path) -> Result<()> {
        let invalid = |message: String| Error::ManifestInvalid {
            path: path.to_path_buf(),
            message,
        };
        let tier_ids: Vec<&str> = self.tiers.iter().map(|t| t.id.as_str()).collect();
        let mut seen = HashSet::new();
        let mut last_tier = 0;
        for rung in &self.rungs {
            if !seen.insert(rung.id.as_str()) {
                return Err(invalid(format!("rung id {} appears twice", rung.id)));
            }
            let Some(tier_pos) = tier_ids.iter().position(|&t| t == rung.tier) else {
                return Err(invalid(format!(
                    "rung {} names tier {:?}, which is not one of {:?}",
                    rung.id, rung.tier, tier_ids
                )));
            };
            // Climbing order is tier order: a rung never comes before a rung
            // of an earlier tier.
            if tier_pos < last_tier {
                return Err(invalid(format!(
                    "rung {} (tier {}) comes after a rung of a later tier",
                    rung.id, rung.tier
                )));
            }
            last_tier = tier_pos;
            match (&rung.status, &rung.path) {
                (RungStatus::Built, None) => {
                    return Err(invalid(format!(
                        "rung {} is built but has no path",
                        rung.id
                    )));
                }
                (RungStatus::Built, Some(p)) if p.is_absolute() || p.components().count() != 1 => {
                    return Err(invalid(format!(
                        "rung {} has path {}; it must be one folder name inside exercises/",
                        rung.id,
                        p.display()
                    )));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The rung with this id (case-insensitive, so `a1` finds `A1`).
    pub fn rung(&self, id: &str) -> Result<&Rung> {
        self.rungs
            .iter()
            .find(|r| r.id.eq_ignore_ascii_case(id))
            .ok_or_else(|| Error::UnknownRung {
                given: id.to_string(),
                known: self.rungs.iter().map(|r| r.id.clone()).collect(),
            })
    }

    /// The rung with this id, which must be built.
    pub fn built_rung(&self, id: &str) -> Result<&Rung> {
        let rung = self.rung(id)?;
        if rung.is_built() {
            Ok(rung)
        } else {
            Err(Error::RungPlanned {
                id: rung.id.clone(),
                teaches: rung.teaches.clone(),
            })
        }
    }

    /// The tier with this id.
    pub fn tier(&self, id: &str) -> Option<&Tier> {
        self.tiers.iter().find(|t| t.id == id)
    }

    /// The built rungs, in climbing order.
    pub fn built(&self) -> impl Iterator<Item = &Rung> {
        self.rungs.iter().filter(|r| r.is_built())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIERS: &str = r#"
[[tier]]
id = "A"
name = "Rust and the CPU"
cost = "$0"
needs = ["rust"]

[[tier]]
id = "B"
name = "GPU correctness with no GPU"
cost = "$0"
"#;

    fn parse(rungs: &str) -> Result<Manifest> {
        Manifest::parse(Path::new("manifest.toml"), &format!("{TIERS}{rungs}"))
    }

    const A1: &str = r#"
[[rung]]
id = "A1"
name = "shape and strides"
tier = "A"
status = "built"
teaches = "strides"
cost = "$0"
path = "a1"
"#;

    #[test]
    fn parses_tiers_and_rungs() {
        let m = parse(&format!(
            "{A1}\n[[rung]]\nid = \"B1\"\nname = \"first kernel\"\ntier = \"B\"\nstatus = \"planned\"\nteaches = \"x\"\ncost = \"$0\"\nneeds = [\"rust\", \"cuda-driver\"]\n"
        ))
        .unwrap();
        assert_eq!(m.tiers.len(), 2);
        assert_eq!(m.tiers[0].needs, vec![Need::Rust]);
        assert_eq!(m.rung("a1").unwrap().path.as_deref(), Some(Path::new("a1")));
        assert_eq!(
            m.rung("B1").unwrap().needs,
            vec![Need::Rust, Need::CudaDriver]
        );
        assert_eq!(m.built().count(), 1);
        assert!(matches!(m.built_rung("B1"), Err(Error::RungPlanned { .. })));
        let err = m.rung("Z9").unwrap_err().to_string();
        assert_eq!(err, "ladder: no rung \"Z9\" (rungs: A1, B1)");
    }

    #[test]
    fn rejects_broken_manifests() {
        let dup = parse(&format!("{A1}{A1}")).unwrap_err().to_string();
        assert!(dup.contains("rung id A1 appears twice"), "{dup}");
        let tier = parse(&A1.replace("tier = \"A\"", "tier = \"Q\""))
            .unwrap_err()
            .to_string();
        assert!(tier.contains("names tier \"Q\""), "{tier}");
        let nopath = parse(&A1.replace("path = \"a1\"", ""))
            .unwrap_err()
            .to_string();
        assert!(nopath.contains("built but has no path"), "{nopath}");
        let deep = parse(&A1.replace("path = \"a1\"", "path = \"../a1\""))
            .unwrap_err()
            .to_string();
        assert!(deep.contains("one folder name"), "{deep}");
        let unknown = parse(&A1.replace("cost = \"$0\"", "cost = \"$0\"\ncolour = 1")).unwrap_err();
        assert!(matches!(unknown, Error::Parse { .. }), "{unknown}");
        let order = format!(
            "{}{}",
            A1.replace("\"A1\"", "\"B0\"")
                .replace("tier = \"A\"", "tier = \"B\""),
            A1
        );
        let order = parse(&order).unwrap_err().to_string();
        assert!(
            order.contains("comes after a rung of a later tier"),
            "{order}"
        );
    }
}
