//! Integration tests of the `.gir` text format: round trips, error reports, robustness.

use gyre_ir::parser::{parse_function, parse_module, ParseErrors};
use gyre_ir::{
    AtomicOp, Block, EntityRef, FloatCC, FuncKind, Function, InstructionData, IntCC, IntFlags,
    MemOrder, MemScope, Module, Opcode, ShflMode, Signature, Slot, SpecialReg, Type, Value,
    ValueDef, VoteMode,
};
use std::collections::BTreeSet;

/// A module using every opcode, condition code, atomic operation, special register and
/// type, flags, `volatile`, globals with and without initializers, slots, `br_table`,
/// calls with and without results, forward references to values, blocks and functions,
/// and gaps in value and block numbering. It is written in canonical form, so printing
/// the parsed module must give it back byte for byte.
const ALL: &str = r#"global @tile: shared [256 x f32] align 4
global @tab: const [4 x i32] align 4 = [1, 2, 3, -4]
global @out: global [16 x f64] align 8
global @flags: global [3 x i1] align 1 = [0, 1, 1]
global @bytes: const [2 x i8] align 1 = [-128, 127]
global @halves: const [2 x i16] align 2 = [-1, 300]
global @wide: const [2 x i64] align 8 = [-9223372036854775808, 9223372036854775807]
global @floats: const [4 x f32] align 4 = [1.5, -0.0, inf, 0x7fc00000]
global @doubles: const [3 x f64] align 8 = [1e-30, -inf, 0x7ff8000000000001]
global @ptrs: global [1 x ptr.global] align 8 = [0]
global @"odd \"name\"": local [0 x i32] align 4
global @coeffs: const [2 x f32] align 4 visible externally_initialized = [0.0, 2.0]
global @counter: global [1 x i32] align 4 visible
global @dyn: shared [0 x f32] align 16 extern

func @square(f32) -> f32 anynan {
block0(v0: f32):
    v1 = fmul v0, v0
    return v1
}

func @other() convergent {
block0:
    barrier
    return
}

kernel @all(ptr.global, ptr.global, f32, i32, i64, f64) convergent {
    slot0 = local 64 align 8
    slot1 = local 4 align 4
block0(v0: ptr.global, v1: ptr.global, v2: f32, v3: i32, v4: i64, v6: f64):
    v5 = tid.x
    v7 = tid.y
    v8 = tid.z
    v9 = ntid.x
    v15 = ntid.y
    v16 = ntid.z
    v17 = ctaid.x
    v18 = ctaid.y
    v19 = ctaid.z
    v250 = nctaid.x
    v251 = nctaid.y
    v252 = nctaid.z
    v253 = laneid
    v254 = warpsize
    v10 = iconst.i32 -5
    v11 = iconst.i64 9223372036854775807
    v12 = iconst.i8 127
    v13 = iconst.i16 -32768
    v14 = iconst.i1 1
    v20 = iadd nsw nuw v3, v10
    v21 = isub nsw v3, v10
    v22 = imul nuw v3, v10
    v23 = sdiv exact v3, v10
    v24 = udiv v3, v10
    v25 = srem v3, v10
    v26 = urem v3, v10
    v27 = and v3, v10
    v28 = or v3, v10
    v29 = xor v3, v10
    v30 = shl nsw nuw v3, v10
    v31 = lshr exact v3, v10
    v32 = ashr exact v3, v10
    v33 = smin v3, v10
    v34 = smax v3, v10
    v35 = umin v3, v10
    v36 = umax v3, v10
    v37 = popcnt v3
    v38 = clz v4
    v39 = ctz v12
    v40 = fconst.f32 1.5
    v41 = fconst.f64 1e-30
    v42 = fconst.f32 inf
    v43 = fconst.f64 -inf
    v44 = fconst.f32 0x7fc00000
    v45 = fconst.f64 0xfff8000000000000
    v46 = fconst.f32 -0.0
    v47 = fconst.f64 1e300
    v48 = fconst.f32 0.1
    v50 = fadd v2, v40
    v51 = fsub v2, v40
    v52 = fmul v2, v40
    v53 = fdiv v2, v40
    v54 = frem v2, v40
    v55 = fmin v2, v40
    v56 = fmax v6, v41
    v57 = fneg v2
    v58 = fabs v2
    v59 = sqrt v6
    v60 = floor v2
    v61 = ceil v2
    v62 = ftrunc v2
    v63 = nearest v2
    v64 = fma v2, v40, v2
    v170 = mul24 v3, v10
    v171 = umul24 v3, v10
    v172 = ex2_approx v2
    v173 = lg2_approx v2
    v174 = sin_approx v2
    v175 = cos_approx v2
    v176 = rsqrt_approx v6
    v177 = fdiv_approx v2, v40
    v70 = icmp eq v3, v10
    v71 = icmp ne v3, v10
    v72 = icmp slt v3, v10
    v73 = icmp sle v3, v10
    v74 = icmp sgt v3, v10
    v75 = icmp sge v3, v10
    v76 = icmp ult v4, v11
    v77 = icmp ule v4, v11
    v78 = icmp ugt v4, v11
    v79 = icmp uge v4, v11
    v80 = fcmp false v2, v40
    v81 = fcmp oeq v2, v40
    v82 = fcmp ogt v2, v40
    v83 = fcmp oge v2, v40
    v84 = fcmp olt v2, v40
    v85 = fcmp ole v2, v40
    v86 = fcmp one v2, v40
    v87 = fcmp ord v2, v40
    v88 = fcmp ueq v2, v40
    v89 = fcmp ugt v2, v40
    v90 = fcmp uge v2, v40
    v91 = fcmp ult v2, v40
    v92 = fcmp ule v2, v40
    v93 = fcmp une v2, v40
    v94 = fcmp uno v2, v40
    v95 = fcmp true v6, v41
    v96 = select v70, v3, v10
    v97 = freeze v3
    v100 = sext.i64 v3
    v101 = zext.i64 v3
    v102 = trunc.i8 v3
    v103 = fptosi.i32 v2
    v104 = fptoui.i64 v41
    v105 = sitofp.f32 v3
    v106 = uitofp.f64 v4
    v107 = fpext.f64 v2
    v108 = fptrunc.f32 v41
    v109 = bitcast.i32 v2
    v110 = ptrtoint.i64 v0
    v111 = inttoptr.ptr.global v4
    v112 = addrspace_cast.ptr v0
    v113 = zext.i16 v14
    v120 = ptradd v0, v100, 4
    v121 = load.f32 v120
    v122 = load.f32 volatile v120
    store v121, v120
    store volatile v122, v120
    v123 = ptradd v1, v100, 4
    v124 = load.i1 v123
    v125 = load.i8 v123
    v126 = load.i16 v123
    v127 = load.i64 v123
    v128 = load.f64 v123
    v129 = load.ptr.shared v123
    v130 = atomic_add v120, v121
    v131 = atomic_and v123, v3
    v132 = atomic_or v123, v3
    v133 = atomic_xor v123, v3
    v134 = atomic_smin v123, v3
    v135 = atomic_smax v123, v3
    v136 = atomic_umin v123, v3
    v137 = atomic_umax v123, v3
    v138 = atomic_exch v123, v3
    v139 = atomic_cas v123, v3, v10
    v150 = atomic_inc v123, v3
    v151 = atomic_dec acquire v123, v3
    v152 = atomic_add release cta v123, v3
    v153 = atomic_add acq_rel sys v123, v3
    v154 = atomic_cas seq_cst v123, v3, v10
    v155 = atomic_cas sys v123, v3, v10
    v156 = shfl_up v3, v3, v3, v3
    v157 = shfl_down v121, v3, v3, v3
    v158 = shfl_bfly v3, v3, v3, v3
    v159 = shfl_idx v121, v3, v3, v3
    v160 = vote_any v70, v3
    v161 = vote_all v70, v3
    v162 = vote_uni v70, v3
    v163 = vote_ballot v70, v3
    warp_sync v3
    fence seq_cst gpu
    fence acq_rel cta
    fence seq_cst sys
    v164 = clock.i32
    v165 = clock.i64
    v166 = vprintf v112, v112
    assert_fail v112, v112, v3, v112
    v140 = global_addr @tile
    v141 = global_addr @tab
    v142 = global_addr @"odd \"name\""
    v143 = slot_addr slot0
    v144 = slot_addr slot1
    v145 = call @square(v2)
    call @other()
    v146 = call @late(v3, v2)
    barrier
    br_table v3, block1, [0: block2(v3), 3: block3(v10), -1: block1]
block1:
    jump block5
block4(v210: i32):
    v211 = iadd v202, v210
    v212 = imul v211, v211
    return
block5:
    v201 = iconst.i32 7
    v202 = imul v201, v201
    brif v70, block4(v202), block7
block2(v220: i32):
    unreachable
block3(v230: i32):
    return
block7:
    jump block3(v3)
}

