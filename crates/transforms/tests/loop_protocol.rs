//! The loop-pass protocol, exercised with mock loop passes: the adaptor's visit order and
//! counts, loops whose header moves, new loops, deleted loops, and `--verify-each`
//! catching passes that lie about what they changed or preserved.

use gyre_ir::{
    parse_module, Block, BlockCall, Function, InstructionData, IntCC, Module, Opcode, SpecialReg,
    Type,
};
use gyre_transforms::utils::clone::{clone_blocks, ValueMap};
use gyre_transforms::utils::split::{split_predecessors, Place};
use gyre_transforms::{
    Analyses, Knobs, LoopPass, LoopUpdater, Options, PassContext, PassError, PassManager,
    PassResult,
};
use std::cell::RefCell;
use std::rc::Rc;

/// (pass name, header) of every visit, in order.
type Log = Rc<RefCell<Vec<(&'static str, Block)>>>;

/// Does nothing; records the visit.
struct NoOp {
    name: &'static str,
    log: Log,
}

impl LoopPass for NoOp {
    fn name(&self) -> &'static str {
        self.name
    }
    fn run_on_loop(
        &mut self,
        _: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        assert!(cx.analyses.valid().contains(Analyses::LOOPS));
        assert!(cx.analyses.loops.is_header(header));
        assert_eq!(updater.header(), header);
        self.log.borrow_mut().push((self.name, header));
        Ok(PassResult::UNCHANGED)
    }
}

/// Gives the loop a new header: a new block taking the old header's parameters, which
/// every edge into the old header now enters first. How it reports is configurable, to
/// test that `--verify-each` catches the wrong reports.
struct RenameHeader {
    log: Log,
    /// Call `LoopUpdater::set_header`.
    report_header: bool,
    /// What to claim in the result.
    claim: PassResult,
    /// Keep the cached CFG's edges current (`Cfg::update_block` on every changed block).
    keep_cfg: bool,
}

impl LoopPass for RenameHeader {
    fn name(&self) -> &'static str {
        "rename-header"
    }
    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        self.log.borrow_mut().push(("rename-header", header));
        // Every edge into the header moves to a new block that takes all its parameters
        // (nothing forwarded) and jumps to it: the new block heads the loop.
        let mut preds = cx.analyses.cfg.preds(header).to_vec();
        preds.sort_unstable();
        preds.dedup();
        let new = split_predecessors(func, header, &preds, Place::Before(header), |_, _| false);
        let mut changed = preds;
        changed.push(new);
        if self.keep_cfg {
            for b in changed {
                cx.analyses.cfg.update_block(func, b).expect("valid");
            }
        }
        if self.report_header {
            updater.set_header(new);
        }
        Ok(self.claim)
    }
}

/// Deletes a loop whose only exit block takes no parameters and which stores nothing: the
/// preheader jumps straight to the exit. (Sound on the test inputs, whose loops end.)
struct DeleteLoop {
    log: Log,
}

impl LoopPass for DeleteLoop {
    fn name(&self) -> &'static str {
        "delete-loop"
    }
    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        self.log.borrow_mut().push(("delete-loop", header));
        let (cfg, loops) = (&cx.analyses.cfg, &cx.analyses.loops);
        let l = loops.innermost_loop(header).expect("a loop");
        let exits = loops.unique_exit_blocks(l, cfg);
        let Some(pre) = loops.preheader(l, cfg) else {
            return Ok(PassResult::UNCHANGED);
        };
        let stores = loops.blocks(l).any(|b| {
            func.layout
                .block_insts(b)
                .any(|i| func.dfg.inst(i).opcode().has_side_effects() && !is_branch(func, i))
        });
        // A value of the loop used outside it would lose its definition.
        let used_outside = func.layout.blocks().any(|b| {
            !loops.contains(l, b)
                && func.layout.block_insts(b).any(|i| {
                    let mut outside_use = false;
                    func.dfg.for_each_inst_value(i, |v| {
                        let d = match func.dfg.value_def(v) {
                            gyre_ir::ValueDef::Result(d) => func.layout.inst_block(d),
                            gyre_ir::ValueDef::Param(d, _) => Some(d),
                            gyre_ir::ValueDef::Detached => None,
                        };
                        outside_use |= d.is_some_and(|d| loops.contains(l, d));
                    });
                    outside_use
                })
        });
        if exits.len() != 1 || !func.dfg.block_params(exits[0]).is_empty() || stores || used_outside
        {
            return Ok(PassResult::UNCHANGED);
        }
        let exit = exits[0];
        let blocks: Vec<_> = loops.blocks(l).collect();
        let t = func.terminator(pre).expect("terminator");
        let dest = BlockCall::new(exit, &[], &mut func.dfg.value_lists);
        func.dfg.replace_inst(t, InstructionData::Jump { dest });
        for b in blocks {
            while let Some(i) = func.layout.first_inst(b) {
                func.layout.remove_inst(i);
            }
            func.layout.remove_block(b);
        }
        updater.mark_loop_deleted();
        Ok(PassResult::changed(Analyses::NONE))
    }
}

