//! The scalar-evolution stage of `cargo xtask conformance`: Gyre's backedge-taken counts
//! against LLVM 14's `print<scalar-evolution>` on every file of both corpora (LLVM's
//! loop regression tests and the CUDA kernels).
//!
//! Each file is imported and exported again, and `opt -passes='print<scalar-evolution>'`
//! reads the export: both sides then see the same program with the same names (`%vN`,
//! `%blockN`), so loops match by header and unknowns by value. For every loop both count,
//! the two expressions are evaluated on 24 assignments of their unknowns (0, 1, small
//! numbers, -1, the signed extremes, random bits; the same for both sides) in the width of
//! Gyre's count, keeping only the assignments under which the loop is entered (the `icmp`
//! guards above its preheader hold: LLVM drops a count's `max` under such a guard): any
//! difference is a contradiction, a failure of the stage. Counts that hold a recurrence
//! of an outer loop or a pointer, or whose unknowns differ between the two sides, are not
//! comparable this way and are counted apart. The report also gives how often LLVM knows a count that Gyre does not.

use super::{first_line, Opt};
use gyre_analysis::{Cfg, DomTree, LoopInfo, ScalarEvolution, Scev};
use gyre_ir::{InstructionData, IntCC, ValueDef};
use gyre_llvm::{ExportOptions, ExternalCalls, ImportOptions};
use rustc_hash::FxHashMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Contradictions reviewed by hand: `(file key, header, why the counts differ only
/// outside what LLVM knows of the unknowns)`. They are reported as explained.
pub const KNOWN: &[(&str, &str, &str)] = &[(
    "llvm-lit/IndVarSimplify/2020-12-15-trunc-bug-expensive-range-inference.ll",
    "block6",
    "the count `112 - v2` needs `v2 <= 112`: `v2` is a header parameter taking 0 then 1 \
     (not a recurrence, unknown to Gyre), and LLVM's range analysis knows it lies in \
     [0, 2), so it drops the `smax`; the two agree on 0 and 1",
)];

/// How one loop compares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Both know the count and it evaluates the same everywhere.
    Equal,
    /// Both know it and some assignment gives different numbers: a failure.
    Contradiction(String),
    /// A contradiction listed in [`KNOWN`] with its reason.
    Explained(String),
    /// Only LLVM knows it.
    LlvmOnly(String),
    /// Only Gyre knows it.
    GyreOnly(String),
    /// Neither does.
    BothUnknown,
    /// Both know it but it cannot be evaluated (a recurrence, a pointer).
    NotComparable(String),
}

/// One loop of one function.
#[derive(Clone, Debug)]
pub struct LoopResult {
    /// Function name.
    pub func: String,
    /// Header block (`blockN`).
    pub header: String,
    /// Gyre's count as printed.
    pub gyre: Option<String>,
    /// LLVM's count as printed.
    pub llvm: Option<String>,
    /// The comparison.
    pub verdict: Verdict,
}

/// One corpus file.
#[derive(Clone, Debug)]
pub struct FileResult {
    /// `corpus/path`.
    pub key: String,
    /// Its loops, or why the file was not compared.
    pub loops: Result<Vec<LoopResult>, String>,
}

/// The files of both corpora: `(key, path)`.
pub fn corpus_files(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    if let Some(dir) = super::find_corpus(root) {
        if let Ok(entries) = super::read_manifest(&dir) {
            for e in entries {
                out.push((
                    format!("llvm-lit/{}", e.key()),
                    dir.join(&e.dir).join(&e.file),
                ));
            }
        }
    }
    if let Some(dir) = crate::corpus::find_corpus(root) {
        if let Ok(entries) = crate::corpus::read_manifest(&dir) {
            for e in entries {
                out.push((format!("cuda/{}", e.file), dir.join(&e.file)));
            }
        }
    }
    out
}