func @late(i32, f32) -> i32 {
block0(v0: i32, v1: f32):
    return v0
}
"#;

fn parse_ok(src: &str) -> Module {
    match parse_module(src) {
        Ok(m) => m,
        Err(e) => panic!("parse failed:\n{}", e.render("test.gir", src)),
    }
}

fn print(m: &Module) -> String {
    m.to_string()
}

#[test]
fn canonical_module_round_trips_exactly() {
    let m = parse_ok(ALL);
    let printed = print(&m);
    assert_eq!(printed, ALL);
    assert_eq!(print(&parse_ok(&printed)), printed);
}

/// The test module really covers what it claims to (checked on the parsed data, so
/// adding an opcode to the IR makes this fail until the module uses it).
#[test]
fn canonical_module_covers_everything() {
    let m = parse_ok(ALL);
    let mut opcodes = BTreeSet::new();
    let (mut icc, mut fcc, mut atomics, mut regs, mut types) = (
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    let (mut orders, mut scopes, mut shfls, mut votes) = (
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
        BTreeSet::new(),
    );
    let mut flags = Vec::new();
    let (mut vload, mut vstore, mut call_res, mut call_void) = (false, false, false, false);
    for f in m.functions.values() {
        for v in f.dfg.values() {
            if f.dfg.value_def(v) != ValueDef::Detached {
                types.insert(f.dfg.value_type(v));
            }
        }
        for b in f.layout.blocks() {
            for i in f.layout.block_insts(b) {
                let d = f.dfg.inst(i);
                opcodes.insert(d.opcode());
                match d {
                    InstructionData::IntCompare { cond, .. } => {
                        icc.insert(*cond);
                    }
                    InstructionData::FloatCompare { cond, .. } => {
                        fcc.insert(*cond);
                    }
                    InstructionData::AtomicRmw {
                        op, order, scope, ..
                    } => {
                        atomics.insert(*op);
                        orders.insert(*order);
                        scopes.insert(*scope);
                    }
                    InstructionData::AtomicCas { order, scope, .. }
                    | InstructionData::Fence { order, scope } => {
                        orders.insert(*order);
                        scopes.insert(*scope);
                    }
                    InstructionData::Shfl { mode, .. } => {
                        shfls.insert(*mode);
                    }
                    InstructionData::Vote { mode, .. } => {
                        votes.insert(*mode);
                    }
                    InstructionData::Sreg { reg } => {
                        regs.insert(*reg);
                    }
                    InstructionData::Binary { flags: fl, .. } => flags.push(*fl),
                    InstructionData::Load { flags, .. } => vload |= flags.volatile,
                    InstructionData::Store { flags, .. } => vstore |= flags.volatile,
                    InstructionData::Call { .. } => {
                        if f.dfg.inst_result(i).is_some() {
                            call_res = true;
                        } else {
                            call_void = true;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    for o in Opcode::ALL {
        assert!(opcodes.contains(o), "{o} not covered");
    }
    assert_eq!(icc.len(), IntCC::ALL.len());
    assert_eq!(fcc.len(), FloatCC::ALL.len());
    assert_eq!(atomics.len(), AtomicOp::ALL.len());
    assert_eq!(orders.len(), MemOrder::ALL.len());
    assert_eq!(scopes.len(), MemScope::ALL.len());
    assert_eq!(shfls.len(), ShflMode::ALL.len());
    assert_eq!(votes.len(), VoteMode::ALL.len());
    assert_eq!(regs.len(), SpecialReg::ALL.len());
    for t in Type::ALL {
        assert!(types.contains(&t), "{t} not covered");
    }
    for fl in [IntFlags::NSW, IntFlags::NUW, IntFlags::EXACT] {
        assert!(flags.iter().any(|x| x.contains(fl)));
    }
    assert!(flags
        .iter()
        .any(|x| x.contains(IntFlags::NSW.union(IntFlags::NUW))));
    assert!(vload && vstore && call_res && call_void);
    assert!(m.globals.values().any(|g| g.init.is_some()));
    assert!(m.globals.values().any(|g| g.init.is_none()));
    for l in [
        gyre_ir::Linkage::Internal,
        gyre_ir::Linkage::Visible,
        gyre_ir::Linkage::Extern,
    ] {
        assert!(
            m.globals.values().any(|g| g.linkage == l),
            "{l:?} not covered"
        );
    }
    assert!(m.globals.values().any(|g| g.externally_initialized));
    let all = &m.functions[m.func_by_name("all").unwrap()];
    assert_eq!(all.slots.len(), 2);
}

#[test]
fn numbering_and_types_are_kept() {
    let m = parse_ok(ALL);
    let f = &m.functions[m.func_by_name("all").unwrap()];
    // Numbers come from the text; gaps are detached values / blocks outside the layout.
    let v254 = Value::new(254);
    assert_eq!(f.dfg.value_type(v254), Type::I32);
    assert!(matches!(f.dfg.value_def(v254), ValueDef::Result(_)));
    assert_eq!(f.dfg.value_def(Value::new(65)), ValueDef::Detached);
    assert_eq!(
        f.dfg.value_def(Value::new(6)),
        ValueDef::Param(Block::new(0), 5)
    );
    assert_eq!(f.dfg.num_values(), 255);
    assert_eq!(f.dfg.num_blocks(), 8);
    assert!(!f.layout.is_block_inserted(Block::new(6)));
    let order: Vec<u32> = f.layout.blocks().map(|b| b.as_u32()).collect();
    assert_eq!(order, [0, 1, 4, 5, 2, 3, 7]);
    // Inferred types, including through forward references (v211 <- v202 <- v201).
    let ty = |n| f.dfg.value_type(Value::new(n));
    assert_eq!(ty(211), Type::I32);
    assert_eq!(ty(212), Type::I32);
    assert_eq!(ty(96), Type::I32); // select: the second operand's type
    assert_eq!(ty(70), Type::I1);
    assert_eq!(ty(120), Type::Ptr(gyre_ir::AddrSpace::Global));
    assert_eq!(ty(130), Type::F32); // atomic: the value operand's type
    assert_eq!(ty(139), Type::I32);
    assert_eq!(ty(140), Type::Ptr(gyre_ir::AddrSpace::Shared));
    assert_eq!(ty(142), Type::Ptr(gyre_ir::AddrSpace::Local));
    assert_eq!(ty(143), Type::Ptr(gyre_ir::AddrSpace::Local));
    assert_eq!(ty(145), Type::F32);
    assert_eq!(ty(146), Type::I32); // forward callee
    assert_eq!(ty(56), Type::F64);
    assert_eq!(ty(39), Type::I8);
    // Globals: names, initializers as zero-extended bits.
    let g = |name| &m.globals[m.global_by_name(name).unwrap()];
    assert_eq!(g("tab").init.as_deref(), Some(&[1, 2, 3, 0xffff_fffc][..]));
    assert_eq!(g("bytes").init.as_deref(), Some(&[0x80, 0x7f][..]));
    assert_eq!(g("odd \"name\"").count, 0);
    assert_eq!(
        g("floats").init.as_ref().unwrap()[1],
        u64::from((-0.0f32).to_bits())
    );
    // Calls resolve to the right function ids.
    let late = m.func_by_name("late").unwrap();
    let calls: Vec<_> = f
        .layout
        .blocks()
        .flat_map(|b| f.layout.block_insts(b))
        .filter_map(|i| match f.dfg.inst(i) {
            InstructionData::Call { func, .. } => Some(*func),
            _ => None,
        })
        .collect();
    assert_eq!(calls.last(), Some(&late));
}

#[test]
fn single_function_without_module() {
    let src = "func @f(i32) -> i32 {\n    slot3 = local 8 align 8\nblock2(v5: i32):\n    v9 = iadd v5, v5\n    v10 = slot_addr slot3\n    return v9\n}\n";
    let f = parse_function(src).unwrap();
    assert_eq!(f.name, "f");
    assert_eq!(f.kind, FuncKind::Device);
    assert_eq!(f.slots.len(), 4);
    assert_eq!(f.slots[Slot::new(0)].size, 0); // placeholder for the gap
    assert_eq!(f.entry_block(), Some(Block::new(2)));
    // Printing writes every slot, so the placeholders appear; that text is canonical.
    let printed = f.display(None).to_string();
    assert!(printed.contains("    slot0 = local 0 align 1\n"));
    assert_eq!(
        parse_function(&printed).unwrap().display(None).to_string(),
        printed
    );
}

#[test]
fn printing_without_module_uses_ids() {
    let m = parse_ok(ALL);
    let f = &m.functions[m.func_by_name("all").unwrap()];
    let text = f.display(None).to_string();
    assert!(text.contains("v145 = call @fn0(v2)"));
    assert!(text.contains("v140 = global_addr @gv0"));
    assert!(text.contains("    call @fn1()\n"));
    // With the module, names.
    let text = gyre_ir::DisplayFunction {
        func: f,
        module: Some(&m),
    }
    .to_string();
    assert!(text.contains("v145 = call @square(v2)"));
}

#[test]
fn non_canonical_spellings_parse() {
    // Forward global and function, comments, blank lines, hex and unsigned literals,
    // extra blanks, CRLF line ends.
    let src = "kernel @k(ptr.global) {\r\n\n  ; comment\nblock0(v0: ptr.global):  ; c\n\tv1 = global_addr @g\n v2 = iconst.i32 0xffffffff\n  v3 = fconst.f64 2\n  v4 = call @f()\n\tbr_table v2, block1, []\nblock1:\n  return\n}\nfunc @f() -> i8 {\nblock0:\n v0 = iconst.i8 -1\n return v0\n}\nglobal @g: global [2 x i8] align 1 = [255, -1]\n";
    let m = parse_ok(src);
    let printed = print(&m);
    assert!(printed.starts_with("global @g: global [2 x i8] align 1 = [-1, -1]\n\nkernel @k"));
    assert!(printed.contains("v2 = iconst.i32 4294967295\n"));
    assert!(printed.contains("v3 = fconst.f64 2.0\n"));
    assert!(printed.contains("br_table v2, block1, []\n"));
    assert_eq!(print(&parse_ok(&printed)), printed);
}

#[test]
fn quoted_names_round_trip() {
    let mut m = Module::new();
    for name in ["", "a b", "tab\there", "q\"uote\\", "ünï", "9lives"] {
        let mut f = Function::new(name, FuncKind::Device, Signature::default());
        let b = f.append_new_block();
        let args = gyre_ir::ValueList::new();
        f.append_inst(b, InstructionData::Return { args }, None);
        m.functions.push(f);
    }
    let text = print(&m);
    let back = parse_ok(&text);
    let names: Vec<&str> = back.functions.values().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["", "a b", "tab\there", "q\"uote\\", "ünï", "9lives"]
    );
    assert_eq!(print(&back), text);
}

// ------------------------------------------------------------------ errors

/// Parse `src` as a module and return its errors as `line:col: message` strings.
fn errors(src: &str) -> Vec<String> {
    match parse_module(src) {
        Ok(_) => panic!("expected errors for:\n{src}"),
        Err(e) => e.errors.iter().map(ToString::to_string).collect(),
    }
}

fn one_error(body: &str) -> String {
    let src = format!("func @f(i32, f32) {{\nblock0(v0: i32, v1: f32):\n{body}\n    return\n}}\n");
    let e = errors(&src);
    assert_eq!(e.len(), 1, "{e:?}");
    e[0].clone()
}

#[test]
fn error_kinds() {
    let cases: &[(&str, &str)] = &[
        ("    v2 = frob v0", "3:10: unknown opcode `frob`"),
        ("    v2 = load.i7 v0", "3:15: unknown type `i7`"),
        ("    v2 = iadd v0", "3:10: `iadd` takes 2 operands, found 1"),
        ("    v2 = iadd v0, v0, v0", "3:10: `iadd` takes 2 operands, found 3"),
        ("    v2 = fadd nsw v1, v1", "3:15: flag `nsw` is not allowed on `fadd`"),
        ("    v2 = iadd exact v0, v0", "3:15: flag `exact` is not allowed on `iadd`"),
        ("    v2 = iadd v0, v9", "3:19: v9 is used but never defined"),
        ("    v0 = iadd v0, v0", "3:5: v0 is defined twice (first on line 2)"),
        ("    v2 = store v0, v1", "3:5: `store` produces no value"),
        ("    iadd v0, v0", "3:5: `iadd` produces a value: write `vN = iadd`"),
        ("    v2 = sext v0", "3:10: `sext` needs a result type suffix, as in `sext.i32`"),
        ("    v2 = store.i32 v0, v1", "3:15: `store` takes no type suffix"),
        ("    v2 = iadd.i7 v0, v0", "3:15: unknown type `i7`"),
        ("    v2 = fconst.f32 1.5x", "3:21: invalid float literal `1.5x`"),
        ("    v2 = fconst.i32 1", "3:10: `fconst` needs f32 or f64, not i32"),
        ("    v2 = iconst.i32 99999999999999999999", "3:21: an integer literal out of range: `99999999999999999999`"),
        ("    jump block9", "3:10: block9 is used but never defined"),
        ("    v2 = slot_addr slot0", "3:20: slot0 is used but never declared"),
        ("    v2 = icmp lt v0, v0", "3:15: expected an integer condition code (`eq`, `slt`, ...), found `lt`"),
        ("    v2 = tid.w", "3:10: unknown special register `tid.w`"),
        ("    v2 = atomic_rmw v0, v0", "3:10: unknown opcode `atomic_rmw`"),
        ("    v2 = iadd v0 v0", "3:18: expected `,` or end of line, found `v0`"),
        ("    v2, v3 = iadd v0, v0", "3:7: an instruction has at most one result"),
        ("    v2 = iadd v0, v0 #", "3:22: expected `,` or end of line, found `#`"),
        ("    v99999999 = iconst.i32 0", "3:5: v99999999: entity number too large (must be below 65536 for an input of this size)"),
        ("    v2 = ptradd v0, v0", "3:23: expected `,` and a scale, found end of line"),
        ("    v2 = iadd v3, v3\n    v3 = iadd v2, v2", "3:5: cannot infer the type of v2: it depends on itself (write it, as in `iadd.i32`)"),
        ("block0:", "3:1: block0 is defined twice (first on line 2)"),
        ("    v2 = call @g()", "3:15: unknown function @g"),
        ("    v2 = global_addr @nope", "3:22: unknown global @nope"),
        ("    v2 = call @f(v0, v1)", "3:5: @f returns nothing, so the call has no result"),
    ];
    for (body, want) in cases {
        assert_eq!(&one_error(body), want, "for {body:?}");
    }
}

#[test]
fn module_level_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "global @g: global [2 x i32] align 4 = [1]\n",
            "1:39: initializer has 1 elements but @g has 2",
        ),
        (
            "global @g: global [1 x i8] align 1 = [256]\n",
            "1:39: an i8 initializer out of range: `256`",
        ),
        (
            "global @g: heap [1 x i8] align 1\n",
            "1:12: expected an address space, found `heap`",
        ),
        (
            "global @g: global [1 x i8] align 1\nglobal @g: global [1 x i8] align 1\n",
            "2:8: global @g is defined twice",
        ),
        (
            "func @f() {\nblock0:\n    return\n}\nfunc @f() {\nblock0:\n    return\n}\n",
            "5:6: function @f is defined twice",
        ),
        (
            "func @f() {\nblock0:\n    return\n",
            "4:1: expected `}` to close @f",
        ),
        (
            "func @\"abc\n",
            "1:6: expected a name (`@name`), found an unterminated quoted name",
        ),
        (
            "func @\"\\zz\"() {\n}\n",
            "1:6: invalid escape in quoted name (use \\\\, \\\" or \\HH below 80)",
        ),
        ("func @f(i33) {\n}\n", "1:9: unknown type `i33`"),
        (
            "func @f() {\n    slot0 = local -1 align 4\n}\n",
            "2:19: a slot size out of range: `-1`",
        ),
        (
            "func @f() {\n    v1 = iconst.i32 1\n}\n",
            "2:5: instruction before the first block label",
        ),
        (
            "func @f() {\nblock0:\n    return\n    slot0 = local 4 align 4\n}\n",
            "4:5: slot declarations must come before the first block",
        ),
        (
            "func @f() -> i32 {\nblock0:\n    call @f()\n    return\n}\n",
            "3:10: @f returns i32: write `vN = call @f(...)`",
        ),
        (
            "}\n",
            "1:1: expected `global`, `func` or `kernel`, found `}`",
        ),
        (
            "kernel @k() {\nblock0:\n    return\n} x\n",
            "4:3: expected end of line, found `x`",
        ),
    ];
    for (src, want) in cases {
        let e = errors(src);
        assert_eq!(
            e.first().map(String::as_str),
            Some(*want),
            "for {src:?}: {e:?}"
        );
    }
}

#[test]
fn parse_function_rejects_module_items() {
    let e = parse_function("global @g: global [1 x i8] align 1\n").unwrap_err();
    assert_eq!(
        e.errors[0].to_string(),
        "1:1: globals need a module (use parse_module)"
    );
    let e = parse_function("func @f() {\nblock0:\n    call @f()\n    return\n}\n").unwrap_err();
    assert_eq!(
        e.errors[0].to_string(),
        "3:5: `call` needs a module (use parse_module)"
    );
    let e = parse_function("func @f() {\nblock0:\n    v0 = global_addr @g\n    return\n}\n")
        .unwrap_err();
    assert_eq!(
        e.errors[0].to_string(),
        "3:10: `global_addr` needs a module (use parse_module)"
    );
    let e = parse_function("\n; nothing\n").unwrap_err();
    assert_eq!(
        e.errors[0].to_string(),
        "3:1: expected a function, found end of input"
    );
    let two = "func @f() {\nblock0:\n    return\n}\nfunc @g() {\nblock0:\n    return\n}\n";
    let e = parse_function(two).unwrap_err();
    assert_eq!(
        e.errors[0].to_string(),
        "5:1: expected one function only (use parse_module for several)"
    );
}

/// Errors on different lines, blocks and functions are all reported, in order.
#[test]
fn recovers_and_reports_many() {
    let src = "\
func @a(i32) {
block0(v0: i32):
    v1 = frob v0
    v2 = iadd v0
    v3 = iadd v0, v0
    jump block1(v3)
block1(v4: i32):
    v5 = imul v1, v77
block2
    jump block2
}

func @b( {
block0:
    this is all skipped
}

func @c() {
block0:
    v0 = iconst.i32 1 2
    return v0
}
";
    let e = errors(src);
    // No cascades: v1 (broken line) and v0 in @c are not reported as undefined.
    assert_eq!(
        e,
        [
            "3:10: unknown opcode `frob`",
            "4:10: `iadd` takes 2 operands, found 1",
            "8:19: v77 is used but never defined",
            "9:7: expected `:` after the block label, found end of line",
            "13:10: expected a type, found `{`",
            "20:23: expected end of line, found `2`",
        ]
    );
}

#[test]
fn render_shows_file_line_and_caret() {
    let src = "func @f(i32) {\nblock0(v0: i32):\n\tv1 = iadd v0, v9\n    return\n}\n";
    let e = parse_module(src).unwrap_err();
    assert_eq!(
        e.render("k.gir", src),
        "k.gir:3:16: v9 is used but never defined\n\tv1 = iadd v0, v9\n\t              ^\n"
    );
    let e: ParseErrors = parse_module("é").unwrap_err();
    assert_eq!(
        e.render("x", "é"),
        "x:1:1: expected `global`, `func` or `kernel`, found `é`\né\n^\n"
    );
}

// ------------------------------------------------------------------ robustness

/// SplitMix64: a tiny deterministic generator, so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Parse arbitrary bytes; whenever parsing succeeds, printing must round-trip.
/// Returns whether the module parse succeeded.
fn check(bytes: &[u8]) -> bool {
    let src = String::from_utf8_lossy(bytes);
    let ok = parse_module(&src).map(|m| {
        let p1 = print(&m);
        let m2 = parse_module(&p1).unwrap_or_else(|e| panic!("reparse failed: {e}\n{p1}"));
        assert_eq!(print(&m2), p1);
    });
    if let Ok(f) = parse_function(&src) {
        let p1 = f.display(None).to_string();
        let f2 = parse_function(&p1).unwrap_or_else(|e| panic!("reparse failed: {e}\n{p1}"));
        assert_eq!(f2.display(None).to_string(), p1);
    }
    ok.is_ok()
}

#[test]
fn never_panics_on_random_bytes() {
    let mut rng = Rng(1);
    let alphabet = b"v0123456789block slot= ,:()[]{}@\"\\-.>;\n\txiafptr";
    for _ in 0..3000 {
        let len = rng.below(120);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(4) == 0 {
                    rng.next() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        check(&bytes);
    }
}

/// Tokens of the canonical module, for token-level mutations.
fn tokens(src: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in src.char_indices() {
        if c.is_whitespace() || ",:()[]{}=".contains(c) {
            if start < i {
                out.push(&src[start..i]);
            }
            out.push(&src[i..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    out.push(&src[start..]);
    out
}

#[test]
fn never_panics_on_mutations() {
    let mut rng = Rng(2);
    let base = ALL.as_bytes();
    let toks = tokens(ALL);
    let mut parsed = 0;
    for round in 0..3000 {
        let mut buf: Vec<u8>;
        if round % 2 == 0 {
            // Byte mutations: delete, insert, swap, a few at a time.
            buf = base.to_vec();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(buf.len());
                match rng.below(3) {
                    0 => {
                        buf.remove(i);
                    }
                    1 => {
                        let pool = b"v0123456789-.x@\"\n:,(){}[]";
                        buf.insert(i, pool[rng.below(pool.len())])
                    }
                    _ => {
                        let j = rng.below(buf.len());
                        buf.swap(i, j);
                    }
                }
            }
        } else {
            // Token mutations: delete, duplicate, swap, replace by another token.
            let mut t = toks.clone();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(t.len());
                let j = rng.below(t.len());
                let other = toks[rng.below(toks.len())];
                match rng.below(4) {
                    0 => {
                        t.remove(i);
                    }
                    1 => t.insert(i, other),
                    2 => t.swap(i, j),
                    _ => t[i] = other,
                }
            }
            buf = t.concat().into_bytes();
        }
        parsed += usize::from(check(&buf));
    }
    // Enough mutants stay valid for the round-trip check to be exercised.
    eprintln!("{parsed} of 3000 mutants parsed");
    assert!(parsed > 100, "only {parsed} mutants parsed");
}

#[test]
fn deep_and_long_inputs_do_not_overflow() {
    // Long lines, many blocks, many errors: nothing recursive, error count bounded.
    let many_blocks: String = (0..20_000)
        .map(|i| format!("block{i}:\n    jump block{}\n", i + 1))
        .collect();
    let src = format!("func @f() {{\n{many_blocks}block20000:\n    return\n}}\n");
    let f = parse_function(&src).unwrap();
    assert_eq!(f.layout.num_blocks(), 20_001);
    let garbage = "((((((((((".repeat(10_000) + "\n" + &"v1 = \n".repeat(10_000);
    let e = parse_module(&garbage).unwrap_err();
    assert!(e.errors.len() <= 100);
}

// ------------------------------------------------------------------ random round trips

/// Build a random module through the API: any opcode, random operands (types need not
/// check; the text does not depend on them), gaps in numbering, blocks laid out in a
/// shuffled order so the text has forward references. Structural rules the parser
/// enforces are respected: results exactly where produced, defined operands, flags the
/// opcode allows, and type links (operand whose type a result copies) that point to
/// earlier values, so inference terminates.
fn random_module(seed: u64) -> Module {
    use gyre_ir::{AddrSpace, BlockCall, GlobalData, JumpTableData, MemFlags, ValueList};
    let mut rng = Rng(seed);
    let mut m = Module::new();
    m.globals.push(GlobalData {
        name: "g".into(),
        space: AddrSpace::Shared,
        elem: Type::F32,
        count: 2,
        align: 4,
        init: Some(vec![rng.next() & 0xffff_ffff, rng.next() & 0xffff_ffff]),
        linkage: gyre_ir::Linkage::Internal,
        externally_initialized: false,
    });
    let mut callee = Function::new(
        "id",
        FuncKind::Device,
        Signature {
            params: vec![Type::I32],
            ret: Some(Type::I32),
        },
    );
    let b = callee.append_new_block();
    let p = callee.dfg.append_block_param(b, Type::I32);
    let args = ValueList::from_slice(&[p], &mut callee.dfg.value_lists);
    callee.append_inst(b, InstructionData::Return { args }, None);
    m.functions.push(callee);
    let mut sink = Function::new("sink", FuncKind::Device, Signature::default());
    let b = sink.append_new_block();
    sink.append_inst(
        b,
        InstructionData::Nullary {
            opcode: Opcode::Unreachable,
        },
        None,
    );
    m.functions.push(sink);

    let params = vec![Type::I32, Type::F32, Type::Ptr(AddrSpace::Global)];
    let mut f = Function::new(
        "f",
        FuncKind::Kernel,
        Signature {
            params: params.clone(),
            ret: None,
        },
    );
    f.convergent = rng.below(2) == 0;
    f.any_nan = rng.below(2) == 0;
    for _ in 0..rng.below(3) {
        f.slots.push(gyre_ir::SlotData {
            size: rng.next() as u32,
            align: 1 << rng.below(5),
        });
    }
    let nblocks = 1 + rng.below(6);
    let mut blocks = Vec::new();
    let mut vals: Vec<Value> = Vec::new();
    for i in 0..nblocks {
        if rng.below(4) == 0 {
            f.dfg.make_block(); // a gap in block numbers
        }
        let b = f.dfg.make_block();
        let tys: Vec<Type> = if i == 0 {
            params.clone()
        } else {
            (0..rng.below(3))
                .map(|_| Type::ALL[rng.below(Type::ALL.len())])
                .collect()
        };
        for t in tys {
            if rng.below(4) == 0 {
                f.dfg.make_detached_value(Type::I8); // a gap in value numbers
            }
            vals.push(f.dfg.append_block_param(b, t));
        }
        blocks.push(b);
    }
    // Entry first, the rest shuffled.
    f.layout.append_block(blocks[0]);
    let mut rest = blocks[1..].to_vec();
    for i in (1..rest.len()).rev() {
        rest.swap(i, rng.below(i + 1));
    }
    for &b in &rest {
        f.layout.append_block(b);
    }
    let non_term: Vec<Opcode> = Opcode::ALL
        .iter()
        .copied()
        .filter(|o| !o.is_terminator())
        .collect();
    for &b in &blocks {
        for _ in 0..rng.below(10) {
            let op = non_term[rng.below(non_term.len())];
            let pick = |rng: &mut Rng| vals[rng.below(vals.len())];
            let (a, c, d) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
            let ty = |v: Value, f: &Function| f.dfg.value_type(v);
            let any_ty = Type::ALL[rng.below(Type::ALL.len())];
            let (data, rty) = match op {
                Opcode::Iconst => {
                    let t = [Type::I1, Type::I8, Type::I16, Type::I32, Type::I64][rng.below(5)];
                    (
                        InstructionData::IntConst {
                            imm: rng.next() as i64,
                        },
                        Some(t),
                    )
                }
                Opcode::Fconst => {
                    let (t, bits) = if rng.below(2) == 0 {
                        (Type::F32, rng.next() & 0xffff_ffff)
                    } else {
                        (Type::F64, rng.next())
                    };
                    (InstructionData::FloatConst { bits }, Some(t))
                }
                o if o.is_int_binary() || o.is_float_binary() => {
                    let allowed = o.allowed_flags();
                    let mut flags = IntFlags::NONE;
                    for fl in [
                        IntFlags::NSW,
                        IntFlags::NUW,
                        IntFlags::EXACT,
                        IntFlags::CONTRACT,
                    ] {
                        if allowed.contains(fl) && rng.below(2) == 0 {
                            flags = flags.union(fl);
                        }
                    }
                    (
                        InstructionData::Binary {
                            opcode: o,
                            args: [a, c],
                            flags,
                        },
                        Some(ty(a, &f)),
                    )
                }
                o if o.is_cast() => (InstructionData::Unary { opcode: o, arg: a }, Some(any_ty)),
                o if o.is_int_unary() || o.is_float_unary() || o == Opcode::Freeze => (
                    InstructionData::Unary { opcode: o, arg: a },
                    Some(ty(a, &f)),
                ),
                Opcode::Fma => (
                    InstructionData::Ternary {
                        opcode: op,
                        args: [a, c, d],
                    },
                    Some(ty(a, &f)),
                ),
                Opcode::Select => (
                    InstructionData::Ternary {
                        opcode: op,
                        args: [a, c, d],
                    },
                    Some(ty(c, &f)),
                ),
                Opcode::Icmp => {
                    let cond = IntCC::ALL[rng.below(IntCC::ALL.len())];
                    (
                        InstructionData::IntCompare { cond, args: [a, c] },
                        Some(Type::I1),
                    )
                }
                Opcode::Fcmp => {
                    let cond = FloatCC::ALL[rng.below(FloatCC::ALL.len())];
                    (
                        InstructionData::FloatCompare { cond, args: [a, c] },
                        Some(Type::I1),
                    )
                }
                Opcode::PtrAdd => (
                    InstructionData::PtrAdd {
                        args: [a, c],
                        scale: rng.next() as u32,
                    },
                    Some(ty(a, &f)),
                ),
                Opcode::Load => {
                    let flags = MemFlags {
                        volatile: rng.below(2) == 0,
                    };
                    (InstructionData::Load { ptr: a, flags }, Some(any_ty))
                }
                Opcode::Store => {
                    let flags = MemFlags {
                        volatile: rng.below(2) == 0,
                    };
                    (
                        InstructionData::Store {
                            args: [a, c],
                            flags,
                        },
                        None,
                    )
                }
                Opcode::AtomicRmw => {
                    let aop = AtomicOp::ALL[rng.below(AtomicOp::ALL.len())];
                    (
                        InstructionData::AtomicRmw {
                            op: aop,
                            args: [a, c],
                            order: MemOrder::ALL[rng.below(MemOrder::ALL.len())],
                            scope: MemScope::ALL[rng.below(MemScope::ALL.len())],
                        },
                        Some(ty(c, &f)),
                    )
                }
                Opcode::AtomicCas => (
                    InstructionData::AtomicCas {
                        args: [a, c, d],
                        order: MemOrder::ALL[rng.below(MemOrder::ALL.len())],
                        scope: MemScope::ALL[rng.below(MemScope::ALL.len())],
                    },
                    Some(ty(c, &f)),
                ),
                Opcode::Shfl => (
                    InstructionData::Shfl {
                        mode: ShflMode::ALL[rng.below(ShflMode::ALL.len())],
                        args: [a, c, d, a],
                    },
                    Some(ty(a, &f)),
                ),
                Opcode::Vote => {
                    let mode = VoteMode::ALL[rng.below(VoteMode::ALL.len())];
                    let t = if mode == VoteMode::Ballot {
                        Type::I32
                    } else {
                        Type::I1
                    };
                    (InstructionData::Vote { mode, args: [a, c] }, Some(t))
                }
                Opcode::WarpSync => (InstructionData::WarpSync { mask: a }, None),
                Opcode::Vprintf => (InstructionData::Vprintf { args: [a, c] }, Some(Type::I32)),
                Opcode::AssertFail => (InstructionData::AssertFail { args: [a, c, a, c] }, None),
                Opcode::Fence => (
                    InstructionData::Fence {
                        order: MemOrder::ALL[rng.below(MemOrder::ALL.len())],
                        scope: MemScope::ALL[rng.below(MemScope::ALL.len())],
                    },
                    None,
                ),
                Opcode::Clock => (
                    InstructionData::Nullary {
                        opcode: Opcode::Clock,
                    },
                    Some(any_ty),
                ),
                Opcode::GlobalAddr => (
                    InstructionData::GlobalAddr {
                        global: gyre_ir::GlobalId::new(0),
                    },
                    Some(Type::Ptr(AddrSpace::Shared)),
                ),
                Opcode::SlotAddr if !f.slots.is_empty() => {
                    let slot = Slot::new(rng.below(f.slots.len()));
                    (
                        InstructionData::SlotAddr { slot },
                        Some(Type::Ptr(AddrSpace::Local)),
                    )
                }
                Opcode::Sreg => {
                    let reg = SpecialReg::ALL[rng.below(SpecialReg::ALL.len())];
                    (InstructionData::Sreg { reg }, Some(Type::I32))
                }
                Opcode::Call if rng.below(2) == 0 => {
                    let args = ValueList::from_slice(&[a], &mut f.dfg.value_lists);
                    (
                        InstructionData::Call {
                            func: gyre_ir::FuncId::new(0),
                            args,
                        },
                        Some(Type::I32),
                    )
                }
                Opcode::Call => {
                    let args = ValueList::new();
                    (
                        InstructionData::Call {
                            func: gyre_ir::FuncId::new(1),
                            args,
                        },
                        None,
                    )
                }
                _ => (
                    InstructionData::Nullary {
                        opcode: Opcode::Barrier,
                    },
                    None,
                ),
            };
            if rng.below(5) == 0 {
                f.dfg.make_detached_value(Type::I64);
            }
            if let (_, Some(v)) = f.append_inst(b, data, rty) {
                vals.push(v);
            }
        }
    }
    // Terminators, once every value exists (branch arguments may be any value).
    for &b in &blocks {
        let call = |rng: &mut Rng, f: &mut Function| {
            let target = blocks[rng.below(blocks.len())];
            let args: Vec<Value> = (0..rng.below(3))
                .map(|_| vals[rng.below(vals.len())])
                .collect();
            BlockCall::new(target, &args, &mut f.dfg.value_lists)
        };
        let arg = vals[rng.below(vals.len())];
        let data = match rng.below(5) {
            0 => InstructionData::Jump {
                dest: call(&mut rng, &mut f),
            },
            1 => InstructionData::Brif {
                arg,
                blocks: [call(&mut rng, &mut f), call(&mut rng, &mut f)],
            },
            2 => {
                let default = call(&mut rng, &mut f);
                let cases = (0..rng.below(4))
                    .map(|k| (k as i64 * 7 - 3, call(&mut rng, &mut f)))
                    .collect();
                let table = f.dfg.make_jump_table(JumpTableData::new(default, cases));
                InstructionData::BrTable { arg, table }
            }
            3 => InstructionData::Nullary {
                opcode: Opcode::Unreachable,
            },
            _ => InstructionData::Return {
                args: ValueList::new(),
            },
        };
        f.append_inst(b, data, None);
    }
    m.functions.push(f);
    m
}

#[test]
fn random_modules_round_trip() {
    fn prop(seed: u64) -> bool {
        let m = random_module(seed);
        let p1 = print(&m);
        let back = match parse_module(&p1) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{}", e.render("random.gir", &p1));
                return false;
            }
        };
        let f = &back.functions[gyre_ir::FuncId::new(2)];
        let orig = &m.functions[gyre_ir::FuncId::new(2)];
        // Same numbering: the parsed function has the same value and block ids.
        print(&back) == p1
            && f.dfg.num_values() <= orig.dfg.num_values()
            && f.layout.blocks().eq(orig.layout.blocks())
    }
    quickcheck::QuickCheck::new()
        .tests(400)
        .quickcheck(prop as fn(u64) -> bool);
}

#[test]
fn unknown_opcodes_suggest_the_nearest() {
    for (line, want) in [
        (
            "    v2 = add v0, v0",
            "unknown opcode `add` (did you mean `iadd`?)",
        ),
        (
            "    v2 = fadf v1, v1",
            "unknown opcode `fadf` (did you mean `fadd`?)",
        ),
        (
            "    v2 = slect v0, v0",
            "unknown opcode `slect` (did you mean `select`?)",
        ),
        (
            "    br block0",
            "unknown opcode `br` (did you mean `jump or brif`?)",
        ),
        ("    v2 = zzzzzzzz v0", "unknown opcode `zzzzzzzz`"),
    ] {
        let e = one_error(line);
        assert!(e.ends_with(want), "{line}: {e}");
    }
}

#[test]
fn byte_order_mark_is_skipped_and_garbage_is_escaped() {
    let src = "\u{feff}func @f() {\nblock0:\n    return\n}\n";
    parse_module(src).expect("a BOM is not part of the text");
    let bad = "\u{feff}func @f() {\nblock0:\n    v1 = frob\n    return\n}\n";
    let e = parse_module(bad).unwrap_err();
    assert_eq!(e.errors[0].to_string(), "3:10: unknown opcode `frob`");
    // First-line columns do not count the mark.
    let e = parse_module("\u{feff}frob\n").unwrap_err();
    assert_eq!(e.errors[0].col, 1);
    let e = parse_module("\u{0}\u{1b}[2J\n").unwrap_err();
    let shown = e.render("g.gir", "\u{0}\u{1b}[2J\n");
    assert!(
        !shown.contains('\u{0}') && !shown.contains('\u{1b}'),
        "{shown:?}"
    );
    assert!(shown.contains("found `\\u{0}`"), "{shown}");
}

#[test]
fn verifier_errors_point_at_the_source() {
    use gyre_ir::parser::parse_module_with_positions;
    let src = "global @g: global [4 x i32] align 3\n\
               kernel @k(i32) {\n\
               block0(v0: i32):\n    v1 = fadd v0, v0\n    jump block1(v1)\n\
               block1:\n    return\n}\n";
    let (m, map) = parse_module_with_positions(src).unwrap();
    let errs = gyre_ir::verifier::verify_module(&m).unwrap_err();
    let shown = errs.render("m.gir", Some((src, &map)));
    let want = "m.gir:1:8: error: global @g has alignment 3, not a power of two\n\
                global @g: global [4 x i32] align 3\n       ^\n\
                m.gir:4:5: error: kernel @k: fadd needs equal float types, got i32, i32 -> i32\n    \
                v1 = fadd v0, v0\n    ^\n\
                m.gir:5:5: error: kernel @k: branch passes 1 arguments to block1, which has 0 parameters\n    \
                jump block1(v1)\n    ^\n";
    assert_eq!(shown, want);
    assert!(
        !shown.contains("inst"),
        "ids the text does not have: {shown}"
    );
    // Without the text (IR from the builder or a pass), the block is named and the
    // instruction printed.
    let plain = errs.render("m.gir", None);
    assert!(
        plain.contains("m.gir: error: kernel @k: block0: inst0 (v1 = fadd v0, v0): fadd needs"),
        "{plain}"
    );
}

/// Instructions typed like an operand may spell their type out; the verifier checks it.
#[test]
fn optional_type_suffix() {
    let src = "func @f(i32, f32, ptr.global, i1) {
block0(v0: i32, v1: f32, v2: ptr.global, v3: i1):
    v4 = iadd.i32 nsw v0, v0
    v5 = fneg.f32 v1
    v6 = select.i32 v3, v0, v4
    v7 = fma.f32 v1, v1, v5
    v8 = ptradd.ptr.global v2, v0, 4
    v9 = atomic_add.i32 v8, v6
    v10 = atomic_cas.i32 acquire v8, v9, v0
    v11 = freeze.i32 v10
    return
}
";
    let f = parse_function(src).unwrap();
    gyre_ir::verifier::verify_function(&f, None).unwrap();
    // Where inference succeeds the printer leaves the suffixes out.
    let printed = f.display(None).to_string();
    assert!(printed.contains("v4 = iadd nsw v0, v0"), "{printed}");
    assert!(printed.contains("v8 = ptradd v2, v0, 4"), "{printed}");
    // A written type that disagrees with the operands parses, and the verifier says so.
    let bad = parse_function(
        "func @f(i32) {\nblock0(v0: i32):\n    v1 = iadd.i64 v0, v0\n    return\n}\n",
    )
    .unwrap();
    assert!(gyre_ir::verifier::verify_function(&bad, None).is_err());
}

/// Unreachable code need not respect dominance, so operand-typed instructions can form
/// a cycle (a fuzz finding: fuzz/regressions/verify/). The parser then types a result from
/// any operand, and the printer writes the type of results no operand can give, so the
/// text still reads back to the same function.
#[test]
fn cyclic_operand_types_round_trip() {
    let src = "func @f(i32) -> i32 {
block0(v0: i32):
    return v0
block1:
    v1 = iadd.i32 v2, v2
    v2 = popcnt.i32 v1
    v3 = iadd v2, v0
    v4 = urem v5, v0
    v5 = urem v4, v4
    jump block1
}
";
    let f = parse_function(src).unwrap();
    gyre_ir::verifier::verify_function(&f, None).unwrap();
    // v4 and v5 cycle through their first operands, but v4's second operand is typed.
    assert_eq!(f.dfg.value_type(Value::new(5)), Type::I32);
    // The IR keeps no trace of the suffixes: the printer finds which results need one.
    let printed = f.display(None).to_string();
    assert_eq!(printed, src, "only v1 and v2 need their types written");
    let stripped = src
        .replace("iadd.i32", "iadd")
        .replace("popcnt.i32", "popcnt");
    assert!(
        parse_function(&stripped).is_err(),
        "the cycle alone cannot be typed"
    );
    let again = parse_function(&f.display(None).to_string()).unwrap();
    assert_eq!(again.display(None).to_string(), printed);
}

/// Every function attribute, alone and all together, parses into its field and prints
/// back exactly in its fixed order; out of order, one is an error where it stands.
#[test]
fn function_attributes_round_trip() {
    let body = "block0:\n    return\n}\n";
    let all = "convergent mustprogress anynan internal noinline";
    for attrs in [
        "convergent",
        "mustprogress",
        "anynan",
        "internal",
        "alwaysinline",
        all,
    ] {
        let src = format!("func @f() {attrs} {{\n{body}");
        let f = parse_function(&src).unwrap();
        assert_eq!(f.display(None).to_string(), src);
        assert_eq!(f.any_nan, attrs.contains("anynan"), "{attrs}");
        assert_eq!(f.convergent, attrs.contains("convergent"), "{attrs}");
    }
    let plain = parse_function(&format!("func @f() {{\n{body}")).unwrap();
    assert!(!plain.any_nan, "the canonical NaN is the default");
    assert!(parse_function(&format!("func @f() anynan mustprogress {{\n{body}")).is_err());
}

/// Loop attributes on a block label print back exactly, each hint and both together;
/// malformed lists are errors at the offending word.
#[test]
fn loop_attributes_round_trip_and_errors() {
    let src = "func @f(i32) {\nblock0(v0: i32):\n    jump block1\nblock1 loop(mustprogress):\n    jump block2(v0)\nblock2(v1: i32) loop(mustprogress, unroll_count=4):\n    jump block3\nblock3 loop(unroll_disable):\n    jump block4\nblock4 loop(unroll_enable):\n    jump block5\nblock5 loop(unroll_full):\n    return\n}\n";
    let m = parse_ok(src);
    assert_eq!(print(&m), src);
    let f = m.functions.values().next().expect("a function");
    let b2 = gyre_ir::Block::from_u32(2);
    assert_eq!(
        f.loop_attrs(b2),
        gyre_ir::LoopAttrs {
            must_progress: true,
            unroll: gyre_ir::UnrollHint::Count(4)
        }
    );
    assert!(f.loop_attrs(gyre_ir::Block::from_u32(0)).is_empty());
    let err = |label: &str| {
        let src = format!("func @f() {{\nblock0:\n    jump block1\n{label}\n    return\n}}\n");
        errors(&src)[0].clone()
    };
    assert_eq!(
        err("block1 loop(unroll):"),
        "4:13: unknown or repeated loop attribute `unroll`"
    );
    assert_eq!(
        err("block1 loop(mustprogress, mustprogress):"),
        "4:27: unknown or repeated loop attribute `mustprogress`"
    );
    assert_eq!(
        err("block1 loop(unroll_disable, unroll_full):"),
        "4:29: a loop has at most one unroll attribute"
    );
    assert_eq!(
        err("block1 loop(unroll_count 4):"),
        "4:26: expected `=` after `unroll_count`, found `4`"
    );
    assert_eq!(
        err("block1 loop():"),
        "4:13: expected a loop attribute, found `)`"
    );
}
