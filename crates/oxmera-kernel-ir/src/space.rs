//! The search space: the configurations a tuner may explore, kept apart
//! from the contract.
//!
//! A kernel's attribute says two different things about launches. The
//! **contract** (`block = [..]`, `grid = [..]`) is a promise: every launch
//! it names is safe, and the macro proves it at compile time, turning each
//! confirmed finding into a compile error. The **search space**
//! (`search(block = [..], TILE = [..], ..)`) is a question: which of these
//! configurations is fastest *and* safe on the target at hand? Nothing is
//! promised about it, so the compiler does not gate it; the tuner checks
//! each configuration for the chosen target when it runs, refuses the
//! unsafe ones with the finding that shows why, and launches only what
//! survives. Keeping the two apart is what lets a kernel list a
//! configuration that is unsafe somewhere (a block of 64 on warps of 32,
//! a tile over a small GPU's shared memory) for the tuner to refuse.
//!
//! A configuration is a block shape and one value per specialization
//! constant ([`Config`]). A space may be limited to targets of one warp
//! width (`warp = 8`), because a block shape is safe or not in units of
//! warps; the spaces for the chosen target are those naming its warp width,
//! or — when none does — those naming no width. A space may also state
//! what its tiles need of each other (`require = [TILE % block_x == 0]`):
//! a configuration that breaks that is refused before any analysis, as a
//! launch outside the kernel's own contract.
//!
//! [`configurations`] enumerates the space in a fixed order (the spaces in
//! declaration order; within one, the constants' values as an odometer,
//! the last constant fastest, then the blocks), so two runs list the same
//! configurations in the same order.

use std::fmt;

use crate::ir::{Axis, Dim3, Kernel, SpecId};
use crate::target::Target;

/// A number in a search space: a literal, a specialization constant's
/// value in the configuration, or one extent of its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A literal.
    Lit(u32),
    /// A specialization constant.
    Spec(SpecId),
    /// The block's extent along an axis (`block_x`, `block_y`, `block_z`).
    Block(Axis),
}

impl Operand {
    /// Its value in a configuration; `None` when a constant's value does
    /// not fit a `u32`.
    pub fn value(self, config: &Config) -> Option<u64> {
        match self {
            Operand::Lit(v) => Some(v as u64),
            Operand::Spec(s) => u64::try_from(*config.specs.get(s as usize)?).ok(),
            Operand::Block(a) => Some(config.block.get(a) as u64),
        }
    }

    /// How the attribute spells it.
    pub fn spelled(self, k: &Kernel) -> String {
        match self {
            Operand::Lit(v) => v.to_string(),
            Operand::Spec(s) => k
                .specs
                .get(s as usize)
                .map_or_else(|| format!("spec#{s}"), |c| c.name.clone()),
            Operand::Block(Axis::X) => "block_x".into(),
            Operand::Block(Axis::Y) => "block_y".into(),
            Operand::Block(Axis::Z) => "block_z".into(),
        }
    }
}

/// `dividend % divisor == 0`: what a tile needs of the block (or of another
/// tile) for the kernel to cover every element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Divisible {
    /// The number that must be a multiple.
    pub dividend: Operand,
    /// What it must be a multiple of.
    pub divisor: Operand,
}

/// One `search(..)` of a kernel's attribute.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchSpace {
    /// Applies only on targets with this warp width (`warp = 8`); `None`:
    /// on any target for which no space names its width.
    pub warp: Option<u32>,
    /// Block shapes, each extent a literal or a specialization constant
    /// (`[[TILE, TILE]]`); empty: the contract's blocks.
    pub blocks: Vec<[Operand; 3]>,
    /// Values to try per specialization constant, in declaration order of
    /// the attribute; a constant not named keeps its default.
    pub values: Vec<(SpecId, Vec<i64>)>,
    /// What every configuration must satisfy.
    pub require: Vec<Divisible>,
}

/// One point of a search space: a block and a value per specialization
/// constant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    /// The block shape.
    pub block: Dim3,
    /// One value per specialization constant of the kernel, in its order.
    pub specs: Vec<i64>,
}

impl Config {
    /// `block 16x16, TILE=16` — how reports and the cache name it.
    pub fn label(&self, k: &Kernel) -> String {
        let b = self.block;
        let mut s = if b.z > 1 {
            format!("block {}x{}x{}", b.x, b.y, b.z)
        } else if b.y > 1 {
            format!("block {}x{}", b.x, b.y)
        } else {
            format!("block {}", b.x)
        };
        for (c, v) in k.specs.iter().zip(&self.specs) {
            s.push_str(&format!(", {}={v}", c.name));
        }
        s
    }
}

