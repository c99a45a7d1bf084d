//! Warp collectives: shuffles and votes. A collective's mask must name
//! exactly the lanes executing it (else the run stops with the lane map);
//! a shuffle whose source lane is inside the warp but outside the mask
//! yields an undefined value in the reading lane (`undefined.rs`).

use super::*;

impl Block<'_> {
    /// Checks a collective's mask: every named lane must be executing it.
    /// Mask bits at or above the warp width name no lane and are dropped, so
    /// a full mask means "the whole warp" on every target (the analysis reads
    /// masks the same way).
    pub(super) fn collective_mask(
        &self,
        wi: usize,
        mask: Reg,
        name: &str,
        span: SpanId,
    ) -> Result<u32, Box<Report>> {
        let w = &self.warps[wi];
        let first = w.active.trailing_zeros() as usize;
        let m = w.regs[mask as usize][first] as u32 & low_lanes(self.width);
        if m & !w.active != 0 || w.active & !m != 0 {
            let lanes = (0..self.width as usize)
                .map(|l| {
                    let bit = 1u32 << l;
                    match (m & bit != 0, w.active & bit != 0) {
                        (true, true) => 'W',
                        (true, false) => '.',
                        (false, true) => '!',
                        (false, false) => '-',
                    }
                })
                .collect();
            return Err(self.report(
                ReportKind::Collective {
                    name: name.to_string(),
                    lanes,
                },
                span,
                wi,
            ));
        }
        Ok(m)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn shuffle(
        &mut self,
        wi: usize,
        d: Reg,
        kind: ShuffleKind,
        mask: Reg,
        v: Reg,
        arg: Reg,
        span: SpanId,
    ) -> Result<(), Box<Report>> {
        if self.warps[wi].active == 0 {
            return Ok(());
        }
        let m = self.collective_mask(wi, mask, kind.name(), span)?;
        self.defined(wi, mask, m, Use::Mask(kind.name()), span)?;
        // Lane arithmetic wraps within the target's warp, as CUDA's
        // `__shfl_*_sync(.., width)` and Vulkan's subgroup shuffles do; a
        // `down`/`up` past the warp's edge reads the caller's own value, so
        // only a source inside the warp can lie outside the mask.
        let width = self.width as i64;
        let nregs = self.p.nregs;
        let w = &mut self.warps[wi];
        let vals = w.regs[v as usize];
        let args = w.regs[arg as usize];
        let mut out = w.regs[d as usize];
        // Lanes whose result is undefined, each with its origin.
        let (in_undef, arg_undef) = (w.undef.of(v), w.undef.of(arg));
        let mut undef = 0u32;
        let mut from = [0u32; W];
        // Lanes that read outside the mask, and the lane each read.
        let mut origins: Vec<(usize, usize)> = Vec::new();
        for l in lanes_of(w.active) {
            let a = args[l] as u32 as i64;
            let src = match kind {
                ShuffleKind::Xor => (l as i64 ^ a) & (width - 1),
                ShuffleKind::Down => {
                    if l as i64 + a < width {
                        l as i64 + a
                    } else {
                        l as i64
                    }
                }
                ShuffleKind::Up => {
                    if l as i64 - a >= 0 {
                        l as i64 - a
                    } else {
                        l as i64
                    }
                }
                ShuffleKind::Idx => a & (width - 1),
            } as usize;
            out[l] = vals[src];
            if m & (1 << src) == 0 {
                // CUDA: an undefined value, not undefined behaviour. The
                // register keeps whatever the absent lane last held.
                undef |= 1 << l;
                origins.push((l, src));
            } else if arg_undef & (1 << l) != 0 {
                // An undefined source lane reads some lane: undefined.
                undef |= 1 << l;
                from[l] = w.undef.origin(arg, l);
            } else if in_undef & (1 << src) != 0 {
                undef |= 1 << l;
                from[l] = w.undef.origin(v, src);
            }
        }
        w.regs[d as usize] = out;
        let active = w.active;
        for (l, src) in origins {
            from[l] = self.origin_index(Origin {
                span,
                name: kind.name(),
                reader: l as u32,
                source: src as u32,
                mask: m,
            });
        }
        self.warps[wi].undef.set(nregs, d, active, undef, &from);
        Ok(())
    }

    pub(super) fn vote(
        &mut self,
        wi: usize,
        d: Reg,
        kind: VoteKind,
        mask: Reg,
        pred: Reg,
        span: SpanId,
    ) -> Result<(), Box<Report>> {
        if self.warps[wi].active == 0 {
            return Ok(());
        }
        let m = self.collective_mask(wi, mask, kind.name(), span)?;
        self.defined(wi, mask, m, Use::Mask(kind.name()), span)?;
        let nregs = self.p.nregs;
        let w = &mut self.warps[wi];
        // Every lane's result depends on every named lane's predicate: one
        // undefined predicate makes the whole result undefined.
        let pred_undef = w.undef.of(pred) & m;
        let mut from = [0u32; W];
        let undef = if pred_undef != 0 {
            from = [w.undef.origin(pred, pred_undef.trailing_zeros() as usize); W];
            w.active
        } else {
            0
        };
        let p = w.regs[pred as usize];
        let mut ballot = 0u32;
        for l in lanes_of(m) {
            if p[l] as u32 != 0 {
                ballot |= 1 << l;
            }
        }
        let r = match kind {
            VoteKind::Ballot => ballot,
            VoteKind::Any => (ballot != 0) as u32,
            VoteKind::All => (ballot == m) as u32,
        };
        let out = &mut w.regs[d as usize];
        for l in lanes_of(w.active) {
            out[l] = r as u64;
        }
        let active = w.active;
        w.undef.set(nregs, d, active, undef, &from);
        Ok(())
    }
}
