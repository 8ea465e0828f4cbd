//! Verifier tests: functions are built directly with the `Function` API (no parser).

use super::dom::Dominance;
use super::*;
use crate::function::{Signature, SlotData};
use crate::instructions::{
    AtomicOp, BlockCall, FloatCC, IntCC, IntFlags, JumpTableData, MemFlags, MemOrder, MemScope,
    Opcode, ShflMode, SpecialReg, VoteMode,
};
use crate::module::GlobalData;
use crate::{FuncId, JumpTable};
use cranelift_entity::EntityRef;
use quickcheck::{quickcheck, TestResult};
use VerifierErrorKind as K;

// ---------------------------------------------------------------------------------------
// Building helpers.

fn new_func(
    name: &str,
    kind: FuncKind,
    params: &[Type],
    ret: Option<Type>,
) -> (Function, Block, Vec<Value>) {
    let mut f = Function::new(
        name,
        kind,
        Signature {
            params: params.to_vec(),
            ret,
        },
    );
    let b0 = f.append_new_block();
    let vs = params
        .iter()
        .map(|&t| f.dfg.append_block_param(b0, t))
        .collect();
    (f, b0, vs)
}

fn kernel(params: &[Type]) -> (Function, Block, Vec<Value>) {
    new_func("k", FuncKind::Kernel, params, None)
}

fn ins(f: &mut Function, b: Block, data: InstructionData, ty: Type) -> Value {
    f.append_inst(b, data, Some(ty))
        .1
        .expect("asked for a result")
}

fn iconst(f: &mut Function, b: Block, ty: Type, imm: i64) -> Value {
    ins(f, b, InstructionData::IntConst { imm }, ty)
}

fn bin(f: &mut Function, b: Block, opcode: Opcode, x: Value, y: Value, ty: Type) -> Value {
    ins(
        f,
        b,
        InstructionData::Binary {
            opcode,
            args: [x, y],
            flags: IntFlags::NONE,
        },
        ty,
    )
}

fn bc(f: &mut Function, b: Block, args: &[Value]) -> BlockCall {
    BlockCall::new(b, args, &mut f.dfg.value_lists)
}

fn jump(f: &mut Function, from: Block, to: Block, args: &[Value]) -> Inst {
    let dest = bc(f, to, args);
    f.append_inst(from, InstructionData::Jump { dest }, None).0
}

fn brif(
    f: &mut Function,
    from: Block,
    c: Value,
    t: Block,
    ta: &[Value],
    e: Block,
    ea: &[Value],
) -> Inst {
    let blocks = [bc(f, t, ta), bc(f, e, ea)];
    f.append_inst(from, InstructionData::Brif { arg: c, blocks }, None)
        .0
}

fn br_table(
    f: &mut Function,
    from: Block,
    v: Value,
    default: Block,
    cases: &[(i64, Block)],
) -> Inst {
    let cases: Vec<(i64, Block, &[Value])> = cases.iter().map(|&(k, b)| (k, b, &[][..])).collect();
    br_table_args(f, from, v, (default, &[]), &cases)
}

fn br_table_args(
    f: &mut Function,
    from: Block,
    v: Value,
    default: (Block, &[Value]),
    cases: &[(i64, Block, &[Value])],
) -> Inst {
    let default = bc(f, default.0, default.1);
    let cases = cases.iter().map(|&(k, b, a)| (k, bc(f, b, a))).collect();
    let table = f.dfg.make_jump_table(JumpTableData::new(default, cases));
    f.append_inst(from, InstructionData::BrTable { arg: v, table }, None)
        .0
}

fn ret(f: &mut Function, b: Block, args: &[Value]) -> Inst {
    let args = crate::ValueList::from_slice(args, &mut f.dfg.value_lists);
    f.append_inst(b, InstructionData::Return { args }, None).0
}

fn errors_of(f: &Function, m: Option<&Module>) -> Vec<VerifierError> {
    match verify_function(f, m) {
        Ok(()) => Vec::new(),
        Err(e) => e.0,
    }
}

fn assert_valid(f: &Function, m: Option<&Module>) {
    if let Err(e) = verify_function(f, m) {
        panic!("expected a valid function, got:\n{e}");
    }
}

/// Exactly one error, of `kind`, at `loc`.
fn assert_only(errs: &[VerifierError], kind: K, loc: AnyEntity) {
    let shown: Vec<String> = errs.iter().map(|e| format!("{e} [{:?}]", e.kind)).collect();
    assert_eq!(errs.len(), 1, "expected one {kind:?} error, got {shown:#?}");
    assert_eq!(errs[0].kind, kind, "{shown:#?}");
    assert_eq!(errs[0].location, loc, "{shown:#?}");
}

/// A kernel with `params`; `body` adds instructions to the entry block and returns the
/// entity to blame; a `return` is appended. Expects exactly that one error.
fn one_error(
    params: &[Type],
    module: Option<&Module>,
    kind: K,
    body: impl FnOnce(&mut Function, Block, &[Value]) -> AnyEntity,
) {
    let (mut f, b0, vs) = kernel(params);
    let loc = body(&mut f, b0, &vs);
    ret(&mut f, b0, &[]);
    assert_only(&errors_of(&f, module), kind, loc);
}

/// Like `one_error` for a single instruction with an optional result.
fn one_inst_error(
    params: &[Type],
    kind: K,
    data: impl FnOnce(&mut Function, &[Value]) -> InstructionData,
    ty: Option<Type>,
) {
    one_error(params, None, kind, |f, b, vs| {
        let d = data(f, vs);
        AnyEntity::Inst(f.append_inst(b, d, ty).0)
    });
}

const G: Type = Type::Ptr(AddrSpace::Global);

// ---------------------------------------------------------------------------------------
// Valid functions.