/// A configuration that breaks a space's `require`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmet {
    /// The requirement as the attribute spells it.
    pub requirement: String,
    /// The numbers it was evaluated on, e.g. `1024 % 96 = 64`.
    pub evaluated: String,
}

impl fmt::Display for Unmet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "breaks `require = [{} == 0]`: {}",
            self.requirement, self.evaluated
        )
    }
}

/// The spaces that apply on `target`: those naming its warp width, else
/// those naming none.
pub fn spaces_for<'k>(k: &'k Kernel, target: &Target) -> Vec<&'k SearchSpace> {
    let width = target.warp_width();
    let named: Vec<&SearchSpace> = k
        .launch
        .search
        .iter()
        .filter(|s| s.warp == Some(width))
        .collect();
    if !named.is_empty() {
        return named;
    }
    k.launch
        .search
        .iter()
        .filter(|s| s.warp.is_none())
        .collect()
}

/// Every configuration of `k`'s search spaces for `target`, each with the
/// space it came from (its index among the kernel's spaces), in a fixed
/// order and without repeats. Empty when the kernel declares no search
/// space for the target.
pub fn configurations(k: &Kernel, target: &Target) -> Vec<(Config, usize)> {
    let mut out: Vec<(Config, usize)> = Vec::new();
    for space in spaces_for(k, target) {
        let index = k
            .launch
            .search
            .iter()
            .position(|s| std::ptr::eq(s, space))
            .unwrap_or(0);
        for specs in spec_points(k, space) {
            let blocks: Vec<Option<Dim3>> = if space.blocks.is_empty() {
                k.launch.blocks.iter().map(|b| Some(*b)).collect()
            } else {
                space.blocks.iter().map(|b| block_of(b, &specs)).collect()
            };
            // A block whose extent names a constant outside u32 cannot be
            // launched at all; it is left out rather than refused, as it
            // names no launch.
            for block in blocks.into_iter().flatten() {
                let c = Config {
                    block,
                    specs: specs.clone(),
                };
                if !out.iter().any(|(seen, _)| *seen == c) {
                    out.push((c, index));
                }
            }
        }
    }
    out
}

/// The constants' values as an odometer, the last constant named fastest.
fn spec_points(k: &Kernel, space: &SearchSpace) -> Vec<Vec<i64>> {
    let mut points = vec![k.default_specs()];
    for (spec, values) in &space.values {
        let mut next = Vec::with_capacity(points.len() * values.len());
        for p in &points {
            for v in values {
                let mut q = p.clone();
                if let Some(slot) = q.get_mut(*spec as usize) {
                    *slot = *v;
                }
                next.push(q);
            }
        }
        points = next;
    }
    points
}

fn block_of(b: &[Operand; 3], specs: &[i64]) -> Option<Dim3> {
    let probe = Config {
        block: Dim3::x(1),
        specs: specs.to_vec(),
    };
    let get = |o: Operand| u32::try_from(o.value(&probe)?).ok();
    Some(Dim3::new(get(b[0])?, get(b[1])?, get(b[2])?))
}

/// The first requirement of `space` that `config` breaks, if any.
pub fn unmet(k: &Kernel, space: &SearchSpace, config: &Config) -> Option<Unmet> {
    for r in &space.require {
        let requirement = format!("{} % {}", r.dividend.spelled(k), r.divisor.spelled(k));
        let (a, b) = (r.dividend.value(config), r.divisor.value(config));
        let evaluated = match (a, b) {
            (Some(a), Some(b)) if b != 0 && a % b == 0 => continue,
            (Some(a), Some(0)) => format!("{a} % 0 is undefined"),
            (Some(a), Some(b)) => format!("{a} % {b} = {}", a % b),
            _ => "a value outside u32".into(),
        };
        return Some(Unmet {
            requirement,
            evaluated,
        });
    }
    None
}

