//! `cargo xtask conformance`: Gyre's loop passes against LLVM's own regression tests and
//! LLVM 14 `opt`.
//!
//! For every file of the corpus (`../shared/corpus/llvm-lit/`, or `GYRE_LIT_CORPUS`),
//! `MANIFEST.tsv` names the pipeline of its first RUN line. The harness
//! 1. imports the file (external declarations become stubs) or records the first error;
//! 2. maps the pipeline to Gyre's ([`pipeline`]): a file naming a pass Gyre does not
//!    have is "pass not implemented" and counted apart;
//! 3. runs the pipeline in Gyre with verification after each pass, then verifies the
//!    module and checks the loop forms the pipeline's passes promise ([`shape`]);
//! 4. runs `opt -passes=<same pipeline>` from LLVM 14 (on the original file, or, when
//!    LLVM 14 cannot read it, on Gyre's export of the imported input), imports its
//!    output and computes the same facts, which must agree with Gyre's;
//! 5. runs every function of Gyre's output against the input in the interpreter on
//!    random inputs ([`behaviour`]), except functions that call external stubs;
//! 6. for every imported file, whatever its pipeline, runs LLVM's `loop-simplify,lcssa`
//!    on Gyre's exported `loop-simplify,lcssa` output and lists the functions LLVM still
//!    changes ([`rerun`]), each of which needs a reason in [`rerun::KNOWN`].
//!
//! 7. ([`scev`], also alone with `--scev`) compares Gyre's backedge-taken counts with
//!    LLVM 14's `print<scalar-evolution>` on both corpora.
//!
//! [`report`] turns the results into totals, target checks and docs/conformance.md.
//! Disagreements with `opt` are expected to be rare and each needs a one-line reason in
//! [`report::KNOWN`].

pub mod alone;
pub mod behaviour;
pub mod pipeline;
pub mod report;
pub mod rerun;
pub mod scev;
pub mod shape;

use behaviour::Behaviour;
use gyre_ir::Module;
use gyre_llvm::{ExportOptions, ExternalCalls, ImportOptions};
use gyre_transforms::{Forms, Knobs, Options, PassManager};
use pipeline::Mapped;
use shape::Shape;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// How much of the corpus to run.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Mode {
    /// The fixed subset [`QUICK_FILES`], with fewer interpreter runs (for `cargo test`).
    Quick,
    /// Every file of the manifest.
    Full,
}

/// The quick subset (`dir/file`): spread over the pass directories, with every file
/// whose pipeline Gyre can run among the LoopSimplify and LCSSA ones weighted in.
pub const QUICK_FILES: &[&str] = &[
    "LoopSimplify/basictest.ll",
    "LoopSimplify/hardertest.ll",
    "LoopSimplify/2004-04-12-LoopSimplify-SwitchBackedges.ll",
    "LoopSimplify/dup-preds.ll",
    "LoopSimplify/unique-backedge-block-position.ll",
    "LoopSimplify/phi-node-simplify.ll",
    "LCSSA/basictest.ll",
    "LCSSA/2006-06-03-IncorrectIDFPhis.ll",
    "LCSSA/2006-10-31-UnreachableBlock.ll",
    "LCSSA/unreachable-use.ll",
    "LCSSA/pr44058.ll",
    "LoopRotate/basic.ll",
    "IndVarSimplify/loop_evaluate_4.ll",
    "SimpleLoopUnswitch/2007-05-09-tl.ll",
    "LoopDeletion/multiple-exit-conditions.ll",
];

/// The knobs the corpus runs under: LLVM's behaviour where Gyre's GPU default differs.
/// LLVM's tests are CPU code, whose `opt` unswitches non-trivially whatever the
/// condition's uniformity (Gyre's `unswitch-uniform-only` would keep most of them, since
/// a device function's parameters are divergent).
pub fn llvm_knobs() -> Knobs {
    let mut k = Knobs::default();
    gyre_transforms::knobs::apply_setting(&mut k, "unswitch-uniform-only=false")
        .expect("a registered knob");
    k
}

/// Interpreter runs per function.
fn runs(mode: Mode) -> u32 {
    match mode {
        Mode::Quick => 4,
        Mode::Full => 8,
    }
}

/// One line of `MANIFEST.tsv`.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Directory (the LLVM test directory, e.g. `LoopSimplify`).
    pub dir: String,
    /// File path inside the directory.
    pub file: String,
    /// The pipelines of the RUN lines, separated by ` ; `.
    pub run_passes: String,
    /// LLVM 14 `opt` reads and verifies the file.
    pub parses_with_llvm14: bool,
    /// Notes (features, flags LLVM 14 needs).
    pub notes: String,
}