/// A module with a device function, globals, and a kernel exercising every opcode
/// with legal types, plus loops, a self-loop, a diamond, a switch and unreachable code.
fn kitchen_sink() -> Module {
    let mut m = Module::new();
    m.globals.push(GlobalData {
        name: "tile".into(),
        space: AddrSpace::Shared,
        elem: Type::F32,
        count: 256,
        align: 4,
        init: None,
        linkage: crate::Linkage::Internal,
        externally_initialized: false,
    });
    m.globals.push(GlobalData {
        name: "tab".into(),
        space: AddrSpace::Const,
        elem: Type::I32,
        count: 4,
        align: 4,
        init: Some(vec![1, 2, 3, 0xffff_fffc]),
        linkage: crate::Linkage::Internal,
        externally_initialized: false,
    });
    let (mut sq, b0, vs) = new_func("square", FuncKind::Device, &[Type::F32], Some(Type::F32));
    let r = bin(&mut sq, b0, Opcode::Fmul, vs[0], vs[0], Type::F32);
    ret(&mut sq, b0, &[r]);
    let square = m.functions.push(sq);

    let (mut f, b0, vs) = kernel(&[G, Type::F32, Type::I32]);
    f.convergent = true;
    let slot = f.slots.push(SlotData { size: 64, align: 8 });
    let (p, x, n) = (vs[0], vs[1], vs[2]);
    let head = f.dfg.make_block();
    let body = f.dfg.make_block();
    let selfloop = f.dfg.make_block();
    let left = f.dfg.make_block();
    let right = f.dfg.make_block();
    let join = f.dfg.make_block();
    let exit = f.dfg.make_block();
    let dead = f.dfg.make_block();
    let dead2 = f.dfg.make_block();
    for b in [head, body, selfloop, left, right, join, exit, dead, dead2] {
        f.layout.append_block(b);
    }
    let i = f.dfg.append_block_param(head, Type::I32);
    let j = f.dfg.append_block_param(join, Type::F32);
    let k = f.dfg.append_block_param(selfloop, Type::I32);

    // Entry: every straight-line opcode.
    let tid = ins(
        &mut f,
        b0,
        InstructionData::Sreg {
            reg: SpecialReg::TidX,
        },
        Type::I32,
    );
    let c0 = iconst(&mut f, b0, Type::I32, 0);
    let c1 = iconst(&mut f, b0, Type::I32, 1);
    let _neg = iconst(&mut f, b0, Type::I8, -128);
    let _u8 = iconst(&mut f, b0, Type::I8, 255);
    let _t = iconst(&mut f, b0, Type::I1, 1);
    let half = ins(
        &mut f,
        b0,
        InstructionData::FloatConst {
            bits: 0.5f32.to_bits() as u64,
        },
        Type::F32,
    );
    let _d = ins(
        &mut f,
        b0,
        InstructionData::FloatConst {
            bits: 0.5f64.to_bits(),
        },
        Type::F64,
    );
    for op in Opcode::ALL.iter().copied().filter(|o| o.is_int_binary()) {
        let flags = op.allowed_flags();
        ins(
            &mut f,
            b0,
            InstructionData::Binary {
                opcode: op,
                args: [tid, n],
                flags,
            },
            Type::I32,
        );
    }
    for op in Opcode::ALL.iter().copied().filter(|o| o.is_float_binary()) {
        bin(&mut f, b0, op, x, half, Type::F32);
    }
    for op in Opcode::ALL.iter().copied().filter(|o| o.is_int_unary()) {
        ins(
            &mut f,
            b0,
            InstructionData::Unary {
                opcode: op,
                arg: tid,
            },
            Type::I32,
        );
    }
    for op in Opcode::ALL.iter().copied().filter(|o| o.is_float_unary()) {
        ins(
            &mut f,
            b0,
            InstructionData::Unary { opcode: op, arg: x },
            Type::F32,
        );
    }
    ins(
        &mut f,
        b0,
        InstructionData::Ternary {
            opcode: Opcode::Fma,
            args: [x, x, half],
        },
        Type::F32,
    );
    let lt = ins(
        &mut f,
        b0,
        InstructionData::IntCompare {
            cond: IntCC::Slt,
            args: [tid, n],
        },
        Type::I1,
    );
    ins(
        &mut f,
        b0,
        InstructionData::IntCompare {
            cond: IntCC::Eq,
            args: [p, p],
        },
        Type::I1,
    );
    let flt = ins(
        &mut f,
        b0,
        InstructionData::FloatCompare {
            cond: FloatCC::Olt,
            args: [x, half],
        },
        Type::I1,
    );
    ins(
        &mut f,
        b0,
        InstructionData::Ternary {
            opcode: Opcode::Select,
            args: [lt, tid, n],
        },
        Type::I32,
    );
    ins(
        &mut f,
        b0,
        InstructionData::Unary {
            opcode: Opcode::Freeze,
            arg: x,
        },
        Type::F32,
    );
    let casts: [(Opcode, Value, Type); 14] = [
        (Opcode::Sext, tid, Type::I64),
        (Opcode::Zext, lt, Type::I32),
        (Opcode::Trunc, tid, Type::I8),
        (Opcode::Fptosi, x, Type::I32),
        (Opcode::Fptoui, x, Type::I64),
        (Opcode::Sitofp, tid, Type::F64),
        (Opcode::Uitofp, tid, Type::F32),
        (Opcode::Fpext, x, Type::F64),
        (Opcode::Bitcast, x, Type::I32),
        (Opcode::Bitcast, p, Type::I64),
        (Opcode::Ptrtoint, p, Type::I64),
        (Opcode::Inttoptr, tid, Type::Ptr(AddrSpace::Shared)),
        (Opcode::AddrspaceCast, p, Type::Ptr(AddrSpace::Generic)),
        (Opcode::Freeze, p, G),
    ];
    let mut wide = None;
    for (op, a, t) in casts {
        let v = ins(&mut f, b0, InstructionData::Unary { opcode: op, arg: a }, t);
        if op == Opcode::Sext {
            wide = Some(v);
        }
    }
    let d = ins(
        &mut f,
        b0,
        InstructionData::Unary {
            opcode: Opcode::Fpext,
            arg: x,
        },
        Type::F64,
    );
    ins(
        &mut f,
        b0,
        InstructionData::Unary {
            opcode: Opcode::Fptrunc,
            arg: d,
        },
        Type::F32,
    );
    let wide = wide.expect("sext emitted");
    let q = ins(
        &mut f,
        b0,
        InstructionData::PtrAdd {
            args: [p, wide],
            scale: 4,
        },
        G,
    );
    let ld = ins(
        &mut f,
        b0,
        InstructionData::Load {
            ptr: q,
            flags: MemFlags::default(),
        },
        Type::F32,
    );
    f.append_inst(
        b0,
        InstructionData::Store {
            args: [ld, q],
            flags: MemFlags { volatile: true },
        },
        None,
    );
    ins(
        &mut f,
        b0,
        InstructionData::AtomicRmw {
            op: AtomicOp::Add,
            args: [q, ld],
            order: MemOrder::Relaxed,
            scope: MemScope::Gpu,
        },
        Type::F32,
    );
    let qi = ins(
        &mut f,
        b0,
        InstructionData::Unary {
            opcode: Opcode::Bitcast,
            arg: q,
        },
        G,
    );
    ins(
        &mut f,
        b0,
        InstructionData::AtomicRmw {
            op: AtomicOp::Umax,
            args: [qi, tid],
            order: MemOrder::Relaxed,
            scope: MemScope::Gpu,
        },
        Type::I32,
    );
    ins(
        &mut f,
        b0,
        InstructionData::AtomicCas {
            args: [qi, tid, n],
            order: MemOrder::SeqCst,
            scope: MemScope::Sys,
        },
        Type::I32,
    );
    let sh = ins(
        &mut f,
        b0,
        InstructionData::GlobalAddr {
            global: GlobalId::new(0),
        },
        Type::Ptr(AddrSpace::Shared),
    );
    ins(
        &mut f,
        b0,
        InstructionData::GlobalAddr {
            global: GlobalId::new(1),
        },
        Type::Ptr(AddrSpace::Const),
    );
    ins(
        &mut f,
        b0,
        InstructionData::AtomicRmw {
            op: AtomicOp::Exch,
            args: [sh, tid],
            order: MemOrder::Relaxed,
            scope: MemScope::Gpu,
        },
        Type::I32,
    );
    ins(
        &mut f,
        b0,
        InstructionData::AtomicRmw {
            op: AtomicOp::Inc,
            args: [sh, tid],
            order: MemOrder::Acquire,
            scope: MemScope::Cta,
        },
        Type::I32,
    );
    let sv = ins(
        &mut f,
        b0,
        InstructionData::Shfl {
            mode: ShflMode::Down,
            args: [tid, tid, tid, tid],
        },
        Type::I32,
    );
    let bit = ins(
        &mut f,
        b0,
        InstructionData::IntCompare {
            cond: IntCC::Eq,
            args: [sv, tid],
        },
        Type::I1,
    );
    ins(
        &mut f,
        b0,
        InstructionData::Vote {
            mode: VoteMode::Ballot,
            args: [bit, tid],
        },
        Type::I32,
    );
    f.append_inst(b0, InstructionData::WarpSync { mask: tid }, None);
    f.append_inst(
        b0,
        InstructionData::Fence {
            order: MemOrder::SeqCst,
            scope: MemScope::Gpu,
        },
        None,
    );
    ins(
        &mut f,
        b0,
        InstructionData::Nullary {
            opcode: Opcode::Clock,
        },
        Type::I64,
    );
    ins(
        &mut f,
        b0,
        InstructionData::SlotAddr { slot },
        Type::Ptr(AddrSpace::Local),
    );
    let args = crate::ValueList::from_slice(&[x], &mut f.dfg.value_lists);
    ins(
        &mut f,
        b0,
        InstructionData::Call { func: square, args },
        Type::F32,
    );
    f.append_inst(
        b0,
        InstructionData::Nullary {
            opcode: Opcode::Barrier,
        },
        None,
    );
    jump(&mut f, b0, head, &[c0]);

    // head: loop header with a switch.
    br_table_args(
        &mut f,
        head,
        i,
        (exit, &[]),
        &[(0, body, &[]), (1, selfloop, &[i]), (-1, body, &[])],
    );
    // body: latch of the outer loop, uses the header's parameter.
    let i1 = bin(&mut f, body, Opcode::Iadd, i, c1, Type::I32);
    let more = ins(
        &mut f,
        body,
        InstructionData::IntCompare {
            cond: IntCC::Slt,
            args: [i1, n],
        },
        Type::I1,
    );
    brif(&mut f, body, more, head, &[i1], left, &[]);
    // selfloop: a block that branches to itself.
    let k1 = bin(&mut f, selfloop, Opcode::Iadd, k, c1, Type::I32);
    let again = ins(
        &mut f,
        selfloop,
        InstructionData::IntCompare {
            cond: IntCC::Ne,
            args: [k1, n],
        },
        Type::I1,
    );
    brif(&mut f, selfloop, again, selfloop, &[k1], left, &[]);
    // Diamond: left/right join with a parameter.
    brif(&mut f, left, flt, right, &[], join, &[ld]);
    let r2 = bin(&mut f, right, Opcode::Fadd, ld, half, Type::F32);
    jump(&mut f, right, join, &[r2]);
    f.append_inst(
        join,
        InstructionData::Store {
            args: [j, q],
            flags: MemFlags::default(),
        },
        None,
    );
    ret(&mut f, join, &[]);
    ret(&mut f, exit, &[]);
    // Unreachable blocks: uses there need only be defined (j is not available here, and
    // dead2's value is used before its definition in layout order).
    bin(&mut f, dead, Opcode::Fadd, j, j, Type::F32);
    let late = f
        .dfg
        .make_inst_with_result(InstructionData::IntConst { imm: 3 }, Type::I32);
    jump(&mut f, dead, dead2, &[]);
    bin(&mut f, dead2, Opcode::Iadd, late.1, late.1, Type::I32);
    f.layout.append_inst(late.0, dead2);
    f.append_inst(
        dead2,
        InstructionData::Nullary {
            opcode: Opcode::Unreachable,
        },
        None,
    );
    m.functions.push(f);
    m
}

#[test]
fn kitchen_sink_is_valid() {
    let m = kitchen_sink();
    if let Err(e) = verify_module(&m) {
        panic!("{e}");
    }
    // The same verifier, reused, gives the same answer.
    let mut v = Verifier::new();
    for _ in 0..2 {
        assert!(v.verify_module(&m).is_ok());
    }
    // Without the module, the function alone is valid too.
    assert_valid(&m.functions[FuncId::new(1)], None);
}