/// `k` specialized to `config`: the constants' defaults become the
/// configuration's values and the contract becomes the one block the
/// configuration names, so every tool that reads defaults and contracts
/// (the analysis, the simulator, the emitters, a backend's gate) sees
/// exactly this configuration. The search spaces are dropped: a
/// specialization is a point, not a space.
pub fn specialize(k: &Kernel, config: &Config) -> Kernel {
    let mut s = k.clone();
    for (c, v) in s.specs.iter_mut().zip(&config.specs) {
        c.default = *v;
    }
    s.launch.blocks = vec![config.block];
    s.launch.grids = Vec::new();
    s.launch.search = Vec::new();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{LaunchSpace, Scalar, SourceText, SpecConst};

    fn kernel(search: Vec<SearchSpace>) -> Kernel {
        Kernel {
            name: "k".into(),
            params: Vec::new(),
            specs: vec![
                SpecConst {
                    name: "TILE".into(),
                    ty: Scalar::U32,
                    default: 16,
                },
                SpecConst {
                    name: "UNROLL".into(),
                    ty: Scalar::U32,
                    default: 1,
                },
            ],
            locals: Vec::new(),
            shared: Vec::new(),
            arrays: Vec::new(),
            body: Vec::new(),
            launch: LaunchSpace {
                blocks: vec![Dim3::x(64)],
                grids: Vec::new(),
                target: None,
                search,
            },
            spans: Vec::new(),
            snippets: Vec::new(),
            source: SourceText::default(),
            inlined: Vec::new(),
            type_args: Vec::new(),
        }
    }

    fn lit(v: u32) -> [Operand; 3] {
        [Operand::Lit(v), Operand::Lit(1), Operand::Lit(1)]
    }

    #[test]
    fn the_odometer_runs_the_last_constant_fastest_then_the_blocks() {
        let k = kernel(vec![SearchSpace {
            blocks: vec![lit(32), lit(64)],
            values: vec![(0, vec![8, 16]), (1, vec![1, 2])],
            ..SearchSpace::default()
        }]);
        let labels: Vec<String> = configurations(&k, &Target::generic())
            .iter()
            .map(|(c, _)| c.label(&k))
            .collect();
        assert_eq!(
            labels,
            [
                "block 32, TILE=8, UNROLL=1",
                "block 64, TILE=8, UNROLL=1",
                "block 32, TILE=8, UNROLL=2",
                "block 64, TILE=8, UNROLL=2",
                "block 32, TILE=16, UNROLL=1",
                "block 64, TILE=16, UNROLL=1",
                "block 32, TILE=16, UNROLL=2",
                "block 64, TILE=16, UNROLL=2",
            ]
        );
        // Deterministic: the same list every time.
        assert_eq!(
            configurations(&k, &Target::generic()),
            configurations(&k, &Target::generic())
        );
    }

    #[test]
    fn blocks_may_name_a_constant_and_repeats_are_dropped() {
        let k = kernel(vec![
            SearchSpace {
                blocks: vec![[Operand::Spec(0), Operand::Spec(0), Operand::Lit(1)]],
                values: vec![(0, vec![8, 16])],
                ..SearchSpace::default()
            },
            SearchSpace {
                blocks: vec![[Operand::Lit(16), Operand::Lit(16), Operand::Lit(1)]],
                ..SearchSpace::default()
            },
        ]);
        let configs = configurations(&k, &Target::generic());
        assert_eq!(configs.len(), 2);
        assert_eq!(configs[0].0.block, Dim3::new(8, 8, 1));
        assert_eq!(configs[1].0.block, Dim3::new(16, 16, 1));
        assert_eq!(configs[1].0.specs, vec![16, 1]);
    }

    #[test]
    fn a_space_naming_the_warp_width_replaces_the_general_one() {
        let k = kernel(vec![
            SearchSpace {
                blocks: vec![lit(32), lit(64)],
                ..SearchSpace::default()
            },
            SearchSpace {
                warp: Some(8),
                blocks: vec![lit(8)],
                ..SearchSpace::default()
            },
        ]);
        assert_eq!(configurations(&k, &Target::generic()).len(), 2);
        let lavapipe = configurations(&k, &Target::lavapipe());
        assert_eq!(lavapipe.len(), 1);
        assert_eq!(lavapipe[0].1, 1);
    }

    #[test]
    fn requirements_name_what_they_evaluated() {
        let space = SearchSpace {
            require: vec![Divisible {
                dividend: Operand::Spec(0),
                divisor: Operand::Block(Axis::X),
            }],
            ..SearchSpace::default()
        };
        let k = kernel(vec![space.clone()]);
        let ok = Config {
            block: Dim3::x(8),
            specs: vec![16, 1],
        };
        assert_eq!(unmet(&k, &space, &ok), None);
        let bad = Config {
            block: Dim3::x(12),
            specs: vec![16, 1],
        };
        let u = unmet(&k, &space, &bad).unwrap();
        assert_eq!(
            u.to_string(),
            "breaks `require = [TILE % block_x == 0]`: 16 % 12 = 4"
        );
    }

    #[test]
    fn a_specialization_is_one_point() {
        let k = kernel(vec![SearchSpace::default()]);
        let c = Config {
            block: Dim3::x(128),
            specs: vec![32, 4],
        };
        let s = specialize(&k, &c);
        assert_eq!(s.default_specs(), vec![32, 4]);
        assert_eq!(s.launch.blocks, vec![Dim3::x(128)]);
        assert!(s.launch.search.is_empty());
    }
}
