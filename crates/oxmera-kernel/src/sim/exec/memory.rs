//! Memory operations of the warp engine: loads, stores and atomics on
//! global buffers, shared arrays and the lanes' own local arrays, each
//! bounds-checked per lane (an
//! out-of-bounds access stops the run with the lane and the index), and the
//! shared-memory race tracker that remembers, per element and barrier
//! epoch, who wrote, who read and who updated it atomically: two plain
//! accesses by different threads race when one writes, and a plain access
//! races with another thread's atomic (a plain initialisation followed by
//! `atomic_add`s with no barrier between is the classic); atomics among
//! themselves do not.

use super::*;

/// How a thread touches a shared element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    Read,
    Write,
    Atomic,
}

impl Block<'_> {
    #[inline]
    pub(super) fn index_of(&self, wi: usize, reg: Reg, l: usize, signed: bool) -> i64 {
        let v = self.warps[wi].regs[reg as usize][l] as u32;
        if signed { v as i32 as i64 } else { v as i64 }
    }

    #[inline]
    pub(super) fn mem_len(&self, mem: Mem, args: &[Arg]) -> usize {
        match mem {
            Mem::Global(p) => args[p as usize].buffer().map(|b| b.len()).unwrap_or(0),
            Mem::Shared(s) => self.shared[s as usize].len(),
            Mem::Local(a) => self.p.array_len[a as usize],
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn oob(
        &self,
        wi: usize,
        l: usize,
        index: i64,
        mem: Mem,
        len: usize,
        write: bool,
        span: SpanId,
    ) -> Box<Report> {
        let w = &self.warps[wi];
        let buffer = self.p.kernel.mem_name(mem).to_string();
        let kind = ReportKind::OutOfBounds {
            lane: l as u32,
            thread: w.base + l as u32,
            index,
            buffer,
            len,
            write,
            row_len: self.p.kernel.row_len(mem, &self.p.specs),
        };
        self.report(kind, span, wi)
    }

    #[inline]
    fn track(
        &mut self,
        wi: usize,
        s: usize,
        i: usize,
        l: usize,
        how: Touch,
        span: SpanId,
    ) -> Result<(), Box<Report>> {
        let write = how != Touch::Read;
        if !self.opts.detect_races {
            return Ok(());
        }
        let t = self.warps[wi].base + l as u32 + 1;
        let epoch = self.epoch;
        let a = &mut self.access[s][i];
        if a.epoch != epoch {
            *a = Access {
                epoch,
                ..Access::default()
            };
        }
        // Another thread's atomic on the element clashes with a plain
        // access; an atomic clashes with other threads' plain ones.
        let atomic_by_other = a.atomic != 0 && (a.atomic != t || a.many_atomics);
        // An atomic checks against plain accesses as a write does, and
        // never against other atomics.
        let clash = if how != Touch::Atomic && atomic_by_other {
            Some((if a.atomic != t { a.atomic } else { t }, true))
        } else if write {
            if a.writer != 0 && a.writer != t {
                Some((a.writer, true))
            } else if a.reader != 0 && (a.reader != t || a.many_readers) {
                Some((
                    if a.reader != t {
                        a.reader
                    } else {
                        a.other_reader
                    },
                    false,
                ))
            } else {
                None
            }
        } else if a.writer != 0 && a.writer != t {
            Some((a.writer, true))
        } else {
            None
        };
        if let Some((other, other_write)) = clash {
            let array = self.p.kernel.shared[s].name.clone();
            let kind = ReportKind::SharedRace {
                array,
                row_len: self.p.kernel.row_len(Mem::Shared(s as u32), &self.p.specs),
                index: i,
                first: other - 1,
                first_write: other_write,
                second: t - 1,
                second_write: write,
            };
            return Err(self.report(kind, span, wi));
        }
        if how == Touch::Atomic {
            if a.atomic == 0 {
                a.atomic = t;
            } else if a.atomic != t {
                a.many_atomics = true;
            }
        } else if write {
            a.writer = t;
        } else if a.reader == 0 {
            a.reader = t;
        } else if a.reader != t {
            if !a.many_readers {
                a.other_reader = t;
            }
            a.many_readers = true;
        }
        Ok(())
    }

    /// Records a global access by lane `l` and reports a race with another
    /// block (see [`GlobalAccess`]).
    #[inline]
    fn track_global(
        &mut self,
        wi: usize,
        p: usize,
        i: usize,
        l: usize,
        how: Touch,
        span: SpanId,
    ) -> Result<(), Box<Report>> {
        let Some(a) = self.global.get_mut(p).and_then(|v| v.get_mut(i)) else {
            return Ok(());
        };
        let block_threads = self.launch.block_threads();
        let thread = self.warps[wi].base + l as u32;
        let me = self.first_thread + thread + 1;
        let block_of = |who: u32| (who - 1) / block_threads;
        let mine = block_of(me);
        let other = |who: u32| who != 0 && block_of(who) != mine;
        // Of two records from different blocks, one is another block's.
        let reader = if other(a.reader) {
            a.reader
        } else {
            a.reader_elsewhere
        };
        let atomic = if other(a.atomic) {
            a.atomic
        } else {
            a.atomic_elsewhere
        };
        let clash = match how {
            Touch::Write if other(a.writer) => Some((a.writer, "writes")),
            Touch::Write | Touch::Atomic if other(reader) => Some((reader, "reads")),
            Touch::Write | Touch::Read if other(atomic) => Some((atomic, "updates atomically")),
            Touch::Read | Touch::Atomic if other(a.writer) => Some((a.writer, "writes")),
            _ => None,
        };
        let note = |first: &mut u32, elsewhere: &mut u32| {
            if *first == 0 {
                *first = me;
            } else if block_of(*first) != mine && *elsewhere == 0 {
                *elsewhere = me;
            }
        };
        match how {
            Touch::Write => a.writer = me,
            Touch::Read => note(&mut a.reader, &mut a.reader_elsewhere),
            Touch::Atomic => note(&mut a.atomic, &mut a.atomic_elsewhere),
        }
        let Some((first, first_how)) = clash else {
            return Ok(());
        };
        let g = self.launch.grid;
        let lin = block_of(first);
        let first_block = Dim3::new(lin % g.x, (lin / g.x) % g.y, lin / (g.x * g.y));
        let second_how = match how {
            Touch::Write => "writes",
            Touch::Read => "reads",
            Touch::Atomic => "updates atomically",
        };
        let kind = ReportKind::GlobalRace {
            buffer: self.p.kernel.params[p].name.clone(),
            index: i,
            first: (first_block, (first - 1) % block_threads),
            first_how,
            second: thread,
            second_how,
        };
        Err(self.report(kind, span, wi))
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn load(
        &mut self,
        wi: usize,
        d: Reg,
        mem: Mem,
        idx: Reg,
        signed: bool,
        span: SpanId,
        args: &[Arg],
    ) -> Result<(), Box<Report>> {
        let len = self.mem_len(mem, args);
        let active = self.warps[wi].active;
        let mut out = self.warps[wi].regs[d as usize];
        for l in lanes_of(active) {
            let i = self.index_of(wi, idx, l, signed);
            if i < 0 || i as usize >= len {
                return Err(self.oob(wi, l, i, mem, len, false, span));
            }
            let i = i as usize;
            out[l] = match mem {
                Mem::Global(p) => {
                    self.track_global(wi, p as usize, i, l, Touch::Read, span)?;
                    match &args[p as usize] {
                        Arg::Buffer(b) => b.bits(i),
                        Arg::Scalar(_) => unreachable!("checked arguments"),
                    }
                }
                Mem::Shared(s) => {
                    self.track(wi, s as usize, i, l, Touch::Read, span)?;
                    self.shared[s as usize][i]
                }
                // The lane's own element: nothing to race with.
                Mem::Local(a) => self.warps[wi].arrays[a as usize][i * W + l],
            };
        }
        self.warps[wi].regs[d as usize] = out;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn store(
        &mut self,
        wi: usize,
        mem: Mem,
        idx: Reg,
        v: Reg,
        signed: bool,
        span: SpanId,
        args: &mut [Arg],
    ) -> Result<(), Box<Report>> {
        let len = self.mem_len(mem, args);
        let active = self.warps[wi].active;
        let vals = self.warps[wi].regs[v as usize];
        for l in lanes_of(active) {
            let i = self.index_of(wi, idx, l, signed);
            if i < 0 || i as usize >= len {
                return Err(self.oob(wi, l, i, mem, len, true, span));
            }
            let i = i as usize;
            match mem {
                Mem::Global(p) => {
                    self.track_global(wi, p as usize, i, l, Touch::Write, span)?;
                    match &mut args[p as usize] {
                        Arg::Buffer(b) => b.set_bits(i, vals[l]),
                        Arg::Scalar(_) => unreachable!("checked arguments"),
                    }
                }
                Mem::Shared(s) => {
                    self.track(wi, s as usize, i, l, Touch::Write, span)?;
                    self.shared[s as usize][i] = vals[l];
                }
                Mem::Local(a) => self.warps[wi].arrays[a as usize][i * W + l] = vals[l],
            }
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    #[inline]
    pub(super) fn atomic(
        &mut self,
        wi: usize,
        a: (Reg, AtomicOp, Scalar, Mem, Reg, Reg, Reg, bool, SpanId),
        args: &mut [Arg],
    ) -> Result<(), Box<Report>> {
        let (d, op, ty, mem, idx, v, cmp, signed, span) = a;
        let len = self.mem_len(mem, args);
        let active = self.warps[wi].active;
        let vals = self.warps[wi].regs[v as usize];
        let cmps = self.warps[wi].regs[cmp as usize];
        let mut out = self.warps[wi].regs[d as usize];
        // Lanes apply their updates one after another, in lane order.
        for l in lanes_of(active) {
            let i = self.index_of(wi, idx, l, signed);
            if i < 0 || i as usize >= len {
                return Err(self.oob(wi, l, i, mem, len, true, span));
            }
            let i = i as usize;
            let old = match mem {
                Mem::Global(p) => {
                    self.track_global(wi, p as usize, i, l, Touch::Atomic, span)?;
                    match &args[p as usize] {
                        Arg::Buffer(b) => b.bits(i),
                        Arg::Scalar(_) => unreachable!("checked arguments"),
                    }
                }
                Mem::Shared(s) => {
                    self.track(wi, s as usize, i, l, Touch::Atomic, span)?;
                    self.shared[s as usize][i]
                }
                // The validator refuses atomics on local arrays; on the
                // lane's own element one would still be exact.
                Mem::Local(a) => self.warps[wi].arrays[a as usize][i * W + l],
            };
            let new = atomic_update(op, ty, old, vals[l], cmps[l]);
            match mem {
                Mem::Global(p) => match &mut args[p as usize] {
                    Arg::Buffer(b) => b.set_bits(i, new),
                    Arg::Scalar(_) => unreachable!("checked arguments"),
                },
                Mem::Shared(s) => self.shared[s as usize][i] = new,
                Mem::Local(a) => self.warps[wi].arrays[a as usize][i * W + l] = new,
            }
            out[l] = old;
        }
        self.warps[wi].regs[d as usize] = out;
        Ok(())
    }
}

/// The value an atomic leaves in an element of type `ty` holding `old`,
/// given the operand `x` and, for `atomic_cas`, the expected `cmp` (all as
/// bit patterns): the operators of [`crate::eval`], so `add` wraps on
/// integers and `min`/`max` on floats follow `f32::min`/`f64::min`.
fn atomic_update(op: AtomicOp, ty: Scalar, old: u64, x: u64, cmp: u64) -> u64 {
    let (a, b) = (Value::from_bits(ty, old), Value::from_bits(ty, x));
    let apply = |r: Result<Value, EvalError>| r.map_or(old, Value::to_bits);
    match op {
        AtomicOp::Add => apply(eval::binary(crate::ir::BinOp::Add, a, b)),
        AtomicOp::Sub => apply(eval::binary(crate::ir::BinOp::Sub, a, b)),
        AtomicOp::And => old & x,
        AtomicOp::Or => old | x,
        AtomicOp::Xor => old ^ x,
        // CUDA's atomicInc, on u32 only (the validator's rule).
        AtomicOp::Inc => {
            if old >= x {
                0
            } else {
                old + 1
            }
        }
        AtomicOp::Min => apply(eval::math(crate::ir::MathFn::Min, &[a, b])),
        AtomicOp::Max => apply(eval::math(crate::ir::MathFn::Max, &[a, b])),
        AtomicOp::Exch => x,
        AtomicOp::Cas => {
            if old == cmp {
                x
            } else {
                old
            }
        }
    }
}