impl Entry {
    /// `dir/file`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.dir, self.file)
    }
}

/// Read `MANIFEST.tsv` (columns found by their header names).
pub fn read_manifest(corpus: &Path) -> Result<Vec<Entry>, String> {
    let path = corpus.join("MANIFEST.tsv");
    let names = ["dir", "file", "run_passes", "parses_with_llvm14", "notes"];
    let rows = crate::read_tsv(&path, &names)?;
    rows.iter()
        .map(|(line, row)| {
            let get = |i| crate::tsv_cell(&path, *line, row, i);
            Ok(Entry {
                dir: get(0)?,
                file: get(1)?,
                run_passes: get(2)?,
                parses_with_llvm14: get(3)? == "yes",
                notes: row[4].clone().unwrap_or_default(),
            })
        })
        .collect()
}

/// The corpus: `GYRE_LIT_CORPUS` if set, else `<workspace root>/../shared/corpus/llvm-lit`;
/// `None` if it has no `MANIFEST.tsv`.
pub fn find_corpus(workspace_root: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("GYRE_LIT_CORPUS") {
        Some(p) => PathBuf::from(p),
        None => workspace_root.join("../shared/corpus/llvm-lit"),
    };
    dir.join("MANIFEST.tsv").is_file().then_some(dir)
}

/// An LLVM 14 `opt`.
#[derive(Clone, Debug)]
pub struct Opt {
    /// The executable.
    pub path: PathBuf,
    /// Its version line.
    pub version: String,
}

/// `GYRE_OPT`, else `opt-14` or `opt` on the PATH, if it is LLVM 14 (the pass-pipeline
/// syntax and the `-opaque-pointers` flag differ between versions).
pub fn find_opt() -> Option<Opt> {
    let candidates: Vec<PathBuf> = match std::env::var_os("GYRE_OPT") {
        Some(p) => vec![PathBuf::from(p)],
        None => vec!["opt-14".into(), "opt".into()],
    };
    for path in candidates {
        let Ok(out) = Command::new(&path).arg("--version").output() else {
            continue;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        if let Some(line) = text.lines().find(|l| l.contains("LLVM version 14.")) {
            return Some(Opt {
                path,
                version: line.trim().to_string(),
            });
        }
    }
    None
}

/// What LLVM 14 `opt` gave.
#[derive(Clone, Debug)]
pub enum OptOutcome {
    /// No LLVM 14 `opt` was found.
    Unavailable,
    /// `opt` failed (first line of its error).
    Failed(String),
    /// Gyre could not import `opt`'s output (first error).
    ImportFailed(String),
    /// The facts of `opt`'s output.
    Ran {
        /// Loop facts.
        shape: Shape,
        /// `opt` read Gyre's export of the input because LLVM 14 cannot read the file.
        on_export: bool,
    },
}

/// The results for a file Gyre could import and run.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The pipeline run by Gyre and by `opt`.
    pub gyre_pipeline: String,
    /// Gyre passes in it.
    pub passes: Vec<String>,
    /// Promised loop forms.
    pub forms: Forms,
    /// Gyre's output facts, or why the pipeline or the verifier failed.
    pub gyre: Result<Shape, String>,
    /// Whether the promised forms already hold in the input (then the file does not
    /// exercise the pass's main work).
    pub input_holds: Result<(), String>,
    /// Whether the promised forms hold in Gyre's output.
    pub gyre_holds: Result<(), String>,
    /// `opt`'s side.
    pub opt: OptOutcome,
    /// Whether the promised forms hold in `opt`'s output.
    pub opt_holds: Option<Result<(), String>>,
    /// Whether the promised forms hold (or fail) alike in Gyre's and `opt`'s outputs,
    /// function by function (`None` when there is nothing to compare).
    pub agree: Option<Result<(), String>>,
    /// Whether both outputs have the same loops and form counts in every function (a
    /// stricter, informational comparison).
    pub same_loops: Option<Result<(), String>>,
    /// Differential runs.
    pub behaviour: Behaviour,
}