#[test]
fn kitchen_sink_breakages_are_found() {
    // Dropping the switch's argument to the self-loop block (a case, not the default).
    let mut m = kitchen_sink();
    let f = &mut m.functions[FuncId::new(1)];
    let head = Block::new(1);
    let term = f.terminator(head).expect("head has a terminator");
    f.dfg.for_each_dest_mut(term, |c, pool| {
        if c.block == Block::new(3) {
            c.args = crate::ValueList::from_slice(&[], pool);
        }
    });
    assert_only(&module_errors(&m), K::BranchArgCount, AnyEntity::Inst(term));
    // Removing the global makes both global_addr instructions invalid.
    let mut m = kitchen_sink();
    m.globals.clear();
    let errs = module_errors(&m);
    assert_eq!(errs.len(), 2);
    assert!(errs.iter().all(|e| e.kind == K::InvalidGlobal));
}

#[test]
fn every_error_is_collected_and_displayed() {
    let (mut f, b0, vs) = kernel(&[Type::I32]);
    let b1 = f.append_new_block();
    let b2 = f.append_new_block();
    let b3 = f.append_new_block();
    let c = ins(
        &mut f,
        b0,
        InstructionData::IntCompare {
            cond: IntCC::Eq,
            args: [vs[0], vs[0]],
        },
        Type::I1,
    );
    brif(&mut f, b0, c, b1, &[], b2, &[]);
    let v = bin(&mut f, b1, Opcode::Iadd, vs[0], vs[0], Type::I32);
    jump(&mut f, b1, b3, &[]);
    jump(&mut f, b2, b3, &[]);
    let bad = bin(&mut f, b3, Opcode::Iadd, vs[0], v, Type::I32);
    let fl = ins(
        &mut f,
        b3,
        InstructionData::Unary {
            opcode: Opcode::Fneg,
            arg: vs[0],
        },
        Type::I32,
    );
    ret(&mut f, b3, &[fl]);
    let errs = errors_of(&f, None);
    let kinds: Vec<K> = errs.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        vec![K::UseNotDominated, K::FloatArithType, K::ReturnArgCount]
    );
    assert_eq!(
        errs[0].to_string(),
        format!(
            "kernel @k: block3: {} (v3 = iadd v0, v2): use of v2 not dominated by its definition",
            inst_of(&f, bad)
        )
    );
    let all = VerifierErrors(errs).to_string();
    assert_eq!(all.lines().count(), 3);
}

// ---------------------------------------------------------------------------------------
// Layout.

#[test]
fn no_entry_block() {
    let f = Function::new("k", FuncKind::Kernel, Signature::default());
    assert_only(
        &errors_of(&f, None),
        K::NoEntryBlock,
        AnyEntity::Function("k".into()),
    );
    assert_eq!(
        errors_of(&f, None)[0].to_string(),
        "kernel @k: function has no blocks"
    );
}

#[test]
fn invalid_block_in_layout() {
    let (mut f, b0, _) = kernel(&[]);
    ret(&mut f, b0, &[]);
    let ghost = Block::new(99);
    f.layout.append_block(ghost);
    assert_only(
        &errors_of(&f, None),
        K::InvalidBlock,
        AnyEntity::Block(ghost),
    );
}

#[test]
fn invalid_inst_in_layout() {
    one_error(&[], None, K::InvalidInst, |f, b, _| {
        let ghost = Inst::new(99);
        f.layout.append_inst(ghost, b);
        AnyEntity::Inst(ghost)
    });
}

// InstBlockMismatch cannot be produced through the Layout API (which keeps an
// instruction's block and its block's list in sync); it guards against future bugs there.

#[test]
fn empty_block() {
    let (mut f, b0, _) = kernel(&[]);
    ret(&mut f, b0, &[]);
    let b1 = f.append_new_block();
    assert_only(&errors_of(&f, None), K::EmptyBlock, AnyEntity::Block(b1));
}

#[test]
fn missing_terminator() {
    let (mut f, b0, _) = kernel(&[]);
    let c = iconst(&mut f, b0, Type::I32, 1);
    let i = f.dfg.value_def(c);
    let ValueDef::Result(i) = i else {
        panic!("iconst result")
    };
    assert_only(
        &errors_of(&f, None),
        K::MissingTerminator,
        AnyEntity::Inst(i),
    );
}

#[test]
fn terminator_not_last() {
    one_error(&[], None, K::TerminatorNotLast, |f, b, _| {
        let r = ret(f, b, &[]);
        iconst(f, b, Type::I32, 0);
        AnyEntity::Inst(r)
    });
}

// ---------------------------------------------------------------------------------------
// Entry block.

#[test]
fn entry_param_count() {
    let mut f = Function::new(
        "k",
        FuncKind::Kernel,
        Signature {
            params: vec![Type::I32],
            ret: None,
        },
    );
    let b0 = f.append_new_block();
    ret(&mut f, b0, &[]);
    assert_only(
        &errors_of(&f, None),
        K::EntryParamCount,
        AnyEntity::Block(b0),
    );
}

#[test]
fn entry_param_type() {
    let mut f = Function::new(
        "k",
        FuncKind::Kernel,
        Signature {
            params: vec![Type::I32],
            ret: None,
        },
    );
    let b0 = f.append_new_block();
    f.dfg.append_block_param(b0, Type::F32);
    ret(&mut f, b0, &[]);
    assert_only(
        &errors_of(&f, None),
        K::EntryParamType,
        AnyEntity::Block(b0),
    );
}

#[test]
fn entry_block_targeted() {
    let (mut f, b0, _) = kernel(&[]);
    ret(&mut f, b0, &[]);
    let b1 = f.append_new_block();
    let j = jump(&mut f, b1, b0, &[]);
    assert_only(
        &errors_of(&f, None),
        K::EntryBlockTargeted,
        AnyEntity::Inst(j),
    );
}

// ---------------------------------------------------------------------------------------
// SSA.

#[test]
fn invalid_value() {
    one_error(&[Type::I32], None, K::InvalidValue, |f, b, vs| {
        let v = bin(f, b, Opcode::Iadd, vs[0], Value::new(999), Type::I32);
        AnyEntity::Inst(inst_of(f, v))
    });
}

fn inst_of(f: &Function, v: Value) -> Inst {
    match f.dfg.value_def(v) {
        ValueDef::Result(i) => i,
        d => panic!("{v} is {d:?}"),
    }
}

#[test]
fn detached_value() {
    one_error(&[Type::I32], None, K::DetachedValue, |f, b, vs| {
        let d = f.dfg.make_detached_value(Type::I32);
        let v = bin(f, b, Opcode::Iadd, vs[0], d, Type::I32);
        AnyEntity::Inst(inst_of(f, v))
    });
}

#[test]
fn removed_param_is_detached() {
    let (mut f, b0, _) = kernel(&[]);
    let b1 = f.append_new_block();
    let p = f.dfg.append_block_param(b1, Type::I32);
    jump(&mut f, b0, b1, &[]);
    f.dfg.remove_block_param(b1, 0);
    let r = ret(&mut f, b1, &[]);
    let v = ins(
        &mut f,
        b1,
        InstructionData::Unary {
            opcode: Opcode::Freeze,
            arg: p,
        },
        Type::I32,
    );
    // Move the freeze before the return.
    let fr = inst_of(&f, v);
    f.layout.remove_inst(fr);
    f.layout.insert_inst_before(fr, r);
    assert_only(&errors_of(&f, None), K::DetachedValue, AnyEntity::Inst(fr));
}

#[test]
fn def_not_in_layout() {
    one_error(&[], None, K::DefNotInLayout, |f, b, _| {
        let (_, v) = f
            .dfg
            .make_inst_with_result(InstructionData::IntConst { imm: 1 }, Type::I32);
        let u = ins(f, b, unary(Opcode::Freeze, v), Type::I32);
        AnyEntity::Inst(inst_of(f, u))
    });
}

#[test]
fn param_of_block_not_in_layout() {
    one_error(&[], None, K::DefNotInLayout, |f, b, _| {
        let ghost = f.dfg.make_block();
        let p = f.dfg.append_block_param(ghost, Type::I32);
        let u = ins(f, b, unary(Opcode::Freeze, p), Type::I32);
        AnyEntity::Inst(inst_of(f, u))
    });
}

#[test]
fn result_def_mismatch() {
    one_error(&[], None, K::ResultDefMismatch, |f, b, _| {
        let old = iconst(f, b, Type::I32, 1);
        let i = inst_of(f, old);
        // Give the instruction a new result: `old` still claims to come from it.
        let new = f.dfg.make_detached_value(Type::I32);
        f.dfg.attach_result_value(i, new, Type::I32);
        let u = bin(f, b, Opcode::Iadd, old, new, Type::I32);
        AnyEntity::Inst(inst_of(f, u))
    });
}

// ParamDefMismatch cannot be produced through the DataFlowGraph API (parameter
// bookkeeping is kept in sync by `append/attach/remove_block_param`, with debug asserts).

#[test]
fn use_not_dominated_diamond() {
    let (mut f, b0, vs) = kernel(&[Type::I1]);
    let (l, r, j) = (
        f.append_new_block(),
        f.append_new_block(),
        f.append_new_block(),
    );
    brif(&mut f, b0, vs[0], l, &[], r, &[]);
    let x = iconst(&mut f, l, Type::I32, 1);
    jump(&mut f, l, j, &[]);
    jump(&mut f, r, j, &[]);
    let u = bin(&mut f, j, Opcode::Iadd, x, x, Type::I32);
    ret(&mut f, j, &[]);
    let errs = errors_of(&f, None);
    // Two uses in one instruction: two errors, both at the use.
    assert_eq!(errs.len(), 2);
    for e in &errs {
        assert_eq!(
            (e.kind, &e.location),
            (K::UseNotDominated, &AnyEntity::Inst(inst_of(&f, u)))
        );
    }
}