/// Run `opt -passes=print<scalar-evolution> -disable-output`; its printout is on stderr.
fn run_print(opt: &Opt, input: &str) -> Result<String, String> {
    let mut child = Command::new(&opt.path)
        .args(["-passes=print<scalar-evolution>", "-disable-output", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", opt.path.display()))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("opt: {e}"))?;
    let _ = writer.join();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(err)
    } else {
        Err(first_line(&err.replace("<stdin>:", "")))
    }
}

/// LLVM's counts: `(function, header) -> Some(expression) | None (unpredictable)`.
pub fn parse_llvm_counts(text: &str) -> FxHashMap<(String, String), Option<String>> {
    let mut out = FxHashMap::default();
    let mut func = String::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Determining loop execution counts for: @") {
            func = rest.trim().trim_matches('"').to_string();
            continue;
        }
        let Some(rest) = line.strip_prefix("Loop %") else {
            continue;
        };
        let Some((header, what)) = rest.split_once(": ") else {
            continue;
        };
        let what = what.trim_start_matches("<multiple exits> ");
        if let Some(e) = what.strip_prefix("backedge-taken count is ") {
            out.insert(
                (func.clone(), header.to_string()),
                Some(e.trim().to_string()),
            );
        } else if what.starts_with("Unpredictable backedge-taken count") {
            out.insert((func.clone(), header.to_string()), None);
        }
    }
    out
}

/// An expression as LLVM prints it.
#[derive(Clone, Debug)]
enum Expr {
    Const(i128),
    Var(String),
    /// `+`, `*`, `/u`, `umax`, `smax`, `umin`, `smin` over the operands.
    Op(&'static str, Vec<Expr>),
    /// `zext`/`sext`/`trunc` from `from` bits to `to` bits.
    Cast(&'static str, u32, Box<Expr>, u32),
    AddRec,
    /// Something that cannot be evaluated: a pointer, a value without a Gyre name.
    Pointer,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }
    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    fn word(&mut self) -> String {
        self.ws();
        let st = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"._-$%*".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[st..self.i]).into_owned()
    }
    /// Flags and loop tags after an expression: `<nuw><nsw><%block1>`.
    fn flags(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b'<' {
            while self.i < self.s.len() && self.s[self.i] != b'>' {
                self.i += 1;
            }
            self.i += 1;
        }
    }
    /// One expression. Nesting is bounded (LLVM prints finite text; the cap keeps a
    /// pathological line from exhausting the stack).
    fn expr(&mut self, depth: u32) -> Result<Expr, String> {
        if depth > 200 {
            return Err("expression nested too deep".into());
        }
        self.ws();
        let e = if self.eat("(") {
            let save = self.i;
            let w = self.word();
            let cast = match w.as_str() {
                "zext" => Some("zext"),
                "sext" => Some("sext"),
                "trunc" => Some("trunc"),
                "ptrtoint" => Some("ptrtoint"),
                _ => None,
            };
            if let Some(c) = cast {
                let from = self.word();
                let inner = self.expr(depth + 1)?;
                if !self.eat("to") {
                    return Err("expected `to`".into());
                }
                let to = self.word();
                if !self.eat(")") {
                    return Err("expected `)`".into());
                }
                let bits = |t: &str| t.strip_prefix('i').and_then(|b| b.parse::<u32>().ok());
                match (c, bits(&from), bits(&to)) {
                    ("ptrtoint", _, _) => Expr::Pointer,
                    (c, Some(f), Some(t)) => Expr::Cast(c, f, Box::new(inner), t),
                    _ => Expr::Pointer,
                }
            } else {
                self.i = save;
                let first = self.expr(depth + 1)?;
                let mut ops = vec![first];
                let mut op: Option<&'static str> = None;
                loop {
                    if self.eat(")") {
                        break;
                    }
                    let o = if self.eat("+") {
                        "+".to_string()
                    } else if self.eat("/u") {
                        "/u".to_string()
                    } else {
                        self.word()
                    };
                    let o: &'static str = match o.as_str() {
                        "+" => "+",
                        "*" => "*",
                        "/u" => "/u",
                        "umax" => "umax",
                        "smax" => "smax",
                        "umin" => "umin",
                        "smin" => "smin",
                        "umin_seq" => "umin",
                        other => return Err(format!("unknown operator `{other}`")),
                    };
                    if op.is_some_and(|p| p != o) {
                        return Err("mixed operators".into());
                    }
                    op = Some(o);
                    ops.push(self.expr(depth + 1)?);
                }
                match op {
                    Some(o) => Expr::Op(o, ops),
                    None => ops.pop().ok_or("empty parentheses")?,
                }
            }
        } else if self.eat("{") {
            // Skip the recurrence's text: it is not evaluated.
            let mut level = 1;
            while self.i < self.s.len() && level > 0 {
                match self.s[self.i] {
                    b'{' => level += 1,
                    b'}' => level -= 1,
                    _ => {}
                }
                self.i += 1;
            }
            Expr::AddRec
        } else {
            let w = self.word();
            if let Some(v) = w.strip_prefix('%') {
                // Only Gyre's values (`%vN`) name the same thing on both sides; the
                // export's temporaries (`%tN`) have no Gyre counterpart.
                if v.strip_prefix('v')
                    .is_some_and(|n| n.parse::<u32>().is_ok())
                {
                    Expr::Var(v.to_string())
                } else {
                    Expr::Pointer
                }
            } else if let Ok(k) = w.parse::<i128>() {
                Expr::Const(k)
            } else if w == "true" {
                Expr::Const(1)
            } else if w == "false" {
                Expr::Const(0)
            } else if w == "null" {
                Expr::Pointer
            } else {
                return Err(format!("cannot read `{w}`"));
            }
        };
        self.flags();
        Ok(e)
    }
}

