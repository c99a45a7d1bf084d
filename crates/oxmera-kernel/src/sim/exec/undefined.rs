//! Undefined values: what a shuffle yields in a lane whose source lane is
//! inside the warp but outside the shuffle's mask (an inactive lane, or a
//! lane past a partial warp's last thread). CUDA defines this as an
//! undefined *value*, not undefined behaviour: a reduction that shuffles
//! down with the full active mask and adds only `if lane + off < width`
//! is correct, although the lanes near the top read nothing meaningful.
//!
//! So the simulator does not stop at such a shuffle. It marks the lane's
//! result undefined — one bit per lane per register — and lets the bit
//! travel with the value: through arithmetic, casts and math (the result is
//! undefined where any operand is), copies into locals (under the active
//! mask, as the value is), and further shuffles and votes (a lane reading
//! an undefined lane, or a vote over an undefined predicate, gets an
//! undefined result). It stops with `sim:undefined` only where an
//! undefined value *matters* — where it would change memory or control:
//!
//! - stored to memory (global or shared), or as an atomic's operand or
//!   compare value;
//! - as the index of a load, a store or an atomic;
//! - as a branch condition (`if`, `&&`/`||`, an `if` value, `match`) or a
//!   loop condition;
//! - as a collective's mask.
//!
//! A divisor that is undefined makes the quotient undefined (no
//! division-by-zero report for that lane); a value never used that way is
//! harmless, which is exactly the guarded reduction above.
//!
//! Cost: until a shuffle first yields an undefined lane, a warp carries no
//! bits at all and every operation pays one predictable test of a flag; the
//! bits and their origins are allocated and propagated only after that.

use super::*;

/// Where an undefined lane came from: a shuffle's reading lane and the
/// lane it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Origin {
    /// The shuffle.
    pub(super) span: SpanId,
    /// Its name (`shfl_down_sync`, ...).
    pub(super) name: &'static str,
    /// The lane whose result is undefined.
    pub(super) reader: u32,
    /// The lane it read, outside the mask.
    pub(super) source: u32,
    /// The shuffle's mask (the lanes executing it).
    pub(super) mask: u32,
}

/// One warp's undefined lanes, per register.
#[derive(Debug, Default)]
pub(super) struct Undef {
    /// True once some register of the warp has held an undefined lane in
    /// this block; only then are the bits kept.
    pub(super) live: bool,
    /// Per register, the lanes holding an undefined value.
    lanes: Vec<u32>,
    /// Per register and lane, the index of the lane's [`Origin`] in the
    /// block's list (meaningful where the lane's bit is set).
    from: Vec<[u32; W]>,
    /// The undefined elements of the lanes' local (register) arrays, by
    /// (array, element · 32 + lane), with their origins: a register array
    /// is the thread's own, like a local, so an undefined value stored
    /// there travels on until it is used. Sparse: only undefined elements.
    arrays: HashMap<(u32, usize), u32>,
}

impl Undef {
    /// Forgets every bit (a new block).
    pub(super) fn reset(&mut self) {
        if self.live {
            self.lanes.fill(0);
            self.arrays.clear();
            self.live = false;
        }
    }

    fn wake(&mut self, nregs: usize) {
        if !self.live {
            self.live = true;
            self.lanes.resize(nregs, 0);
            self.from.resize(nregs, [0; W]);
        }
    }

    /// The undefined lanes of a register (none before the warp's first).
    #[inline]
    pub(super) fn of(&self, r: Reg) -> u32 {
        if self.live { self.lanes[r as usize] } else { 0 }
    }

    /// The register now holds defined values in every lane.
    #[inline]
    pub(super) fn define(&mut self, d: Reg) {
        if self.live {
            self.lanes[d as usize] = 0;
        }
    }

    /// `d` is computed lane by lane from `srcs`: a lane is undefined where
    /// any operand's is, and takes the first such operand's origin.
    pub(super) fn join(&mut self, d: Reg, srcs: &[Reg]) {
        let mut m = 0;
        for &s in srcs {
            m |= self.lanes[s as usize];
        }
        if m != 0 {
            let mut from = [0u32; W];
            for l in lanes_of(m) {
                let s = srcs
                    .iter()
                    .find(|&&s| self.lanes[s as usize] & (1 << l) != 0)
                    .expect("a lane's bit comes from an operand");
                from[l] = self.from[*s as usize][l];
            }
            let out = &mut self.from[d as usize];
            for l in lanes_of(m) {
                out[l] = from[l];
            }
        }
        self.lanes[d as usize] = m;
    }

    /// `d = s` in the lanes of `active` (a copy into a local): those lanes
    /// take `s`'s bits, the others keep `d`'s.
    pub(super) fn copy(&mut self, d: Reg, s: Reg, active: u32) {
        let moved = self.lanes[s as usize] & active;
        for l in lanes_of(moved) {
            self.from[d as usize][l] = self.from[s as usize][l];
        }
        self.lanes[d as usize] = (self.lanes[d as usize] & !active) | moved;
    }

    /// Sets a register's undefined lanes among `active` and their origins,
    /// as a shuffle or a vote computed them (the other lanes keep theirs).
    pub(super) fn set(&mut self, nregs: usize, d: Reg, active: u32, lanes: u32, from: &[u32; W]) {
        if lanes == 0 && !self.live {
            return;
        }
        self.wake(nregs);
        self.lanes[d as usize] = (self.lanes[d as usize] & !active) | lanes;
        let out = &mut self.from[d as usize];
        for l in lanes_of(lanes) {
            out[l] = from[l];
        }
    }

