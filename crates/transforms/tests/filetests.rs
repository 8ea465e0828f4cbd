//! Filetests: every `crates/transforms/filetests/**/*.gir` is a module plus directives in
//! comments, run through a pass pipeline with `--verify-each` semantics.
//!
//! ```text
//! ; test: opt
//! ; passes: loop-simplify,lcssa           pipeline (required)
//! ; knobs: name=value name=value          optional knob settings
//! ; expect: unchanged                     every pass reports "no change, all analyses
//!                                          preserved" and the printed module is unchanged
//! ; input: unverified                     the input need not pass the verifier
//! ; run: kernel=k grid=2 block=8 args=5,-3
//!                                          run the kernel before and after (integer
//!                                          arguments); the original must succeed and the
//!                                          result's memory must match
//! ;; prose comment
//! <module>
//! ; check: text       the next line containing `text`
//! ; nextln: text      the line right after the previous match contains `text`
//! ; sameln: text      the line of the previous match contains `text`
//! ; not: text         no line between the previous and the next match contains `text`
//! ```
//!
//! Checks are matched, in order, against the printed module followed by one line per
//! remark (`; remark: PASS KIND BLOCK: message`) and per counter (`; stat: PASS NAME N`).
//! On a mismatch the whole output is shown.

use gyre_interp::{assert_same_behaviour, run_kernel, Arg, Inputs, Launch, Memory};
use gyre_ir::{parse_module, verifier::verify_function, write_module, Module};
use gyre_transforms::registry::{self, PassKind};
use gyre_transforms::{AnalysisCache, Knobs, Options, PassContext, PassManager, PassResult, Stats};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Check,
    Next,
    Same,
    Not,
}

struct Directive {
    kind: Kind,
    text: String,
    line: usize,
}

struct Test {
    passes: String,
    knobs: Vec<(String, String)>,
    unchanged: bool,
    unverified: bool,
    runs: Vec<String>,
    checks: Vec<Directive>,
}

fn parse_directives(src: &str) -> Result<Test, String> {
    let mut t = Test {
        passes: String::new(),
        knobs: Vec::new(),
        unchanged: false,
        unverified: false,
        runs: Vec::new(),
        checks: Vec::new(),
    };
    let mut saw_test = false;
    for (i, line) in src.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(';') else {
            continue;
        };
        if rest.starts_with(';') {
            continue; // prose
        }
        let rest = rest.trim();
        let Some((key, val)) = rest.split_once(':') else {
            continue;
        };
        let val = val.trim().to_string();
        let kind = match key.trim() {
            "test" => {
                if val != "opt" {
                    return Err(format!("line {}: unknown test kind '{val}'", i + 1));
                }
                saw_test = true;
                continue;
            }
            "passes" => {
                t.passes = val;
                continue;
            }
            "knobs" => {
                for kv in val.split_whitespace() {
                    let (k, v) = kv
                        .split_once('=')
                        .ok_or_else(|| format!("line {}: knob '{kv}' is not name=value", i + 1))?;
                    t.knobs.push((k.to_string(), v.to_string()));
                }
                continue;
            }
            "expect" => {
                if val != "unchanged" {
                    return Err(format!("line {}: unknown expectation '{val}'", i + 1));
                }
                t.unchanged = true;
                continue;
            }
            "input" => {
                t.unverified = val == "unverified";
                continue;
            }
            "run" => {
                t.runs.push(val);
                continue;
            }
            "check" => Kind::Check,
            "nextln" => Kind::Next,
            "sameln" => Kind::Same,
            "not" => Kind::Not,
            // Ordinary comments that happen to contain a colon.
            _ => continue,
        };
        t.checks.push(Directive {
            kind,
            text: val,
            line: i + 1,
        });
    }
    if !saw_test {
        return Err("missing '; test: opt' header".into());
    }
    if t.passes.is_empty() {
        return Err("missing '; passes:' line".into());
    }
    if t.checks.is_empty() && !t.unchanged {
        return Err(
            "no '; check:' lines and no '; expect: unchanged': the test cannot fail".into(),
        );
    }
    Ok(t)
}

/// Match the directives against `output`; a description of the first failure.
fn match_checks(output: &str, checks: &[Directive]) -> Result<(), String> {
    let lines: Vec<&str> = output.lines().collect();
    let mut cur = 0usize; // first line a `check` may match
    let mut last: Option<usize> = None; // line of the previous positive match
    let mut nots: Vec<&Directive> = Vec::new();
    let check_nots = |nots: &mut Vec<&Directive>, from: usize, to: usize| -> Result<(), String> {
        for n in nots.drain(..) {
            if let Some(k) = (from..to).find(|&k| lines[k].contains(&n.text)) {
                return Err(format!(
                    "line {}: 'not: {}' matched output line {}: {}",
                    n.line,
                    n.text,
                    k + 1,
                    lines[k]
                ));
            }
        }
        Ok(())
    };
    for d in checks {
        let found = match d.kind {
            Kind::Not => {
                nots.push(d);
                continue;
            }
            Kind::Check => (cur..lines.len()).find(|&k| lines[k].contains(&d.text)),
            Kind::Next => last
                .map(|l| l + 1)
                .filter(|&k| k < lines.len() && lines[k].contains(&d.text)),
            Kind::Same => last.filter(|&k| lines[k].contains(&d.text)),
        };
        let Some(k) = found else {
            let at = last.map_or("the start".to_string(), |l| {
                format!("output line {}", l + 1)
            });
            return Err(format!(
                "line {}: '{:?}: {}' not found after {at}",
                d.line, d.kind, d.text
            ));
        };
        check_nots(&mut nots, cur, k)?;
        last = Some(k);
        cur = k + 1;
    }
    check_nots(&mut nots, cur, lines.len())
}

