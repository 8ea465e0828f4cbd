//! What each kind of test prints, and the checks beyond the directives that some kinds make
//! (`expect: unchanged` and `run:` for opt, ptxas for compile).

use crate::file::{FileError, TestFile, TestKind};
use crate::{Outcome, Runner};
use gyre_analysis::{Cfg, DomTree, LoopInfo, PostDomTree, Uniformity};
use gyre_codegen_lite::{compile_module_with_flags, CodegenFlags, CodegenOptions, Sm};
use gyre_interp::{assert_same_behaviour, run_kernel, Arg, Inputs, Launch, Memory};
use gyre_ir::verifier::verify_function;
use gyre_ir::{write_module, Module};
use gyre_transforms::registry::{self, PassKind};
use gyre_transforms::{AnalysisCache, Knobs, Options, PassContext, PassManager, PassResult, Stats};
use std::fmt::Write as _;

/// A test's output, and what produced it.
pub struct Produced {
    /// The text the directives and the precise-output section are matched against.
    pub text: String,
    /// opt: the module after the pipeline.
    pub after: Option<Module>,
    /// opt: the knobs the pipeline ran with.
    pub knobs: Option<Knobs>,
    /// compile: the target.
    pub sm: Option<Sm>,
    /// export: LLVM 14 `opt` must accept the text.
    pub llvm: bool,
}

/// The module printed in the text format.
pub fn print_module(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String cannot fail");
    s
}

fn verify(t: &TestFile, m: &Module) -> Result<(), FileError> {
    if t.unverified {
        return Ok(());
    }
    for f in m.functions.values() {
        verify_function(f, Some(m))
            .map_err(|e| FileError::whole(format!("input @{} does not verify:\n{e}", f.name)))?;
    }
    Ok(())
}