    /// The origin index of one undefined lane of a register.
    #[inline]
    pub(super) fn origin(&self, r: Reg, l: usize) -> u32 {
        self.from[r as usize][l]
    }
}

/// How an undefined value was used, for the report.
pub(super) enum Use<'a> {
    /// Stored to an element (the buffer or array, the index).
    Stored(&'a str, i64),
    /// An atomic's operand or compare value, on an element.
    AtomicOperand(&'a str, i64),
    /// The index of an access to the buffer or array.
    Index(&'a str),
    /// A branch condition.
    Branch,
    /// A loop condition.
    Loop,
    /// A collective's mask.
    Mask(&'static str),
}

impl Use<'_> {
    fn text(&self) -> String {
        match self {
            Use::Stored(m, i) => format!("stored to `{m}[{i}]`"),
            Use::AtomicOperand(m, i) => format!("as an atomic's operand on `{m}[{i}]`"),
            Use::Index(m) => format!("as an index into `{m}`"),
            Use::Branch => "as a branch condition".into(),
            Use::Loop => "as a loop condition".into(),
            Use::Mask(n) => format!("as the mask of `{n}`"),
        }
    }
}

impl Block<'_> {
    /// The index of an origin in the block's list, added once: a shuffle in
    /// a loop yields the same origins every iteration.
    pub(super) fn origin_index(&mut self, o: Origin) -> u32 {
        let next = self.undef_origins.len() as u32;
        let i = *self.undef_index.entry(o).or_insert(next);
        if i == next {
            self.undef_origins.push(o);
        }
        i
    }

    /// Stops the run if register `r` is undefined in a lane of `lanes` where
    /// it is used as `how` (at `span`): the first such lane is the witness.
    #[inline]
    pub(super) fn defined(
        &self,
        wi: usize,
        r: Reg,
        lanes: u32,
        how: Use<'static>,
        span: SpanId,
    ) -> Result<(), Box<Report>> {
        let bad = self.warps[wi].undef.of(r) & lanes;
        if bad == 0 {
            return Ok(());
        }
        let l = bad.trailing_zeros() as usize;
        Err(self.undefined_use(wi, r, l, how, span))
    }

    /// The report for lane `l` of warp `wi` using register `r`'s undefined
    /// value as `how`.
    pub(super) fn undefined_use(
        &self,
        wi: usize,
        r: Reg,
        l: usize,
        how: Use<'_>,
        span: SpanId,
    ) -> Box<Report> {
        let w = &self.warps[wi];
        let o = self.undef_origins[w.undef.origin(r, l) as usize];
        let kind = ReportKind::Undefined {
            lane: l as u32,
            thread: w.base + l as u32,
            used: how.text(),
            shuffle: o.name,
            origin: o.span,
            reader: w.base + o.reader,
            source: o.source,
            mask: o.mask,
        };
        self.report(kind, span, wi)
    }

    /// A memory operation's index and value must be defined in every lane
    /// that performs it; the element a value would be stored to is named.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn defined_access(
        &self,
        wi: usize,
        mem: Mem,
        idx: Reg,
        vals: &[Reg],
        signed: bool,
        atomic: bool,
        span: SpanId,
    ) -> Result<(), Box<Report>> {
        let w = &self.warps[wi];
        if !w.undef.live {
            return Ok(());
        }
        let name = self.p.kernel.mem_name(mem);
        let bad = w.undef.of(idx) & w.active;
        if bad != 0 {
            let l = bad.trailing_zeros() as usize;
            return Err(self.undefined_use(wi, idx, l, Use::Index(name), span));
        }
        // A value stored to a register array stays the thread's own: it is
        // tracked there (`local_stored`), not reported.
        if matches!(mem, Mem::Local(_)) {
            return Ok(());
        }
        for &v in vals {
            let bad = w.undef.of(v) & w.active;
            if bad != 0 {
                let l = bad.trailing_zeros() as usize;
                let i = self.index_of(wi, idx, l, signed);
                let how = if atomic {
                    Use::AtomicOperand(name, i)
                } else {
                    Use::Stored(name, i)
                };
                return Err(self.undefined_use(wi, v, l, how, span));
            }
        }
        Ok(())
    }
}

impl Block<'_> {
    /// After a store of register `v` to local array `a`: its elements take
    /// the stored lanes' bits.
    pub(super) fn local_stored(&mut self, wi: usize, a: u32, idx: Reg, v: Reg, signed: bool) {
        let w = &self.warps[wi];
        let (active, bad) = (w.active, w.undef.of(v));
        let slots: Vec<(usize, usize)> = lanes_of(active)
            .map(|l| (l, self.index_of(wi, idx, l, signed) as usize * W + l))
            .collect();
        let u = &mut self.warps[wi].undef;
        for (l, slot) in slots {
            if bad & (1 << l) != 0 {
                let o = u.origin(v, l);
                u.arrays.insert((a, slot), o);
            } else if !u.arrays.is_empty() {
                u.arrays.remove(&(a, slot));
            }
        }
    }

    /// After a load from local array `a` into `d`: its lanes take the
    /// loaded elements' bits.
    pub(super) fn local_loaded(&mut self, wi: usize, a: u32, idx: Reg, d: Reg, signed: bool) {
        let w = &self.warps[wi];
        let active = w.active;
        let mut lanes = 0u32;
        let mut from = [0u32; W];
        for l in lanes_of(active) {
            let slot = self.index_of(wi, idx, l, signed) as usize * W + l;
            if let Some(&o) = w.undef.arrays.get(&(a, slot)) {
                lanes |= 1 << l;
                from[l] = o;
            }
        }
        let nregs = self.p.nregs;
        self.warps[wi].undef.set(nregs, d, active, lanes, &from);
    }
}
