//! The rules checked where they can fire: at a barrier (OXK001: every
//! thread of the block must reach it), at a warp collective (OXK002: every
//! lane its mask names must be there) and at a global store (OXK003: no two
//! threads may write one element without an atomic). A finding is
//! confirmed when the reaching threads are known exactly (a launch-
//! determined guard), and "may" when it depends on data the analysis
//! cannot see.

use crate::ir::*;

use super::affine::Affine;
use super::control::Reach;
use super::values::AbstractValue;
use super::{Analyzer, Finding, LaneMap, Rule, Step, Uniformity};

impl<'k> Analyzer<'k> {
    pub(super) fn barrier(&mut self, ctl: &Reach, span: SpanId) {
        if ctl.uni <= Uniformity::Block {
            return;
        }
        let lanes = ctl.mask.as_ref().map(|m| self.lane_map(m));
        let early = ctl.prov.iter().any(|s| s.text.contains("leave early"));
        let help = if early {
            "do not leave before the barrier: guard the work instead of returning early, so every thread of the block reaches `sync_threads()`"
        } else {
            "move `sync_threads()` out of the thread-dependent branch or loop, so every thread of the block reaches it"
        };
        let f = Finding {
            rule: Rule::DivergentBarrier,
            message: "block barrier is not reached by every thread of the block".into(),
            span,
            label: format!(
                "barrier under thread-dependent control at block {}",
                self.launch.block
            ),
            notes: ctl.prov.to_vec(),
            extra: Vec::new(),
            help: help.into(),
            confirmed: lanes.is_some(),
            lanes,
            launch: self.launch,
            target: self.target,
        };
        self.find(f);
    }

    #[allow(clippy::needless_range_loop)]
    pub(super) fn collective(
        &mut self,
        name: &str,
        mask: &AbstractValue,
        ctl: &Reach,
        span: SpanId,
    ) {
        let Some(mv) = &mask.conc else { return };
        let bt = self.block_threads;
        let ws = self.warp_width;
        let mut rows = Vec::new();
        let mut bad = false;
        let mut absent = false;
        for w in 0..bt.div_ceil(ws) {
            let lanes = (bt - w * ws).min(ws);
            let named = match mv[w * ws] {
                Value::U32(m) => m,
                Value::I32(m) => m as u32,
                _ => return,
            };
            let active: Vec<bool> = (0..lanes)
                .map(|l| ctl.mask.as_ref().is_none_or(|m| m[w * ws + l]))
                .collect();
            if !active.iter().any(|a| *a) {
                rows.push("-".repeat(ws));
                continue;
            }
            let mut row = String::new();
            // Mask bit `l` names lane `l` of the warp. Bits at or above the
            // warp width name no lane (so a full mask means "the whole warp"
            // on every target); the mask is 32 bits, so on a 64-wide target
            // lanes 32..63 cannot be named at all.
            for l in 0..ws {
                let n = l < 32 && named & (1u32 << l) != 0;
                let present = l < lanes && active[l];
                if n && l >= lanes {
                    absent = true;
                    bad = true;
                }
                if n && l < lanes && !active[l] {
                    bad = true;
                }
                row.push(match (n, present) {
                    (true, true) => 'W',
                    (true, false) => '.',
                    (false, _) => '-',
                });
            }
            rows.push(row);
        }
        let unknown = ctl.mask.is_none() && ctl.uni == Uniformity::Divergent;
        if !bad && !unknown {
            return;
        }
        let (message, help) = if absent {
            (
                format!("`{name}` names lanes that do not exist in this launch"),
                "build the mask from the lanes present (e.g. `ballot_sync` of a predicate) or launch whole warps",
            )
        } else {
            (
                format!("`{name}` is not reached by every lane its mask names"),
                "reach the collective with every lane of its mask (hoist it out of the branch), or pass the mask of the lanes that do reach it",
            )
        };
        let f = Finding {
            rule: Rule::NonConvergentCollective,
            message,
            span,
            label: if absent {
                format!(
                    "its mask reaches past the {} threads of a {} block",
                    self.block_threads, self.launch.block
                )
            } else {
                format!(
                    "warp collective under divergent control at block {}",
                    self.launch.block
                )
            },
            notes: ctl.prov.to_vec(),
            extra: Vec::new(),
            help: help.into(),
            lanes: if bad {
                Some(LaneMap { warps: rows })
            } else {
                None
            },
            confirmed: bad,
            launch: self.launch,
            target: self.target,
        };
        self.find(f);
    }