/// Run the test's tool on `module` and print the result.
pub fn produce(t: &TestFile, module: &Module) -> Result<Produced, FileError> {
    let mut p = Produced {
        text: String::new(),
        after: None,
        knobs: None,
        sm: None,
        llvm: false,
    };
    if t.kind != TestKind::Compile {
        verify(t, module)?;
    }
    match t.kind {
        TestKind::Opt => {
            let passes = t.passes.as_ref().expect("parse_test_file requires passes");
            let mut knobs = Knobs::default();
            for (k, v, line) in &t.knobs {
                knobs
                    .set(k, v)
                    .map_err(|e| FileError::at(*line, e.to_string()))?;
            }
            let options = Options {
                verify_each: true,
                ..Options::default()
            };
            let mut pm = PassManager::from_pipeline(&passes.value, knobs.clone(), options)
                .map_err(|e| FileError::at(passes.line, e.to_string()))?;
            let mut after = module.clone();
            let report = pm
                .run_module(&mut after)
                .map_err(|e| FileError::at(passes.line, e.to_string()))?;
            let mut out = print_module(&after);
            for r in &report.remarks {
                let b = r.block.map_or("-".to_string(), |b| b.to_string());
                let _ = writeln!(out, "; remark: {} {} {b}: {}", r.pass, r.kind, r.message);
            }
            for (pass, counter, n) in report.stats.iter() {
                let _ = writeln!(out, "; stat: {pass} {counter} {n}");
            }
            p.text = out;
            p.after = Some(after);
            p.knobs = Some(knobs);
        }
        TestKind::Compile => {
            let (sm, line) = match &t.target {
                Some(l) => {
                    let sm = Sm::ALL
                        .into_iter()
                        .find(|s| s.target() == l.value)
                        .ok_or_else(|| {
                            FileError::at(
                                l.line,
                                format!(
                                    "unknown target '{}' ({})",
                                    l.value,
                                    Sm::ALL.map(Sm::target).join(", ")
                                ),
                            )
                        })?;
                    (sm, l.line)
                }
                None => (Sm::Sm80, 1),
            };
            let mut flags = CodegenFlags::default();
            if let Some(c) = &t.codegen {
                for setting in c.value.split_whitespace() {
                    match flags.apply(setting) {
                        Ok(true) => {}
                        Ok(false) => {
                            return Err(FileError::at(
                                c.line,
                                format!("unknown codegen setting '{setting}'"),
                            ))
                        }
                        Err(e) => return Err(FileError::at(c.line, e)),
                    }
                }
            }
            // `; passes:` optimizes first (with `--verify-each` semantics), as
            // `gyre compile -passes=...` does.
            let optimized;
            let module = match &t.passes {
                Some(passes) => {
                    let options = Options {
                        verify_each: true,
                        ..Options::default()
                    };
                    let mut pm =
                        PassManager::from_pipeline(&passes.value, Knobs::default(), options)
                            .map_err(|e| FileError::at(passes.line, e.to_string()))?;
                    let mut after = module.clone();
                    pm.run_module(&mut after)
                        .map_err(|e| FileError::at(passes.line, e.to_string()))?;
                    optimized = after;
                    &optimized
                }
                None => module,
            };
            p.text = compile_module_with_flags(
                module,
                &CodegenOptions { sm },
                &flags,
                &mut gyre_analysis::ModuleAnalyses::new(),
            )
            .map_err(|e| FileError::at(line, format!("codegen failed: {e}")))?;
            p.sm = Some(sm);
        }
        TestKind::Import => p.text = print_module(module),
        TestKind::Export => {
            p.text = gyre_llvm::export_module(module, &gyre_llvm::ExportOptions::default());
            p.llvm = true;
        }
        kind => {
            for f in module.functions.values() {
                let cfg = Cfg::with_function(f)
                    .map_err(|e| FileError::whole(format!("@{}: {e}", f.name)))?;
                let text = match kind {
                    TestKind::PrintCfg => gyre_analysis::print_cfg(&cfg, f),
                    TestKind::PrintDomtree => {
                        gyre_analysis::print_domtree(&DomTree::with_function(f, &cfg), f)
                    }
                    TestKind::PrintPostdomtree => {
                        gyre_analysis::print_postdomtree(&PostDomTree::with_function(f, &cfg), f)
                    }
                    TestKind::PrintLoops => {
                        let dt = DomTree::with_function(f, &cfg);
                        gyre_analysis::print_loops(&LoopInfo::with_function(f, &cfg, &dt), f)
                    }
                    TestKind::PrintScev => {
                        let dt = DomTree::with_function(f, &cfg);
                        let li = LoopInfo::with_function(f, &cfg, &dt);
                        let mut se = gyre_analysis::ScalarEvolution::new();
                        se.compute(f, &cfg, &dt, &li);
                        gyre_analysis::print_scev(&mut se, &li, f)
                    }
                    TestKind::Uniformity => {
                        let dt = DomTree::with_function(f, &cfg);
                        let pdt = PostDomTree::with_function(f, &cfg);
                        let li = LoopInfo::with_function(f, &cfg, &dt);
                        let u = Uniformity::with_function(f, &cfg, &dt, &pdt, &li);
                        gyre_analysis::print_uniformity(&u, f, Some(module))
                    }
                    TestKind::Opt | TestKind::Compile | TestKind::Import | TestKind::Export => {
                        unreachable!("handled above")
                    }
                };
                p.text.push_str(&text);
            }
        }
    }
    Ok(p)
}