fn parse_expr(s: &str) -> Result<Expr, String> {
    let mut p = Parser {
        s: s.as_bytes(),
        i: 0,
    };
    let e = p.expr(0)?;
    p.ws();
    if p.i != s.len() {
        return Err(format!("trailing text in `{s}`"));
    }
    Ok(e)
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn sext(x: u64, bits: u32) -> i64 {
    let sh = 64 - bits.clamp(1, 64);
    ((x << sh) as i64) >> sh
}

/// Evaluate at `bits` width. `Err` if the expression has a recurrence or a pointer.
fn eval(e: &Expr, bits: u32, env: &dyn Fn(&str) -> u64) -> Result<Option<u64>, String> {
    let m = mask(bits);
    Ok(match e {
        Expr::Const(k) => Some((*k as u64) & m),
        Expr::Var(v) => Some(env(v) & m),
        Expr::AddRec => return Err("holds a recurrence".into()),
        Expr::Pointer => return Err("holds a pointer or an export temporary".into()),
        Expr::Cast(c, from, x, to) => {
            let Some(v) = eval(x, *from, env)? else {
                return Ok(None);
            };
            Some(match *c {
                "sext" => (sext(v, *from) as u64) & mask(*to),
                _ => v & mask(*to),
            })
        }
        Expr::Op(op, xs) => {
            let mut vals = Vec::with_capacity(xs.len());
            for x in xs {
                match eval(x, bits, env)? {
                    Some(v) => vals.push(v),
                    None => return Ok(None),
                }
            }
            let s = |v: u64| sext(v, bits);
            let r = match *op {
                "+" => vals.iter().fold(0u64, |a, &b| a.wrapping_add(b)),
                "*" => vals.iter().fold(1u64, |a, &b| a.wrapping_mul(b)),
                "/u" => match vals[0].checked_div(vals[1]) {
                    Some(q) => q,
                    None => return Ok(None),
                },
                "umax" => vals.iter().copied().max().unwrap_or(0),
                "umin" => vals.iter().copied().min().unwrap_or(0),
                "smax" => vals.iter().copied().max_by_key(|&v| s(v)).unwrap_or(0),
                _ => vals.iter().copied().min_by_key(|&v| s(v)).unwrap_or(0),
            };
            Some(r & m)
        }
    })
}

/// The width of LLVM's expression: a cast at the top gives it, else Gyre's.
fn top_bits(e: &Expr, gyre_bits: u32) -> u32 {
    match e {
        Expr::Cast(_, _, _, to) => *to,
        _ => gyre_bits,
    }
}

/// The value of unknown `name` in assignment `trial` (the same on both sides).
fn assignment(name: &str, trial: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(trial.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    match trial {
        0 => 0,
        1 => 1,
        2 => 2,
        3 => u64::MAX,
        4 => i32::MAX as u64,
        5 => i32::MIN as i64 as u64,
        6 => i64::MAX as u64,
        7 => 100,
        8..=15 => h % 64,
        _ => h,
    }
}

const TRIALS: u32 = 24;

/// The path as `corpus/dir/file` (for [`KNOWN`]).
fn path_key(path: &Path) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let n = parts.len();
    let from = parts
        .iter()
        .rposition(|p| p == "llvm-lit" || p == "cuda")
        .unwrap_or(n.saturating_sub(1));
    parts[from..].join("/")
}

/// Compare one file.
pub fn check(opt: &Opt, path: &Path) -> Result<Vec<LoopResult>, String> {
    let src = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let opts = ImportOptions {
        external_calls: ExternalCalls::Stub,
    };
    let module =
        gyre_llvm::import_module_with(&src, &opts).map_err(|e| format!("import: {}", e.first()))?;
    let exported = gyre_llvm::export_module(&module, &ExportOptions::default());
    let text = run_print(opt, &exported).map_err(|e| format!("opt: {e}"))?;
    let llvm = parse_llvm_counts(&text);
    let mut out = Vec::new();
    for (_, func) in module.functions.iter() {
        if func.layout.entry_block().is_none() {
            continue;
        }
        let Ok(cfg) = Cfg::with_function(func) else {
            continue;
        };
        let dt = DomTree::with_function(func, &cfg);
        let li = LoopInfo::with_function(func, &cfg, &dt);
        let mut se = ScalarEvolution::new();
        se.compute(func, &cfg, &dt, &li);
        for l in li.loops() {
            let header = li.header(l).to_string();
            let Some(theirs) = llvm.get(&(func.name.clone(), header.clone())) else {
                continue;
            };
            let ours = se.backedge_taken_count(l);
            let ours_text = ours.map(|s| se.display(s, func));
            let verdict = match (ours, theirs) {
                (None, None) => Verdict::BothUnknown,
                (None, Some(t)) => Verdict::LlvmOnly(t.clone()),
                (Some(_), None) => Verdict::GyreOnly(ours_text.clone().unwrap_or_default()),
                (Some(s), Some(t)) => {
                    let g = guards(func, &cfg, &dt, &li, &mut se, l);
                    compare(&se, s, t, &g)
                }
            };
            let verdict = match verdict {
                Verdict::Contradiction(w) => {
                    let key = path_key(path);
                    match KNOWN.iter().find(|k| key.ends_with(k.0) && k.1 == header) {
                        Some(k) => Verdict::Explained(format!("{w}; {}", k.2)),
                        None => Verdict::Contradiction(w),
                    }
                }
                v => v,
            };
            out.push(LoopResult {
                func: func.name.clone(),
                header,
                gyre: ours_text,
                llvm: theirs.clone(),
                verdict,
            });
        }
    }
    Ok(out)
}

/// A condition that holds whenever the loop is entered: `(predicate, lhs, rhs, outcome)`.
type Guard = (IntCC, Scev, Scev, bool);

/// The branches on the dominator-tree path above the preheader whose outcome entering
/// the loop decides (the successor taken has the branching block as its only
/// predecessor and dominates the preheader), with integer `icmp` conditions. LLVM uses
/// such guards to drop the `max` of a count; its count holds only where they do.
fn guards(
    func: &gyre_ir::Function,
    cfg: &Cfg,
    dt: &DomTree,
    li: &LoopInfo,
    se: &mut ScalarEvolution,
    l: gyre_analysis::Loop,
) -> Vec<Guard> {
    let mut out = Vec::new();
    let Some(mut cur) = li.preheader(l, cfg) else {
        return out;
    };
    while let Some(id) = dt.idom(cur) {
        if let Some(t) = func.terminator(id) {
            if let InstructionData::Brif { arg, blocks } = *func.dfg.inst(t) {
                let only_from = |b: gyre_ir::Block| {
                    cfg.preds(b).iter().all(|&p| p == id) && dt.dominates(b, cur)
                };
                let taken = match (only_from(blocks[0].block), only_from(blocks[1].block)) {
                    (true, false) => Some(true),
                    (false, true) => Some(false),
                    _ => None,
                };
                // A constant condition (`brif false`): entering needs `c == taken`.
                if let (Some(taken), Some(c)) = (taken, se.value(arg)) {
                    if se.as_const(c).is_some() {
                        let want = se.constant(1, u64::from(taken));
                        out.push((IntCC::Eq, c, want, true));
                    }
                }
                if let (Some(taken), ValueDef::Result(c)) = (taken, func.dfg.value_def(arg)) {
                    if let InstructionData::IntCompare { cond, args } = *func.dfg.inst(c) {
                        if let (Some(a), Some(b)) = (se.value(args[0]), se.value(args[1])) {
                            out.push((cond, a, b, taken));
                        }
                    }
                }
            }
        }
        cur = id;
    }
    out
}

/// The unknowns of Gyre's expression, as names.
fn gyre_unknowns(se: &ScalarEvolution, s: Scev) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![s];
    while let Some(x) = stack.pop() {
        if let Some(v) = se.as_unknown(x) {
            out.push(v.to_string());
        }
        stack.extend_from_slice(se.operands(x));
    }
    out.sort();
    out.dedup();
    out
}