    pub(super) fn write_race(&mut self, mem: Mem, idx: &AbstractValue, ctl: &Reach, span: SpanId) {
        // An index of the block-term form whose writers' per-thread parts
        // differ, in blocks that cannot reach each other's elements, is no
        // race whoever of the possible writers stores.
        let form = match &idx.conc {
            Some(c) => Affine::known(c),
            None => idx.affine.clone(),
        };
        let writers: Vec<usize> = (0..self.block_threads).filter(|&t| ctl.bound[t]).collect();
        if writers.is_empty() {
            return;
        }
        if let Some(f) = &form {
            if f.distinct_for(&writers, self.launch.grid.count()) {
                return;
            }
        }
        // An index that does not tell blocks apart (no block term, or one
        // that repeats) sends every block to the same elements.
        let blocks = self.launch.grid.count();
        let block_blind = blocks > 1
            && form
                .as_ref()
                .is_some_and(|f| f.block.is_none_or(|b| !b.injective));
        let Some(m) = &ctl.mask else {
            // Which threads store depends on data: a thread-independent index
            // is still a race unless the data lets at most one thread
            // through, and so is one that is the same in every block.
            if idx.uni <= Uniformity::Warp || block_blind {
                let name = self.k.mem_name(mem).to_string();
                let mut notes = idx.prov.to_vec();
                notes.extend(ctl.prov.iter().cloned());
                let text = if idx.uni <= Uniformity::Warp {
                    format!(
                        "the index does not vary with the thread, so every thread that passes the data-dependent guard writes the same element of `{name}`"
                    )
                } else {
                    format!(
                        "the index does not depend on the block, so the threads of all {blocks} blocks that pass the data-dependent guard write the same elements of `{name}`"
                    )
                };
                notes.push(Step { span, text });
                let f = Finding {
                    rule: Rule::GlobalWriteRace,
                    message: format!("several threads may write one element of `{name}` without an atomic"),
                    span,
                    label: "possibly racing store".into(),
                    notes,
                    extra: Vec::new(),
                    help: "give each thread its own element, let one chosen thread write, or combine with `atomic_add`".into(),
                    lanes: None,
                    confirmed: false,
                    launch: self.launch,
                    target: self.target,
                };
                self.find(f);
            }
            return;
        };
        let active: Vec<usize> = (0..self.block_threads).filter(|&t| m[t]).collect();
        if active.is_empty() {
            return;
        }
        let name = self.k.mem_name(mem).to_string();
        let mut why = None;
        if let Some(v) = &idx.conc {
            let mut seen = std::collections::HashMap::new();
            for &t in &active {
                if let Some(&u) = seen.get(&v[t].to_bits()) {
                    why = Some(format!(
                        "threads {u} and {t} of every block both write `{name}[{}]`",
                        v[t]
                    ));
                    break;
                }
                seen.insert(v[t].to_bits(), t);
            }
            if why.is_none() && blocks > 1 {
                why = Some(format!(
                    "the index does not depend on the block, so all {blocks} blocks write the same elements of `{name}`"
                ));
            }
        } else {
            let per_warp = active.chunks(1).fold(
                vec![0usize; self.block_threads.div_ceil(self.warp_width)],
                |mut acc, t| {
                    acc[t[0] / self.warp_width] += 1;
                    acc
                },
            );
            why = match idx.uni {
                Uniformity::Divergent => None,
                Uniformity::Warp if per_warp.iter().any(|&c| c > 1) => Some(format!(
                    "the index is the same for every lane of a warp, and several lanes write `{name}`"
                )),
                Uniformity::Block if active.len() > 1 => Some(format!(
                    "the index is the same for all {} threads of a block that write `{name}`",
                    active.len()
                )),
                Uniformity::Grid if active.len() > 1 || blocks > 1 => Some(format!(
                    "the index is the same for every thread of the grid, and {} threads in each of {blocks} blocks write `{name}`",
                    active.len()
                )),
                _ => None,
            };
        }
        let Some(why) = why else { return };
        let mut notes = idx.prov.to_vec();
        notes.push(Step { span, text: why });
        let f = Finding {
            rule: Rule::GlobalWriteRace,
            message: format!("several threads write one element of `{name}` without an atomic"),
            span,
            label: "racing store".into(),
            notes,
            extra: Vec::new(),
            help: "give each thread its own element (index by the global thread id), guard the store so one thread writes, or combine with `atomic_add`".into(),
            lanes: None,
            confirmed: true,
            launch: self.launch,
            target: self.target,
        };
        self.find(f);
    }
}