fn print(m: &Module) -> String {
    let mut s = String::new();
    write_module(&mut s, m).expect("writing to a String");
    s
}

fn parse_run(spec: &str) -> Result<(String, Launch), String> {
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

/// Run each pass of a plain pipeline on every function of `m` directly, requiring
/// `PassResult::UNCHANGED`.
fn check_unchanged(passes: &str, knobs: &Knobs, m: &Module) -> Result<(), String> {
    for name in passes.split(',').map(str::trim) {
        let info = registry::lookup(name).ok_or_else(|| format!("unknown pass {name}"))?;
        if info.kind != PassKind::Function {
            continue;
        }
        let mut pass = (info.create_function.expect("function pass"))(&[])?;
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

fn run_one(path: &Path) -> Result<(), String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let t = parse_directives(&src)?;
    let before = parse_module(&src).map_err(|e| format!("parse error:\n{e}"))?;
    if !t.unverified {
        for f in before.functions.values() {
            verify_function(f, Some(&before))
                .map_err(|e| format!("input @{} does not verify:\n{e}", f.name))?;
        }
    }
    let mut knobs = Knobs::default();
    for (k, v) in &t.knobs {
        knobs.set(k, v).map_err(|e| e.to_string())?;
    }
    let options = Options {
        verify_each: true,
        ..Options::default()
    };
    let mut pm = PassManager::from_pipeline(&t.passes, knobs.clone(), options)?;
    let mut after = before.clone();
    let report = pm.run_module(&mut after).map_err(|e| e.to_string())?;
    let mut out = print(&after);
    for r in &report.remarks {
        let b = r.block.map_or("-".to_string(), |b| b.to_string());
        let _ = writeln!(out, "; remark: {} {} {b}: {}", r.pass, r.kind, r.message);
    }
    for (p, c, n) in report.stats.iter() {
        let _ = writeln!(out, "; stat: {p} {c} {n}");
    }
    let show = |m: String| format!("{m}\n--- output ---\n{out}--------------");
    match_checks(&out, &t.checks).map_err(show)?;
    if t.unchanged {
        if print(&before) != print(&after) {
            return Err(show("expected no change, but the module changed".into()));
        }
        check_unchanged(&t.passes, &knobs, &before).map_err(show)?;
    }
    for spec in &t.runs {
        let (kernel, launch) = parse_run(spec)?;
        let mut mem = Memory::new();
        run_kernel(&before, &kernel, &launch, &mut mem)
            .map_err(|e| format!("run '{spec}': the original fails: {e}"))?;
        let inputs = Inputs {
            launch,
            memory: Memory::new(),
        };
        assert_same_behaviour(&before, &after, &kernel, &inputs)
            .map_err(|d| show(format!("run '{spec}': behaviour differs: {d}")))?;
    }
    Ok(())
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "gir") {
                out.push(p);
            }
        }
    }
    out.sort();
}

#[test]
fn filetests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let mut files = Vec::new();
    collect(&root, &mut files);
    assert!(!files.is_empty(), "no filetests under {}", root.display());
    let mut failures = Vec::new();
    for f in &files {
        if let Err(e) = run_one(f) {
            failures.push(format!(
                "FAIL {}: {e}",
                f.strip_prefix(&root).unwrap_or(f).display()
            ));
        }
    }
    println!("{} filetests, {} failed", files.len(), failures.len());
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

#[test]
fn matcher_can_fail() {
    let out = "a\nb\nc\n";
    let d = |kind, text: &str| Directive {
        kind,
        text: text.into(),
        line: 0,
    };
    assert!(match_checks(out, &[d(Kind::Check, "a"), d(Kind::Next, "b")]).is_ok());
    assert!(match_checks(out, &[d(Kind::Check, "a"), d(Kind::Next, "c")]).is_err());
    assert!(match_checks(out, &[d(Kind::Check, "b"), d(Kind::Check, "a")]).is_err());
    assert!(match_checks(out, &[d(Kind::Not, "b"), d(Kind::Check, "c")]).is_err());
    assert!(match_checks(out, &[d(Kind::Check, "b"), d(Kind::Not, "a")]).is_ok());
    assert!(match_checks(out, &[d(Kind::Check, "c"), d(Kind::Same, "c")]).is_ok());
}