#[test]
fn use_before_def_in_block() {
    one_error(&[], None, K::UseNotDominated, |f, b, _| {
        let (i, v) = f
            .dfg
            .make_inst_with_result(InstructionData::IntConst { imm: 1 }, Type::I32);
        let u = ins(
            f,
            b,
            InstructionData::Unary {
                opcode: Opcode::Freeze,
                arg: v,
            },
            Type::I32,
        );
        f.layout.append_inst(i, b);
        AnyEntity::Inst(inst_of(f, u))
    });
}

#[test]
fn self_use_is_not_dominated() {
    one_error(&[], None, K::UseNotDominated, |f, b, _| {
        let v = iconst(f, b, Type::I32, 1);
        let i = inst_of(f, v);
        f.dfg.replace_inst(
            i,
            InstructionData::Unary {
                opcode: Opcode::Freeze,
                arg: v,
            },
        );
        AnyEntity::Inst(i)
    });
}

#[test]
fn branch_arg_not_dominated_and_param_scope() {
    let (mut f, b0, vs) = kernel(&[Type::I1]);
    let (l, r, j) = (
        f.append_new_block(),
        f.append_new_block(),
        f.append_new_block(),
    );
    let p = f.dfg.append_block_param(l, Type::I32);
    let q = f.dfg.append_block_param(j, Type::I32);
    let z = iconst(&mut f, b0, Type::I32, 0);
    brif(&mut f, b0, vs[0], l, &[z], r, &[]);
    jump(&mut f, l, j, &[p]);
    // `p` is a parameter of `l`, which does not dominate `r`.
    let bad = jump(&mut f, r, j, &[p]);
    // A block's own parameter is available in it.
    ins(&mut f, j, unary(Opcode::Freeze, q), Type::I32);
    ret(&mut f, j, &[]);
    assert_only(
        &errors_of(&f, None),
        K::UseNotDominated,
        AnyEntity::Inst(bad),
    );
}

#[test]
fn unreachable_def_does_not_dominate_reachable_use() {
    let (mut f, b0, _) = kernel(&[]);
    let b1 = f.append_new_block();
    let dead = f.append_new_block();
    jump(&mut f, b0, b1, &[]);
    let x = iconst(&mut f, dead, Type::I32, 1);
    jump(&mut f, dead, b1, &[]);
    let u = ins(
        &mut f,
        b1,
        InstructionData::Unary {
            opcode: Opcode::Freeze,
            arg: x,
        },
        Type::I32,
    );
    ret(&mut f, b1, &[]);
    assert_only(
        &errors_of(&f, None),
        K::UseNotDominated,
        AnyEntity::Inst(inst_of(&f, u)),
    );
}

#[test]
fn unreachable_uses_still_need_definitions() {
    let (mut f, b0, _) = kernel(&[]);
    ret(&mut f, b0, &[]);
    let dead = f.append_new_block();
    let d = f.dfg.make_detached_value(Type::I32);
    let u = bin(&mut f, dead, Opcode::Iadd, d, d, Type::I32);
    ret(&mut f, dead, &[]);
    let errs = errors_of(&f, None);
    assert_eq!(errs.len(), 2);
    assert!(errs
        .iter()
        .all(|e| e.kind == K::DetachedValue && e.location == AnyEntity::Inst(inst_of(&f, u))));
}

// ---------------------------------------------------------------------------------------
// Results, formats, flags.

#[test]
fn unexpected_result() {
    one_inst_error(
        &[Type::I32, G],
        K::UnexpectedResult,
        |_, vs| InstructionData::Store {
            args: [vs[0], vs[1]],
            flags: MemFlags::default(),
        },
        Some(Type::I32),
    );
}

#[test]
fn missing_result() {
    one_inst_error(
        &[Type::I32],
        K::MissingResult,
        |_, vs| InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [vs[0], vs[0]],
            flags: IntFlags::NONE,
        },
        None,
    );
}

#[test]
fn opcode_format_mismatch() {
    one_inst_error(
        &[Type::I32],
        K::OpcodeFormatMismatch,
        |_, vs| InstructionData::Unary {
            opcode: Opcode::Iadd,
            arg: vs[0],
        },
        Some(Type::I32),
    );
    one_inst_error(
        &[Type::I32],
        K::OpcodeFormatMismatch,
        |_, vs| InstructionData::Binary {
            opcode: Opcode::Fma,
            args: [vs[0], vs[0]],
            flags: IntFlags::NONE,
        },
        Some(Type::I32),
    );
    one_inst_error(
        &[],
        K::OpcodeFormatMismatch,
        |_, _| InstructionData::Nullary {
            opcode: Opcode::Sqrt,
        },
        None,
    );
}

#[test]
fn disallowed_flags() {
    one_inst_error(
        &[Type::I32],
        K::DisallowedFlags,
        |_, vs| InstructionData::Binary {
            opcode: Opcode::And,
            args: [vs[0], vs[0]],
            flags: IntFlags::NSW,
        },
        Some(Type::I32),
    );
    one_inst_error(
        &[Type::I32],
        K::DisallowedFlags,
        |_, vs| InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [vs[0], vs[0]],
            flags: IntFlags::EXACT,
        },
        Some(Type::I32),
    );
    // `contract` is for float arithmetic only.
    one_inst_error(
        &[Type::I32],
        K::DisallowedFlags,
        |_, vs| InstructionData::Binary {
            opcode: Opcode::Iadd,
            args: [vs[0], vs[0]],
            flags: IntFlags::CONTRACT,
        },
        Some(Type::I32),
    );
}

// ---------------------------------------------------------------------------------------
// Branches.

#[test]
fn invalid_branch_target() {
    let (mut f, b0, _) = kernel(&[]);
    let ghost = f.dfg.make_block();
    let j = jump(&mut f, b0, ghost, &[]);
    assert_only(
        &errors_of(&f, None),
        K::InvalidBranchTarget,
        AnyEntity::Inst(j),
    );
    let (mut f, b0, _) = kernel(&[]);
    let j = jump(&mut f, b0, Block::new(77), &[]);
    assert_only(
        &errors_of(&f, None),
        K::InvalidBranchTarget,
        AnyEntity::Inst(j),
    );
}

#[test]
fn branch_arg_count_and_type() {
    let (mut f, b0, vs) = kernel(&[Type::I32, Type::F32]);
    let b1 = f.append_new_block();
    f.dfg.append_block_param(b1, Type::I32);
    ret(&mut f, b1, &[]);
    let j = jump(&mut f, b0, b1, &[vs[0], vs[0]]);
    assert_only(&errors_of(&f, None), K::BranchArgCount, AnyEntity::Inst(j));
    f.layout.remove_inst(j);
    let j = jump(&mut f, b0, b1, &[vs[1]]);
    assert_only(&errors_of(&f, None), K::BranchArgType, AnyEntity::Inst(j));
}

#[test]
fn branch_cond_type() {
    let (mut f, b0, vs) = kernel(&[Type::I32, Type::F32]);
    let b1 = f.append_new_block();
    ret(&mut f, b1, &[]);
    let br = brif(&mut f, b0, vs[0], b1, &[], b1, &[]);
    assert_only(&errors_of(&f, None), K::BranchCondType, AnyEntity::Inst(br));
    f.layout.remove_inst(br);
    let bt = br_table(&mut f, b0, vs[1], b1, &[(0, b1)]);
    assert_only(&errors_of(&f, None), K::BranchCondType, AnyEntity::Inst(bt));
}

#[test]
fn invalid_jump_table() {
    let (mut f, b0, vs) = kernel(&[Type::I32]);
    let i = f
        .append_inst(
            b0,
            InstructionData::BrTable {
                arg: vs[0],
                table: JumpTable::new(5),
            },
            None,
        )
        .0;
    assert_only(
        &errors_of(&f, None),
        K::InvalidJumpTable,
        AnyEntity::Inst(i),
    );
}

#[test]
fn br_table_cases() {
    let (mut f, b0, vs) = kernel(&[Type::I8]);
    let b1 = f.append_new_block();
    ret(&mut f, b1, &[]);
    let bt = br_table(&mut f, b0, vs[0], b1, &[(-128, b1), (255, b1), (256, b1)]);
    assert_only(
        &errors_of(&f, None),
        K::BrTableCaseRange,
        AnyEntity::Inst(bt),
    );
    f.layout.remove_inst(bt);
    // -1 and 255 are the same i8.
    let bt = br_table(&mut f, b0, vs[0], b1, &[(-1, b1), (3, b1), (255, b1)]);
    assert_only(
        &errors_of(&f, None),
        K::BrTableDuplicateCase,
        AnyEntity::Inst(bt),
    );
}

// ---------------------------------------------------------------------------------------
// Types.

