//! Address-space inference for generic pointers (what LLVM's
//! `NVPTXInferAddressSpaces` does): a generic pointer proven to point into one specific
//! space is accessed with that space's instructions (`ld.global`, `st.shared`,
//! `atom.shared.add`), which skip the generic-to-specific translation.
//!
//! Generic pointers connected by `ptradd` (base and result), `select` (arms and result)
//! and block arguments (argument and parameter) form one *web*, found with a
//! union-find. A web is inferred to be in space `S` when every value entering it from
//! outside is known to point into `S`:
//! - a kernel's (non-`byval`) pointer parameter: global memory, the CUDA launch ABI that
//!   LLVM's NVPTX back end assumes too (a host passes device-memory addresses);
//! - `addrspace_cast` from `S` to generic;
//! - `global_addr` of a global in `S`;
//!
//! and every use of a value of the web is an address (load, store or atomic) or stays
//! inside the web. Then the whole web holds *`S`-space addresses* in its registers:
//! the parameter is converted once with `cvta.to.global`, a cast or `global_addr` is a
//! plain `mov`, and every access names `S`. A web with any other source (a loaded
//! pointer, a call result, `inttoptr`, a device function's parameter) or any other use
//! (stored as a value, passed to a call, compared, converted to an integer) stays
//! generic, so no generic value is ever needed from a converted register.
//! O(values · α) with one pass over the instructions for the unions and the uses.

use cranelift_entity::{EntityRef, SecondaryMap};
use gyre_ir::{
    AddrSpace, FuncKind, Function, InstructionData, Module, Opcode, Type, Value, ValueDef,
};

/// Union-find over value indices, path halving, no recursion.
struct Sets(Vec<u32>);

impl Sets {
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] as usize != x {
            let up = self.0[self.0[x] as usize];
            self.0[x] = up;
            x = up as usize;
        }
        x
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a] = b as u32;
        }
    }
}

/// What is known of a web.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Web {
    /// No source seen yet.
    Open,
    /// Every source seen points into this space.
    In(AddrSpace),
    /// Stays generic.
    Generic,
}

/// Per generic pointer value: the specific space its web was proven to be in (its
/// register then holds an address of that space), or `None`.
pub(crate) fn infer_spaces(m: &Module, f: &Function) -> SecondaryMap<Value, Option<AddrSpace>> {
    let dfg = &f.dfg;
    let n = dfg.num_values();
    let generic = |v: Value| dfg.value_type(v) == Type::Ptr(AddrSpace::Generic);
    let mut out: SecondaryMap<Value, Option<AddrSpace>> = SecondaryMap::new();
    // Only generic pointers get a space: a function without any (kernels that use
    // typed pointers throughout) needs neither the sets nor the scans below. The later
    // walks over values visit this list, not every value ever created.
    let generics: Vec<Value> = dfg.values().filter(|&v| generic(v)).collect();
    if generics.is_empty() {
        return out;
    }
    let mut sets = Sets((0..n as u32).collect());
    out = crate::fold::dense(n);
    let mut any = false;
    // Generic pointers used other than as an address or inside their web: anything
    // else (stored as a value, passed to a call, compared, converted) keeps the web
    // generic.
    let mut escapes: Vec<Value> = Vec::new();
    for b in f.layout.blocks() {
        for inst in f.layout.block_insts(b) {
            let r = dfg.inst_result(inst);
            let data = dfg.inst(inst);
            for (k, &v) in dfg.inst_args(inst).iter().enumerate() {
                if !generic(v) {
                    continue;
                }
                let ok = match *data {
                    InstructionData::PtrAdd { .. } => k == 0,
                    InstructionData::Ternary {
                        opcode: Opcode::Select,
                        ..
                    } => k != 0,
                    InstructionData::Load { .. } => true,
                    InstructionData::Store { .. } => k == 1,
                    InstructionData::AtomicRmw { .. } | InstructionData::AtomicCas { .. } => k == 0,
                    _ => false,
                };
                if !ok {
                    escapes.push(v);
                }
            }
            match *data {
                InstructionData::PtrAdd { args, .. } => {
                    if let Some(r) = r.filter(|&r| generic(r)) {
                        sets.union(args[0].index(), r.index());
                        any = true;
                    }
                }
                InstructionData::Ternary {
                    opcode: Opcode::Select,
                    args,
                } => {
                    if let Some(r) = r.filter(|&r| generic(r)) {
                        sets.union(args[1].index(), r.index());
                        sets.union(args[2].index(), r.index());
                    }
                }
                InstructionData::Load { .. }
                | InstructionData::Store { .. }
                | InstructionData::AtomicRmw { .. }
                | InstructionData::AtomicCas { .. } => any = true,
                _ => {}
            }
        }
        // Only a block's last instruction branches (the verifier's terminator rule).
        if let Some(term) = f.layout.last_inst(b) {
            dfg.for_each_dest(term, |bc| {
                for (&p, &a) in dfg
                    .block_params(bc.block)
                    .iter()
                    .zip(dfg.block_call_args(bc))
                {
                    if generic(p) {
                        sets.union(p.index(), a.index());
                    }
                }
            });
        }
    }
    if !any {
        return out;
    }
    let mut web = vec![Web::Open; n];
    let mut meet = |sets: &mut Sets, v: Value, s: Option<AddrSpace>| {
        let w = &mut web[sets.find(v.index())];
        *w = match (*w, s) {
            (Web::Generic, _) | (_, None) | (_, Some(AddrSpace::Generic)) => Web::Generic,
            (Web::Open, Some(s)) => Web::In(s),
            (Web::In(t), Some(s)) if t == s => Web::In(s),
            _ => Web::Generic,
        };
    };
    // Sources: every generic pointer value not defined inside a web.
    let entry = f.entry_block();
    for &v in &generics {
        match dfg.value_def(v) {
            ValueDef::Param(b, i) if Some(b) == entry => {
                let kernel_ptr = f.kind == FuncKind::Kernel && f.byval_param(i as usize).is_none();
                meet(&mut sets, v, kernel_ptr.then_some(AddrSpace::Global));
            }
            ValueDef::Param(..) => {}
            ValueDef::Result(inst) => match *dfg.inst(inst) {
                InstructionData::PtrAdd { .. }
                | InstructionData::Ternary {
                    opcode: Opcode::Select,
                    ..
                } => {}
                InstructionData::Unary {
                    opcode: Opcode::AddrspaceCast,
                    arg,
                } => meet(&mut sets, v, dfg.value_type(arg).addr_space()),
                InstructionData::GlobalAddr { global } => {
                    meet(&mut sets, v, m.globals.get(global).map(|g| g.space))
                }
                _ => meet(&mut sets, v, None),
            },
            _ => meet(&mut sets, v, None),
        }
    }
    // Uses that make a web generic, found in the first walk (a meet with "generic"
    // gives the same web whenever it is applied, so after all the unions).
    for &v in &escapes {
        meet(&mut sets, v, None);
    }
    for &v in &generics {
        if let Web::In(s) = web[sets.find(v.index())] {
            out[v] = Some(s);
        }
    }
    out
}