fn expr_vars(e: &Expr, out: &mut Vec<String>) {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match x {
            Expr::Var(v) => out.push(v.clone()),
            Expr::Op(_, xs) => stack.extend(xs.iter()),
            Expr::Cast(_, _, x, _) => stack.push(x),
            _ => {}
        }
    }
}

fn compare(se: &ScalarEvolution, s: Scev, t: &str, guards: &[Guard]) -> Verdict {
    let e = match parse_expr(t) {
        Ok(e) => e,
        Err(why) => return Verdict::NotComparable(why),
    };
    // Independent assignments mean something only if both sides name the same unknowns
    // (LLVM may look through a value Gyre keeps unknown, or the reverse).
    let mut theirs_vars = Vec::new();
    expr_vars(&e, &mut theirs_vars);
    theirs_vars.sort();
    theirs_vars.dedup();
    if theirs_vars != gyre_unknowns(se, s) {
        return Verdict::NotComparable("the two counts name different unknowns".into());
    }
    let bits = se.bits(s);
    let tb = top_bits(&e, bits);
    let mut compared = 0;
    for trial in 0..TRIALS {
        let env = |name: &str| assignment(name, trial);
        // Only assignments under which the loop is entered.
        let entered = guards.iter().all(|&(cc, a, b, want)| {
            let val = |x: Scev| se.evaluate(x, |v| Some(env(&v.to_string())));
            match (val(a), val(b)) {
                (Some(x), Some(y)) => cc.eval(se.bits(a), x, y) == want,
                _ => true,
            }
        });
        if !entered {
            continue;
        }
        let ours = se.evaluate(s, |v| Some(env(&v.to_string())));
        let theirs = match eval(&e, tb, &env) {
            Ok(v) => v,
            Err(why) => return Verdict::NotComparable(why),
        };
        let Some(ours) = ours else {
            return Verdict::NotComparable("Gyre's count holds a recurrence".into());
        };
        // A division by zero in LLVM's form: that assignment says nothing.
        let Some(theirs) = theirs else { continue };
        compared += 1;
        if ours != theirs {
            return Verdict::Contradiction(format!(
                "with every unknown set as in assignment {trial}: Gyre {ours}, LLVM {theirs}"
            ));
        }
    }
    if compared == 0 {
        // No assignment satisfies the entry guards (often a constant `br false`): equal
        // everywhere is still equal where the loop is entered.
        for trial in 0..TRIALS {
            let env = |name: &str| assignment(name, trial);
            let ours = se.evaluate(s, |v| Some(env(&v.to_string())));
            match (ours, eval(&e, tb, &env)) {
                (Some(a), Ok(Some(b))) if a == b => {}
                (_, Ok(None)) => {}
                _ => {
                    return Verdict::NotComparable(
                        "no assignment enters the loop, and the counts differ outside it".into(),
                    )
                }
            }
        }
    }
    Verdict::Equal
}