/// The checks after the directives matched: `expect: unchanged` and `run:` (opt),
/// assembly by ptxas (compile).
pub fn semantic_checks(
    runner: &Runner,
    t: &TestFile,
    before: &Module,
    p: &Produced,
    outcome: &mut Outcome,
) -> Result<(), FileError> {
    if let (Some(after), Some(knobs)) = (&p.after, &p.knobs) {
        if let Some(line) = t.unchanged {
            if print_module(before) != print_module(after) {
                return Err(FileError::at(
                    line,
                    "expected no change, but the module changed",
                ));
            }
            let passes = t.passes.as_ref().expect("opt has passes");
            check_unchanged(&passes.value, knobs, before).map_err(|e| FileError::at(line, e))?;
        }
        for run in &t.runs {
            let (kernel, launch) = parse_run(&run.value).map_err(|e| FileError::at(run.line, e))?;
            let mut mem = Memory::new();
            run_kernel(before, &kernel, &launch, &mut mem)
                .map_err(|e| FileError::at(run.line, format!("the original fails: {e}")))?;
            let inputs = Inputs {
                launch,
                memory: Memory::new(),
            };
            assert_same_behaviour(before, after, &kernel, &inputs)
                .map_err(|d| FileError::at(run.line, format!("behaviour differs: {d}")))?;
        }
    }
    if p.llvm {
        let found = runner.opt().map(Path::to_path_buf);
        let tool = gyre_test_tools::Tool::Opt;
        let test = "filetests (test export)";
        match gyre_test_tools::decide(found, tool, test, runner.config().require_tools) {
            Ok(Some(opt)) => llvm_verify(&opt, &p.text).map_err(FileError::whole)?,
            Ok(None) => {
                outcome
                    .skipped
                    .push(format!("{} not found ({})", tool.name(), tool.hint()))
            }
            Err(e) => return Err(FileError::at(1, e)),
        }
    }
    if let Some(sm) = p.sm {
        let found = runner.ptxas().map(Path::to_path_buf);
        let tool = gyre_test_tools::Tool::Ptxas;
        let test = "filetests (test compile)";
        match gyre_test_tools::decide(found, tool, test, runner.config().require_tools) {
            Ok(Some(ptxas)) => gyre_test_tools::run_ptxas(&ptxas, &p.text, sm.target())
                .map_err(|e| FileError::at(t.target.as_ref().map_or(1, |l| l.line), e))?,
            Ok(None) => {
                outcome
                    .skipped
                    .push(format!("{} not found ({})", tool.name(), tool.hint()))
            }
            Err(e) => return Err(FileError::at(1, e)),
        }
    }
    Ok(())
}

use std::path::Path;

/// LLVM 14 `opt -passes=verify` must read and accept `text`.
fn llvm_verify(opt: &Path, text: &str) -> Result<(), String> {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(opt)
        .args(["-passes=verify", "-disable-output", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", opt.display()))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(text.as_bytes())
        .map_err(|e| format!("cannot feed opt: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("opt failed: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "LLVM 14 opt rejects the export:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Run each pass of a plain pipeline on every function of `m` directly, requiring
/// `PassResult::UNCHANGED` (the pass manager's report does not say per pass whether it
/// changed anything).
fn check_unchanged(passes: &str, knobs: &Knobs, m: &Module) -> Result<(), String> {
    for name in passes.split(',').map(str::trim) {
        let info = registry::lookup(name).ok_or_else(|| format!("unknown pass {name}"))?;
        if info.kind != PassKind::Function {
            continue;
        }
        let create = info
            .create_function
            .ok_or_else(|| format!("{name}: a function pass without a constructor"))?;
        let mut pass = create(&[])?;
        for f in m.functions.values() {
            let mut f = f.clone();
            let (mut cache, mut stats, mut remarks) =
                (AnalysisCache::new(), Stats::default(), Vec::new());
            let mut cx = PassContext {
                knobs,
                analyses: &mut cache,
                stats: &mut stats,
                remarks: &mut remarks,
            };
            let res = pass.run(&mut f, &mut cx).map_err(|e| e.to_string())?;
            if res != PassResult::UNCHANGED {
                return Err(format!("{name} on @{} reported {res:?}", f.name));
            }
        }
    }
    Ok(())
}

/// `kernel=k grid=2 block=8 args=5,-3` (integer arguments).
pub fn parse_run(spec: &str) -> Result<(String, Launch), String> {
    let (mut kernel, mut grid, mut block, mut args) = (None, 1u32, 1u32, Vec::new());
    for kv in spec.split_whitespace() {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("run: '{kv}' is not name=value"))?;
        let num = |v: &str| {
            v.parse::<u32>()
                .map_err(|_| format!("run: bad number '{v}'"))
        };
        match k {
            "kernel" => kernel = Some(v.trim_start_matches('@').to_string()),
            "grid" => grid = num(v)?,
            "block" => block = num(v)?,
            "args" => {
                for a in v.split(',').filter(|a| !a.is_empty()) {
                    let x: i64 = a.parse().map_err(|_| format!("run: bad integer '{a}'"))?;
                    args.push(Arg::Int(x as u64));
                }
            }
            _ => return Err(format!("run: unknown key '{k}'")),
        }
    }
    let kernel = kernel.ok_or("run: missing kernel=")?;
    Ok((kernel, Launch::linear(grid, block, args)))
}
