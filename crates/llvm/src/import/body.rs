//! Lowering one LLVM function body to a Gyre function.
//!
//! One forward pass over the body's tokens emits Gyre instructions directly; what needs
//! the whole body is recorded and fixed up afterwards, each in linear time:
//! - a use of a name defined later gets a detached placeholder value, replaced by the
//!   definition in one rewrite of every instruction at the end;
//! - branches are emitted without arguments; once every `phi` is known, each edge gets
//!   one argument per `phi` of its target (so duplicate edges of a `switch` get theirs);
//! - constants, global addresses and constant expressions are emitted out of line and
//!   placed at the top of the entry block, which dominates every reachable use;
//! - blocks unreachable from the entry are dropped (with the `phi` entries from them).

use super::names::NameTable;
use super::parse::{
    describe, is_type_start, parse_ret_type, parse_type, parse_value, skip_param_attrs, CVal, Cur,
    Operand, PResult,
};
use super::{float_bits, trunc_bits, Callee, MetaItem, ModState, PendingBody};
use crate::lexer::{Tok, Token, Tokens};
use crate::types::{LType, TyId};
use cranelift_entity::packed_option::PackedOption;
use gyre_ir::{
    AddrSpace, AtomicOp, Block, BlockCall, FloatCC, Function, GlobalId, Inst, InstructionData,
    IntCC, IntFlags, JumpTableData, LoopAttrs, MemFlags, MemOrder, MemScope, Opcode, SecondaryMap,
    ShflMode, SlotData, SpecialReg, Type, UnrollHint, Value, ValueDef, ValueList, VoteMode,
};
use rustc_hash::FxHashMap;
use std::borrow::Cow;

#[path = "body_math.rs"]
mod math;

/// A zero of type `t` appended to block `b` (used for stub bodies).
pub(crate) fn zero_in_block(f: &mut Function, b: Block, t: Type) -> Value {
    match t {
        Type::F32 | Type::F64 => f
            .append_inst(b, InstructionData::FloatConst { bits: 0 }, Some(t))
            .1
            .expect("has a result"),
        Type::Ptr(_) => {
            let z = f
                .append_inst(b, InstructionData::IntConst { imm: 0 }, Some(Type::I64))
                .1
                .expect("has a result");
            f.append_inst(
                b,
                InstructionData::Unary {
                    opcode: Opcode::Inttoptr,
                    arg: z,
                },
                Some(t),
            )
            .1
            .expect("has a result")
        }
        _ => f
            .append_inst(b, InstructionData::IntConst { imm: 0 }, Some(t))
            .1
            .expect("has a result"),
    }
}

/// Sign-extend the low `bits` bits of `v`.
fn sext_bits(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let sh = 64 - bits;
        ((v << sh) as i64) >> sh
    }
}

enum NameState {
    Def(Value),
    /// Used before its definition: the placeholder value.
    Fwd(Value),
    /// The `{T, i1}` result of a `cmpxchg`: the old value and the expected one (the
    /// success flag is `old == expected`). Only `extractvalue` may use it.
    CasPair(Value, Value),
    /// A first-class aggregate (struct or array) value: one Gyre value per scalar
    /// leaf, in memory order ([`crate::types::Types::leaves`]), kept in
    /// [`Lower::aggs`] at this index (so a name's entry is 12 bytes, not 32).
    Agg(u32),
    /// Defined by an instruction that was rejected as unsupported: uses get a dummy
    /// value, so the rest of the body is still scanned for unsupported constructs
    /// without errors that are only consequences of the first.
    Failed,
}

/// 12 bytes: one per label of a body (token indices fit in 32 bits, the input does).
struct BlockRef {
    block: Block,
    defined: bool,
    /// First mention, for "undefined label" errors.
    tok: u32,
}

#[derive(Clone)]
struct PhiRec {
    ty: TyId,
    /// For a leaf of an aggregate `phi`: its position among the leaves of `ty`.
    leaf: Option<usize>,
    tok: usize,
    /// Its entries: a range of [`Lower::phi_incoming`] (shared by the leaves of an
    /// aggregate `phi`).
    incoming: (u32, u32),
}

/// 16 bytes: one per branch destination of a body. The predecessor is the block of
/// `inst`.
struct Edge {
    inst: Inst,
    /// Index among the terminator's destinations (`for_each_dest` order).
    idx: u32,
    target: Block,
    tok: u32,
}

/// An index of a GEP: a known constant or a value.
enum Idx {
    Const(i64),
    Var(Value),
}

struct Lower<'a> {
    st: &'a mut ModState,
    c: Cur<'a>,
    f: Function,
    /// Value names: borrowed from the input, owned only for implicit numbers.
    names: NameTable<'a, NameState>,
    /// The leaves of the aggregate values ([`NameState::Agg`]).
    aggs: Vec<Vec<Value>>,
    blocks: NameTable<'a, BlockRef>,
    next_num: u64,
    entry: Block,
    consts: FxHashMap<(Type, u64), Value>,
    gaddrs: FxHashMap<(GlobalId, Type), Value>,
    const_insts: Vec<Inst>,
    forward: Vec<(Value, &'a str, usize)>,
    /// The `phi`s of each block, in order: a range of `phi_recs` (a block's `phi`s are
    /// parsed one after another). Flat vectors: two allocations per `phi` were a tenth
    /// of the allocations of an import.
    phis: SecondaryMap<Block, (u32, u32)>,
    phi_recs: Vec<PhiRec>,
    /// `(predecessor, token of the value)` of every `phi` entry: the value is parsed
    /// again from its tokens when the branch arguments are made (8 bytes an entry
    /// instead of a kept [`Operand`]).
    phi_incoming: Vec<(Block, u32)>,
    edges: Vec<Edge>,
    /// For a function returning an aggregate: its LLVM type and the hidden out-pointer.
    agg_ret: Option<(TyId, Value)>,
    /// The aggregate result of the call being lowered (set by [`Lower::call`]).
    call_agg: Option<Vec<Value>>,
    /// The call being lowered returns `void` (set by [`Lower::call`]).
    call_void: bool,
    /// The `align` attribute of each argument of the call being lowered.
    call_aligns: Vec<u64>,
    /// The unsupported constructs found so far (the body is scanned to its end).
    errors: Vec<crate::ImportError>,
    /// The Gyre block that starts the LLVM block being lowered.
    cur_head: Block,
    /// Where the rest of the LLVM block goes after an instruction that split it (a
    /// variable-length `memcpy` expanded into a loop); taken by [`Lower::run`].
    split_to: Option<Block>,
    /// For an LLVM block that was split: the Gyre block holding its terminator, the
    /// predecessor its successors' `phi` entries name.
    tail_of: FxHashMap<Block, Block>,
    /// Latches whose branch carries `!llvm.loop !N`: the block and the node's number.
    loop_md: Vec<(Block, &'a str)>,
}

/// Lower the body of `pb`.
pub(crate) fn lower_body<'t>(
    st: &mut ModState,
    toks: &'t Tokens<'t>,
    pb: &PendingBody,
) -> Result<Function, Vec<crate::ImportError>> {
    let header = &st.module.functions[pb.id];
    let mut f = Function::new(header.name.clone(), header.kind, header.sig.clone());
    f.convergent = header.convergent;
    f.must_progress = header.must_progress;
    f.any_nan = header.any_nan;
    f.internal = header.internal;
    f.inline = header.inline;
    f.byval = header.byval.clone();
    let entry = f.append_new_block();
    let mut c = Cur::new(toks);
    c.i = pb.open;
    // Sized once: growing tables of millions of names was a tenth of the import.
    let (defs, labels) = toks.count_defs(pb.open);
    let mut l = Lower {
        st,
        c,
        f,
        names: NameTable::new(defs + labels + pb.params.len() + 1),
        aggs: Vec::new(),
        blocks: NameTable::new(defs + labels + pb.params.len() + 1),
        next_num: 0,
        entry,
        consts: FxHashMap::default(),
        gaddrs: FxHashMap::default(),
        const_insts: Vec::new(),
        forward: Vec::new(),
        phis: SecondaryMap::new(),
        phi_recs: Vec::new(),
        phi_incoming: Vec::new(),
        edges: Vec::new(),
        agg_ret: None,
        call_agg: None,
        call_void: false,
        call_aligns: Vec::new(),
        errors: Vec::new(),
        cur_head: entry,
        split_to: None,
        tail_of: FxHashMap::default(),
        loop_md: Vec::new(),
    };
    let r = l.run(pb);
    if !l.errors.is_empty() {
        // Every unsupported construct of the body. An error that ended the scan after
        // one of them is dropped: it may be a consequence (a skipped terminator, ...).
        return Err(l.errors);
    }
    r.map_err(|e| vec![e])?;
    l.loop_attrs();
    Ok(l.f)
}