/// The result for one corpus file.
#[derive(Clone, Debug)]
pub struct FileReport {
    /// Its manifest line.
    pub entry: Entry,
    /// The first RUN pipeline.
    pub pipeline: String,
    /// Functions imported, or the first import error.
    pub imported: Result<usize, String>,
    /// The pipeline mapped to Gyre (or why it could not be read).
    pub mapped: Result<Mapped, String>,
    /// Present when the file imported and Gyre has every pass of its pipeline (or of
    /// the part it is compared on, [`FileReport::cleanup_alone`]).
    pub checked: Option<Box<Checked>>,
    /// When the pipeline names passes Gyre lacks but also a pass of
    /// [`pipeline::COMPARED_ALONE`]: the passes missing. `mapped` is then the pipeline of
    /// those passes alone ([`pipeline::cleanup_part`]), which both Gyre and `opt` run.
    pub cleanup_alone: Option<Vec<String>>,
    /// LLVM 14 re-run on Gyre's `loop-simplify,lcssa` output ([`rerun`]), whatever the
    /// file's pipeline; present when the file imported and `opt` was found.
    pub rerun: Option<Result<rerun::Rerun, String>>,
    /// The pass of the file's directory run alone ([`alone`]), when the directory has
    /// an [`alone::AloneSpec`] and the file imported.
    pub alone: Option<Box<alone::Alone>>,
}

impl FileReport {
    /// Gyre has every pass of the file's pipeline.
    pub fn implemented(&self) -> bool {
        matches!(self.mapped, Ok(Mapped::Gyre { .. }))
    }
}

fn import_options() -> ImportOptions {
    ImportOptions {
        external_calls: ExternalCalls::Stub,
    }
}