/// Versions the loop headed by `target` (in loop-simplify and LCSSA form): clones all its
/// blocks with the toolkit and lets the preheader choose between the original and the
/// copy on `tid.x & 1`, as non-trivial unswitching will. Reports the copies' loops, inner
/// ones first.
struct CloneLoop {
    log: Log,
    target: Block,
}

impl LoopPass for CloneLoop {
    fn name(&self) -> &'static str {
        "clone-loop"
    }
    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        self.log.borrow_mut().push(("clone-loop", header));
        if header != self.target {
            return Ok(PassResult::UNCHANGED);
        }
        let (cfg, loops) = (&cx.analyses.cfg, &cx.analyses.loops);
        let l = loops.innermost_loop(header).expect("a loop");
        let pre = loops.preheader(l, cfg).expect("loop-simplify form");
        let blocks: Vec<_> = loops.blocks(l).collect();
        // The loop's own loops, inner first (post-order), as headers.
        let mut inner: Vec<Block> = loops
            .loops()
            .filter(|&m| loops.contains_loop(l, m))
            .map(|m| loops.header(m))
            .collect();
        inner.sort_by_key(|&h| std::cmp::Reverse(loops.loop_depth(h)));
        let mut map = ValueMap::new();
        clone_blocks(func, &blocks, &mut map, Place::After(pre)).expect("clones");
        // Preheader: `jump header(args)` becomes a branch on tid.x & 1.
        let t = func.terminator(pre).expect("terminator");
        let InstructionData::Jump { dest } = func.dfg.inst(t).clone() else {
            panic!("a preheader ends in a jump");
        };
        let args = func.dfg.block_call_args(&dest).to_vec();
        let (_, tid) = func.insert_inst_before(
            t,
            InstructionData::Sreg {
                reg: SpecialReg::TidX,
            },
            Some(Type::I32),
        );
        let (_, one) =
            func.insert_inst_before(t, InstructionData::IntConst { imm: 1 }, Some(Type::I32));
        let (_, odd) = func.insert_inst_before(
            t,
            InstructionData::Binary {
                opcode: Opcode::And,
                args: [tid.expect("result"), one.expect("result")],
                flags: Default::default(),
            },
            Some(Type::I32),
        );
        let (_, c) = func.insert_inst_before(
            t,
            InstructionData::IntCompare {
                cond: IntCC::Eq,
                args: [odd.expect("result"), one.expect("result")],
            },
            Some(Type::I1),
        );
        let pool = &mut func.dfg.value_lists;
        let blocks = [
            BlockCall::new(map.map_block(header), &args, pool),
            BlockCall::new(header, &args, pool),
        ];
        func.dfg.replace_inst(
            t,
            InstructionData::Brif {
                arg: c.expect("result"),
                blocks,
            },
        );
        for h in inner {
            updater.add_new_loop(map.map_block(h));
        }
        Ok(PassResult::changed(Analyses::NONE))
    }
}

fn is_branch(func: &Function, i: gyre_ir::Inst) -> bool {
    func.dfg.inst(i).opcode().is_terminator()
}

/// Leaves the function alone but corrupts the cached dominator tree (computes it for a
/// different function), then claims to have changed nothing.
struct CorruptDomTree;

impl LoopPass for CorruptDomTree {
    fn name(&self) -> &'static str {
        "corrupt-domtree"
    }
    fn run_on_loop(
        &mut self,
        func: &mut Function,
        header: Block,
        cx: &mut PassContext<'_>,
        updater: &mut LoopUpdater,
    ) -> Result<PassResult, PassError> {
        let mut other = func.clone();
        let log: Log = Rc::default();
        RenameHeader {
            log,
            report_header: true,
            claim: PassResult::UNCHANGED,
            keep_cfg: false,
        }
        .run_on_loop(&mut other, header, cx, updater)?;
        let cfg = gyre_analysis::Cfg::with_function(&other).expect("valid");
        cx.analyses.domtree.compute(&other, &cfg);
        Ok(PassResult::UNCHANGED)
    }
}

/// An outer loop (block1) holding two inner loops in sequence (block2, block4), then a
/// loop after the nest (block7). Every loop counts to `v0`; the kernel stores the sum.
const NEST: &str = "
global @out: global [1 x i32] align 4