impl<'a> Lower<'a> {
    fn tok_at(&self, i: usize) -> Token<'a> {
        self.c.at(i)
    }
    fn perr(&self, i: usize, msg: impl Into<String>) -> crate::ImportError {
        self.c.err_at(self.tok_at(i), msg)
    }
    fn unsup(&self, i: usize, msg: impl Into<String>) -> crate::ImportError {
        self.c.unsup_at(self.tok_at(i), msg)
    }

    fn scalar(&self, ty: TyId, at: usize) -> PResult<Type> {
        self.st.types.scalar(ty).map_err(|m| self.unsup(at, m))
    }

    /// The width of an odd-width integer type (`i2`..`i63` other than Gyre's widths).
    fn odd_width(&self, ty: TyId) -> Option<u32> {
        match self.st.types.get(ty) {
            LType::Int(n) if *n < 64 && !matches!(n, 1 | 8 | 16 | 32) => Some(*n),
            _ => None,
        }
    }

    /// Like [`Lower::scalar`], but an odd-width integer gets the narrowest Gyre integer
    /// type that holds it. Such a value is kept zero-extended (the bits above its width
    /// are 0); only the operations that keep that form accept it.
    fn scalar_emul(&self, ty: TyId, at: usize) -> PResult<Type> {
        match self.odd_width(ty) {
            Some(n) => Ok(container_of(n)),
            None => self.scalar(ty, at),
        }
    }

    /// Reject an odd-width integer where Gyre cannot emulate it.
    fn no_odd(&self, ty: TyId, at: usize) -> PResult<()> {
        match self.odd_width(ty) {
            Some(n) => Err(self.unsup(at, format!("integer type i{n} in this position"))),
            None => Ok(()),
        }
    }

    /// `v & (2^n - 1)`: back to the zero-extended form of an `n`-bit value.
    fn mask_to(&mut self, b: Block, v: Value, n: u32) -> Value {
        let t = self.f.dfg.value_type(v);
        let m = self.iconst(t, (1u64 << n) - 1);
        self.binary(Some(b), Opcode::And, v, m, IntFlags::NONE)
    }

    /// The `n`-bit value `v` sign-extended through its container.
    fn sext_in(&mut self, b: Block, v: Value, n: u32) -> Value {
        let t = self.f.dfg.value_type(v);
        let sh = self.iconst(t, u64::from(t.bits() - n));
        let l = self.binary(Some(b), Opcode::Shl, v, sh, IntFlags::NONE);
        self.binary(Some(b), Opcode::Ashr, l, sh, IntFlags::NONE)
    }

    fn run(&mut self, pb: &PendingBody) -> PResult<()> {
        self.c.expect_punct(b'{')?;
        let sig_params = self.f.sig.params.clone();
        let mut next = sig_params.iter();
        for (name, ty) in &pb.params {
            let name = match name {
                Some(n) => Cow::Owned(n.clone()),
                None => self.fresh_number(),
            };
            let n = match self.st.types.leaves(*ty) {
                Ok(Some(ls)) => Some(ls.len()),
                _ => None,
            };
            let mut vs = Vec::new();
            for _ in 0..n.unwrap_or(1) {
                let t = *next.next().expect("signature has a parameter per leaf");
                let gi = self.f.dfg.block_params(self.entry).len();
                let mut v = self.f.dfg.append_block_param(self.entry, t);
                if self.f.byval_param(gi).is_some()
                    && matches!(self.st.types.get(*ty), LType::Ptr(0))
                {
                    // The body's LLVM pointer is generic.
                    let g = Type::Ptr(AddrSpace::Generic);
                    v = self.unary(None, Opcode::AddrspaceCast, v, g);
                }
                vs.push(v);
            }
            if n.is_some() {
                self.bind_agg(Some(name), vs, pb.name_tok)?;
            } else {
                self.bind(Some(name), vs[0], pb.name_tok)?;
            }
        }
        if let Some(&t) = next.next() {
            // The hidden out-pointer of an aggregate return.
            let v = self.f.dfg.append_block_param(self.entry, t);
            // The header registered the function under its name (no panic if not).
            if let Some(fi) = self.st.funcs.get(&self.f.name) {
                self.agg_ret = Some((fi.ret, v));
            }
        }
        let mut cur: Option<Block> = None;
        let mut started = false;
        let mut phis_ok = false;
        loop {
            let ti = self.c.i;
            match self.c.peek() {
                Tok::Punct(b'}') => {
                    if cur.is_some() {
                        return Err(self.perr(ti, "block does not end with a terminator"));
                    }
                    if !started {
                        return Err(self.perr(ti, "function body has no blocks"));
                    }
                    self.c.bump();
                    break;
                }
                Tok::Eof => return Err(self.perr(ti, "unterminated function body")),
                Tok::Word(w) if w.starts_with("#dbg_") => {
                    // A debug record (LLVM 19+): debug info is skipped.
                    self.c.bump();
                    if self.c.is_punct(b'(') {
                        self.c.skip_balanced()?;
                    }
                }
                Tok::Label(name) => {
                    if cur.is_some() {
                        return Err(self.perr(ti, "block does not end with a terminator"));
                    }
                    self.c.bump();
                    self.note_number(name);
                    let name = Cow::Borrowed(name);
                    let b = if !started {
                        started = true;
                        self.blocks.insert(
                            name.clone(),
                            BlockRef {
                                block: self.entry,
                                defined: true,
                                tok: ti as u32,
                            },
                        );
                        self.entry
                    } else {
                        self.define_block(name.clone(), ti)?
                    };
                    cur = Some(b);
                    self.cur_head = b;
                    phis_ok = true;
                }
                _ => {
                    let b = match cur {
                        Some(b) => b,
                        None => {
                            // An unlabelled block takes the next number.
                            let name = self.fresh_number();
                            let b = if !started {
                                started = true;
                                self.blocks.insert(
                                    name,
                                    BlockRef {
                                        block: self.entry,
                                        defined: true,
                                        tok: ti as u32,
                                    },
                                );
                                self.entry
                            } else {
                                self.define_block(name, ti)?
                            };
                            cur = Some(b);
                            self.cur_head = b;
                            phis_ok = true;
                            b
                        }
                    };
                    let (is_term, was_phi) = match self.inst(b, phis_ok) {
                        Ok(r) => r,
                        Err(e) if e.kind == crate::ErrorKind::Unsupported => {
                            self.errors.push(e);
                            (self.recover(ti), false)
                        }
                        Err(e) => return Err(e),
                    };
                    phis_ok &= was_phi;
                    if let Some(nb) = self.split_to.take() {
                        cur = Some(nb);
                    }
                    if is_term {
                        cur = None;
                    }
                }
            }
        }
        if !self.errors.is_empty() {
            return Ok(());
        }
        self.finish()
    }

    /// After an unsupported instruction starting at token `start`: mark the name it
    /// defines as failed and skip to the next statement (a new line outside brackets, so
    /// a multi-line `switch` is skipped whole). Returns whether it was a terminator.
    fn recover(&mut self, start: usize) -> bool {
        let toks = self.c.toks;
        let mut i = start;
        if let (Tok::Local(n), Tok::Punct(b'=')) = (self.c.at(i).tok, self.c.at(i + 1).tok) {
            self.note_number(n);
            if !matches!(
                self.names.get(n),
                Some(NameState::Def(_) | NameState::Agg(_))
            ) {
                self.names.insert(Cow::Borrowed(n), NameState::Failed);
            }
            i += 2;
        }
        let is_term = matches!(
            self.c.at(i).tok,
            Tok::Word(w) if matches!(
                w,
                "br" | "switch" | "ret" | "unreachable" | "indirectbr" | "invoke" | "resume"
                    | "callbr" | "catchswitch" | "catchret" | "cleanupret"
            )
        );
        let mut depth = 0usize;
        let first = i;
        while i < toks.len() {
            match toks.tok(i) {
                Tok::Eof => break,
                Tok::Punct(b'}') if depth == 0 => break,
                Tok::Label(_) if depth == 0 => break,
                // A new line outside brackets starts the next statement.
                _ if depth == 0 && i > first && !toks.same_line(i - 1, i) => break,
                Tok::Punct(b'(' | b'[' | b'{' | b'<') => depth += 1,
                Tok::Punct(b')' | b']' | b'}' | b'>') => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        self.c.i = i;
        is_term
    }

    fn fresh_number(&mut self) -> Cow<'a, str> {
        let n = self.next_num;
        // Saturating: after an explicit `%18446744073709551615` the next implicit number
        // repeats it, which `bind` reports as a redefinition (fuzz finding 5c693b60; the
        // increment overflowed).
        self.next_num = self.next_num.saturating_add(1);
        Cow::Owned(n.to_string())
    }

    /// A numbered definition `%N` or label `N:` moves the implicit counter past `N`.
    fn note_number(&mut self, name: &str) {
        if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = name.parse::<u64>() {
                self.next_num = self.next_num.max(n.saturating_add(1));
            }
        }
    }

    fn block_ref(&mut self, name: &'a str, tok: usize) -> Block {
        // One lookup for both the hit and the miss.
        let slot = self.blocks.slot(Cow::Borrowed(name));
        if let Some(r) = slot {
            return r.block;
        }
        let b = self.f.dfg.make_block();
        *slot = Some(BlockRef {
            block: b,
            defined: false,
            tok: tok as u32,
        });
        b
    }

    fn define_block(&mut self, name: Cow<'a, str>, tok: usize) -> PResult<Block> {
        let slot = self.blocks.slot(name.clone());
        let b = match slot {
            Some(r) if r.defined => {
                return Err(self.perr(tok, format!("label %{name} redefined")));
            }
            Some(r) => {
                r.defined = true;
                r.block
            }
            None => {
                let b = self.f.dfg.make_block();
                *slot = Some(BlockRef {
                    block: b,
                    defined: true,
                    tok: tok as u32,
                });
                b
            }
        };
        self.f.layout.append_block(b);
        Ok(b)
    }

    fn bind(&mut self, name: Option<Cow<'a, str>>, v: Value, tok: usize) -> PResult<()> {
        let name = match name {
            Some(n) => n,
            None => self.fresh_number(),
        };
        self.note_number(&name);
        let slot = self.names.slot(name.clone());
        if let Some(NameState::Def(_)) = slot {
            return Err(self.perr(tok, format!("value %{name} redefined")));
        }
        *slot = Some(NameState::Def(v));
        Ok(())
    }

    fn bind_agg(&mut self, name: Option<Cow<'a, str>>, vs: Vec<Value>, tok: usize) -> PResult<()> {
        let name = match name {
            Some(n) => n,
            None => self.fresh_number(),
        };
        self.note_number(&name);
        match self.names.get(&name) {
            None => {
                self.aggs.push(vs);
                let k = (self.aggs.len() - 1) as u32;
                self.names.insert(name, NameState::Agg(k));
                Ok(())
            }
            Some(NameState::Fwd(_)) => Err(self.unsup(
                tok,
                format!("aggregate value %{name} used before its definition"),
            )),
            Some(_) => Err(self.perr(tok, format!("value %{name} redefined"))),
        }
    }

    // ---- aggregates -------------------------------------------------------------------

    /// The leaves of `ty` with their Gyre types, or `None` if `ty` is not an aggregate.
    fn agg_leaves(&self, ty: TyId, at: usize) -> PResult<Option<Vec<(u64, TyId, Type)>>> {
        let Some(ls) = self.st.types.leaves(ty).map_err(|m| self.unsup(at, m))? else {
            return Ok(None);
        };
        ls.into_iter()
            .map(|(o, t)| Ok((o, t, self.scalar(t, at)?)))
            .collect::<PResult<Vec<_>>>()
            .map(Some)
    }

    /// The leaf values of an aggregate operand of type `ty`.
    fn agg_operand(&mut self, op: &Operand<'a>, ty: TyId, at: usize) -> PResult<Vec<Value>> {
        let leaves = self
            .agg_leaves(ty, at)?
            .ok_or_else(|| self.perr(at, "not an aggregate type"))?;
        match op {
            Operand::Local(name) => {
                let vs = match self.names.get(name) {
                    Some(&NameState::Agg(k)) => self.aggs[k as usize].clone(),
                    Some(NameState::Failed) => {
                        return Ok(leaves
                            .iter()
                            .map(|l| self.f.dfg.make_detached_value(l.2))
                            .collect())
                    }
                    None => {
                        return Err(self.unsup(
                            at,
                            format!("aggregate value %{name} used before its definition"),
                        ))
                    }
                    _ => {
                        return Err(self.perr(
                            at,
                            format!("%{name} is used as {}", self.st.types.display(ty)),
                        ))
                    }
                };
                let ok = vs.len() == leaves.len()
                    && vs
                        .iter()
                        .zip(&leaves)
                        .all(|(&v, l)| self.f.dfg.value_type(v) == l.2);
                if !ok {
                    return Err(self.perr(
                        at,
                        format!("%{name} is used as {}", self.st.types.display(ty)),
                    ));
                }
                Ok(vs)
            }
            Operand::Const(cv) => self.const_leaves(cv, ty, at),
        }
    }

    /// The leaf values of an aggregate constant (`undef`, `poison`, `zeroinitializer`,
    /// `{ T v, ... }`, `[ T v, ... ]`), in memory order.
    fn const_leaves(&mut self, cv: &CVal, ty: TyId, at: usize) -> PResult<Vec<Value>> {
        let mut out = Vec::new();
        let mut stack: Vec<(TyId, CVal)> = vec![(ty, cv.clone())];
        while let Some((t, v)) = stack.pop() {
            if self
                .st
                .types
                .leaves(t)
                .map_err(|m| self.unsup(at, m))?
                .is_none()
            {
                out.push(self.constant(&v, t, at, 0)?);
                continue;
            }
            match v {
                CVal::Undef | CVal::Poison | CVal::Zero => {
                    for (_, _, st) in self.agg_leaves(t, at)?.unwrap_or_default() {
                        out.push(self.zero(st));
                    }
                }
                CVal::Aggregate(elems) => {
                    let r = self.st.types.resolve(t);
                    let n = match r.map(|r| self.st.types.get(r)) {
                        Some(LType::Array(n, _)) => *n as usize,
                        Some(LType::Struct(f, _)) => f.len(),
                        _ => usize::MAX,
                    };
                    if n != elems.len() {
                        return Err(self.perr(at, "constant does not match its aggregate type"));
                    }
                    for e in elems.into_iter().rev() {
                        stack.push(e);
                    }
                }
                _ => return Err(self.unsup(at, "aggregate constant of this form")),
            }
            if out.len() as u64 > crate::types::MAX_LEAVES {
                return Err(self.unsup(at, "aggregate value with too many elements"));
            }
        }
        Ok(out)
    }

    /// Parse `T value`: a scalar (`false`, one value) or an aggregate (`true`, its leaves).
    fn typed_multi(&mut self) -> PResult<(TyId, bool, Vec<Value>)> {
        let ty = parse_type(&mut self.c, &mut self.st.types)?;
        let at = self.c.i;
        let op = parse_value(&mut self.c, &mut self.st.types)?;
        if self.agg_leaves(ty, at)?.is_some() {
            Ok((ty, true, self.agg_operand(&op, ty, at)?))
        } else {
            Ok((ty, false, vec![self.use_operand(&op, ty, at)?]))
        }
    }

    /// `p + off` (no instruction for 0).
    fn offset_ptr(&mut self, b: Block, p: Value, off: u64) -> Value {
        if off == 0 {
            return p;
        }
        let o = self.iconst(Type::I64, off);
        let pt = self.f.dfg.value_type(p);
        self.emit(
            Some(b),
            InstructionData::PtrAdd {
                args: [p, o],
                scale: 1,
            },
            pt,
        )
    }

    /// `, i, j, ...` after `extractvalue`/`insertvalue` operands.
    fn index_path(&mut self) -> PResult<Vec<u64>> {
        let mut path = Vec::new();
        while self.c.is_punct(b',') && matches!(self.c.peek_at(1), Tok::Int(_)) {
            self.c.bump();
            let t = self.c.i;
            let i = self.c.expect_int()?;
            path.push(u64::try_from(i).map_err(|_| self.perr(t, "negative index"))?);
        }
        if path.is_empty() {
            return Err(self.c.expected("an index"));
        }
        Ok(path)
    }

    /// `insertvalue T agg, S elt, idx...`: the leaves of `agg` with those at the path
    /// replaced.
    fn insertvalue(&mut self, op_i: usize) -> PResult<Vec<Value>> {
        let (ty, is_agg, mut vs) = self.typed_multi()?;
        if !is_agg {
            return Err(self.perr(op_i, "insertvalue into a non-aggregate"));
        }
        self.c.expect_punct(b',')?;
        let (ety, _, evs) = self.typed_multi()?;
        let path = self.index_path()?;
        let (start, sub) = self
            .st
            .types
            .leaf_path(ty, &path)
            .map_err(|m| self.perr(op_i, m))?;
        let fits = self.st.types.leaf_count(sub).ok() == Some(evs.len())
            && start + evs.len() <= vs.len()
            && evs
                .iter()
                .zip(&vs[start..])
                .all(|(&a, &b)| self.f.dfg.value_type(a) == self.f.dfg.value_type(b));
        if !fits {
            return Err(self.perr(
                op_i,
                format!(
                    "inserted {} does not match the field's type",
                    self.st.types.display(ety)
                ),
            ));
        }
        vs[start..start + evs.len()].copy_from_slice(&evs);
        Ok(vs)
    }

    /// A copy of `len` bytes from `src` to `dst` as loads (all first, so overlapping
    /// ranges copy as `memmove` does) then stores. `pieces` are the (offset, size) of
    /// the accesses when a type tiles the range; otherwise the widest accesses the
    /// alignment allows.
    #[allow(clippy::too_many_arguments)]
    fn copy_bytes(
        &mut self,
        b: Block,
        dst: Value,
        src: Value,
        len: u64,
        align: u64,
        volatile: bool,
        pieces: Option<Vec<(u64, u64)>>,
        at: usize,
    ) -> PResult<()> {
        let pieces = match pieces {
            Some(p) => p,
            None => unit_pieces(len, align),
        };
        if pieces.len() > MAX_COPY_PIECES {
            return Err(self.unsup(at, format!("memory copy of {len} bytes")));
        }
        let flags = MemFlags { volatile };
        let mut loaded = Vec::with_capacity(pieces.len());
        for &(off, size) in &pieces {
            let t = int_of_bytes(size);
            let p = self.offset_ptr(b, src, off);
            loaded.push(self.emit(Some(b), InstructionData::Load { ptr: p, flags }, t));
        }
        for (&(off, _), v) in pieces.iter().zip(loaded) {
            let p = self.offset_ptr(b, dst, off);
            self.f.append_inst(
                b,
                InstructionData::Store {
                    args: [v, p],
                    flags,
                },
                None,
            );
        }
        Ok(())
    }

    /// The accesses that copy a value of type `ty` exactly: its leaves, if they cover
    /// every byte (no padding, whose poison a wider access would spread).
    fn type_pieces(&self, ty: TyId) -> Option<Vec<(u64, u64)>> {
        let (size, _) = self.st.types.size_align(ty).ok()?;
        let ls = match self.st.types.leaves(ty).ok()? {
            Some(ls) => ls,
            None => vec![(0, ty)],
        };
        let mut next = 0;
        let mut out = Vec::with_capacity(ls.len());
        for (o, t) in ls {
            let (s, _) = self.st.types.size_align(t).ok()?;
            if o != next || !matches!(s, 1 | 2 | 4 | 8) || !o.is_multiple_of(s) {
                return None;
            }
            out.push((o, s));
            next = o + s;
        }
        (next == size).then_some(out)
    }

    // ---- emission -------------------------------------------------------------------

    /// Emit into `at`, or out of line (entry top) for `None`.
    fn emit(&mut self, at: Option<Block>, data: InstructionData, ty: Type) -> Value {
        match at {
            Some(b) => self.f.append_inst(b, data, Some(ty)).1.expect("typed inst"),
            None => {
                let (i, v) = self.f.dfg.make_inst_with_result(data, ty);
                self.const_insts.push(i);
                v
            }
        }
    }

    fn iconst(&mut self, ty: Type, bits: u64) -> Value {
        let key = (ty, trunc_bits(i128::from(bits), ty.bits()));
        if let Some(&v) = self.consts.get(&key) {
            return v;
        }
        let imm = sext_bits(bits, ty.bits());
        let v = self.emit(None, InstructionData::IntConst { imm }, ty);
        self.consts.insert(key, v);
        v
    }

    fn fconst(&mut self, ty: Type, bits: u64) -> Value {
        let key = (ty, bits);
        if let Some(&v) = self.consts.get(&key) {
            return v;
        }
        let v = self.emit(None, InstructionData::FloatConst { bits }, ty);
        self.consts.insert(key, v);
        v
    }

    fn zero(&mut self, ty: Type) -> Value {
        match ty {
            Type::F32 | Type::F64 => self.fconst(ty, 0),
            Type::Ptr(_) => {
                if let Some(&v) = self.consts.get(&(ty, 0)) {
                    return v;
                }
                let z = self.iconst(Type::I64, 0);
                let v = self.emit(
                    None,
                    InstructionData::Unary {
                        opcode: Opcode::Inttoptr,
                        arg: z,
                    },
                    ty,
                );
                self.consts.insert((ty, 0), v);
                v
            }
            _ => self.iconst(ty, 0),
        }
    }

    fn unary(&mut self, at: Option<Block>, opcode: Opcode, arg: Value, ty: Type) -> Value {
        self.emit(at, InstructionData::Unary { opcode, arg }, ty)
    }

    fn binary(
        &mut self,
        at: Option<Block>,
        opcode: Opcode,
        a: Value,
        b: Value,
        flags: IntFlags,
    ) -> Value {
        let ty = self.f.dfg.value_type(a);
        self.emit(
            at,
            InstructionData::Binary {
                opcode,
                args: [a, b],
                flags,
            },
            ty,
        )
    }

    // ---- operands -------------------------------------------------------------------

    /// Parse `T value` and return the Gyre value.
    fn typed_value(&mut self) -> PResult<(TyId, Value)> {
        let at = self.c.i;
        let ty = parse_type(&mut self.c, &mut self.st.types)?;
        self.no_odd(ty, at)?;
        let v = self.value_of(ty)?;
        Ok((ty, v))
    }

    /// [`Lower::typed_value`] that also accepts an odd-width integer.
    fn typed_value_odd(&mut self) -> PResult<(TyId, Value)> {
        let ty = parse_type(&mut self.c, &mut self.st.types)?;
        let v = self.value_of(ty)?;
        Ok((ty, v))
    }

    /// Parse a value of type `ty` and return the Gyre value.
    fn value_of(&mut self, ty: TyId) -> PResult<Value> {
        let at = self.c.i;
        let op = parse_value(&mut self.c, &mut self.st.types)?;
        self.use_operand(&op, ty, at)
    }

    fn use_operand(&mut self, op: &Operand<'a>, ty: TyId, at: usize) -> PResult<Value> {
        let st = self.scalar_emul(ty, at)?;
        match op {
            &Operand::Local(name) => {
                // One lookup: a miss fills the same slot with a placeholder.
                let v = match self.names.slot(Cow::Borrowed(name)) {
                    Some(NameState::Def(v)) | Some(NameState::Fwd(v)) => *v,
                    Some(NameState::CasPair(..)) => {
                        return Err(self.unsup(
                            at,
                            format!("aggregate value %{name} used other than by extractvalue"),
                        ))
                    }
                    Some(NameState::Agg(_)) => {
                        return Err(self.perr(
                            at,
                            format!("aggregate %{name} used as {}", self.st.types.display(ty)),
                        ))
                    }
                    Some(NameState::Failed) => return Ok(self.f.dfg.make_detached_value(st)),
                    slot @ None => {
                        let ph = self.f.dfg.make_detached_value(st);
                        *slot = Some(NameState::Fwd(ph));
                        self.forward.push((ph, name, at));
                        ph
                    }
                };
                let vt = self.f.dfg.value_type(v);
                if vt != st {
                    return Err(self.perr(
                        at,
                        format!(
                            "%{name} has type {vt}, used as {}",
                            self.st.types.display(ty)
                        ),
                    ));
                }
                Ok(v)
            }
            Operand::Const(cv) => self.constant(cv, ty, at, 0),
        }
    }

    /// Materialize a constant out of line.
    fn constant(&mut self, cv: &CVal, ty: TyId, at: usize, depth: u32) -> PResult<Value> {
        if depth > super::parse::MAX_NESTING {
            return Err(self.unsup(at, "constant expression nesting too deep"));
        }
        let st = self.scalar_emul(ty, at)?;
        let width = self.odd_width(ty);
        if width.is_some() && !matches!(cv, CVal::Int(_) | CVal::Undef | CVal::Poison | CVal::Zero)
        {
            return Err(self.unsup(at, "odd-width integer constant of this form"));
        }
        let mismatch = |l: &Self| l.perr(at, format!("constant does not match type {st}"));
        Ok(match cv {
            CVal::Int(i) if st.is_int() => {
                self.iconst(st, trunc_bits(*i, width.unwrap_or(st.bits())))
            }
            CVal::Bool(b) if st == Type::I1 => self.iconst(st, u64::from(*b)),
            CVal::Float(_) | CVal::HexFloat(..) if st.is_float() => {
                let bits = float_bits(cv, st).map_err(|m| self.unsup(at, m))?;
                self.fconst(st, bits)
            }
            CVal::Null if st.is_ptr() => self.zero(st),
            CVal::Undef | CVal::Poison | CVal::Zero => self.zero(st),
            CVal::Global(name) => self.global_addr(name, st, at)?,
            CVal::Gep { src, base, idx } => {
                let (bt, bv) = &**base;
                let b = self.constant(bv, *bt, at, depth + 1)?;
                let mut ix = Vec::with_capacity(idx.len());
                for (it, iv) in idx {
                    ix.push((*it, self.const_index(iv, *it, at, depth)?));
                }
                let v = self.gep(None, *src, b, ix, at)?;
                if self.f.dfg.value_type(v) != st {
                    return Err(mismatch(self));
                }
                v
            }
            CVal::Cast { op, val, to } => {
                let (ft, fv) = &**val;
                let v = self.constant(fv, *ft, at, depth + 1)?;
                if *to != ty && self.scalar(*to, at)? != st {
                    return Err(mismatch(self));
                }
                self.cast(None, op, v, *ft, *to, at)?
            }
            CVal::Bin { op, args } => {
                let a = self.constant(&args[0].1, args[0].0, at, depth + 1)?;
                let b = self.constant(&args[1].1, args[1].0, at, depth + 1)?;
                let opc = int_binop(op)
                    .ok_or_else(|| self.unsup(at, format!("constant expression `{op}`")))?;
                if self.f.dfg.value_type(a) != st || self.f.dfg.value_type(b) != st {
                    return Err(mismatch(self));
                }
                self.binary(None, opc, a, b, IntFlags::NONE)
            }
            CVal::Aggregate(_) | CVal::CStr(_) => return Err(self.unsup(at, "aggregate constant")),
            _ => return Err(mismatch(self)),
        })
    }

    fn const_index(&mut self, iv: &CVal, it: TyId, at: usize, depth: u32) -> PResult<Idx> {
        let st = self.scalar(it, at)?;
        if !st.is_int() {
            return Err(self.perr(at, "GEP index must be an integer"));
        }
        Ok(match iv {
            CVal::Int(i) => Idx::Const(sext_bits(trunc_bits(*i, st.bits()), st.bits())),
            CVal::Bool(b) => Idx::Const(if *b { -1 } else { 0 }),
            CVal::Zero | CVal::Undef | CVal::Poison => Idx::Const(0),
            _ => Idx::Var(self.constant(iv, it, at, depth + 1)?),
        })
    }

    fn global_addr(&mut self, name: &str, want: Type, at: usize) -> PResult<Value> {
        let Some(g) = self.st.globals.get(name).copied() else {
            if self.st.funcs.contains_key(name) {
                return Err(self.unsup(at, format!("address of function @{name}")));
            }
            return Err(self.perr(at, format!("undefined global @{name}")));
        };
        if want != Type::Ptr(AddrSpace::Generic) || g.llvm_space != 0 {
            let gs = AddrSpace::from_llvm_number(g.llvm_space);
            if Some(want) != gs.map(Type::Ptr) {
                return Err(self.perr(at, format!("@{name} used as {want}")));
            }
        }
        if let Some(&v) = self.gaddrs.get(&(g.id, want)) {
            return Ok(v);
        }
        let space = self.st.module.globals[g.id].space;
        let mut v = self.emit(
            None,
            InstructionData::GlobalAddr { global: g.id },
            Type::Ptr(space),
        );
        if Type::Ptr(space) != want {
            v = self.unary(None, Opcode::AddrspaceCast, v, want);
        }
        self.gaddrs.insert((g.id, want), v);
        Ok(v)
    }

    // ---- shared lowering of casts and GEPs --------------------------------------------

    fn cast(
        &mut self,
        at: Option<Block>,
        op: &str,
        v: Value,
        from: TyId,
        to: TyId,
        tok: usize,
    ) -> PResult<Value> {
        let fs = self.scalar(from, tok)?;
        let ts = self.scalar(to, tok)?;
        if self.f.dfg.value_type(v) != fs {
            return Err(self.perr(tok, "cast operand does not match its type"));
        }
        let bad = |l: &Self| l.perr(tok, format!("invalid {op} from {fs} to {ts}"));
        let simple = |l: &mut Self, opc: Opcode, ok: bool| -> PResult<Value> {
            if !ok {
                return Err(bad(l));
            }
            Ok(l.unary(at, opc, v, ts))
        };
        match op {
            "trunc" => simple(
                self,
                Opcode::Trunc,
                fs.is_int() && ts.is_int() && fs.bits() > ts.bits(),
            ),
            "zext" => simple(
                self,
                Opcode::Zext,
                fs.is_int() && ts.is_int() && fs.bits() < ts.bits(),
            ),
            "sext" => simple(
                self,
                Opcode::Sext,
                fs.is_int() && ts.is_int() && fs.bits() < ts.bits(),
            ),
            "fptrunc" => simple(self, Opcode::Fptrunc, fs == Type::F64 && ts == Type::F32),
            "fpext" => simple(self, Opcode::Fpext, fs == Type::F32 && ts == Type::F64),
            "fptoui" => simple(self, Opcode::Fptoui, fs.is_float() && ts.is_int()),
            "fptosi" => simple(self, Opcode::Fptosi, fs.is_float() && ts.is_int()),
            "uitofp" => simple(self, Opcode::Uitofp, fs.is_int() && ts.is_float()),
            "sitofp" => simple(self, Opcode::Sitofp, fs.is_int() && ts.is_float()),
            "bitcast" => {
                if fs == ts {
                    Ok(v)
                } else if !fs.is_ptr() && !ts.is_ptr() && fs.bits() == ts.bits() {
                    Ok(self.unary(at, Opcode::Bitcast, v, ts))
                } else {
                    Err(bad(self))
                }
            }
            "ptrtoint" => {
                if !fs.is_ptr() || !ts.is_int() {
                    return Err(bad(self));
                }
                let w = self.unary(at, Opcode::Ptrtoint, v, Type::I64);
                Ok(if ts == Type::I64 {
                    w
                } else {
                    self.unary(at, Opcode::Trunc, w, ts)
                })
            }
            "inttoptr" => {
                if !fs.is_int() || !ts.is_ptr() {
                    return Err(bad(self));
                }
                let w = if fs == Type::I64 {
                    v
                } else {
                    self.unary(at, Opcode::Zext, v, Type::I64)
                };
                Ok(self.unary(at, Opcode::Inttoptr, w, ts))
            }
            "addrspacecast" => {
                if !fs.is_ptr() || !ts.is_ptr() {
                    return Err(bad(self));
                }
                let g = Type::Ptr(AddrSpace::Generic);
                Ok(if fs == ts {
                    v
                } else if fs == g || ts == g {
                    self.unary(at, Opcode::AddrspaceCast, v, ts)
                } else {
                    // Specific to specific goes through generic, as PTX's cvta does.
                    let m = self.unary(at, Opcode::AddrspaceCast, v, g);
                    self.unary(at, Opcode::AddrspaceCast, m, ts)
                })
            }
            _ => Err(self.unsup(tok, format!("cast `{op}`"))),
        }
    }

    /// `base + Σ idx·stride` as a chain of `ptradd`s: one per variable index, all
    /// constant parts folded into a final `ptradd base, iconst.i64 off, 1`.
    fn gep(
        &mut self,
        at: Option<Block>,
        src: TyId,
        base: Value,
        idx: Vec<(TyId, Idx)>,
        tok: usize,
    ) -> PResult<Value> {
        let bt = self.f.dfg.value_type(base);
        if !bt.is_ptr() {
            return Err(self.perr(tok, "GEP base is not a pointer"));
        }
        let mut cur_ty = src;
        let mut off: i64 = 0;
        let mut acc = base;
        for (k, (_, ix)) in idx.into_iter().enumerate() {
            let stride = if k == 0 {
                self.st
                    .types
                    .size_align(cur_ty)
                    .map_err(|m| self.unsup(tok, m))?
                    .0
            } else {
                let r = self
                    .st
                    .types
                    .resolve(cur_ty)
                    .ok_or_else(|| self.unsup(tok, "unresolvable named type"))?;
                match self.st.types.get(r).clone() {
                    LType::Array(_, e) => {
                        cur_ty = e;
                        self.st
                            .types
                            .size_align(e)
                            .map_err(|m| self.unsup(tok, m))?
                            .0
                    }
                    LType::Struct(..) => {
                        let Idx::Const(fi) = ix else {
                            return Err(self.perr(tok, "struct GEP index must be a constant"));
                        };
                        let (fo, ft) = self
                            .st
                            .types
                            .field_offset(r, fi as u64)
                            .map_err(|m| self.perr(tok, m))?;
                        off = off.wrapping_add(fo as i64);
                        cur_ty = ft;
                        continue;
                    }
                    LType::Vector => return Err(self.unsup(tok, "GEP into a vector")),
                    _ => return Err(self.perr(tok, "GEP index into a non-aggregate type")),
                }
            };
            match ix {
                Idx::Const(c) => off = off.wrapping_add(c.wrapping_mul(stride as i64)),
                Idx::Var(v) => {
                    if stride == 0 {
                        continue;
                    }
                    let scale = u32::try_from(stride)
                        .map_err(|_| self.unsup(tok, format!("GEP stride of {stride} bytes")))?;
                    acc = self.emit(
                        at,
                        InstructionData::PtrAdd {
                            args: [acc, v],
                            scale,
                        },
                        bt,
                    );
                }
            }
        }
        if off != 0 {
            let o = self.iconst(Type::I64, off as u64);
            acc = self.emit(
                at,
                InstructionData::PtrAdd {
                    args: [acc, o],
                    scale: 1,
                },
                bt,
            );
        }
        Ok(acc)
    }

    /// An integer operation on zero-extended `n`-bit values in a wider container: signed
    /// operations see sign-extended operands, and results that can carry into the high
    /// bits are masked back. Flags are dropped (they are about `n` bits; dropping only
    /// removes poison).
    fn odd_binop(&mut self, b: Block, opc: Opcode, a: Value, c: Value, n: u32) -> Value {
        match opc {
            Opcode::And | Opcode::Or | Opcode::Xor | Opcode::Udiv | Opcode::Urem => {
                self.binary(Some(b), opc, a, c, IntFlags::NONE)
            }
            // An amount >= n is poison; the container's result is a refinement.
            Opcode::Lshr => self.binary(Some(b), opc, a, c, IntFlags::NONE),
            Opcode::Iadd | Opcode::Isub | Opcode::Imul | Opcode::Shl => {
                let r = self.binary(Some(b), opc, a, c, IntFlags::NONE);
                self.mask_to(b, r, n)
            }
            _ => {
                // sdiv, srem, ashr: on the sign-extended value.
                let sa = self.sext_in(b, a, n);
                let sc = if opc == Opcode::Ashr {
                    c
                } else {
                    self.sext_in(b, c, n)
                };
                let r = self.binary(Some(b), opc, sa, sc, IntFlags::NONE);
                self.mask_to(b, r, n)
            }
        }
    }

    /// `trunc`, `zext`, `sext` to or from an odd-width integer (other casts of one are
    /// not supported).
    fn odd_cast(
        &mut self,
        b: Block,
        op: &str,
        v: Value,
        from: TyId,
        to: TyId,
        tok: usize,
    ) -> PResult<Value> {
        let (fw, tw) = match (self.st.types.get(from), self.st.types.get(to)) {
            (LType::Int(f), LType::Int(t)) => (*f, *t),
            _ => return Err(self.unsup(tok, format!("`{op}` of an odd-width integer"))),
        };
        let ok = match op {
            "trunc" => fw > tw,
            "zext" | "sext" => fw < tw,
            _ => false,
        };
        if !ok || tw > 64 || fw > 64 {
            return Err(self.unsup(tok, format!("`{op}` of i{fw} to i{tw}")));
        }
        let fc = self.scalar_emul(from, tok)?;
        let tc = self.scalar_emul(to, tok)?;
        // Resize the container (the value is zero-extended in it).
        let resize = |l: &mut Self, v: Value, ext: Opcode| -> Value {
            let vt = l.f.dfg.value_type(v);
            if vt.bits() < tc.bits() {
                l.unary(Some(b), ext, v, tc)
            } else if vt.bits() > tc.bits() {
                l.unary(Some(b), Opcode::Trunc, v, tc)
            } else {
                v
            }
        };
        debug_assert!(fc.is_int() && tc.is_int());
        let r = match op {
            "trunc" => {
                let r = resize(self, v, Opcode::Zext);
                if tw < tc.bits() {
                    self.mask_to(b, r, tw)
                } else {
                    r
                }
            }
            "zext" => resize(self, v, Opcode::Zext),
            _ => {
                let s = if fw < fc.bits() {
                    self.sext_in(b, v, fw)
                } else {
                    v
                };
                let r = resize(self, s, Opcode::Sext);
                if tw < tc.bits() {
                    self.mask_to(b, r, tw)
                } else {
                    r
                }
            }
        };
        Ok(r)
    }

    // ---- instructions ---------------------------------------------------------------

    /// Lower one instruction into `b`. Returns (is a terminator, is a phi).
    fn inst(&mut self, b: Block, phis_ok: bool) -> PResult<(bool, bool)> {
        let start = self.c.i;
        let last = self.c.toks.len() - 1;
        let mut name = match self.c.peek_local() {
            Some(n) if self.c.toks.punct((start + 1).min(last)) == Some(b'=') => {
                self.c.bump();
                self.c.bump();
                Some(Cow::Borrowed(n))
            }
            _ => None,
        };
        let op_i = self.c.i;
        let op: &'a str = match self.c.toks.word(op_i.min(last)) {
            Some(w) => w,
            None => return Err(self.c.expected("an instruction")),
        };
        self.c.bump();
        let mut is_term = false;
        let mut is_phi = false;
        // The leaves of an aggregate result.
        let mut agg: Option<Vec<Value>> = None;
        let result: Option<Value> = match op {
            "add" | "sub" | "mul" | "sdiv" | "udiv" | "srem" | "urem" | "shl" | "lshr" | "ashr"
            | "and" | "or" | "xor" => {
                let opcode = int_binop(op).expect("listed above");
                let mut flags = IntFlags::NONE;
                while let Tok::Word(w) = self.c.peek() {
                    match w {
                        "nsw" => flags = flags.union(IntFlags::NSW),
                        "nuw" => flags = flags.union(IntFlags::NUW),
                        "exact" => flags = flags.union(IntFlags::EXACT),
                        "disjoint" => {}
                        _ => break,
                    }
                    self.c.bump();
                }
                let (ty, a) = self.typed_value_odd()?;
                self.c.expect_punct(b',')?;
                let bv = self.value_of(ty)?;
                let st = self.scalar_emul(ty, op_i)?;
                if !st.is_int() {
                    return Err(self.perr(op_i, format!("`{op}` needs integer operands")));
                }
                match self.odd_width(ty) {
                    Some(n) => Some(self.odd_binop(b, opcode, a, bv, n)),
                    None => {
                        let flags = IntFlags::from_bits_masked(flags, opcode.allowed_flags());
                        Some(self.binary(Some(b), opcode, a, bv, flags))
                    }
                }
            }
            "fadd" | "fsub" | "fmul" | "fdiv" | "frem" => {
                // `contract` (or `fast`, which includes it) is kept: it licenses fusing
                // into `fma` in the back end; the other fast-math flags are dropped.
                let contract = self.fmf_contract();
                let (ty, a) = self.typed_value()?;
                self.c.expect_punct(b',')?;
                let bv = self.value_of(ty)?;
                if !self.scalar(ty, op_i)?.is_float() {
                    return Err(self.perr(op_i, format!("`{op}` needs float operands")));
                }
                let opcode = match op {
                    "fadd" => Opcode::Fadd,
                    "fsub" => Opcode::Fsub,
                    "fmul" => Opcode::Fmul,
                    "fdiv" => Opcode::Fdiv,
                    _ => Opcode::Frem,
                };
                let flags = if contract && opcode.allowed_flags().contains(IntFlags::CONTRACT) {
                    IntFlags::CONTRACT
                } else {
                    IntFlags::NONE
                };
                Some(self.binary(Some(b), opcode, a, bv, flags))
            }
            "fneg" => {
                self.skip_fmf();
                let (ty, a) = self.typed_value()?;
                let st = self.scalar(ty, op_i)?;
                if !st.is_float() {
                    return Err(self.perr(op_i, "`fneg` needs a float operand"));
                }
                Some(self.unary(Some(b), Opcode::Fneg, a, st))
            }
            "icmp" => {
                self.c.eat_word("samesign");
                let pi = self.c.i;
                let cond = match self.c.peek() {
                    Tok::Word(w) => IntCC::from_name(w),
                    _ => None,
                }
                .ok_or_else(|| self.c.expected("an icmp predicate"))?;
                self.c.bump();
                let (ty, mut a) = self.typed_value_odd()?;
                self.c.expect_punct(b',')?;
                let mut bv = self.value_of(ty)?;
                let st = self.scalar_emul(ty, pi)?;
                if let (Some(n), true) = (
                    self.odd_width(ty),
                    matches!(cond, IntCC::Slt | IntCC::Sle | IntCC::Sgt | IntCC::Sge),
                ) {
                    // Signed comparisons see the sign-extended values.
                    a = self.sext_in(b, a, n);
                    bv = self.sext_in(b, bv, n);
                }
                if st.is_ptr() {
                    // Compare addresses as integers.
                    a = self.unary(Some(b), Opcode::Ptrtoint, a, Type::I64);
                    bv = self.unary(Some(b), Opcode::Ptrtoint, bv, Type::I64);
                } else if !st.is_int() {
                    return Err(self.perr(pi, "`icmp` needs integer or pointer operands"));
                }
                Some(self.emit(
                    Some(b),
                    InstructionData::IntCompare {
                        cond,
                        args: [a, bv],
                    },
                    Type::I1,
                ))
            }
            "fcmp" => {
                self.skip_fmf();
                let cond = match self.c.peek() {
                    Tok::Word(w) => FloatCC::from_name(w),
                    _ => None,
                }
                .ok_or_else(|| self.c.expected("an fcmp predicate"))?;
                self.c.bump();
                let (ty, a) = self.typed_value()?;
                self.c.expect_punct(b',')?;
                let bv = self.value_of(ty)?;
                if !self.scalar(ty, op_i)?.is_float() {
                    return Err(self.perr(op_i, "`fcmp` needs float operands"));
                }
                Some(self.emit(
                    Some(b),
                    InstructionData::FloatCompare {
                        cond,
                        args: [a, bv],
                    },
                    Type::I1,
                ))
            }
            "select" => {
                self.skip_fmf();
                let ci = self.c.i;
                let (ct, cv) = self.typed_value()?;
                if self.scalar(ct, ci)? != Type::I1 {
                    return Err(self.perr(ci, "select condition must be i1"));
                }
                self.c.expect_punct(b',')?;
                let (_, a_agg, a) = self.typed_multi()?;
                self.c.expect_punct(b',')?;
                let (_, _, bv) = self.typed_multi()?;
                let same = a.len() == bv.len()
                    && a.iter()
                        .zip(&bv)
                        .all(|(&x, &y)| self.f.dfg.value_type(x) == self.f.dfg.value_type(y));
                if !same {
                    return Err(self.perr(op_i, "select arms differ in type"));
                }
                // An aggregate select is one select per leaf.
                let mut out = Vec::with_capacity(a.len());
                for (&x, &y) in a.iter().zip(&bv) {
                    let st = self.f.dfg.value_type(x);
                    out.push(self.emit(
                        Some(b),
                        InstructionData::Ternary {
                            opcode: Opcode::Select,
                            args: [cv, x, y],
                        },
                        st,
                    ));
                }
                if a_agg {
                    agg = Some(out);
                    None
                } else {
                    Some(out[0])
                }
            }
            "trunc" | "zext" | "sext" | "fptrunc" | "fpext" | "fptoui" | "fptosi" | "uitofp"
            | "sitofp" | "bitcast" | "ptrtoint" | "inttoptr" | "addrspacecast" => {
                while matches!(self.c.peek(), Tok::Word(w) if matches!(w, "nuw" | "nsw" | "nneg")) {
                    self.c.bump();
                }
                let (ft, v) = self.typed_value_odd()?;
                self.c.expect_word("to")?;
                let tt = parse_type(&mut self.c, &mut self.st.types)?;
                if self.odd_width(ft).is_some() || self.odd_width(tt).is_some() {
                    Some(self.odd_cast(b, op, v, ft, tt, op_i)?)
                } else {
                    Some(self.cast(Some(b), op, v, ft, tt, op_i)?)
                }
            }
            "getelementptr" => {
                while matches!(self.c.peek(), Tok::Word(w) if matches!(w, "inbounds" | "nuw" | "nusw"))
                {
                    self.c.bump();
                }
                let src = parse_type(&mut self.c, &mut self.st.types)?;
                self.c.expect_punct(b',')?;
                let bi = self.c.i;
                let (bt, base) = self.typed_value()?;
                if matches!(self.st.types.get(bt), LType::Vector) {
                    return Err(self.unsup(bi, "vector GEP"));
                }
                let mut idx = Vec::new();
                while self.c.is_punct(b',') && is_type_start(self.c.peek_at(1)) {
                    self.c.bump();
                    let ii = self.c.i;
                    let it = parse_type(&mut self.c, &mut self.st.types)?;
                    let vi = self.c.i;
                    let op = parse_value(&mut self.c, &mut self.st.types)?;
                    let ix = match &op {
                        Operand::Const(cv) => self.const_index(cv, it, vi, 0)?,
                        Operand::Local(_) => {
                            self.no_odd(it, ii)?;
                            let v = self.use_operand(&op, it, vi)?;
                            if !self.f.dfg.value_type(v).is_int() {
                                return Err(self.perr(ii, "GEP index must be an integer"));
                            }
                            Idx::Var(v)
                        }
                    };
                    idx.push((it, ix));
                }
                Some(self.gep(Some(b), src, base, idx, op_i)?)
            }
            "load" => {
                if self.c.is_word("atomic") {
                    return Err(self.unsup(op_i, "atomic load"));
                }
                let volatile = self.c.eat_word("volatile");
                let ty = parse_type(&mut self.c, &mut self.st.types)?;
                let leaves = self.agg_leaves(ty, op_i)?;
                let st = match leaves {
                    Some(_) => Type::I8,
                    None => self.scalar(ty, op_i)?,
                };
                self.c.expect_punct(b',')?;
                let pi = self.c.i;
                let (_, p) = self.typed_value()?;
                if !self.f.dfg.value_type(p).is_ptr() {
                    return Err(self.perr(pi, "load address is not a pointer"));
                }
                self.skip_align()?;
                let flags = MemFlags { volatile };
                match leaves {
                    // An aggregate load is one load per leaf, at its offset.
                    Some(ls) => {
                        let mut out = Vec::with_capacity(ls.len());
                        for (off, _, lt) in ls {
                            let a = self.offset_ptr(b, p, off);
                            out.push(self.emit(
                                Some(b),
                                InstructionData::Load { ptr: a, flags },
                                lt,
                            ));
                        }
                        agg = Some(out);
                        None
                    }
                    None => Some(self.emit(Some(b), InstructionData::Load { ptr: p, flags }, st)),
                }
            }
            "store" => {
                if self.c.is_word("atomic") {
                    return Err(self.unsup(op_i, "atomic store"));
                }
                let volatile = self.c.eat_word("volatile");
                let vi = self.c.i;
                let (vty, _, vs) = self.typed_multi()?;
                self.no_odd(vty, vi)?;
                self.c.expect_punct(b',')?;
                let pi = self.c.i;
                let (_, p) = self.typed_value()?;
                if !self.f.dfg.value_type(p).is_ptr() {
                    return Err(self.perr(pi, "store address is not a pointer"));
                }
                self.skip_align()?;
                let offs: Vec<u64> = match self.agg_leaves(vty, vi)? {
                    Some(ls) => ls.iter().map(|l| l.0).collect(),
                    None => vec![0],
                };
                // An aggregate store is one store per leaf, at its offset.
                for (v, off) in vs.into_iter().zip(offs) {
                    let a = self.offset_ptr(b, p, off);
                    self.f.append_inst(
                        b,
                        InstructionData::Store {
                            args: [v, a],
                            flags: MemFlags { volatile },
                        },
                        None,
                    );
                }
                None
            }
            "alloca" => Some(self.alloca(b, op_i)?),
            "phi" => {
                if !phis_ok {
                    return Err(self.perr(op_i, "phi after a non-phi instruction"));
                }
                if b == self.entry {
                    return Err(self.perr(op_i, "phi in the entry block"));
                }
                is_phi = true;
                self.skip_fmf();
                let ty = parse_type(&mut self.c, &mut self.st.types)?;
                let leaves = self.agg_leaves(ty, op_i)?;
                let st = match leaves {
                    Some(_) => Type::I8,
                    None => self.scalar_emul(ty, op_i)?,
                };
                let inc_start = self.phi_incoming.len();
                loop {
                    self.c.expect_punct(b'[')?;
                    let vi = self.c.i;
                    // Checked now, read again by `incoming_args`.
                    parse_value(&mut self.c, &mut self.st.types)?;
                    self.c.expect_punct(b',')?;
                    let li = self.c.i;
                    let l = self.c.expect_local()?;
                    let pb = self.block_ref(l, li);
                    self.c.expect_punct(b']')?;
                    self.phi_incoming.push((pb, vi as u32));
                    if !(self.c.is_punct(b',') && self.c.peek_at(1) == Tok::Punct(b'[')) {
                        break;
                    }
                    self.c.bump();
                }
                let incoming = (
                    inc_start as u32,
                    (self.phi_incoming.len() - inc_start) as u32,
                );
                match leaves {
                    // An aggregate phi is one block parameter per leaf.
                    Some(ls) => {
                        let mut out = Vec::with_capacity(ls.len());
                        for (k, (_, _, lt)) in ls.into_iter().enumerate() {
                            out.push(self.f.dfg.append_block_param(b, lt));
                            self.push_phi(
                                b,
                                PhiRec {
                                    ty,
                                    leaf: Some(k),
                                    tok: op_i,
                                    incoming,
                                },
                            );
                        }
                        agg = Some(out);
                        None
                    }
                    None => {
                        let v = self.f.dfg.append_block_param(b, st);
                        self.push_phi(
                            b,
                            PhiRec {
                                ty,
                                leaf: None,
                                tok: op_i,
                                incoming,
                            },
                        );
                        Some(v)
                    }
                }
            }
            "freeze" => {
                let (_, is_agg, vs) = self.typed_multi()?;
                let mut out = Vec::with_capacity(vs.len());
                for v in vs {
                    let st = self.f.dfg.value_type(v);
                    out.push(self.unary(Some(b), Opcode::Freeze, v, st));
                }
                if is_agg {
                    agg = Some(out);
                    None
                } else {
                    Some(out[0])
                }
            }
            "tail" | "musttail" | "notail" | "call" => {
                if op != "call" {
                    self.c.expect_word("call")?;
                }
                let r = self.call(b, op_i)?;
                agg = self.call_agg.take();
                r
            }
            "br" => {
                is_term = true;
                if self.c.eat_word("label") {
                    let t = self.label()?;
                    let dest = BlockCall::new(t.0, &[], &mut self.f.dfg.value_lists);
                    self.terminator(b, InstructionData::Jump { dest }, &[t]);
                } else {
                    let ci = self.c.i;
                    let (ct, cv) = self.typed_value()?;
                    if self.scalar(ct, ci)? != Type::I1 {
                        return Err(self.perr(ci, "branch condition must be i1"));
                    }
                    self.c.expect_punct(b',')?;
                    self.c.expect_word("label")?;
                    let t1 = self.label()?;
                    self.c.expect_punct(b',')?;
                    self.c.expect_word("label")?;
                    let t2 = self.label()?;
                    let pool = &mut self.f.dfg.value_lists;
                    let blocks = [
                        BlockCall::new(t1.0, &[], pool),
                        BlockCall::new(t2.0, &[], pool),
                    ];
                    self.terminator(b, InstructionData::Brif { arg: cv, blocks }, &[t1, t2]);
                }
                None
            }
            "switch" => {
                is_term = true;
                let (ty, v) = self.typed_value()?;
                let st = self.scalar(ty, op_i)?;
                if !st.is_int() {
                    return Err(self.perr(op_i, "switch on a non-integer"));
                }
                self.c.expect_punct(b',')?;
                self.c.expect_word("label")?;
                let def = self.label()?;
                self.c.expect_punct(b'[')?;
                let mut targets = vec![def];
                let mut cases = Vec::new();
                let mut seen = rustc_hash::FxHashSet::default();
                while !self.c.eat_punct(b']') {
                    let ki = self.c.i;
                    parse_type(&mut self.c, &mut self.st.types)?;
                    let k = match parse_value(&mut self.c, &mut self.st.types)? {
                        Operand::Const(CVal::Int(i)) => {
                            sext_bits(trunc_bits(i, st.bits()), st.bits())
                        }
                        Operand::Const(CVal::Bool(x)) => -i64::from(x),
                        _ => return Err(self.unsup(ki, "non-integer switch case")),
                    };
                    if !seen.insert(k) {
                        return Err(self.perr(ki, "duplicate switch case value"));
                    }
                    self.c.expect_punct(b',')?;
                    self.c.expect_word("label")?;
                    let t = self.label()?;
                    targets.push(t);
                    cases.push(k);
                }
                let pool = &mut self.f.dfg.value_lists;
                let default = BlockCall::new(def.0, &[], pool);
                let cases = cases
                    .into_iter()
                    .zip(&targets[1..])
                    .map(|(k, t)| (k, BlockCall::new(t.0, &[], pool)))
                    .collect();
                let table = self
                    .f
                    .dfg
                    .make_jump_table(JumpTableData::new(default, cases));
                self.terminator(b, InstructionData::BrTable { arg: v, table }, &targets);
                None
            }
            "ret" => {
                is_term = true;
                let mut args = Vec::new();
                if let Some((rty, out)) = self.agg_ret {
                    // Store the leaves through the hidden out-pointer; return nothing.
                    let vi = self.c.i;
                    let (ty, _, vs) = self.typed_multi()?;
                    if ty != rty {
                        return Err(
                            self.perr(vi, "return value does not match the function's type")
                        );
                    }
                    let ls = self.agg_leaves(ty, vi)?.unwrap_or_default();
                    for (v, (off, _, _)) in vs.into_iter().zip(ls) {
                        let a = self.offset_ptr(b, out, off);
                        self.f.append_inst(
                            b,
                            InstructionData::Store {
                                args: [v, a],
                                flags: MemFlags::default(),
                            },
                            None,
                        );
                    }
                } else if !self.c.eat_word("void") {
                    let (_, v) = self.typed_value()?;
                    args.push(v);
                }
                let want = self.f.sig.ret;
                let got = args.first().map(|&v| self.f.dfg.value_type(v));
                if want != got {
                    return Err(self.perr(op_i, "return value does not match the function's type"));
                }
                let args = ValueList::from_slice(&args, &mut self.f.dfg.value_lists);
                self.f
                    .append_inst(b, InstructionData::Return { args }, None);
                None
            }
            "unreachable" => {
                is_term = true;
                self.f.append_inst(
                    b,
                    InstructionData::Nullary {
                        opcode: Opcode::Unreachable,
                    },
                    None,
                );
                None
            }
            "extractvalue" => {
                let (is_agg, vs) = self.extractvalue(b, op_i)?;
                if is_agg {
                    agg = Some(vs);
                    None
                } else {
                    Some(vs[0])
                }
            }
            "insertvalue" => {
                agg = Some(self.insertvalue(op_i)?);
                None
            }
            "atomicrmw" => Some(self.atomicrmw(b, op_i)?),
            "cmpxchg" => {
                let (old, expected) = self.cmpxchg(b, op_i)?;
                let n = match name.take() {
                    Some(n) => n,
                    None => self.fresh_number(),
                };
                self.note_number(&n);
                if let Some(NameState::Def(_) | NameState::CasPair(..)) = self.names.get(&n) {
                    return Err(self.perr(start, format!("value %{n} redefined")));
                }
                if let Some(NameState::Fwd(_)) = self.names.get(&n) {
                    return Err(self.unsup(
                        start,
                        format!("aggregate value %{n} used before its definition"),
                    ));
                }
                self.names.insert(n, NameState::CasPair(old, expected));
                None
            }
            "fence" => {
                let (order, scope) = self.atomic_ordering()?;
                // Acquire and release fences become acq_rel ones: stronger, and all PTX has.
                let order = if order == MemOrder::SeqCst {
                    MemOrder::SeqCst
                } else {
                    MemOrder::AcqRel
                };
                self.f
                    .append_inst(b, InstructionData::Fence { order, scope }, None);
                None
            }
            "invoke" | "resume" | "landingpad" | "indirectbr" | "callbr" | "va_arg"
            | "extractelement" | "insertelement" | "shufflevector" | "catchswitch" | "catchret"
            | "cleanupret" | "catchpad" | "cleanuppad" => return Err(self.unsup(op_i, op)),
            _ => return Err(self.perr(op_i, format!("unknown instruction `{op}`"))),
        };
        if let Some(vs) = agg {
            self.bind_agg(name.take(), vs, start)?;
        }
        match (result, name) {
            (Some(v), name) => self.bind(name, v, start)?,
            // LLVM's rule: a `void` call has no value to name.
            (None, Some(_))
                if self.call_void && matches!(op, "call" | "tail" | "musttail" | "notail") =>
            {
                return Err(self.perr(start, "instructions returning void cannot have a name"))
            }
            (None, Some(n)) if !matches!(op, "call" | "tail" | "musttail" | "notail") => {
                return Err(self.perr(
                    start,
                    format!("instruction `{op}` has no result to name %{n}"),
                ))
            }
            // A dropped intrinsic's result: nothing may use it.
            (None, _) => {}
        }
        if op == "br" {
            self.loop_attachment(b)?;
        }
        self.c.skip_attachments()?;
        // Whatever follows must start a new statement on a new line.
        let prev = self.c.i.saturating_sub(1);
        let ni = self.c.i.min(last);
        let ends = self.c.toks.is_label(ni) || self.c.toks.is_eof(ni) || self.c.is_punct(b'}');
        if !ends && self.c.toks.same_line(prev, self.c.i) {
            let next = self.c.tok();
            return Err(self.c.err_at(
                next,
                format!("unexpected {} after instruction", describe(next.tok)),
            ));
        }
        Ok((is_term, is_phi))
    }

    /// Skip fast-math flags; were `contract` or `fast` among them?
    fn fmf_contract(&mut self) -> bool {
        let mut contract = false;
        while let Tok::Word(w) = self.c.peek() {
            match w {
                "fast" | "contract" => contract = true,
                "nnan" | "ninf" | "nsz" | "arcp" | "afn" | "reassoc" => {}
                _ => break,
            }
            self.c.bump();
        }
        contract
    }

    fn skip_fmf(&mut self) {
        while matches!(self.c.peek(), Tok::Word(w) if matches!(w, "fast" | "nnan" | "ninf" | "nsz" | "arcp" | "contract" | "afn" | "reassoc"))
        {
            self.c.bump();
        }
    }

    /// Skip `, align N` (alignment is not kept: Gyre accesses are naturally aligned).
    fn skip_align(&mut self) -> PResult<()> {
        while self.c.is_punct(b',') && matches!(self.c.peek_at(1), Tok::Word(w) if w == "align") {
            self.c.bump();
            self.c.bump();
            self.c.expect_int()?;
        }
        Ok(())
    }

    /// A `%label` reference after `label`.
    /// Record the next `phi` of block `b`. A block's `phi`s come before its other
    /// instructions, with no other block's in between, so they stay one range.
    fn push_phi(&mut self, b: Block, p: PhiRec) {
        let r = &mut self.phis[b];
        if r.1 == 0 {
            r.0 = self.phi_recs.len() as u32;
        }
        r.1 += 1;
        self.phi_recs.push(p);
    }

    /// The `phi`s of block `b`.
    fn phis_of(&self, b: Block) -> &[PhiRec] {
        let (start, n) = self.phis[b];
        &self.phi_recs[start as usize..(start + n) as usize]
    }

    fn label(&mut self) -> PResult<(Block, usize)> {
        let li = self.c.i;
        let l = self.c.expect_local()?;
        Ok((self.block_ref(l, li), li))
    }

    fn terminator(&mut self, b: Block, data: InstructionData, targets: &[(Block, usize)]) {
        let inst = self.f.append_inst(b, data, None).0;
        for (idx, &(t, tok)) in targets.iter().enumerate() {
            self.edges.push(Edge {
                inst,
                idx: idx as u32,
                target: t,
                tok: tok as u32,
            });
        }
    }

    fn alloca(&mut self, b: Block, op_i: usize) -> PResult<Value> {
        // `b` may be the entry's tail after a split; the LLVM block is what counts.
        if self.cur_head != self.entry {
            return Err(self.unsup(op_i, "alloca outside the entry block"));
        }
        if self.c.eat_word("inalloca") {
            return Err(self.unsup(op_i, "inalloca"));
        }
        let ty = parse_type(&mut self.c, &mut self.st.types)?;
        let (size, abi) = self
            .st
            .types
            .size_align(ty)
            .map_err(|m| self.unsup(op_i, m))?;
        let mut n: u64 = 1;
        let mut align = abi;
        let mut space = 0u32;
        while self.c.is_punct(b',') {
            match self.c.peek_at(1) {
                Tok::Word("align") => {
                    self.c.bump();
                    self.c.bump();
                    let a = self.c.expect_int()?;
                    align = u64::try_from(a).unwrap_or(1).max(1);
                }
                // A fused `addrspace(N)*` is rejected (at its `*`) by the same call.
                Tok::Word("addrspace") | Tok::AddrSpacePtr(_) => {
                    self.c.bump();
                    space = super::parse::parse_opt_addrspace(&mut self.c)?.unwrap_or(0);
                }
                Tok::Meta(_) => break,
                _ => {
                    self.c.bump();
                    let ci = self.c.i;
                    parse_type(&mut self.c, &mut self.st.types)?;
                    match parse_value(&mut self.c, &mut self.st.types)? {
                        Operand::Const(CVal::Int(k)) if k >= 0 => n = k as u64,
                        _ => return Err(self.unsup(ci, "dynamically sized alloca")),
                    }
                }
            }
        }
        let total = size
            .checked_mul(n)
            .and_then(|t| u32::try_from(t).ok())
            .ok_or_else(|| self.unsup(op_i, "alloca too large"))?;
        if !align.is_power_of_two() || align > 1 << 16 {
            return Err(self.perr(op_i, "alloca alignment must be a power of two"));
        }
        let slot = self.f.slots.push(SlotData {
            size: total,
            align: align as u32,
        });
        let local = Type::Ptr(AddrSpace::Local);
        let v = self.emit(Some(b), InstructionData::SlotAddr { slot }, local);
        Ok(match space {
            0 => self.unary(
                Some(b),
                Opcode::AddrspaceCast,
                v,
                Type::Ptr(AddrSpace::Generic),
            ),
            5 => v,
            s => return Err(self.unsup(op_i, format!("alloca in address space {s}"))),
        })
    }

    // ---- atomics ----------------------------------------------------------------------

    /// `[syncscope("...")] ordering`. LLVM's default scope is the whole system;
    /// `singlethread` (ordering with a signal handler of the same thread) becomes the
    /// CTA scope, the narrowest PTX has, and `block`/`device` the CTA and GPU scopes.
    fn atomic_ordering(&mut self) -> PResult<(MemOrder, MemScope)> {
        let mut scope = MemScope::Sys;
        if self.c.eat_word("syncscope") {
            self.c.expect_punct(b'(')?;
            let si = self.c.i;
            let name = match self.c.peek() {
                Tok::Str(b) => String::from_utf8_lossy(b),
                _ => return Err(self.c.expected("a sync scope name")),
            };
            self.c.bump();
            self.c.expect_punct(b')')?;
            scope = match &*name {
                "singlethread" | "block" | "cta" => MemScope::Cta,
                "device" | "gpu" => MemScope::Gpu,
                "" | "system" => MemScope::Sys,
                _ => return Err(self.unsup(si, format!("sync scope \"{name}\""))),
            };
        }
        let oi = self.c.i;
        let order = match self.c.peek() {
            Tok::Word(w) => match w {
                "monotonic" => MemOrder::Relaxed,
                "acquire" => MemOrder::Acquire,
                "release" => MemOrder::Release,
                "acq_rel" => MemOrder::AcqRel,
                "seq_cst" => MemOrder::SeqCst,
                "unordered" => return Err(self.unsup(oi, "atomic ordering unordered")),
                _ => return Err(self.c.expected("an atomic ordering")),
            },
            _ => return Err(self.c.expected("an atomic ordering")),
        };
        self.c.bump();
        Ok((order, scope))
    }

    /// The address operand of an atomic: a pointer Gyre atomics accept.
    fn atomic_ptr(&mut self) -> PResult<Value> {
        let pi = self.c.i;
        let (_, p) = self.typed_value()?;
        match self.f.dfg.value_type(p) {
            Type::Ptr(AddrSpace::Global | AddrSpace::Shared | AddrSpace::Generic) => Ok(p),
            Type::Ptr(a) => Err(self.unsup(pi, format!("atomic on {a} memory"))),
            _ => Err(self.perr(pi, "atomic address is not a pointer")),
        }
    }

    fn atomicrmw(&mut self, b: Block, op_i: usize) -> PResult<Value> {
        if self.c.eat_word("volatile") {
            return Err(self.unsup(op_i, "volatile atomic"));
        }
        let oi = self.c.i;
        let opname = match self.c.peek() {
            Tok::Word(w) => w,
            _ => return Err(self.c.expected("an atomicrmw operation")),
        };
        self.c.bump();
        let p = self.atomic_ptr()?;
        self.c.expect_punct(b',')?;
        let (_, v) = self.typed_value()?;
        let t = self.f.dfg.value_type(v);
        let op = match (opname, t) {
            ("xchg", Type::I32 | Type::I64) => AtomicOp::Exch,
            ("add", Type::I32 | Type::I64) | ("fadd", Type::F32 | Type::F64) => AtomicOp::Add,
            ("and", Type::I32 | Type::I64) => AtomicOp::And,
            ("or", Type::I32 | Type::I64) => AtomicOp::Or,
            ("xor", Type::I32 | Type::I64) => AtomicOp::Xor,
            ("min", Type::I32 | Type::I64) => AtomicOp::Smin,
            ("max", Type::I32 | Type::I64) => AtomicOp::Smax,
            ("umin", Type::I32 | Type::I64) => AtomicOp::Umin,
            ("umax", Type::I32 | Type::I64) => AtomicOp::Umax,
            _ => return Err(self.unsup(oi, format!("atomicrmw {opname} on {t}"))),
        };
        let (order, scope) = self.atomic_ordering()?;
        self.skip_align()?;
        Ok(self.emit(
            Some(b),
            InstructionData::AtomicRmw {
                op,
                args: [p, v],
                order,
                scope,
            },
            t,
        ))
    }

    fn cmpxchg(&mut self, b: Block, op_i: usize) -> PResult<(Value, Value)> {
        // A weak cmpxchg may fail spuriously; the strong one Gyre has is a refinement.
        self.c.eat_word("weak");
        if self.c.eat_word("volatile") {
            return Err(self.unsup(op_i, "volatile atomic"));
        }
        let p = self.atomic_ptr()?;
        self.c.expect_punct(b',')?;
        let ei = self.c.i;
        let (_, e) = self.typed_value()?;
        self.c.expect_punct(b',')?;
        let (_, n) = self.typed_value()?;
        let t = self.f.dfg.value_type(e);
        if !matches!(t, Type::I32 | Type::I64) || self.f.dfg.value_type(n) != t {
            return Err(self.unsup(ei, format!("cmpxchg on {t}")));
        }
        let (success, scope) = self.atomic_ordering()?;
        let (failure, _) = self.atomic_ordering()?;
        self.skip_align()?;
        // One order for both outcomes: the stronger (a failure order is never release).
        let order = match (success, failure) {
            (MemOrder::SeqCst, _) | (_, MemOrder::SeqCst) => MemOrder::SeqCst,
            (MemOrder::Release, MemOrder::Acquire) => MemOrder::AcqRel,
            (o, MemOrder::Relaxed) => o,
            (MemOrder::Relaxed, o) => o,
            (o, _) => o,
        };
        let old = self.emit(
            Some(b),
            InstructionData::AtomicCas {
                args: [p, e, n],
                order,
                scope,
            },
            t,
        );
        Ok((old, e))
    }

    /// `extractvalue T %agg, idx...`: the leaves at the path (`true` if they form an
    /// aggregate). Of a `cmpxchg` result `{T, i1}`, field 1 is `old == expected`.
    fn extractvalue(&mut self, b: Block, op_i: usize) -> PResult<(bool, Vec<Value>)> {
        let ti = self.c.i;
        let ty = parse_type(&mut self.c, &mut self.st.types)?;
        let pair = match self.c.peek() {
            Tok::Local(n) => match self.names.get(n) {
                Some(NameState::CasPair(old, e)) => Some((*old, *e)),
                _ => None,
            },
            _ => None,
        };
        let Some((old, e)) = pair else {
            let at = self.c.i;
            let op = parse_value(&mut self.c, &mut self.st.types)?;
            if self.agg_leaves(ty, ti)?.is_none() {
                return Err(self.perr(op_i, "extractvalue from a non-aggregate"));
            }
            let vs = self.agg_operand(&op, ty, at)?;
            let path = self.index_path()?;
            let (start, sub) = self
                .st
                .types
                .leaf_path(ty, &path)
                .map_err(|m| self.perr(op_i, m))?;
            let is_agg = self.agg_leaves(sub, op_i)?.is_some();
            let n = self
                .st
                .types
                .leaf_count(sub)
                .map_err(|m| self.unsup(op_i, m))?;
            return Ok((is_agg, vs[start..start + n].to_vec()));
        };
        self.c.bump();
        self.c.expect_punct(b',')?;
        let ii = self.c.i;
        let idx = self.c.expect_int()?;
        match idx {
            0 => Ok((false, vec![old])),
            1 => Ok((
                false,
                vec![self.emit(
                    Some(b),
                    InstructionData::IntCompare {
                        cond: IntCC::Eq,
                        args: [old, e],
                    },
                    Type::I1,
                )],
            )),
            _ => Err(self.perr(ii, "extractvalue index out of range")),
        }
    }

    // ---- calls ------------------------------------------------------------------------

    /// `call T asm [sideeffect] "TEXT", "CONSTRAINTS"(args)`: inline PTX has no Gyre
    /// meaning in general, but CUDA's headers use a few one-instruction idioms that read a
    /// special register; those become the same IR as the register read, anything else is
    /// `unsupported: inline asm "TEXT"`.
    fn inline_asm(&mut self, b: Block, ret: TyId, ci: usize) -> PResult<Option<Value>> {
        self.c.bump();
        while let Tok::Word(w) = self.c.peek() {
            if !matches!(w, "sideeffect" | "alignstack" | "inteldialect" | "unwind") {
                break;
            }
            self.c.bump();
        }
        let Tok::Str(text) = self.c.peek() else {
            return Err(self.c.expected("the inline asm text"));
        };
        self.c.bump();
        self.c.expect_punct(b',')?;
        let Tok::Str(_) = self.c.peek() else {
            return Err(self.c.expected("the inline asm constraints"));
        };
        self.c.bump();
        let text = String::from_utf8_lossy(text);
        // `{ mov.u32 $0, %laneid; }` and `mov.u32 $0, %laneid;` are the same idiom.
        let norm: String = text
            .replace(['{', '}', '\n', '\t'], " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let unsup = |l: &Self| l.unsup(ci, format!("inline asm \"{}\"", norm));
        let reg = norm
            .strip_prefix("mov.u32 $0, %")
            .and_then(|r| r.strip_suffix(';'))
            .map(str::trim);
        let returns_i32 = self.st.types.scalar(ret) == Ok(Type::I32);
        // No operands: `()`.
        if !(self.c.eat_punct(b'(') && self.c.eat_punct(b')') && returns_i32) {
            return Err(unsup(self));
        }
        let lane = |l: &mut Self| {
            l.emit(
                Some(b),
                InstructionData::Sreg {
                    reg: SpecialReg::LaneId,
                },
                Type::I32,
            )
        };
        let bin = |l: &mut Self, opcode: Opcode, a: Value, c: Value| {
            l.emit(
                Some(b),
                InstructionData::Binary {
                    opcode,
                    args: [a, c],
                    flags: gyre_ir::IntFlags::NONE,
                },
                Type::I32,
            )
        };
        // %lanemask_lt = (1 << lane) - 1, _le = (2 << lane) - 1 (wraps to all ones at lane
        // 31), _eq = 1 << lane, and _ge / _gt their complements.
        let v = match reg {
            Some("laneid") => lane(self),
            Some(
                m @ ("lanemask_lt" | "lanemask_le" | "lanemask_eq" | "lanemask_ge" | "lanemask_gt"),
            ) => {
                let l = lane(self);
                let base = if matches!(m, "lanemask_le" | "lanemask_gt") {
                    2
                } else {
                    1
                };
                let base = self.iconst(Type::I32, base);
                let one = self.iconst(Type::I32, 1);
                let bit = bin(self, Opcode::Shl, base, l);
                if m == "lanemask_eq" {
                    bit
                } else {
                    let below = bin(self, Opcode::Isub, bit, one);
                    if matches!(m, "lanemask_lt" | "lanemask_le") {
                        below
                    } else {
                        let ones = self.iconst(Type::I32, u64::from(u32::MAX));
                        bin(self, Opcode::Xor, below, ones)
                    }
                }
            }
            _ => return Err(unsup(self)),
        };
        self.call_attrs(false)?;
        Ok(Some(v))
    }

    /// Skip a call's function attributes on its line (`#3`, `nounwind`, `"key"="v"`);
    /// operand bundles are only allowed on hints (`hint`), since anywhere else they
    /// carry semantics. Metadata attachments are left to the caller.
    fn call_attrs(&mut self, hint: bool) -> PResult<()> {
        let anchor = self.c.i - 1;
        loop {
            let t = self.c.tok();
            if !self.c.toks.same_line(anchor, self.c.i) {
                return Ok(());
            }
            match t.tok {
                // Bundles on dropped hints (`llvm.assume(i1 true) ["align"(...)]`).
                Tok::Punct(b'[') if hint => self.c.skip_balanced()?,
                Tok::Punct(b'[') => return Err(self.unsup(self.c.i, "operand bundle")),
                Tok::Word(_) | Tok::AttrRef(_) | Tok::Str(_) => {
                    self.c.bump();
                    if self.c.is_punct(b'(') {
                        self.c.skip_balanced()?;
                    } else if self.c.is_punct(b'=') {
                        self.c.bump();
                        self.c.bump();
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn call(&mut self, b: Block, op_i: usize) -> PResult<Option<Value>> {
        self.skip_fmf();
        // Calling convention and return attributes.
        while !is_type_start(self.c.peek()) {
            match self.c.peek() {
                Tok::Word(w) => {
                    let takes = matches!(w, "cc" | "align" | "dereferenceable");
                    self.c.bump();
                    if self.c.is_punct(b'(') {
                        self.c.skip_balanced()?;
                    } else if takes && matches!(self.c.peek(), Tok::Int(_)) {
                        self.c.bump();
                    }
                }
                _ => return Err(self.c.expected("a return type")),
            }
        }
        let ret = parse_ret_type(&mut self.c, &mut self.st.types)?;
        self.call_void = matches!(self.st.types.get(ret), LType::Void);
        if self.c.is_punct(b'(') {
            // The callee's function type, spelled out for varargs.
            self.c.skip_balanced()?;
            while self.c.eat_punct(b'*') {}
        }
        let ci = self.c.i;
        let callee = match self.c.peek() {
            Tok::Global(n) => n,
            Tok::Local(_) => return Err(self.unsup(ci, "indirect call")),
            Tok::Word("asm") => return self.inline_asm(b, ret, ci),
            _ => return Err(self.unsup(ci, "call through a constant expression")),
        };
        self.c.bump();
        self.c.expect_punct(b'(')?;
        let mut args: Vec<(TyId, Value, usize)> = Vec::new();
        // Per LLVM argument: its first position in `args` and its leaf count (0 for a
        // dropped operand); an aggregate argument is passed as its leaves.
        let mut arg_pos: Vec<(usize, usize)> = Vec::new();
        let mut any_agg = false;
        self.call_aligns.clear();
        if !self.c.eat_punct(b')') {
            loop {
                let ai = self.c.i;
                let ty = parse_type(&mut self.c, &mut self.st.types)?;
                if matches!(self.st.types.get(ty), LType::Metadata) {
                    // Debug and scope intrinsics: `metadata !5`, `metadata i32 %x`.
                    if is_type_start(self.c.peek()) {
                        parse_type(&mut self.c, &mut self.st.types)?;
                        parse_value(&mut self.c, &mut self.st.types)?;
                    } else {
                        self.c.skip_metadata_value()?;
                    }
                } else {
                    let attrs = skip_param_attrs(&mut self.c, &mut self.st.types)?;
                    if let Some(a) = attrs.by_copy {
                        return Err(self.unsup(ai, format!("{a} argument")));
                    }
                    let vi = self.c.i;
                    let op = parse_value(&mut self.c, &mut self.st.types)?;
                    let first = args.len();
                    // Dropped intrinsics may take operands Gyre can't type: ignore those.
                    match self.st.types.scalar(ty) {
                        Ok(_) => {
                            self.no_odd(ty, ai)?;
                            let v = self.use_operand(&op, ty, vi)?;
                            args.push((ty, v, vi));
                            // 0: no `align` attribute.
                            self.call_aligns.push(attrs.align.unwrap_or(0));
                        }
                        Err(_) if is_dropped_intrinsic(callee) => {}
                        Err(m) => match self.agg_leaves(ty, ai) {
                            Ok(Some(ls)) => {
                                any_agg = true;
                                let vs = self.agg_operand(&op, ty, vi)?;
                                for (v, (_, lt, _)) in vs.into_iter().zip(ls) {
                                    args.push((lt, v, vi));
                                    self.call_aligns.push(1);
                                }
                            }
                            _ => return Err(self.unsup(ai, m)),
                        },
                    }
                    arg_pos.push((first, args.len() - first));
                }
                if self.c.eat_punct(b')') {
                    break;
                }
                self.c.expect_punct(b',')?;
            }
        }
        self.call_attrs(is_dropped_intrinsic(callee))?;
        // Newer LLVM declares intrinsics implicitly.
        let info = match self.st.funcs.get(callee) {
            Some(i) => i.callee.clone(),
            None if callee.starts_with("llvm.") => Callee::Declared,
            None => return Err(self.perr(ci, format!("call to undefined function @{callee}"))),
        };
        let mut arg_vals: Vec<Value> = args.iter().map(|a| a.1).collect();
        match info {
            Callee::Func(id) => {
                if self.st.module.functions[id].kind == gyre_ir::FuncKind::Kernel {
                    return Err(self.unsup(ci, format!("call to kernel @{callee}")));
                }
                // `byval`: the callee gets a pointer to a fresh copy, made here.
                let byval = self
                    .st
                    .funcs
                    .get(callee)
                    .map(|fi| fi.byval.clone())
                    .unwrap_or_default();
                for (k, bt) in byval.iter().enumerate() {
                    let (Some(bt), Some(&(pos, 1))) = (bt, arg_pos.get(k)) else {
                        continue;
                    };
                    let src = arg_vals[pos];
                    let pt = self.f.dfg.value_type(src);
                    let (size, talign) = self
                        .st
                        .types
                        .size_align(*bt)
                        .map_err(|m| self.unsup(args[pos].2, m))?;
                    // `align` on a byval argument is the known alignment of the source
                    // (LLVM); without it, the type's.
                    let src_align = match self.call_aligns[pos] {
                        0 => talign,
                        a => a,
                    }
                    .clamp(1, 1 << 16);
                    let align = talign.max(src_align).min(1 << 16);
                    let size32 = u32::try_from(size)
                        .map_err(|_| self.unsup(args[pos].2, "byval argument too large"))?;
                    let slot = self.f.slots.push(SlotData {
                        size: size32,
                        align: align as u32,
                    });
                    let local = Type::Ptr(AddrSpace::Local);
                    let mut dst = self.emit(None, InstructionData::SlotAddr { slot }, local);
                    let pieces = self
                        .type_pieces(*bt)
                        .filter(|ps| ps.iter().all(|&(_, s)| s <= src_align));
                    self.copy_bytes(b, dst, src, size, src_align, false, pieces, args[pos].2)?;
                    if pt != local {
                        if pt != Type::Ptr(AddrSpace::Generic) {
                            return Err(
                                self.unsup(args[pos].2, format!("byval argument of type {pt}"))
                            );
                        }
                        dst = self.unary(None, Opcode::AddrspaceCast, dst, pt);
                    }
                    arg_vals[pos] = dst;
                }
                // An aggregate result comes back through a buffer of the caller's.
                let ret_leaves = match self.st.types.get(ret) {
                    LType::Void => None,
                    _ => self.agg_leaves(ret, op_i)?,
                };
                let mut out_buf = None;
                if let Some(ls) = &ret_leaves {
                    let (size, align) = self
                        .st
                        .types
                        .size_align(ret)
                        .map_err(|m| self.unsup(op_i, m))?;
                    let size = u32::try_from(size)
                        .map_err(|_| self.unsup(op_i, "aggregate result too large"))?;
                    let slot = self.f.slots.push(SlotData {
                        size,
                        align: align.clamp(1, 1 << 16) as u32,
                    });
                    let p = self.emit(
                        None,
                        InstructionData::SlotAddr { slot },
                        Type::Ptr(AddrSpace::Local),
                    );
                    arg_vals.push(p);
                    out_buf = Some((p, ls.clone()));
                }
                let sig = self.st.module.functions[id].sig.clone();
                let got: Vec<Type> = arg_vals.iter().map(|&v| self.f.dfg.value_type(v)).collect();
                if got != sig.params {
                    return Err(self.perr(
                        ci,
                        format!("arguments do not match the signature of @{callee}"),
                    ));
                }
                let rt = match self.st.types.get(ret) {
                    LType::Void => None,
                    _ if out_buf.is_some() => None,
                    _ => Some(self.scalar(ret, op_i)?),
                };
                if rt != sig.ret {
                    return Err(self.perr(
                        ci,
                        format!("return type does not match the signature of @{callee}"),
                    ));
                }
                let list = ValueList::from_slice(&arg_vals, &mut self.f.dfg.value_lists);
                let (_, v) = self.f.append_inst(
                    b,
                    InstructionData::Call {
                        func: id,
                        args: list,
                    },
                    rt,
                );
                if let Some((p, ls)) = out_buf {
                    let mut vs = Vec::with_capacity(ls.len());
                    for (off, _, lt) in ls {
                        let a = self.offset_ptr(b, p, off);
                        vs.push(self.emit(
                            Some(b),
                            InstructionData::Load {
                                ptr: a,
                                flags: MemFlags::default(),
                            },
                            lt,
                        ));
                    }
                    self.call_agg = Some(vs);
                }
                Ok(v)
            }
            Callee::Declared if any_agg => {
                Err(self.unsup(ci, format!("aggregate argument to @{callee}")))
            }
            Callee::Declared => {
                if !matches!(self.st.types.get(ret), LType::Void)
                    && self.agg_leaves(ret, op_i)?.is_some()
                {
                    return Err(self.unsup(ci, format!("aggregate result of @{callee}")));
                }
                let rt = match self.st.types.get(ret) {
                    LType::Void => None,
                    _ => self.st.types.scalar(ret).ok(),
                };
                if let Some(r) = callee.strip_prefix("llvm.") {
                    self.intrinsic(b, r, callee, rt, &arg_vals, ci)
                } else if let Some(r) = callee.strip_prefix("__nv_") {
                    self.libdevice(b, r, callee, rt, &arg_vals, ci)
                } else if callee == "vprintf" || callee == "__assertfail" {
                    self.syscall(b, callee, rt, &arg_vals, ci)
                } else {
                    Err(self.unsup(ci, format!("call to external function @{callee}")))
                }
            }
        }
    }

    /// The PTX system calls clang emits for device `printf` (`i32 @vprintf(i8*, i8*)`)
    /// and `assert` (`void @__assertfail(i8*, i8*, i32, i8*, i64)`, whose last argument,
    /// the character size, must be the constant 1: CUDA passes nothing else).
    fn syscall(
        &mut self,
        b: Block,
        callee: &str,
        rt: Option<Type>,
        args: &[Value],
        at: usize,
    ) -> PResult<Option<Value>> {
        let g = Type::Ptr(AddrSpace::Generic);
        let tys: Vec<Type> = args.iter().map(|&a| self.f.dfg.value_type(a)).collect();
        let bad_sig = |l: &Self| l.perr(at, format!("unexpected signature for @{callee}"));
        if callee == "vprintf" {
            if tys != [g, g] || rt != Some(Type::I32) {
                return Err(bad_sig(self));
            }
            let v = self.emit(
                Some(b),
                InstructionData::Vprintf {
                    args: [args[0], args[1]],
                },
                Type::I32,
            );
            return Ok(Some(v));
        }
        if tys != [g, g, Type::I32, g, Type::I64] || rt.is_some() {
            return Err(bad_sig(self));
        }
        let one = match self.f.dfg.value_def(args[4]) {
            gyre_ir::ValueDef::Result(i) => {
                matches!(self.f.dfg.inst(i), InstructionData::IntConst { imm: 1 })
            }
            _ => false,
        };
        if !one {
            return Err(self.unsup(
                at,
                "@__assertfail with a character size other than the constant 1".to_string(),
            ));
        }
        self.f.append_inst(
            b,
            InstructionData::AssertFail {
                args: [args[0], args[1], args[2], args[3]],
            },
            None,
        );
        Ok(None)
    }

    /// Warp collectives, fences, NVVM atomics, `barrier.sync` and the clock: `Ok(None)`
    /// when `r` is none of them, `Ok(Some(result))` when it was imported.
    #[allow(clippy::type_complexity)]
    fn warp_intrinsic(
        &mut self,
        b: Block,
        r: &str,
        callee: &str,
        rt: Option<Type>,
        args: &[Value],
        at: usize,
    ) -> PResult<Option<Option<Value>>> {
        let ty_of = |l: &Self, i: usize| l.f.dfg.value_type(args[i]);
        let bad_sig = |l: &Self| l.perr(at, format!("unexpected signature for @{callee}"));
        if let Some(rest) = r.strip_prefix("nvvm.shfl.sync.") {
            let (mode, ty) = rest.split_once('.').unwrap_or((rest, ""));
            let mode = ShflMode::from_name(mode)
                .filter(|_| matches!(ty, "i32" | "f32"))
                .ok_or_else(|| self.unsup(at, format!("intrinsic @{callee}")))?;
            self.check_arity(callee, args, 4, at)?;
            let vt = ty_of(self, 1);
            if ![0, 2, 3].iter().all(|&i| ty_of(self, i) == Type::I32)
                || !matches!(vt, Type::I32 | Type::F32)
            {
                return Err(bad_sig(self));
            }
            let v = self.emit(
                Some(b),
                InstructionData::Shfl {
                    mode,
                    args: [args[1], args[2], args[3], args[0]],
                },
                vt,
            );
            return self.op_result(v, rt, callee, at).map(Some);
        }
        if let Some(mode) = r
            .strip_prefix("nvvm.vote.")
            .and_then(|m| m.strip_suffix(".sync"))
        {
            let mode = VoteMode::from_name(mode)
                .ok_or_else(|| self.unsup(at, format!("intrinsic @{callee}")))?;
            self.check_arity(callee, args, 2, at)?;
            if ty_of(self, 0) != Type::I32 || ty_of(self, 1) != Type::I1 {
                return Err(bad_sig(self));
            }
            let t = if mode == VoteMode::Ballot {
                Type::I32
            } else {
                Type::I1
            };
            let v = self.emit(
                Some(b),
                InstructionData::Vote {
                    mode,
                    args: [args[1], args[0]],
                },
                t,
            );
            return self.op_result(v, rt, callee, at).map(Some);
        }
        match r {
            "nvvm.bar.warp.sync" => {
                self.check_arity(callee, args, 1, at)?;
                if ty_of(self, 0) != Type::I32 || rt.is_some() {
                    return Err(bad_sig(self));
                }
                self.f
                    .append_inst(b, InstructionData::WarpSync { mask: args[0] }, None);
                return Ok(Some(None));
            }
            "nvvm.barrier.sync" => {
                // `barrier.sync 0` is `bar.sync 0`; other ids are named barriers.
                self.check_arity(callee, args, 1, at)?;
                let zero = match self.f.dfg.value_def(args[0]) {
                    ValueDef::Result(i) => {
                        matches!(self.f.dfg.inst(i), InstructionData::IntConst { imm: 0 })
                    }
                    _ => false,
                };
                if !zero {
                    return Err(
                        self.unsup(at, "named barrier (barrier.sync with an id other than 0)")
                    );
                }
                self.f.append_inst(
                    b,
                    InstructionData::Nullary {
                        opcode: Opcode::Barrier,
                    },
                    None,
                );
                return Ok(Some(None));
            }
            "nvvm.membar.cta" | "nvvm.membar.gl" | "nvvm.membar.sys" => {
                // `membar` has the semantics of `fence.sc` (PTX ISA, memory consistency).
                let scope = match r {
                    "nvvm.membar.cta" => MemScope::Cta,
                    "nvvm.membar.gl" => MemScope::Gpu,
                    _ => MemScope::Sys,
                };
                self.f.append_inst(
                    b,
                    InstructionData::Fence {
                        order: MemOrder::SeqCst,
                        scope,
                    },
                    None,
                );
                return Ok(Some(None));
            }
            "nvvm.read.ptx.sreg.clock" | "nvvm.read.ptx.sreg.clock64" => {
                let t = if r.ends_with("64") {
                    Type::I64
                } else {
                    Type::I32
                };
                let v = self.emit(
                    Some(b),
                    InstructionData::Nullary {
                        opcode: Opcode::Clock,
                    },
                    t,
                );
                return self.op_result(v, rt, callee, at).map(Some);
            }
            _ => {}
        }
        // `atomic.load.{inc,dec}.32` (atomicInc/atomicDec, GPU scope) and
        // `atomic.<op>.gen.{i,ui,f}.{cta,sys}` (the `_block`/`_system` CUDA atomics).
        let Some(rest) = r.strip_prefix("nvvm.atomic.") else {
            return Ok(None);
        };
        let parts: Vec<&str> = rest.split('.').collect();
        let (opname, kind, scope) = match parts.as_slice() {
            ["load", op @ ("inc" | "dec"), "32", ..] => (*op, "ui", MemScope::Gpu),
            [op, "gen", kind, sc, ..] => {
                let scope = match *sc {
                    "cta" => MemScope::Cta,
                    "sys" => MemScope::Sys,
                    _ => return Err(self.unsup(at, format!("intrinsic @{callee}"))),
                };
                (*op, *kind, scope)
            }
            _ => return Err(self.unsup(at, format!("intrinsic @{callee}"))),
        };
        let n = if opname == "cas" { 3 } else { 2 };
        self.check_arity(callee, args, n, at)?;
        let p = args[0];
        if !matches!(
            ty_of(self, 0),
            Type::Ptr(AddrSpace::Global | AddrSpace::Shared | AddrSpace::Generic)
        ) {
            return Err(self.unsup(at, format!("intrinsic @{callee}")));
        }
        let vt = ty_of(self, 1);
        if args[1..n].iter().any(|&a| self.f.dfg.value_type(a) != vt) {
            return Err(bad_sig(self));
        }
        let int = matches!(vt, Type::I32 | Type::I64);
        let op = match (opname, kind, int) {
            ("cas", "i" | "ui", true) => {
                let v = self.emit(
                    Some(b),
                    InstructionData::AtomicCas {
                        args: [p, args[1], args[2]],
                        order: MemOrder::Relaxed,
                        scope,
                    },
                    vt,
                );
                return self.op_result(v, rt, callee, at).map(Some);
            }
            ("add", "i" | "ui", true) | ("add", "f", false) => AtomicOp::Add,
            ("exch", "i" | "ui", true) => AtomicOp::Exch,
            ("and", _, true) => AtomicOp::And,
            ("or", _, true) => AtomicOp::Or,
            ("xor", _, true) => AtomicOp::Xor,
            ("min", "i", true) => AtomicOp::Smin,
            ("max", "i", true) => AtomicOp::Smax,
            ("min", "ui", true) => AtomicOp::Umin,
            ("max", "ui", true) => AtomicOp::Umax,
            ("inc", _, true) if vt == Type::I32 => AtomicOp::Inc,
            ("dec", _, true) if vt == Type::I32 => AtomicOp::Dec,
            _ => return Err(self.unsup(at, format!("intrinsic @{callee}"))),
        };
        let v = self.emit(
            Some(b),
            InstructionData::AtomicRmw {
                op,
                args: [p, args[1]],
                order: MemOrder::Relaxed,
                scope,
            },
            vt,
        );
        self.op_result(v, rt, callee, at).map(Some)
    }

    fn check_arity(&self, callee: &str, args: &[Value], n: usize, at: usize) -> PResult<()> {
        if args.len() < n {
            return Err(self.perr(at, format!("@{callee} takes {n} arguments")));
        }
        Ok(())
    }

    /// The result of an intrinsic lowered to one Gyre operation, checked against the
    /// declared return type.
    fn op_result(
        &self,
        v: Value,
        rt: Option<Type>,
        callee: &str,
        at: usize,
    ) -> PResult<Option<Value>> {
        if rt != Some(self.f.dfg.value_type(v)) {
            return Err(self.perr(at, format!("unexpected signature for @{callee}")));
        }
        Ok(Some(v))
    }

    fn intrinsic(
        &mut self,
        b: Block,
        r: &str,
        callee: &str,
        rt: Option<Type>,
        args: &[Value],
        at: usize,
    ) -> PResult<Option<Value>> {
        if let Some(v) = self.warp_intrinsic(b, r, callee, rt, args, at)? {
            return Ok(v);
        }
        if let Some(reg) = r.strip_prefix("nvvm.read.ptx.sreg.") {
            let reg = SpecialReg::from_name(reg)
                .ok_or_else(|| self.unsup(at, format!("special register @{callee}")))?;
            let v = self.emit(Some(b), InstructionData::Sreg { reg }, Type::I32);
            return self.op_result(v, rt, callee, at);
        }
        if r == "nvvm.barrier0" {
            self.f.append_inst(
                b,
                InstructionData::Nullary {
                    opcode: Opcode::Barrier,
                },
                None,
            );
            return Ok(None);
        }
        if is_dropped_intrinsic(callee) {
            return Ok(None);
        }
        if r.starts_with("memcpy.") || r.starts_with("memmove.") || r.starts_with("memset.") {
            self.mem_intrinsic(b, r, callee, args, at)?;
            return Ok(None);
        }
        if let Some(n) = r.strip_prefix("nvvm.") {
            if let Some(v) = self.math_nvvm(b, n, callee, rt, args, at)? {
                return Ok(v);
            }
        }
        let head = r.split('.').next().unwrap_or("");
        let ty_of = |l: &Self, i: usize| l.f.dfg.value_type(args[i]);
        match head {
            "expect" => {
                self.check_arity(callee, args, 1, at)?;
                self.op_result(args[0], rt, callee, at)
            }
            "smin" | "smax" | "umin" | "umax" => {
                self.check_arity(callee, args, 2, at)?;
                let opc = match head {
                    "smin" => Opcode::Smin,
                    "smax" => Opcode::Smax,
                    "umin" => Opcode::Umin,
                    _ => Opcode::Umax,
                };
                if !ty_of(self, 0).is_int() {
                    return Err(self.perr(at, format!("unexpected signature for @{callee}")));
                }
                let v = self.binary(Some(b), opc, args[0], args[1], IntFlags::NONE);
                self.op_result(v, rt, callee, at)
            }
            "ctpop" | "ctlz" | "cttz" => {
                self.check_arity(callee, args, 1, at)?;
                let opc = match head {
                    "ctpop" => Opcode::Popcnt,
                    "ctlz" => Opcode::Clz,
                    _ => Opcode::Ctz,
                };
                let t = ty_of(self, 0);
                if !t.is_int() {
                    return Err(self.perr(at, format!("unexpected signature for @{callee}")));
                }
                let v = self.unary(Some(b), opc, args[0], t);
                self.op_result(v, rt, callee, at)
            }
            "abs" => {
                self.check_arity(callee, args, 1, at)?;
                let t = ty_of(self, 0);
                if !t.is_int() {
                    return Err(self.perr(at, format!("unexpected signature for @{callee}")));
                }
                let v = self.abs(b, args[0]);
                self.op_result(v, rt, callee, at)
            }
            "fabs" | "sqrt" | "floor" | "ceil" | "trunc" | "rint" | "nearbyint" | "roundeven" => {
                self.check_arity(callee, args, 1, at)?;
                let opc = match head {
                    "fabs" => Opcode::Fabs,
                    "sqrt" => Opcode::Sqrt,
                    "floor" => Opcode::Floor,
                    "ceil" => Opcode::Ceil,
                    "trunc" => Opcode::Ftrunc,
                    _ => Opcode::Nearest,
                };
                self.float_unary(b, opc, args[0], rt, callee, at)
            }
            "minnum" | "maxnum" => {
                self.check_arity(callee, args, 2, at)?;
                let opc = if head == "minnum" {
                    Opcode::Fmin
                } else {
                    Opcode::Fmax
                };
                self.float_binary(b, opc, args, rt, callee, at)
            }
            "fma" | "fmuladd" => {
                self.check_arity(callee, args, 3, at)?;
                self.fma(b, args, rt, callee, at)
            }
            "ptrmask" => {
                self.check_arity(callee, args, 2, at)?;
                let pt = ty_of(self, 0);
                if !pt.is_ptr() || ty_of(self, 1) != Type::I64 {
                    return Err(self.unsup(at, format!("intrinsic @{callee}")));
                }
                let i = self.unary(Some(b), Opcode::Ptrtoint, args[0], Type::I64);
                let m = self.binary(Some(b), Opcode::And, i, args[1], IntFlags::NONE);
                let v = self.unary(Some(b), Opcode::Inttoptr, m, pt);
                self.op_result(v, rt, callee, at)
            }
            _ => match self.math_llvm(b, head, callee, rt, args, at)? {
                Some(v) => Ok(v),
                None => Err(self.unsup(at, format!("intrinsic @{callee}"))),
            },
        }
    }

    /// `llvm.memcpy/memmove(dst, src, len, volatile)` and `llvm.memset(dst, byte, len,
    /// volatile)`. A constant length is expanded into loads and stores as wide as the
    /// `align` attributes allow (a copy loads everything before it stores, so it is also
    /// a correct `memmove`); a variable one, or one too long to unroll, into a byte
    /// loop ([`Lower::mem_loop`]).
    fn mem_intrinsic(
        &mut self,
        b: Block,
        r: &str,
        callee: &str,
        args: &[Value],
        at: usize,
    ) -> PResult<()> {
        self.check_arity(callee, args, 4, at)?;
        let const_of = |l: &Self, v: Value| match l.f.dfg.value_def(v) {
            gyre_ir::ValueDef::Result(i) => match *l.f.dfg.inst(i) {
                InstructionData::IntConst { imm } => Some(imm),
                _ => None,
            },
            _ => None,
        };
        let len_t = self.f.dfg.value_type(args[2]);
        if !len_t.is_int() || !self.f.dfg.value_type(args[0]).is_ptr() {
            return Err(self.perr(at, format!("unexpected signature for @{callee}")));
        }
        let Some(vol) = const_of(self, args[3]) else {
            return Err(self.perr(at, format!("@{callee}: isvolatile must be a constant")));
        };
        let volatile = vol & 1 != 0;
        let memset = r.starts_with("memset.");
        let second_ok = if memset {
            self.f.dfg.value_type(args[1]) == Type::I8
        } else {
            self.f.dfg.value_type(args[1]).is_ptr()
        };
        if !second_ok {
            return Err(self.perr(at, format!("unexpected signature for @{callee}")));
        }
        let kind = if memset {
            MemLoop::Set
        } else if r.starts_with("memmove.") {
            MemLoop::Move
        } else {
            MemLoop::Copy
        };
        let Some(len) = const_of(self, args[2]) else {
            return self.mem_loop(b, kind, args, volatile, callee, at);
        };
        let len = trunc_bits(i128::from(len), len_t.bits());
        let dalign = self.call_aligns.first().copied().unwrap_or(1).max(1);
        let salign = self.call_aligns.get(1).copied().unwrap_or(1).max(1);
        let align = if memset { dalign } else { dalign.min(salign) };
        if unit_pieces(len, align).len() > MAX_COPY_PIECES {
            // Too long to unroll: the loop a variable length gets.
            return self.mem_loop(b, kind, args, volatile, callee, at);
        }
        if memset {
            let v = args[1];
            let pieces = unit_pieces(len, dalign);
            // The byte repeated over each access width: `zext(v) * 0x0101...`.
            let mut splat: FxHashMap<u64, Value> = FxHashMap::default();
            for (off, size) in pieces {
                let t = int_of_bytes(size);
                let val = match splat.get(&size) {
                    Some(&x) => x,
                    None => {
                        let x = if size == 1 {
                            v
                        } else {
                            let z = self.unary(Some(b), Opcode::Zext, v, t);
                            let ones = self.iconst(t, u64::MAX / 255);
                            self.binary(Some(b), Opcode::Imul, z, ones, IntFlags::NONE)
                        };
                        splat.insert(size, x);
                        x
                    }
                };
                let p = self.offset_ptr(b, args[0], off);
                self.f.append_inst(
                    b,
                    InstructionData::Store {
                        args: [val, p],
                        flags: MemFlags { volatile },
                    },
                    None,
                );
            }
            return Ok(());
        }
        self.copy_bytes(b, args[0], args[1], len, align, volatile, None, at)
    }

    /// A variable-length `memcpy`/`memmove`/`memset` (`args` as the intrinsic's): the
    /// current block is split at the call and the rest of the LLVM block continues in a
    /// new block, reached through a guarded byte loop in loop-simplify form:
    ///
    /// ```text
    /// b:      n = zext len to i64; brif n == 0, tail, pre  (memmove: , dir)
    /// dir:    brif ptrtoint dst >u ptrtoint src, bpre, pre     (memmove only)
    /// pre:    jump loop(0)
    /// loop(i): dst[i] = src[i] (or the byte); brif i+1 == n, exit, loop(i+1)
    /// bpre:   jump bloop(n)
    /// bloop(j): k = j-1; dst[k] = src[k]; brif k == 0, exit2, bloop(k)
    /// exit:   jump tail
    /// ```
    ///
    /// One byte per iteration: whether wider units would be aligned depends on values
    /// known only at run time, and the accesses keep `isvolatile`. A `memmove` copies
    /// backwards when the destination starts above the source, so an overlapping
    /// source byte is read before it is overwritten.
    fn mem_loop(
        &mut self,
        b: Block,
        kind: MemLoop,
        args: &[Value],
        volatile: bool,
        callee: &str,
        at: usize,
    ) -> PResult<()> {
        let n = match self.f.dfg.value_type(args[2]) {
            Type::I64 => args[2],
            Type::I32 => self.unary(Some(b), Opcode::Zext, args[2], Type::I64),
            _ => return Err(self.perr(at, format!("unexpected signature for @{callee}"))),
        };
        let zero = self.iconst(Type::I64, 0);
        let tail = self.f.append_new_block();
        let empty = self.icmp(b, IntCC::Eq, n, zero);
        // Blocks are created in layout order: the direction test, then each loop.
        let dir = matches!(kind, MemLoop::Move).then(|| self.f.append_new_block());
        let pre = self.f.append_new_block();
        self.brif_to(b, empty, (tail, &[]), (dir.unwrap_or(pre), &[]));
        self.byte_loop(pre, tail, n, false, args, kind, volatile);
        if let Some(dir) = dir {
            let d = self.unary(Some(dir), Opcode::Ptrtoint, args[0], Type::I64);
            let s = self.unary(Some(dir), Opcode::Ptrtoint, args[1], Type::I64);
            let up = self.icmp(dir, IntCC::Ugt, d, s);
            let bpre = self.f.append_new_block();
            self.brif_to(dir, up, (bpre, &[]), (pre, &[]));
            self.byte_loop(bpre, tail, n, true, args, kind, volatile);
        }
        // The tail last in the layout, after the loop blocks, where it is reached.
        self.f.layout.remove_block(tail);
        self.f.layout.append_block(tail);
        self.tail_of.insert(self.cur_head, tail);
        self.split_to = Some(tail);
        Ok(())
    }

    /// The loop of [`Lower::mem_loop`] from its preheader `pre` (empty, appended to) to
    /// `tail`, over the bytes `0..n` upwards or, for `down`, from `n - 1` down to 0.
    #[allow(clippy::too_many_arguments)]
    fn byte_loop(
        &mut self,
        pre: Block,
        tail: Block,
        n: Value,
        down: bool,
        args: &[Value],
        kind: MemLoop,
        volatile: bool,
    ) {
        let zero = self.iconst(Type::I64, 0);
        let one = self.iconst(Type::I64, 1);
        let hdr = self.f.append_new_block();
        let exit = self.f.append_new_block();
        let iv = self.f.dfg.append_block_param(hdr, Type::I64);
        self.jump_to(pre, hdr, &[if down { n } else { zero }]);
        // In range: `k < n` since `n > 0` (guarded), so neither step wraps.
        let k = if down {
            self.binary(Some(hdr), Opcode::Isub, iv, one, IntFlags::NUW)
        } else {
            iv
        };
        let flags = MemFlags { volatile };
        let dp = self.byte_ptr(hdr, args[0], k);
        let v = match kind {
            MemLoop::Set => args[1],
            MemLoop::Copy | MemLoop::Move => {
                let sp = self.byte_ptr(hdr, args[1], k);
                self.emit(
                    Some(hdr),
                    InstructionData::Load { ptr: sp, flags },
                    Type::I8,
                )
            }
        };
        self.f.append_inst(
            hdr,
            InstructionData::Store {
                args: [v, dp],
                flags,
            },
            None,
        );
        let (next, done) = if down {
            (k, self.icmp(hdr, IntCC::Eq, k, zero))
        } else {
            let next = self.binary(Some(hdr), Opcode::Iadd, iv, one, IntFlags::NUW);
            (next, self.icmp(hdr, IntCC::Eq, next, n))
        };
        self.brif_to(hdr, done, (exit, &[]), (hdr, &[next]));
        self.jump_to(exit, tail, &[]);
    }

    /// `p + i` bytes.
    fn byte_ptr(&mut self, b: Block, p: Value, i: Value) -> Value {
        let pt = self.f.dfg.value_type(p);
        self.emit(
            Some(b),
            InstructionData::PtrAdd {
                args: [p, i],
                scale: 1,
            },
            pt,
        )
    }

    fn icmp(&mut self, b: Block, cond: IntCC, x: Value, y: Value) -> Value {
        self.emit(
            Some(b),
            InstructionData::IntCompare { cond, args: [x, y] },
            Type::I1,
        )
    }

    /// A `jump` the importer makes itself (no LLVM edge: its target has no `phi`).
    fn jump_to(&mut self, b: Block, t: Block, targs: &[Value]) {
        let dest = BlockCall::new(t, targs, &mut self.f.dfg.value_lists);
        self.f.append_inst(b, InstructionData::Jump { dest }, None);
    }

    /// A `brif` the importer makes itself, as [`Lower::jump_to`].
    fn brif_to(&mut self, b: Block, c: Value, t: (Block, &[Value]), e: (Block, &[Value])) {
        let pool = &mut self.f.dfg.value_lists;
        let blocks = [
            BlockCall::new(t.0, t.1, pool),
            BlockCall::new(e.0, e.1, pool),
        ];
        self.f
            .append_inst(b, InstructionData::Brif { arg: c, blocks }, None);
    }

    fn libdevice(
        &mut self,
        b: Block,
        r: &str,
        callee: &str,
        rt: Option<Type>,
        args: &[Value],
        at: usize,
    ) -> PResult<Option<Value>> {
        let base = r.strip_suffix("_rn").unwrap_or(r);
        let fop = |n: &str| -> Option<Opcode> {
            Some(match n {
                "sqrtf" | "sqrt" | "fsqrt" | "dsqrt" => Opcode::Sqrt,
                "fabsf" | "fabs" => Opcode::Fabs,
                "floorf" | "floor" => Opcode::Floor,
                "ceilf" | "ceil" => Opcode::Ceil,
                "truncf" | "trunc" => Opcode::Ftrunc,
                "rintf" | "rint" | "nearbyintf" | "nearbyint" => Opcode::Nearest,
                _ => return None,
            })
        };
        if let Some(opc) = fop(base) {
            self.check_arity(callee, args, 1, at)?;
            return self.float_unary(b, opc, args[0], rt, callee, at);
        }
        match base {
            "fminf" | "fmin" | "fmaxf" | "fmax" | "fmodf" | "fmod" | "fadd" | "dadd" | "fmul"
            | "dmul" | "fdiv" | "ddiv" => {
                self.check_arity(callee, args, 2, at)?;
                let opc = match base {
                    "fminf" | "fmin" => Opcode::Fmin,
                    "fmaxf" | "fmax" => Opcode::Fmax,
                    "fmodf" | "fmod" => Opcode::Frem,
                    "fadd" | "dadd" => Opcode::Fadd,
                    "fmul" | "dmul" => Opcode::Fmul,
                    _ => Opcode::Fdiv,
                };
                self.float_binary(b, opc, args, rt, callee, at)
            }
            "fmaf" | "fma" | "ffma" => {
                self.check_arity(callee, args, 3, at)?;
                self.fma(b, args, rt, callee, at)
            }
            "min" | "max" | "umin" | "umax" | "llmin" | "llmax" | "ullmin" | "ullmax" => {
                self.check_arity(callee, args, 2, at)?;
                let opc = match base {
                    "min" | "llmin" => Opcode::Smin,
                    "max" | "llmax" => Opcode::Smax,
                    "umin" | "ullmin" => Opcode::Umin,
                    _ => Opcode::Umax,
                };
                let t = self.f.dfg.value_type(args[0]);
                if !t.is_int() || self.f.dfg.value_type(args[1]) != t {
                    return Err(self.perr(at, format!("unexpected signature for @{callee}")));
                }
                let v = self.binary(Some(b), opc, args[0], args[1], IntFlags::NONE);
                self.op_result(v, rt, callee, at)
            }
            "popc" | "popcll" | "clz" | "clzll" => {
                self.check_arity(callee, args, 1, at)?;
                let opc = if base.starts_with("popc") {
                    Opcode::Popcnt
                } else {
                    Opcode::Clz
                };
                let t = self.f.dfg.value_type(args[0]);
                if !t.is_int() {
                    return Err(self.perr(at, format!("unexpected signature for @{callee}")));
                }
                let mut v = self.unary(Some(b), opc, args[0], t);
                // The 64-bit forms return i32.
                if rt == Some(Type::I32) && t == Type::I64 {
                    v = self.unary(Some(b), Opcode::Trunc, v, Type::I32);
                }
                self.op_result(v, rt, callee, at)
            }
            "abs" | "llabs" => {
                self.check_arity(callee, args, 1, at)?;
                if !self.f.dfg.value_type(args[0]).is_int() {
                    return Err(self.perr(at, format!("unexpected signature for @{callee}")));
                }
                let v = self.abs(b, args[0]);
                self.op_result(v, rt, callee, at)
            }
            _ => match self.math_libdevice(b, r, callee, rt, args, at)? {
                Some(v) => Ok(v),
                None => Err(self.unsup(at, format!("libdevice function @{callee}"))),
            },
        }
    }

    /// `abs(x) = smax(x, 0 - x)`; `abs(INT_MIN)` wraps to `INT_MIN` as in LLVM.
    fn abs(&mut self, b: Block, x: Value) -> Value {
        let t = self.f.dfg.value_type(x);
        let z = self.iconst(t, 0);
        let n = self.binary(Some(b), Opcode::Isub, z, x, IntFlags::NONE);
        self.binary(Some(b), Opcode::Smax, x, n, IntFlags::NONE)
    }

    fn float_unary(
        &mut self,
        b: Block,
        opc: Opcode,
        a: Value,
        rt: Option<Type>,
        callee: &str,
        at: usize,
    ) -> PResult<Option<Value>> {
        let t = self.f.dfg.value_type(a);
        if !t.is_float() {
            return Err(self.perr(at, format!("unexpected signature for @{callee}")));
        }
        let v = self.unary(Some(b), opc, a, t);
        self.op_result(v, rt, callee, at)
    }

    fn float_binary(
        &mut self,
        b: Block,
        opc: Opcode,
        args: &[Value],
        rt: Option<Type>,
        callee: &str,
        at: usize,
    ) -> PResult<Option<Value>> {
        let t = self.f.dfg.value_type(args[0]);
        if !t.is_float() || self.f.dfg.value_type(args[1]) != t {
            return Err(self.perr(at, format!("unexpected signature for @{callee}")));
        }
        let v = self.binary(Some(b), opc, args[0], args[1], IntFlags::NONE);
        self.op_result(v, rt, callee, at)
    }

    fn fma(
        &mut self,
        b: Block,
        args: &[Value],
        rt: Option<Type>,
        callee: &str,
        at: usize,
    ) -> PResult<Option<Value>> {
        let t = self.f.dfg.value_type(args[0]);
        if !t.is_float() || args[..3].iter().any(|&a| self.f.dfg.value_type(a) != t) {
            return Err(self.perr(at, format!("unexpected signature for @{callee}")));
        }
        let v = self.emit(
            Some(b),
            InstructionData::Ternary {
                opcode: Opcode::Fma,
                args: [args[0], args[1], args[2]],
            },
            t,
        );
        self.op_result(v, rt, callee, at)
    }

    // ---- finishing ----------------------------------------------------------------------

    /// Record a `, !llvm.loop !N` attachment of the branch ending `b` (other attachments
    /// are left to [`Cur::skip_attachments`]).
    fn loop_attachment(&mut self, b: Block) -> PResult<()> {
        while self.c.is_punct(b',') {
            let (Tok::Meta("llvm.loop"), Tok::Meta(n)) = (self.c.peek_at(1), self.c.peek_at(2))
            else {
                break;
            };
            self.c.bump();
            self.c.bump();
            self.c.skip_metadata_value()?;
            if n.bytes().all(|c| c.is_ascii_digit()) && !n.is_empty() {
                self.loop_md.push((b, n));
            }
        }
        Ok(())
    }

    /// Turn the recorded `!llvm.loop` nodes into loop attributes of their headers. LLVM
    /// keeps them on the latch's branch; Gyre on the header, the latch's successor that
    /// dominates it. A branch that closes no loop drops them: they are hints.
    fn loop_attrs(&mut self) {
        if self.loop_md.is_empty() {
            return;
        }
        let dom = crate::dom::Dominators::new(&self.f, self.entry);
        for &(latch, node) in &self.loop_md {
            let Some(items) = self.st.meta_nodes.get(node) else {
                continue;
            };
            let mut attrs = LoopAttrs::default();
            let mut i = 0;
            while i < items.len() {
                // Each property is its own node: `!{!"llvm.loop.unroll.count", i32 4}`.
                if let MetaItem::Node(p) = &items[i] {
                    if let Some(prop) = self.st.meta_nodes.get(p.as_str()) {
                        loop_property(prop, &mut attrs);
                    }
                } else {
                    loop_property(&items[i..], &mut attrs);
                }
                i += 1;
            }
            if attrs.is_empty() {
                continue;
            }
            // The header: the successor that dominates the latch (a back edge's target;
            // the innermost when the block closes several loops).
            let mut header: Option<Block> = None;
            self.f.for_each_successor(latch, |s| {
                if dom.dominates(s, latch) && header.is_none_or(|h| dom.dominates(h, s)) {
                    header = Some(s);
                }
            });
            if let Some(h) = header {
                self.f.set_loop_attrs(h, attrs);
            }
        }
    }

    fn finish(&mut self) -> PResult<()> {
        // Every referenced label must be defined.
        // The first mention of each name is a different token: the earliest is unique.
        let undefined = self
            .blocks
            .iter()
            .filter(|(_, r)| !r.defined)
            .min_by_key(|(_, r)| r.tok)
            .map(|(n, r)| (r.tok as usize, n.to_string()));
        if let Some((tok, name)) = undefined {
            return Err(self.perr(tok, format!("undefined label %{name}")));
        }
        // Reachability from the entry (explicit stack).
        let mut reach: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut stack = vec![self.entry];
        reach[self.entry] = true;
        while let Some(b) = stack.pop() {
            self.f.for_each_successor(b, |s| {
                if !reach[s] {
                    reach[s] = true;
                    stack.push(s);
                }
            });
        }
        // Branch arguments for the phis, edge by edge. The arguments each predecessor
        // passes to a target are one row of `rows` (a value per phi of the target),
        // built in one scan of the target's phis when its first edge is reached (linear
        // in the phi entries, however many edges); one map and one vector for the whole
        // body, not a map per target.
        let mut row_of: FxHashMap<(Block, Block), u32> = FxHashMap::default();
        let mut rows: Vec<Option<Value>> = Vec::new();
        let mut built: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut args: Vec<Value> = Vec::new();
        let edges = std::mem::take(&mut self.edges);
        for e in &edges {
            let Some(pred) = self.f.layout.inst_block(e.inst) else {
                continue;
            };
            if !reach[pred] {
                continue;
            }
            if e.target == self.entry {
                return Err(self.perr(e.tok as usize, "branch to the entry block"));
            }
            let nphis = self.phis[e.target].1 as usize;
            if nphis == 0 {
                continue;
            }
            if !built[e.target] {
                built[e.target] = true;
                self.incoming_args(e.target, &reach, &mut row_of, &mut rows)?;
            }
            let row = row_of
                .get(&(e.target, pred))
                .map(|&s| &rows[s as usize..s as usize + nphis]);
            args.clear();
            args.extend(row.into_iter().flatten().map_while(|v| *v));
            if args.len() != nphis {
                let phis = self.phis_of(e.target);
                let missing = row
                    .and_then(|r| r.iter().position(Option::is_none))
                    .unwrap_or(0);
                let (el, ec) = self.c.toks.line_col(self.tok_at(e.tok as usize).pos);
                return Err(self.perr(
                    phis[missing].tok,
                    format!("phi has no value for the predecessor branching at {el}:{ec}"),
                ));
            }
            let mut k = 0;
            self.f.dfg.for_each_dest_mut(e.inst, |bc, pool| {
                if k == e.idx as usize {
                    bc.args = ValueList::from_slice(&args, pool);
                }
                k += 1;
            });
        }
        // Forward references: every placeholder must now name a definition.
        let mut map: SecondaryMap<Value, PackedOption<Value>> = SecondaryMap::new();
        for (ph, name, tok) in std::mem::take(&mut self.forward) {
            match self.names.get(name) {
                Some(NameState::Def(v)) => {
                    let (v, vt, pt) = (*v, self.f.dfg.value_type(*v), self.f.dfg.value_type(ph));
                    if vt != pt {
                        return Err(self.perr(tok, format!("%{name} has type {vt}, used as {pt}")));
                    }
                    if v != ph {
                        map[ph] = v.into();
                    }
                }
                Some(NameState::CasPair(..)) => {
                    return Err(self.unsup(
                        tok,
                        format!("aggregate value %{name} used before its definition"),
                    ))
                }
                _ => return Err(self.perr(tok, format!("use of undefined value %{name}"))),
            }
        }
        // Drop unreachable blocks.
        let blocks: Vec<Block> = self.f.layout.blocks().collect();
        for b in blocks {
            if reach[b] {
                continue;
            }
            while let Some(i) = self.f.layout.first_inst(b) {
                self.f.layout.remove_inst(i);
            }
            self.f.layout.remove_block(b);
        }
        // Constants at the top of the entry block, in creation (dependency) order. The
        // block's own instructions are taken out and appended again after them: appending
        // is O(1), while inserting many times at one point renumbers the block each time.
        let own: Vec<Inst> = self.f.layout.block_insts(self.entry).collect();
        for &i in &own {
            self.f.layout.remove_inst(i);
        }
        for i in std::mem::take(&mut self.const_insts) {
            self.f.layout.append_inst(i, self.entry);
        }
        for i in own {
            self.f.layout.append_inst(i, self.entry);
        }
        let any_fwd = map.keys().any(|k| map[k].is_some());
        if any_fwd {
            let limit = self.f.dfg.num_values();
            let resolve = |mut v: Value| -> Option<Value> {
                let mut n = 0;
                while let Some(t) = map[v].expand() {
                    v = t;
                    n += 1;
                    if n > limit {
                        return None;
                    }
                }
                Some(v)
            };
            let blocks: Vec<Block> = self.f.layout.blocks().collect();
            let mut cyclic = false;
            for b in blocks {
                let insts: Vec<Inst> = self.f.layout.block_insts(b).collect();
                for i in insts {
                    self.f.dfg.map_inst_values(i, |v| {
                        resolve(v).unwrap_or_else(|| {
                            cyclic = true;
                            v
                        })
                    });
                }
            }
            if cyclic {
                return Err(self.perr(0, "a value is defined in terms of itself"));
            }
        }
        Ok(())
    }

    /// For each reachable predecessor named in the phis of `target`, the value each phi
    /// takes from it (`None` where a phi has no entry for it): a row of `rows` per
    /// predecessor, found by `row_of[(target, pred)]`. Duplicate entries for one
    /// predecessor must agree.
    fn incoming_args(
        &mut self,
        target: Block,
        reach: &SecondaryMap<Block, bool>,
        row_of: &mut FxHashMap<(Block, Block), u32>,
        rows: &mut Vec<Option<Value>>,
    ) -> PResult<()> {
        // Taken out while `use_operand` needs `self` (nothing adds phis now).
        let recs = std::mem::take(&mut self.phi_recs);
        let incoming = std::mem::take(&mut self.phi_incoming);
        let (start, n) = self.phis[target];
        let phis = &recs[start as usize..(start + n) as usize];
        let n = n as usize;
        let mut result = Ok(());
        'phis: for (j, p) in phis.iter().enumerate() {
            let (i0, ni) = p.incoming;
            for &(b, tok) in &incoming[i0 as usize..(i0 + ni) as usize] {
                if !reach[b] {
                    continue;
                }
                let tok = tok as usize;
                // Parsed without error when the phi was read: the same again.
                let mut c = Cur::new(self.c.toks);
                c.i = tok;
                let v = parse_value(&mut c, &mut self.st.types).and_then(|op| match p.leaf {
                    None => self.use_operand(&op, p.ty, tok),
                    Some(k) => self.agg_operand(&op, p.ty, tok).map(|vs| vs[k]),
                });
                let v = match v {
                    Ok(v) => v,
                    Err(e) => {
                        result = Err(e);
                        break 'phis;
                    }
                };
                // A split predecessor branches from its tail.
                let pred = self.tail_of.get(&b).copied().unwrap_or(b);
                let start = *row_of.entry((target, pred)).or_insert_with(|| {
                    let s = rows.len();
                    rows.resize(s + n, None);
                    s as u32
                });
                let slot = &mut rows[start as usize + j];
                match *slot {
                    None => *slot = Some(v),
                    Some(f) if f != v => {
                        result = Err(
                            self.perr(tok, "phi has different values for the same predecessor")
                        );
                        break 'phis;
                    }
                    Some(_) => {}
                }
            }
        }
        self.phi_recs = recs;
        self.phi_incoming = incoming;
        result
    }
}

/// Intrinsics without an effect Gyre needs to model: hints, markers and debug info.
fn is_dropped_intrinsic(name: &str) -> bool {
    let Some(r) = name.strip_prefix("llvm.") else {
        return false;
    };
    let head = r.split('.').next().unwrap_or("");
    matches!(
        head,
        "assume" | "lifetime" | "dbg" | "donothing" | "sideeffect" | "pseudoprobe"
    ) || r.starts_with("experimental.noalias.scope.decl")
}

fn int_binop(op: &str) -> Option<Opcode> {
    Some(match op {
        "add" => Opcode::Iadd,
        "sub" => Opcode::Isub,
        "mul" => Opcode::Imul,
        "sdiv" => Opcode::Sdiv,
        "udiv" => Opcode::Udiv,
        "srem" => Opcode::Srem,
        "urem" => Opcode::Urem,
        "shl" => Opcode::Shl,
        "lshr" => Opcode::Lshr,
        "ashr" => Opcode::Ashr,
        "and" => Opcode::And,
        "or" => Opcode::Or,
        "xor" => Opcode::Xor,
        _ => return None,
    })
}

trait MaskFlags {
    fn from_bits_masked(f: IntFlags, allowed: IntFlags) -> IntFlags;
}

impl MaskFlags for IntFlags {
    /// Keep only the flags `allowed` has (LLVM accepts e.g. `exact` only where Gyre does).
    fn from_bits_masked(f: IntFlags, allowed: IntFlags) -> IntFlags {
        let mut out = IntFlags::NONE;
        for fl in [IntFlags::NSW, IntFlags::NUW, IntFlags::EXACT] {
            if f.contains(fl) && allowed.contains(fl) {
                out = out.union(fl);
            }
        }
        out
    }
}

/// Most loads (and as many stores) one memory copy may become.
const MAX_COPY_PIECES: usize = 256;

/// What the loop of a variable-length memory intrinsic does per byte.
#[derive(Clone, Copy)]
enum MemLoop {
    /// `memcpy`: forwards (the ranges do not overlap).
    Copy,
    /// `memmove`: forwards or backwards, by the order of the addresses.
    Move,
    /// `memset`: the byte argument.
    Set,
}

/// The accesses copying `len` bytes whose start is `align`-aligned: at each offset the
/// widest power of two up to 8 that the offset's alignment and the rest allow.
fn unit_pieces(len: u64, align: u64) -> Vec<(u64, u64)> {
    // The largest power of two dividing the alignment, at most 8.
    let align = 1u64 << align.clamp(1, 8).trailing_zeros();
    let mut out = Vec::new();
    let mut off = 0;
    while off < len {
        let mut u = align;
        while u > 1 && (!off.is_multiple_of(u) || off + u > len) {
            u /= 2;
        }
        out.push((off, u));
        off += u;
        if out.len() > MAX_COPY_PIECES {
            break;
        }
    }
    out
}

/// The integer type of a 1, 2, 4 or 8 byte access.
fn int_of_bytes(n: u64) -> Type {
    match n {
        1 => Type::I8,
        2 => Type::I16,
        4 => Type::I32,
        _ => Type::I64,
    }
}

/// The narrowest Gyre integer type with at least `n` bits (`n` at most 64).
fn container_of(n: u32) -> Type {
    match n {
        0..=8 => Type::I8,
        9..=16 => Type::I16,
        17..=32 => Type::I32,
        _ => Type::I64,
    }
}

/// Apply one `llvm.loop` property node's items (`!"llvm.loop.unroll.count", i32 4`) to
/// `attrs`; properties Gyre has no use for are ignored (they are hints).
fn loop_property(items: &[MetaItem], attrs: &mut LoopAttrs) {
    let Some(MetaItem::Str(name)) = items.first() else {
        return;
    };
    match name.as_slice() {
        b"llvm.loop.mustprogress" => attrs.must_progress = true,
        b"llvm.loop.unroll.disable" => attrs.unroll = UnrollHint::Disable,
        b"llvm.loop.unroll.enable" => attrs.unroll = UnrollHint::Enable,
        b"llvm.loop.unroll.full" => attrs.unroll = UnrollHint::Full,
        b"llvm.loop.unroll.count" => {
            if let Some(&MetaItem::Int(n)) = items.get(1) {
                // `#pragma unroll 1` is a count of 1: no unrolling.
                attrs.unroll = match u32::try_from(n) {
                    Ok(0 | 1) => UnrollHint::Disable,
                    Ok(n) => UnrollHint::Count(n),
                    Err(_) => attrs.unroll,
                };
            }
        }
        _ => {}
    }
}