/// Names of `declare`d functions that become stubs (not intrinsics or libdevice).
fn declared_stubs(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in src.lines() {
        let line = line.trim_start();
        if !line.starts_with("declare") {
            continue;
        }
        let Some(at) = line.find('@') else { continue };
        let rest = &line[at + 1..];
        let name: String = if let Some(q) = rest.strip_prefix('"') {
            q.chars().take_while(|&c| c != '"').collect()
        } else {
            rest.chars()
                .take_while(|&c| c.is_ascii_alphanumeric() || "._$-".contains(c))
                .collect()
        };
        if !name.starts_with("llvm.") && !name.starts_with("__nv_") && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The first line of a multi-line message.
fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// `pipeline` in LLVM 14's spelling: `loop-rotate` took no parameters before LLVM 15, where
/// `<header-duplication>` is the default and `<no-header-duplication>` is a header-size
/// limit of 0. Returns the pipeline and the extra options.
pub fn llvm14_pipeline(pipeline: &str) -> (String, Vec<&'static str>) {
    let mut extra = Vec::new();
    if pipeline.contains("loop-rotate<no-header-duplication>") {
        extra.push("-rotation-max-header-size=0");
    }
    let p = pipeline
        .replace("loop-rotate<header-duplication>", "loop-rotate")
        .replace("loop-rotate<no-header-duplication>", "loop-rotate");
    (p, extra)
}

/// Run `opt -S -passes=<pipeline>` on `input` (fed through stdin).
fn run_opt(opt: &Opt, pipeline: &str, opaque: bool, input: &str) -> Result<String, String> {
    let mut cmd = Command::new(&opt.path);
    let (pipeline, extra) = llvm14_pipeline(pipeline);
    cmd.arg("-S").arg(format!("-passes={pipeline}")).args(extra);
    if opaque {
        cmd.arg("-opaque-pointers");
    }
    cmd.args(["-o", "-", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", opt.path.display()))?;
    // Write from a thread so a large output cannot deadlock against the pipe.
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("opt: {e}"))?;
    let _ = writer.join();
    if out.status.success() {
        String::from_utf8(out.stdout).map_err(|e| format!("opt output: {e}"))
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(first_line(&err.replace("<stdin>:", "")))
    }
}

/// Run `opt` on the file (or on Gyre's export of the input) and compute the facts.
fn opt_side(
    opt: Option<&Opt>,
    c: &Checked,
    e: &Entry,
    src: &str,
    input: &Module,
    stubs: &[String],
) -> OptOutcome {
    let Some(opt) = opt else {
        return OptOutcome::Unavailable;
    };
    let opaque = e.notes.contains("-opaque-pointers");
    let (text, on_export) = match run_opt(opt, &c.gyre_pipeline, opaque, src) {
        Ok(t) => (t, false),
        Err(first) => {
            // LLVM 14 cannot read newer syntax: give it the same program as Gyre reads it.
            let exported = gyre_llvm::export_module(input, &ExportOptions::default());
            match run_opt(opt, &c.gyre_pipeline, false, &exported) {
                Ok(t) => (t, true),
                Err(second) => {
                    return OptOutcome::Failed(format!("{first}; on Gyre's export: {second}"))
                }
            }
        }
    };
    match gyre_llvm::import_module_with(&text, &import_options()) {
        Ok(m) => {
            // Gyre's export defines the input's stubs: leave them out here too.
            let mut skip = declared_stubs(&text);
            skip.extend(stubs.iter().cloned());
            OptOutcome::Ran {
                shape: Shape::of(&m, &skip),
                on_export,
            }
        }
        Err(errs) => OptOutcome::ImportFailed(errs.first().to_string()),
    }
}

/// Check one file.
pub fn check_file(corpus: &Path, e: &Entry, opt: Option<&Opt>, mode: Mode) -> FileReport {
    let pipeline = pipeline::first_run(&e.run_passes).to_string();
    let mut mapped = pipeline::map_pipeline(&pipeline);
    let mut cleanup_alone = None;
    // A file of a pass Gyre has whose pipeline also needs passes Gyre lacks is compared
    // on that pass alone, so every file of the pass counts.
    if let (Ok(Mapped::Missing(m)), Some(part)) = (&mapped, pipeline::cleanup_part(&pipeline)) {
        cleanup_alone = Some(m.clone());
        mapped = pipeline::map_pipeline(&part);
    }
    let mut report = FileReport {
        entry: e.clone(),
        pipeline,
        imported: Err(String::new()),
        mapped,
        checked: None,
        cleanup_alone,
        rerun: None,
        alone: None,
    };
    let path = corpus.join(&e.dir).join(&e.file);
    let src = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(err) => {
            report.imported = Err(format!("cannot read {}: {err}", path.display()));
            return report;
        }
    };
    let input = match gyre_llvm::import_module_with(&src, &import_options()) {
        Ok(m) => m,
        Err(errs) => {
            report.imported = Err(errs.first().to_string());
            return report;
        }
    };
    let stubs = declared_stubs(&src);
    report.imported = Ok(input
        .functions
        .values()
        .filter(|f| f.layout.entry_block().is_some() && !stubs.contains(&f.name))
        .count());
    report.rerun = opt.map(|o| rerun::check(o, &input, &stubs, &e.key()));
    report.alone = alone::spec_for(e)
        .map(|spec| Box::new(alone::check(spec, e, &src, &input, &stubs, opt, runs(mode))));
    let Ok(Mapped::Gyre {
        text,
        passes,
        forms,
    }) = &report.mapped
    else {
        return report;
    };
    let mut c = Checked {
        gyre_pipeline: text.clone(),
        passes: passes.clone(),
        forms: *forms,
        gyre: Err(String::new()),
        input_holds: Shape::of(&input, &stubs).holds(*forms),
        gyre_holds: Err("not run".into()),
        opt: OptOutcome::Unavailable,
        opt_holds: None,
        agree: None,
        same_loops: None,
        behaviour: Behaviour::default(),
    };
    let mut out = input.clone();
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    c.gyre = PassManager::from_pipeline(text, llvm_knobs(), options)
        .and_then(|mut pm| pm.run_module(&mut out).map_err(|e| e.to_string()))
        .and_then(|_| gyre_ir::verifier::verify_module(&out).map_err(|e| e.to_string()))
        .map(|()| Shape::of(&out, &stubs))
        .map_err(|e| first_line(&e));
    if let Ok(shape) = &c.gyre {
        c.gyre_holds = shape.holds(c.forms);
        c.behaviour = behaviour::compare(&input, &out, &stubs, runs(mode));
    }
    c.opt = opt_side(opt, &c, e, &src, &input, &stubs);
    if let OptOutcome::Ran { shape, .. } = &c.opt {
        c.opt_holds = Some(shape.holds(c.forms));
        if let Ok(g) = &c.gyre {
            c.agree = Some(g.compare_property(shape, c.forms));
            c.same_loops = Some(g.compare(shape, c.forms));
        }
    }
    report.checked = Some(Box::new(c));
    report
}

/// Everything a run needs.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The corpus directory.
    pub corpus: PathBuf,
    /// LLVM 14 `opt`, if found.
    pub opt: Option<Opt>,
    /// Quick or full.
    pub mode: Mode,
}

/// Check the files of the mode, in manifest order.
pub fn run(setup: &Setup) -> Result<Vec<FileReport>, String> {
    let entries = read_manifest(&setup.corpus)?;
    if setup.mode == Mode::Quick {
        for q in QUICK_FILES {
            if !entries.iter().any(|e| e.key() == *q) {
                return Err(format!("quick-mode file {q} is not in the manifest"));
            }
        }
    }
    Ok(entries
        .iter()
        .filter(|e| setup.mode == Mode::Full || QUICK_FILES.contains(&e.key().as_str()))
        .map(|e| check_file(&setup.corpus, e, setup.opt.as_ref(), setup.mode))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stubs_are_declared_non_intrinsics() {
        let src = "declare void @foo(i32)\ndeclare i32 @llvm.smax.i32(i32, i32)\n  declare hidden void @\"q x\"()\ndefine void @g() {\n";
        assert_eq!(
            declared_stubs(src),
            vec!["foo".to_string(), "q x".to_string()]
        );
    }
}