#[test]
fn constants() {
    one_inst_error(
        &[],
        K::ConstType,
        |_, _| InstructionData::IntConst { imm: 1 },
        Some(Type::F32),
    );
    one_inst_error(
        &[],
        K::ConstType,
        |_, _| InstructionData::FloatConst { bits: 0 },
        Some(Type::I32),
    );
    one_inst_error(
        &[],
        K::IconstRange,
        |_, _| InstructionData::IntConst { imm: 256 },
        Some(Type::I8),
    );
    one_inst_error(
        &[],
        K::IconstRange,
        |_, _| InstructionData::IntConst { imm: -129 },
        Some(Type::I8),
    );
    one_inst_error(
        &[],
        K::IconstRange,
        |_, _| InstructionData::IntConst { imm: 2 },
        Some(Type::I1),
    );
    one_inst_error(
        &[],
        K::FconstBits,
        |_, _| InstructionData::FloatConst { bits: 1 << 40 },
        Some(Type::F32),
    );
}

#[test]
fn imm_fits_bounds() {
    use super::insts::imm_fits;
    assert!(imm_fits(-1, 1) && imm_fits(1, 1) && !imm_fits(2, 1) && !imm_fits(-2, 1));
    assert!(imm_fits(i64::MIN, 64) && imm_fits(-1, 64));
    assert!(
        imm_fits(u32::MAX as i64, 32) && !imm_fits(1 << 32, 32) && imm_fits(i32::MIN as i64, 32)
    );
}

fn unary(op: Opcode, arg: Value) -> InstructionData {
    InstructionData::Unary { opcode: op, arg }
}

#[test]
fn arithmetic_types() {
    let b = |op, a: usize, c: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::Binary {
            opcode: op,
            args: [vs[a], vs[c]],
            flags: IntFlags::NONE,
        }
    };
    let ps = [Type::I32, Type::I64, Type::F32, Type::F64];
    one_inst_error(&ps, K::IntArithType, b(Opcode::Iadd, 0, 1), Some(Type::I32));
    one_inst_error(&ps, K::IntArithType, b(Opcode::Shl, 0, 0), Some(Type::I64));
    one_inst_error(&ps, K::IntArithType, b(Opcode::Smin, 2, 2), Some(Type::F32));
    one_inst_error(
        &ps,
        K::IntArithType,
        |_, vs| unary(Opcode::Clz, vs[2]),
        Some(Type::F32),
    );
    one_inst_error(
        &ps,
        K::FloatArithType,
        b(Opcode::Fadd, 0, 0),
        Some(Type::I32),
    );
    one_inst_error(
        &ps,
        K::FloatArithType,
        b(Opcode::Fmul, 2, 3),
        Some(Type::F32),
    );
    one_inst_error(
        &ps,
        K::FloatArithType,
        |_, vs| unary(Opcode::Sqrt, vs[2]),
        Some(Type::F64),
    );
    // The math primitives exist for one type only (PTX has no other form).
    one_inst_error(
        &ps,
        K::IntArithType,
        b(Opcode::Mul24, 1, 1),
        Some(Type::I64),
    );
    one_inst_error(
        &ps,
        K::IntArithType,
        b(Opcode::Umul24, 1, 1),
        Some(Type::I64),
    );
    one_inst_error(
        &ps,
        K::FloatArithType,
        b(Opcode::FdivApprox, 3, 3),
        Some(Type::F64),
    );
    for op in [
        Opcode::Ex2Approx,
        Opcode::Lg2Approx,
        Opcode::SinApprox,
        Opcode::CosApprox,
    ] {
        one_inst_error(
            &ps,
            K::FloatArithType,
            move |_, vs| unary(op, vs[3]),
            Some(Type::F64),
        );
    }
    one_inst_error(
        &ps,
        K::FloatArithType,
        |_, vs| unary(Opcode::RsqrtApprox, vs[0]),
        Some(Type::I32),
    );
    let t = |op, a: usize, c: usize, d: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::Ternary {
            opcode: op,
            args: [vs[a], vs[c], vs[d]],
        }
    };
    let ps = [Type::I1, Type::I32, Type::F32, Type::F64];
    one_inst_error(&ps, K::FmaType, t(Opcode::Fma, 2, 2, 3), Some(Type::F32));
    one_inst_error(&ps, K::FmaType, t(Opcode::Fma, 1, 1, 1), Some(Type::I32));
    one_inst_error(
        &ps,
        K::SelectType,
        t(Opcode::Select, 1, 1, 1),
        Some(Type::I32),
    );
    one_inst_error(
        &ps,
        K::SelectType,
        t(Opcode::Select, 0, 1, 2),
        Some(Type::I32),
    );
    one_inst_error(
        &ps,
        K::FreezeType,
        |_, vs| unary(Opcode::Freeze, vs[1]),
        Some(Type::F32),
    );
}

#[test]
fn compare_types() {
    let ps = [
        Type::I32,
        Type::I64,
        Type::F32,
        G,
        Type::Ptr(AddrSpace::Shared),
    ];
    let ic = |a: usize, c: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::IntCompare {
            cond: IntCC::Eq,
            args: [vs[a], vs[c]],
        }
    };
    let fc = |a: usize, c: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::FloatCompare {
            cond: FloatCC::Oeq,
            args: [vs[a], vs[c]],
        }
    };
    one_inst_error(&ps, K::IcmpType, ic(0, 1), Some(Type::I1));
    one_inst_error(&ps, K::IcmpType, ic(2, 2), Some(Type::I1));
    one_inst_error(&ps, K::IcmpType, ic(3, 4), Some(Type::I1));
    one_inst_error(&ps, K::IcmpType, ic(0, 0), Some(Type::I32));
    one_inst_error(&ps, K::FcmpType, fc(0, 0), Some(Type::I1));
    one_inst_error(&ps, K::FcmpType, fc(2, 2), Some(Type::F32));
}

#[test]
fn cast_rules() {
    use Type::*;
    let gp = Ptr(AddrSpace::Generic);
    let sp = Ptr(AddrSpace::Shared);
    // (opcode, from, to, legal)
    let table: &[(Opcode, Type, Type, bool)] = &[
        (Opcode::Sext, I1, I32, true),
        (Opcode::Sext, I32, I32, false),
        (Opcode::Zext, I64, I32, false),
        (Opcode::Zext, F32, F64, false),
        (Opcode::Trunc, I64, I8, true),
        (Opcode::Trunc, I8, I8, false),
        (Opcode::Fpext, F32, F64, true),
        (Opcode::Fpext, F64, F32, false),
        (Opcode::Fptrunc, F64, F32, true),
        (Opcode::Fptrunc, F32, F32, false),
        (Opcode::Fptosi, F64, I8, true),
        (Opcode::Fptoui, I32, I32, false),
        (Opcode::Sitofp, I32, F32, true),
        (Opcode::Uitofp, F32, F64, false),
        (Opcode::Bitcast, I64, F64, true),
        (Opcode::Bitcast, G, I64, true),
        (Opcode::Bitcast, I32, F64, false),
        (Opcode::Bitcast, G, sp, false),
        (Opcode::Ptrtoint, sp, I32, true),
        (Opcode::Ptrtoint, sp, I8, false),
        (Opcode::Ptrtoint, I64, I64, false),
        (Opcode::Inttoptr, I64, G, true),
        (Opcode::Inttoptr, I1, G, false),
        (Opcode::AddrspaceCast, gp, sp, true),
        (Opcode::AddrspaceCast, sp, gp, true),
        (Opcode::AddrspaceCast, sp, G, false),
        (Opcode::AddrspaceCast, gp, gp, false),
        (Opcode::AddrspaceCast, I64, gp, false),
    ];
    for &(op, from, to, legal) in table {
        let (mut f, b0, vs) = kernel(&[from]);
        let v = ins(&mut f, b0, unary(op, vs[0]), to);
        ret(&mut f, b0, &[]);
        let errs = errors_of(&f, None);
        if legal {
            assert!(errs.is_empty(), "{op} {from} -> {to}: {errs:?}");
        } else {
            assert_only(&errs, K::CastType, AnyEntity::Inst(inst_of(&f, v)));
        }
    }
}

#[test]
fn memory_types() {
    let ps = [
        G,
        Type::I64,
        Type::I32,
        Type::Ptr(AddrSpace::Const),
        Type::Ptr(AddrSpace::Local),
        Type::F32,
        Type::F64,
    ];
    let pa = |a: usize, i: usize, scale| {
        move |_: &mut Function, vs: &[Value]| InstructionData::PtrAdd {
            args: [vs[a], vs[i]],
            scale,
        }
    };
    one_inst_error(&ps, K::PtrAddType, pa(1, 1, 4), Some(Type::I64));
    one_inst_error(&ps, K::PtrAddType, pa(0, 5, 4), Some(G));
    one_inst_error(
        &ps,
        K::PtrAddType,
        pa(0, 2, 4),
        Some(Type::Ptr(AddrSpace::Generic)),
    );
    one_inst_error(&ps, K::PtrAddScale, pa(0, 2, 0), Some(G));
    one_inst_error(
        &ps,
        K::LoadType,
        |_, vs| InstructionData::Load {
            ptr: vs[1],
            flags: MemFlags::default(),
        },
        Some(Type::I32),
    );
    let st = |v: usize, p: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::Store {
            args: [vs[v], vs[p]],
            flags: MemFlags::default(),
        }
    };
    one_inst_error(&ps, K::StoreType, st(2, 1), None);
    one_inst_error(&ps, K::StoreToConst, st(2, 3), None);
    let rmw = |op, p: usize, v: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::AtomicRmw {
            op,
            args: [vs[p], vs[v]],
            order: MemOrder::Relaxed,
            scope: MemScope::Gpu,
        }
    };
    one_inst_error(
        &ps,
        K::AtomicType,
        rmw(AtomicOp::And, 0, 5),
        Some(Type::F32),
    );
    one_inst_error(
        &ps,
        K::AtomicType,
        rmw(AtomicOp::Add, 0, 2),
        Some(Type::I64),
    );
    one_inst_error(
        &ps,
        K::AtomicType,
        rmw(AtomicOp::Add, 1, 2),
        Some(Type::I32),
    );
    one_inst_error(
        &ps,
        K::AtomicAddrSpace,
        rmw(AtomicOp::Add, 4, 6),
        Some(Type::F64),
    );
    one_inst_error(
        &ps,
        K::AtomicAddrSpace,
        rmw(AtomicOp::Exch, 3, 2),
        Some(Type::I32),
    );
    let cas = |p: usize, e: usize, n: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::AtomicCas {
            args: [vs[p], vs[e], vs[n]],
            order: MemOrder::Relaxed,
            scope: MemScope::Gpu,
        }
    };
    one_inst_error(&ps, K::AtomicType, cas(0, 1, 2), Some(Type::I64));
    one_inst_error(&ps, K::AtomicType, cas(0, 5, 5), Some(Type::F32));
    one_inst_error(&ps, K::AtomicAddrSpace, cas(4, 2, 2), Some(Type::I32));
    // Wrapping inc/dec exist for i32 only.
    one_inst_error(
        &ps,
        K::AtomicType,
        rmw(AtomicOp::Inc, 0, 1),
        Some(Type::I64),
    );
}