kernel @k(i32) {
block0(v0: i32):
    v1 = iconst.i32 0
    v2 = iconst.i32 1
    jump block1(v1, v1)
block1(v3: i32, v4: i32):
    jump block2(v1, v4)
block2(v5: i32, v6: i32):
    v7 = iadd v6, v5
    v8 = iadd v5, v2
    v9 = icmp slt v8, v0
    brif v9, block2(v8, v7), block3
block3:
    jump block4(v1, v7)
block4(v10: i32, v11: i32):
    v12 = iadd v11, v2
    v13 = iadd v10, v2
    v14 = icmp slt v13, v0
    brif v14, block4(v13, v12), block5
block5:
    v15 = iadd v3, v2
    v16 = icmp slt v15, v0
    brif v16, block1(v15, v12), block6
block6:
    jump block7(v1)
block7(v17: i32):
    v18 = iadd v17, v2
    v19 = icmp slt v18, v0
    brif v19, block7(v18), block8
block8:
    v20 = global_addr @out
    store v12, v20
    return
}
";

fn module() -> Module {
    parse_module(NEST).expect("parses")
}

fn verify_each() -> Options {
    Options {
        verify_each: true,
        ..Options::default()
    }
}

fn b(n: u32) -> Block {
    Block::from_u32(n)
}

fn noop(name: &'static str, log: &Log) -> Box<dyn LoopPass> {
    Box::new(NoOp {
        name,
        log: log.clone(),
    })
}

#[test]
fn visits_innermost_first_each_loop_through_the_whole_pipeline() {
    let log: Log = Rc::default();
    let mut pm = PassManager::new(Knobs::default(), verify_each());
    pm.add_loop_passes(vec![noop("a", &log), noop("b", &log), noop("c", &log)]);
    let mut m = module();
    let report = pm.run_module(&mut m).expect("runs");
    let want: Vec<(&str, Block)> = [b(2), b(4), b(1), b(7)]
        .into_iter()
        .flat_map(|h| [("a", h), ("b", h), ("c", h)])
        .collect();
    assert_eq!(*log.borrow(), want);
    assert_eq!(report.loop_visits, vec![("a", 4), ("b", 4), ("c", 4)]);
    // Passes that change nothing keep every analysis: one loop forest for the function.
    let loops = report
        .analysis_times
        .iter()
        .find(|(n, _, _)| *n == "loops")
        .expect("timed");
    assert_eq!(loops.2, 1, "{:?}", report.analysis_times);
}

#[test]
fn a_moved_header_is_followed() {
    let log: Log = Rc::default();
    let mut pm = PassManager::new(Knobs::default(), verify_each());
    pm.add_loop_passes(vec![
        noop("before", &log),
        Box::new(RenameHeader {
            log: log.clone(),
            report_header: true,
            claim: PassResult::changed(Analyses::NONE),
            keep_cfg: false,
        }),
        noop("after", &log),
    ]);
    let mut m = module();
    let before = m.clone();
    pm.run_module(&mut m).expect("runs");
    let log = log.borrow();
    // Each loop is visited by all three passes; "after" sees the new header (a new block
    // numbered after the original ones), never the old one.
    for h in [b(2), b(4), b(1), b(7)] {
        let i = log
            .iter()
            .position(|&e| e == ("before", h))
            .expect("visited");
        assert_eq!(log[i + 1], ("rename-header", h));
        let (name, nh) = log[i + 2];
        assert_eq!(name, "after");
        assert!(nh.as_u32() >= 9, "after saw {nh}, not the new header");
    }
    assert_eq!(log.len(), 12);
    gyre_interp::assert_same_behaviour(
        &before,
        &m,
        "k",
        &gyre_interp::Inputs {
            launch: gyre_interp::Launch::linear(1, 1, vec![gyre_interp::Arg::Int(3)]),
            memory: gyre_interp::Memory::new(),
        },
    )
    .expect("same behaviour");
}

#[test]
fn deleted_loops_are_never_visited_again() {
    let log: Log = Rc::default();
    let mut pm = PassManager::new(Knobs::default(), verify_each());
    pm.add_loop_passes(vec![
        Box::new(DeleteLoop { log: log.clone() }),
        noop("after", &log),
    ]);
    let mut m = module();
    let report = pm.run_module(&mut m).expect("runs");
    let log = log.borrow();
    // block7's loop has one exit without parameters and stores nothing: deleted, and
    // "after" never sees it. The nest's loops pass values out and stay.
    assert!(log.contains(&("delete-loop", b(7))));
    assert!(!log.contains(&("after", b(7))), "{log:?}");
    for h in [b(2), b(4), b(1)] {
        assert!(log.contains(&("after", h)), "{log:?}");
    }
    assert_eq!(report.loop_visits, vec![("after", 3), ("delete-loop", 4)]);
    assert!(!m
        .functions
        .values()
        .next()
        .expect("k")
        .layout
        .is_block_inserted(b(7)));
}