/// Run the stage over both corpora.
pub fn run(root: &Path, opt: &Opt) -> Vec<FileResult> {
    corpus_files(root)
        .into_iter()
        .map(|(key, path)| FileResult {
            loops: check(opt, &path),
            key,
        })
        .collect()
}

/// Totals.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Files compared / not compared.
    pub files: usize,
    /// Files not compared (import or `opt` failed).
    pub skipped: usize,
    /// Loops matched by header.
    pub loops: usize,
    /// Verdict counts.
    pub equal: usize,
    /// Contradictions (failures).
    pub contradictions: usize,
    /// Contradictions explained in [`KNOWN`].
    pub explained: usize,
    /// Only LLVM knows the count.
    pub llvm_only: usize,
    /// Only Gyre knows it.
    pub gyre_only: usize,
    /// Neither.
    pub both_unknown: usize,
    /// Not comparable by evaluation.
    pub not_comparable: usize,
}

/// Count the verdicts.
pub fn summarize(results: &[FileResult]) -> Summary {
    let mut s = Summary {
        files: results.len(),
        ..Summary::default()
    };
    for r in results {
        match &r.loops {
            Err(_) => s.skipped += 1,
            Ok(ls) => {
                for l in ls {
                    s.loops += 1;
                    match l.verdict {
                        Verdict::Equal => s.equal += 1,
                        Verdict::Contradiction(_) => s.contradictions += 1,
                        Verdict::Explained(_) => s.explained += 1,
                        Verdict::LlvmOnly(_) => s.llvm_only += 1,
                        Verdict::GyreOnly(_) => s.gyre_only += 1,
                        Verdict::BothUnknown => s.both_unknown += 1,
                        Verdict::NotComparable(_) => s.not_comparable += 1,
                    }
                }
            }
        }
    }
    s
}