#[test]
fn warp_op_types() {
    // i32, i64, f32, i1
    let ps = [Type::I32, Type::I64, Type::F32, Type::I1];
    let shfl = |v: usize, l: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::Shfl {
            mode: ShflMode::Idx,
            args: [vs[v], vs[l], vs[0], vs[0]],
        }
    };
    one_inst_error(&ps, K::WarpOpType, shfl(1, 0), Some(Type::I64));
    one_inst_error(&ps, K::WarpOpType, shfl(0, 1), Some(Type::I32));
    one_inst_error(&ps, K::WarpOpType, shfl(2, 0), Some(Type::I32));
    let vote = |mode, p: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::Vote {
            mode,
            args: [vs[p], vs[0]],
        }
    };
    one_inst_error(&ps, K::WarpOpType, vote(VoteMode::Any, 0), Some(Type::I1));
    one_inst_error(
        &ps,
        K::WarpOpType,
        vote(VoteMode::Ballot, 3),
        Some(Type::I1),
    );
    one_inst_error(
        &ps,
        K::WarpOpType,
        |_: &mut Function, vs: &[Value]| InstructionData::WarpSync { mask: vs[1] },
        None,
    );
    one_inst_error(
        &ps,
        K::WarpOpType,
        |_: &mut Function, _: &[Value]| InstructionData::Fence {
            order: MemOrder::Acquire,
            scope: MemScope::Gpu,
        },
        None,
    );
    one_inst_error(
        &ps,
        K::WarpOpType,
        |_: &mut Function, _: &[Value]| InstructionData::Nullary {
            opcode: Opcode::Clock,
        },
        Some(Type::F32),
    );
    one_inst_error(
        &ps,
        K::MissingResult,
        |_: &mut Function, _: &[Value]| InstructionData::Nullary {
            opcode: Opcode::Clock,
        },
        None,
    );
}

#[test]
fn syscall_types() {
    // generic ptr, i32, global ptr, i64
    let gp = Type::Ptr(AddrSpace::Generic);
    let ps = [gp, Type::I32, G, Type::I64];
    let vprintf = |a: usize, b: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::Vprintf {
            args: [vs[a], vs[b]],
        }
    };
    one_inst_error(&ps, K::SyscallType, vprintf(0, 2), Some(Type::I32));
    one_inst_error(&ps, K::SyscallType, vprintf(1, 0), Some(Type::I32));
    one_inst_error(&ps, K::SyscallType, vprintf(0, 0), Some(Type::I64));
    one_inst_error(&ps, K::MissingResult, vprintf(0, 0), None);
    let assert_fail = |line: usize, msg: usize| {
        move |_: &mut Function, vs: &[Value]| InstructionData::AssertFail {
            args: [vs[msg], vs[0], vs[line], vs[0]],
        }
    };
    one_inst_error(&ps, K::SyscallType, assert_fail(3, 0), None);
    one_inst_error(&ps, K::SyscallType, assert_fail(1, 2), None);
    one_inst_error(&ps, K::UnexpectedResult, assert_fail(1, 0), Some(Type::I32));
    // Well-typed ones verify.
    let (mut f, b0, vs) = kernel(&ps);
    f.append_inst(
        b0,
        InstructionData::Vprintf {
            args: [vs[0], vs[0]],
        },
        Some(Type::I32),
    );
    f.append_inst(
        b0,
        InstructionData::AssertFail {
            args: [vs[0], vs[0], vs[1], vs[0]],
        },
        None,
    );
    ret(&mut f, b0, &[]);
    assert!(errors_of(&f, None).is_empty());
}

#[test]
fn address_and_register_types() {
    let mut m = Module::new();
    m.globals.push(GlobalData {
        name: "s".into(),
        space: AddrSpace::Shared,
        elem: Type::F32,
        count: 4,
        align: 4,
        init: None,
        linkage: crate::Linkage::Internal,
        externally_initialized: false,
    });
    let ga = |g: usize| InstructionData::GlobalAddr {
        global: GlobalId::new(g),
    };
    one_error(&[], Some(&m), K::InvalidGlobal, |f, b, _| {
        AnyEntity::Inst(f.append_inst(b, ga(3), Some(G)).0)
    });
    one_error(&[], Some(&m), K::GlobalAddrType, |f, b, _| {
        AnyEntity::Inst(f.append_inst(b, ga(0), Some(G)).0)
    });
    // Without a module only "is a pointer" is checked.
    one_inst_error(&[], K::GlobalAddrType, |_, _| ga(0), Some(Type::I64));
    let (mut f, b0, _) = kernel(&[]);
    ins(&mut f, b0, ga(0), G);
    ret(&mut f, b0, &[]);
    assert_valid(&f, None);

    one_inst_error(
        &[],
        K::InvalidSlot,
        |_, _| InstructionData::SlotAddr { slot: Slot::new(0) },
        Some(Type::Ptr(AddrSpace::Local)),
    );
    one_error(&[], None, K::SlotAddrType, |f, b, _| {
        let slot = f.slots.push(SlotData { size: 4, align: 4 });
        AnyEntity::Inst(
            f.append_inst(b, InstructionData::SlotAddr { slot }, Some(G))
                .0,
        )
    });
    one_inst_error(
        &[],
        K::SregType,
        |_, _| InstructionData::Sreg {
            reg: SpecialReg::LaneId,
        },
        Some(Type::I64),
    );
}

// ---------------------------------------------------------------------------------------
// Calls and returns.

fn callee_module() -> Module {
    let mut m = Module::new();
    let (mut d, b, vs) = new_func("dev", FuncKind::Device, &[Type::I32], Some(Type::F32));
    let r = ins(&mut d, b, unary(Opcode::Sitofp, vs[0]), Type::F32);
    ret(&mut d, b, &[r]);
    m.functions.push(d);
    let (mut k, b, _) = new_func("kern", FuncKind::Kernel, &[], None);
    ret(&mut k, b, &[]);
    m.functions.push(k);
    let (mut v, b, _) = new_func("void", FuncKind::Device, &[], None);
    ret(&mut v, b, &[]);
    m.functions.push(v);
    m
}

fn call(f: &mut Function, b: Block, callee: usize, args: &[Value], ty: Option<Type>) -> Inst {
    let args = crate::ValueList::from_slice(args, &mut f.dfg.value_lists);
    f.append_inst(
        b,
        InstructionData::Call {
            func: FuncId::new(callee),
            args,
        },
        ty,
    )
    .0
}

#[test]
fn calls() {
    let m = callee_module();
    let m = Some(&m);
    let ps = [Type::I32, Type::I64];
    // The valid call, to be sure the others fail for the stated reason.
    let (mut f, b0, vs) = kernel(&ps);
    call(&mut f, b0, 0, &[vs[0]], Some(Type::F32));
    ret(&mut f, b0, &[]);
    assert_valid(&f, m);
    one_error(&ps, m, K::UnknownCallee, |f, b, vs| {
        AnyEntity::Inst(call(f, b, 9, &[vs[0]], Some(Type::F32)))
    });
    one_error(&ps, m, K::CallToKernel, |f, b, _| {
        AnyEntity::Inst(call(f, b, 1, &[], None))
    });
    one_error(&ps, m, K::CallArgCount, |f, b, _| {
        AnyEntity::Inst(call(f, b, 0, &[], Some(Type::F32)))
    });
    one_error(&ps, m, K::CallArgType, |f, b, vs| {
        AnyEntity::Inst(call(f, b, 0, &[vs[1]], Some(Type::F32)))
    });
    one_error(&ps, m, K::CallResultType, |f, b, vs| {
        AnyEntity::Inst(call(f, b, 0, &[vs[0]], Some(Type::F64)))
    });
    one_error(&ps, m, K::MissingResult, |f, b, vs| {
        AnyEntity::Inst(call(f, b, 0, &[vs[0]], None))
    });
    one_error(&ps, m, K::UnexpectedResult, |f, b, _| {
        AnyEntity::Inst(call(f, b, 2, &[], Some(Type::I32)))
    });
    // Without a module nothing about the callee can be checked.
    let (mut f, b0, _) = kernel(&ps);
    call(&mut f, b0, 9, &[], None);
    ret(&mut f, b0, &[]);
    assert_valid(&f, None);
}