/// Run one loop pass over every loop of [`NEST`] under `--verify-each`.
fn run_checked(pass: Box<dyn LoopPass>) -> Result<gyre_transforms::Report, PassError> {
    let mut pm = PassManager::new(Knobs::default(), verify_each());
    pm.add_loop_passes(vec![pass]);
    pm.run_module(&mut module())
}

fn rename(report_header: bool, claim: PassResult, keep_cfg: bool) -> Box<dyn LoopPass> {
    Box::new(RenameHeader {
        log: Rc::default(),
        report_header,
        claim,
        keep_cfg,
    })
}

#[test]
fn verify_each_catches_an_unreported_header_move() {
    let e = run_checked(rename(false, PassResult::changed(Analyses::NONE), false)).unwrap_err();
    assert!(e.0.contains("reported neither a new header"), "{e}");
}

#[test]
fn verify_each_catches_a_false_claim_to_preserve_the_dominator_tree() {
    // The CFG is kept current and claimed; the dominator tree is claimed but not kept
    // (the new header now dominates the old one).
    let keeps_cfg = Analyses::CFG.union(Analyses::DOMTREE);
    let e = run_checked(rename(true, PassResult::changed(keeps_cfg), true)).unwrap_err();
    assert!(
        e.0.contains("claimed to preserve the dominator tree"),
        "{e}"
    );
    // Claiming only the CFG, which it did keep, is the truth.
    run_checked(rename(true, PassResult::changed(Analyses::CFG), true)).expect("honest");
    // Without keeping the CFG, claiming it is caught too.
    let e = run_checked(rename(true, PassResult::changed(Analyses::CFG), false)).unwrap_err();
    assert!(e.0.contains("claimed to preserve the CFG"), "{e}");
}

#[test]
fn verify_each_catches_a_false_no_change_report() {
    // Changes the function but reports no change.
    let e = run_checked(rename(true, PassResult::UNCHANGED, false)).unwrap_err();
    assert!(
        e.0.contains("reported no change, but changed the function"),
        "{e}"
    );
    // Leaves the function alone, reports no change, but breaks the cached dominator tree.
    let e = run_checked(Box::new(CorruptDomTree)).unwrap_err();
    assert!(
        e.0.contains("claimed to preserve the dominator tree"),
        "{e}"
    );
    // Without --verify-each the lie goes unnoticed: the checks are what catches it.
    let mut pm = PassManager::new(Knobs::default(), Options::default());
    pm.add_loop_passes(vec![Box::new(CorruptDomTree)]);
    pm.run_module(&mut module()).expect("unchecked");
}

#[test]
fn new_loops_are_visited_after_the_current_one() {
    let log: Log = Rc::default();
    let mut pm = PassManager::from_pipeline("loop-simplify,lcssa", Knobs::default(), verify_each())
        .expect("pipeline");
    pm.add_loop_passes(vec![
        Box::new(CloneLoop {
            log: log.clone(),
            target: b(1),
        }),
        noop("after", &log),
    ]);
    let mut m = module();
    let before = m.clone();
    let report = pm.run_module(&mut m).expect("runs");
    let log = log.borrow();
    let headers: Vec<Block> = log
        .iter()
        .filter(|(n, _)| *n == "after")
        .map(|&(_, h)| h)
        .collect();
    // The nest (2, 4, 1), then the copies of its loops (inner ones first), then 7.
    assert_eq!(&headers[..3], &[b(2), b(4), b(1)], "{log:?}");
    assert_eq!(headers.len(), 7, "{log:?}");
    assert!(headers[3..6].iter().all(|h| h.as_u32() > 8), "{log:?}");
    assert_eq!(headers[6], b(7), "{log:?}");
    assert_eq!(report.loop_visits, vec![("after", 7), ("clone-loop", 7)]);
    for threads in [1, 4] {
        gyre_interp::assert_same_behaviour(
            &before,
            &m,
            "k",
            &gyre_interp::Inputs {
                launch: gyre_interp::Launch::linear(1, threads, vec![gyre_interp::Arg::Int(3)]),
                memory: gyre_interp::Memory::new(),
            },
        )
        .expect("same behaviour");
    }
}

#[test]
fn a_function_calling_itself_verifies_under_verify_each() {
    // While a function is being transformed, the module holds a placeholder in its place;
    // the verifier checks the recursive call against the placeholder's signature.
    let src = "
func @f(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 0
    v2 = icmp sgt v0, v1
    brif v2, block1, block2
block1:
    v3 = iconst.i32 1
    v4 = isub v0, v3
    v5 = call @f(v4)
    return v5
block2:
    return v1
}
";
    let mut m = parse_module(src).expect("parses");
    let mut pm = PassManager::from_pipeline("loop-simplify,lcssa", Knobs::default(), verify_each())
        .expect("pipeline");
    pm.run_module(&mut m).expect("verifies");
}