/// The report as Markdown (docs/scev-conformance.md).
pub fn document(opt: &Opt, results: &[FileResult], s: &Summary) -> String {
    let mut d = String::new();
    let _ = writeln!(d, "# Scalar evolution against LLVM 14\n");
    let _ = writeln!(
        d,
        "Generated by `cargo xtask conformance --scev --write-doc` ({}). Do not edit by \
         hand. Every file of both corpora (`../shared/corpus/llvm-lit`, \
         `../shared/corpus/cuda`) is imported and exported again; LLVM 14 \
         `opt -passes='print<scalar-evolution>'` reads the export, so loops match by \
         header and unknowns by name. Where both give a backedge-taken count, both are \
         evaluated on {TRIALS} assignments of their unknowns in the width of Gyre's count; \
         a difference is a contradiction (a failure). See docs/scev.md.\n",
        opt.version
    );
    let known_llvm = s.equal + s.contradictions + s.explained + s.llvm_only + s.not_comparable;
    let _ = writeln!(d, "## Totals\n");
    let _ = writeln!(
        d,
        "- Files: {}; compared: {}; not compared (import or `opt` failed): {}.",
        s.files,
        s.files - s.skipped,
        s.skipped
    );
    let _ = writeln!(d, "- Loops matched by header: {}.", s.loops);
    let _ = writeln!(
        d,
        "- Both know the count: {} equal, **{} contradictions**, {} differences explained \
         (below), {} not comparable by evaluation (a recurrence of an outer loop or a \
         pointer in a count, or different unknowns on the two sides).",
        s.equal, s.contradictions, s.explained, s.not_comparable
    );
    let _ = writeln!(
        d,
        "- LLVM knows a count Gyre does not: {} of the {} loops LLVM counts ({:.0}%).",
        s.llvm_only,
        known_llvm,
        100.0 * s.llvm_only as f64 / known_llvm.max(1) as f64
    );
    let _ = writeln!(
        d,
        "- Gyre knows a count LLVM does not: {}; neither: {}.\n",
        s.gyre_only, s.both_unknown
    );
    let section = |d: &mut String, title: &str, pick: &dyn Fn(&Verdict) -> Option<String>| {
        let _ = writeln!(d, "## {title}\n");
        let mut any = false;
        for r in results {
            if let Ok(ls) = &r.loops {
                for l in ls {
                    if let Some(why) = pick(&l.verdict) {
                        any = true;
                        let _ = writeln!(
                            d,
                            "- `{}` @{} %{}: Gyre `{}`, LLVM `{}`{}",
                            r.key,
                            l.func,
                            l.header,
                            l.gyre.as_deref().unwrap_or("unknown"),
                            l.llvm.as_deref().unwrap_or("unknown"),
                            if why.is_empty() {
                                String::new()
                            } else {
                                format!(" ({why})")
                            }
                        );
                    }
                }
            }
        }
        if !any {
            let _ = writeln!(d, "None.");
        }
        d.push('\n');
    };
    section(&mut d, "Contradictions", &|v| match v {
        Verdict::Contradiction(w) => Some(w.clone()),
        _ => None,
    });
    section(&mut d, "Differences explained", &|v| match v {
        Verdict::Explained(w) => Some(w.clone()),
        _ => None,
    });
    section(&mut d, "Counts only LLVM knows", &|v| match v {
        Verdict::LlvmOnly(_) => Some(String::new()),
        _ => None,
    });
    section(&mut d, "Counts only Gyre knows", &|v| match v {
        Verdict::GyreOnly(_) => Some(String::new()),
        _ => None,
    });
    section(&mut d, "Not comparable by evaluation", &|v| match v {
        Verdict::NotComparable(w) => Some(w.clone()),
        _ => None,
    });
    let _ = writeln!(d, "## Files not compared\n");
    let mut any = false;
    for r in results {
        if let Err(e) = &r.loops {
            any = true;
            let _ = writeln!(d, "- `{}`: {}", r.key, e);
        }
    }
    if !any {
        let _ = writeln!(d, "None.");
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_llvm_counts_and_expressions() {
        let text = "Determining loop execution counts for: @f\n\
            Loop %block1: backedge-taken count is ((((-1 * (1 umin (0 smax %v0)))<nuw><nsw> + (0 smax %v0)) /u 3) + (1 umin (0 smax %v0)))\n\
            Loop %block1: max backedge-taken count is 715827882\n\
            Loop %block4: <multiple exits> Unpredictable backedge-taken count.\n";
        let c = parse_llvm_counts(text);
        assert_eq!(c.len(), 2);
        assert_eq!(c[&("f".into(), "block4".into())], None);
        let e = parse_expr(c[&("f".into(), "block1".into())].as_deref().unwrap()).unwrap();
        // ceil(max(0, n) / 3)
        for n in [0i64, 1, 2, 3, 4, 100, -5, i32::MAX as i64] {
            let env = |_: &str| n as u64;
            let want = (n.max(0) as u64).div_ceil(3);
            assert_eq!(eval(&e, 32, &env).unwrap(), Some(want), "n = {n}");
        }
        let z = parse_expr("(zext i32 (-1 + %v1) to i64)").unwrap();
        assert_eq!(eval(&z, 64, &|_| 0).unwrap(), Some(u32::MAX as u64));
        let s = parse_expr("(sext i8 %v1 to i32)").unwrap();
        assert_eq!(eval(&s, 32, &|_| 0x80).unwrap(), Some(0xffff_ff80));
        assert!(eval(&parse_expr("{0,+,1}<%block1>").unwrap(), 32, &|_| 0).is_err());
    }
}