#[test]
fn returns() {
    // A kernel returning a value.
    let (mut f, b0, vs) = kernel(&[Type::I32]);
    let r = ret(&mut f, b0, &[vs[0]]);
    assert_only(&errors_of(&f, None), K::ReturnArgCount, AnyEntity::Inst(r));
    // A device function returning nothing, and the wrong type.
    let (mut f, b0, vs) = new_func("d", FuncKind::Device, &[Type::I32], Some(Type::F32));
    let r = ret(&mut f, b0, &[]);
    assert_only(&errors_of(&f, None), K::ReturnArgCount, AnyEntity::Inst(r));
    f.layout.remove_inst(r);
    let r = ret(&mut f, b0, &[vs[0]]);
    assert_only(&errors_of(&f, None), K::ReturnType, AnyEntity::Inst(r));
    assert_eq!(
        errors_of(&f, None)[0].to_string(),
        format!("func @d: block0: {r} (return v0): return of i32; the function returns f32")
    );
}

// ---------------------------------------------------------------------------------------
// Function and module.

#[test]
fn kernel_returns_value_and_slot_align() {
    let (mut f, b0, _) = new_func("k", FuncKind::Kernel, &[], Some(Type::I32));
    ret(&mut f, b0, &[]);
    assert_only(
        &errors_of(&f, None),
        K::KernelReturnsValue,
        AnyEntity::Function("k".into()),
    );
    let (mut f, b0, _) = kernel(&[]);
    ret(&mut f, b0, &[]);
    f.slots.push(SlotData { size: 8, align: 8 });
    let s = f.slots.push(SlotData { size: 8, align: 6 });
    assert_only(&errors_of(&f, None), K::SlotAlign, AnyEntity::Slot(s));
}

#[test]
fn byval_params() {
    let bv = |index, align| crate::ByValParam {
        index,
        size: 4,
        align,
    };
    let local = Type::Ptr(AddrSpace::Local);
    // A kernel's ptr.local parameter: fine.
    let (mut f, b0, _) = kernel(&[Type::I32, local]);
    ret(&mut f, b0, &[]);
    f.byval = vec![bv(1, 4)];
    assert!(errors_of(&f, None).is_empty());
    let k = AnyEntity::Function("k".into());
    // Not a ptr.local parameter, a bad alignment, listed twice.
    for byval in [
        vec![bv(0, 4)],
        vec![bv(1, 3)],
        vec![bv(1, 4), bv(1, 4)],
        vec![bv(2, 4)],
    ] {
        f.byval = byval;
        assert_only(&errors_of(&f, None), K::ByValParam, k.clone());
    }
    // Device functions take no byval parameters (the importer copies at the call).
    let (mut f, b0, _) = new_func("d", FuncKind::Device, &[local], None);
    ret(&mut f, b0, &[]);
    f.byval = vec![bv(0, 4)];
    assert_only(
        &errors_of(&f, None),
        K::ByValParam,
        AnyEntity::Function("d".into()),
    );
}

fn global(name: &str, space: AddrSpace, elem: Type, init: Option<Vec<u64>>) -> GlobalData {
    GlobalData {
        name: name.into(),
        space,
        elem,
        count: 2,
        align: 4,
        init,
        linkage: crate::Linkage::Internal,
        externally_initialized: false,
    }
}

fn module_errors(m: &Module) -> Vec<VerifierError> {
    match verify_module(m) {
        Ok(()) => Vec::new(),
        Err(e) => e.0,
    }
}

#[test]
fn module_names() {
    let mut m = callee_module();
    assert!(verify_module(&m).is_ok());
    let (mut d, b, _) = new_func("dev", FuncKind::Device, &[], None);
    ret(&mut d, b, &[]);
    m.functions.push(d);
    assert_only(
        &module_errors(&m),
        K::DuplicateName,
        AnyEntity::Function("dev".into()),
    );
    let mut m = callee_module();
    let g = m
        .globals
        .push(global("kern", AddrSpace::Global, Type::I32, None));
    assert_only(&module_errors(&m), K::DuplicateName, AnyEntity::Global(g));
    let errs = module_errors(&m);
    assert_eq!(
        errs[0].to_string(),
        "gv0: name @kern of gv0 is already used by fn1"
    );
}

#[test]
fn module_globals() {
    let cases: Vec<(GlobalData, K)> = vec![
        (
            global("a", AddrSpace::Local, Type::I32, None),
            K::GlobalAddrSpace,
        ),
        (
            global("a", AddrSpace::Generic, Type::I32, None),
            K::GlobalAddrSpace,
        ),
        (
            GlobalData {
                align: 3,
                ..global("a", AddrSpace::Global, Type::I32, None)
            },
            K::GlobalAlign,
        ),
        (
            global("a", AddrSpace::Const, Type::I32, Some(vec![1])),
            K::GlobalInitLength,
        ),
        (
            global("a", AddrSpace::Const, Type::I8, Some(vec![1, 256])),
            K::GlobalInitValue,
        ),
        (
            global("a", AddrSpace::Shared, Type::I32, Some(vec![0, 0])),
            K::SharedGlobalInit,
        ),
        (
            global("a", AddrSpace::Global, G, Some(vec![0, 0])),
            K::PointerGlobalInit,
        ),
        (
            GlobalData {
                externally_initialized: true,
                ..global("a", AddrSpace::Const, Type::I32, None)
            },
            K::GlobalLinkage,
        ),
        (
            GlobalData {
                externally_initialized: true,
                linkage: crate::Linkage::Visible,
                ..global("a", AddrSpace::Shared, Type::I32, None)
            },
            K::GlobalLinkage,
        ),
        (
            GlobalData {
                linkage: crate::Linkage::Visible,
                ..global("a", AddrSpace::Shared, Type::I32, None)
            },
            K::GlobalLinkage,
        ),
        (
            GlobalData {
                linkage: crate::Linkage::Extern,
                ..global("a", AddrSpace::Shared, Type::I32, None)
            },
            K::GlobalLinkage,
        ),
        (
            GlobalData {
                linkage: crate::Linkage::Extern,
                count: 0,
                ..global("a", AddrSpace::Global, Type::I32, None)
            },
            K::GlobalLinkage,
        ),
    ];
    // The allowed combinations verify.
    for g in [
        GlobalData {
            externally_initialized: true,
            linkage: crate::Linkage::Visible,
            ..global("v", AddrSpace::Const, Type::I32, Some(vec![0, 0]))
        },
        GlobalData {
            linkage: crate::Linkage::Extern,
            count: 0,
            ..global("d", AddrSpace::Shared, Type::F32, None)
        },
    ] {
        let mut m = Module::new();
        m.globals.push(g);
        assert!(module_errors(&m).is_empty(), "{:?}", module_errors(&m));
    }
    for (g, kind) in cases {
        let mut m = Module::new();
        m.globals.push(global(
            "ok",
            AddrSpace::Const,
            Type::F64,
            Some(vec![u64::MAX, 0]),
        ));
        let id = m.globals.push(g);
        assert_only(&module_errors(&m), kind, AnyEntity::Global(id));
    }
}

#[test]
fn module_checks_functions_against_module() {
    let mut m = callee_module();
    let (mut k, b, _) = kernel(&[]);
    let c = call(&mut k, b, 0, &[], Some(Type::F32));
    ret(&mut k, b, &[]);
    m.functions.push(k);
    let errs = module_errors(&m);
    assert_only(&errs, K::CallArgCount, AnyEntity::Inst(c));
    assert_eq!(errs[0].context, "kernel @k");
}

// ---------------------------------------------------------------------------------------
// Dominators: CHK against the definition.

/// A function whose CFG is `n` blocks with the given edges (block 0 is the entry;
/// edges into it are allowed here, since only `Dominance` is under test).
fn cfg_function(n: usize, edges: &[(usize, usize)]) -> Function {
    let (mut f, _, _) = kernel(&[]);
    let blocks: Vec<Block> = (0..n)
        .map(|k| {
            if k == 0 {
                Block::new(0)
            } else {
                f.append_new_block()
            }
        })
        .collect();
    for (k, &b) in blocks.iter().enumerate() {
        let succs: Vec<Block> = edges
            .iter()
            .filter(|e| e.0 == k)
            .map(|e| blocks[e.1])
            .collect();
        match succs.len() {
            0 => {
                ret(&mut f, b, &[]);
            }
            1 => {
                jump(&mut f, b, succs[0], &[]);
            }
            2 => {
                let c = iconst(&mut f, b, Type::I1, 0);
                brif(&mut f, b, c, succs[0], &[], succs[1], &[]);
            }
            _ => {
                let v = iconst(&mut f, b, Type::I32, 0);
                let cases: Vec<(i64, Block)> = succs[1..]
                    .iter()
                    .enumerate()
                    .map(|(k, &s)| (k as i64, s))
                    .collect();
                br_table(&mut f, b, v, succs[0], &cases);
            }
        }
    }
    f
}

/// Dominance by definition: `d` dominates `b` iff `b` is reachable and every path from
/// the entry to `b` passes through `d` (`b` unreachable once `d` is removed).
fn naive_dominates(n: usize, edges: &[(usize, usize)], d: usize, b: usize) -> bool {
    let reach = |skip: Option<usize>| {
        let mut seen = vec![false; n];
        let mut stack = vec![];
        if skip != Some(0) {
            seen[0] = true;
            stack.push(0);
        }
        while let Some(x) = stack.pop() {
            for &(s, t) in edges {
                if s == x && !seen[t] && skip != Some(t) {
                    seen[t] = true;
                    stack.push(t);
                }
            }
        }
        seen
    };
    let all = reach(None);
    all[b] && all[d] && (d == b || !reach(Some(d))[b])
}

fn check_against_definition(n: usize, edges: &[(usize, usize)]) -> bool {
    let f = cfg_function(n, edges);
    let mut dom = Dominance::default();
    dom.compute(&f);
    for d in 0..n {
        for b in 0..n {
            let fast = dom.dominates(Block::new(d), Block::new(b));
            if fast != naive_dominates(n, edges, d, b) {
                eprintln!("n={n} edges={edges:?}: dominates({d}, {b}) = {fast}");
                return false;
            }
        }
    }
    true
}

#[test]
fn chk_paper_example() {
    // Cooper, Harvey & Kennedy (2001), figure 4: an irreducible graph where every node's
    // idom is the entry. Their node 6 is our 0; 5..1 are 1..5.
    let edges = [
        (0, 1),
        (0, 2),
        (1, 5),
        (2, 3),
        (2, 4),
        (5, 4),
        (4, 5),
        (4, 3),
        (3, 4),
    ];
    let f = cfg_function(6, &edges);
    let mut dom = Dominance::default();
    dom.compute(&f);
    for b in 1..6 {
        assert_eq!(dom.idom(Block::new(b)), Some(Block::new(0)), "idom of {b}");
    }
    assert!(check_against_definition(6, &edges));
}

#[test]
fn dominators_of_loops_and_unreachable() {
    // 0 -> 1 -> 2 -> 1 (loop), 2 -> 3, 4 unreachable -> 3, 3 -> 3 (self-loop).
    let edges = [(0, 1), (1, 2), (2, 1), (2, 3), (4, 3), (3, 3)];
    let f = cfg_function(5, &edges);
    let mut dom = Dominance::default();
    dom.compute(&f);
    assert_eq!(dom.idom(Block::new(3)), Some(Block::new(2)));
    assert!(!dom.is_reachable(Block::new(4)));
    assert!(!dom.dominates(Block::new(4), Block::new(3)));
    assert!(check_against_definition(5, &edges));
}

quickcheck! {
    fn chk_matches_definition(n: u8, raw: Vec<(u8, u8)>) -> TestResult {
        let n = (n % 12) as usize + 1;
        if raw.len() > 40 {
            return TestResult::discard();
        }
        let mut edges: Vec<(usize, usize)> =
            raw.iter().map(|&(a, b)| (a as usize % n, b as usize % n)).collect();
        edges.sort_unstable();
        edges.dedup();
        TestResult::from_bool(check_against_definition(n, &edges))
    }
}

// ---------------------------------------------------------------------------------------
// Scale: a deep CFG must not overflow a normal thread stack.

/// `diamonds` diamonds in a chain, each joining through a block parameter, with a
/// loop back edge around the whole chain: 3 * diamonds + 3 blocks.
fn diamond_chain(diamonds: usize) -> Function {
    let (mut f, b0, vs) = kernel(&[Type::I32]);
    let head = f.append_new_block();
    let acc0 = f.dfg.append_block_param(head, Type::I32);
    jump(&mut f, b0, head, &[vs[0]]);
    let one = iconst(&mut f, head, Type::I32, 1);
    let mut cur = head;
    let mut acc = acc0;
    for _ in 0..diamonds {
        let (l, r, j) = (
            f.append_new_block(),
            f.append_new_block(),
            f.append_new_block(),
        );
        let p = f.dfg.append_block_param(j, Type::I32);
        let c = ins(
            &mut f,
            cur,
            InstructionData::IntCompare {
                cond: IntCC::Slt,
                args: [acc, vs[0]],
            },
            Type::I1,
        );
        brif(&mut f, cur, c, l, &[], r, &[]);
        let a = bin(&mut f, l, Opcode::Iadd, acc, one, Type::I32);
        jump(&mut f, l, j, &[a]);
        jump(&mut f, r, j, &[acc]);
        cur = j;
        acc = p;
    }
    let exit = f.append_new_block();
    let c = ins(
        &mut f,
        cur,
        InstructionData::IntCompare {
            cond: IntCC::Eq,
            args: [acc, vs[0]],
        },
        Type::I1,
    );
    brif(&mut f, cur, c, exit, &[], head, &[acc]);
    ret(&mut f, exit, &[]);
    f
}

#[test]
fn deep_cfg_on_small_stack() {
    let worker = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut f = diamond_chain(66_666);
            assert!(f.layout.num_blocks() >= 200_000);
            assert_valid(&f, None);
            // Break dominance at the very end of the chain: still found, one error.
            let last = f.layout.last_block().expect("blocks");
            let r = f.terminator(last).expect("return");
            // Defined in the first diamond's left arm (block2), used after the last join.
            let arm = f.layout.first_inst(Block::new(2)).expect("left arm");
            let deep = f.dfg.inst_result(arm).expect("iadd result");
            let (u, _) = f.insert_inst_before(r, unary(Opcode::Freeze, deep), Some(Type::I32));
            let errs = errors_of(&f, None);
            assert_only(&errs, K::UseNotDominated, AnyEntity::Inst(u));
        })
        .expect("spawn verifier thread");
    worker.join().expect("verifier thread panicked");
}

// ---------------------------------------------------------------------------------------
// The trusted verification.

fn trusted_errors(m: &Module) -> Vec<VerifierError> {
    match verify_module_trusted(m) {
        Ok(()) => Vec::new(),
        Err(e) => e.0,
    }
}

fn module_of(f: Function) -> Module {
    let mut m = Module::new();
    m.functions.push(f);
    m
}

#[test]
fn trusted_accepts_what_the_full_verifier_accepts() {
    let m = kitchen_sink();
    assert!(verify_module_trusted(&m).is_ok());
}

/// What it keeps: dominance of uses (the same errors, in the same order, as the full
/// verifier), a store into const space, module items and signatures.
#[test]
fn trusted_keeps_dominance_const_stores_and_module_rules() {
    let (mut f, b0, vs) = kernel(&[Type::I1]);
    let (l, r, j) = (
        f.append_new_block(),
        f.append_new_block(),
        f.append_new_block(),
    );
    brif(&mut f, b0, vs[0], l, &[], r, &[]);
    let x = iconst(&mut f, l, Type::I32, 1);
    jump(&mut f, l, j, &[]);
    jump(&mut f, r, j, &[]);
    bin(&mut f, j, Opcode::Iadd, x, x, Type::I32);
    ret(&mut f, j, &[]);
    let m = module_of(f);
    let (full, trusted) = (module_errors(&m), trusted_errors(&m));
    assert_eq!(trusted.len(), 2);
    assert!(trusted.iter().all(|e| e.kind == K::UseNotDominated));
    assert_eq!(
        full.iter().map(ToString::to_string).collect::<Vec<_>>(),
        trusted.iter().map(ToString::to_string).collect::<Vec<_>>()
    );

    let (mut f, b0, vs) = kernel(&[Type::Ptr(AddrSpace::Const), Type::I32]);
    let st = f
        .append_inst(
            b0,
            InstructionData::Store {
                args: [vs[1], vs[0]],
                flags: MemFlags::default(),
            },
            None,
        )
        .0;
    ret(&mut f, b0, &[]);
    let m = module_of(f);
    let errs = trusted_errors(&m);
    assert_only(&errs, K::StoreToConst, AnyEntity::Inst(st));
    assert_eq!(module_errors(&m).len(), 1);

    // A kernel returning a value (a signature rule) and two functions of one name.
    let (mut f, b0, _) = new_func("k", FuncKind::Kernel, &[], Some(Type::I32));
    let z = iconst(&mut f, b0, Type::I32, 0);
    ret(&mut f, b0, &[z]);
    let mut m = module_of(f.clone());
    m.functions.push(f);
    let kinds: Vec<K> = trusted_errors(&m).iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&K::KernelReturnsValue), "{kinds:?}");
    assert!(kinds.contains(&K::DuplicateName), "{kinds:?}");
}

/// What it skips: the per-opcode type rules and branch arguments, which its producer
/// guarantees (the full verifier still reports them).
#[test]
fn trusted_skips_type_and_branch_rules() {
    let (mut f, b0, vs) = kernel(&[Type::I32, Type::I64]);
    let b1 = f.append_new_block();
    f.dfg.append_block_param(b1, Type::I32);
    bin(&mut f, b0, Opcode::Iadd, vs[0], vs[1], Type::I32);
    jump(&mut f, b0, b1, &[]);
    ret(&mut f, b1, &[]);
    let m = module_of(f);
    let kinds: Vec<K> = module_errors(&m).iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&K::IntArithType), "{kinds:?}");
    assert!(kinds.contains(&K::BranchArgCount), "{kinds:?}");
    assert!(trusted_errors(&m).is_empty());
}
