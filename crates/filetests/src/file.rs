//! The header and directives of a filetest, and its precise-output section.

use crate::matcher::{Directive, DirectiveKind};

/// The kind of test, from `; test: KIND`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TestKind {
    /// Run a pass pipeline; the output is the printed module, then remarks and counters.
    Opt,
    /// The uniformity analysis' annotated printout of every function.
    Uniformity,
    /// Successors and predecessors of every block.
    PrintCfg,
    /// The dominator tree.
    PrintDomtree,
    /// The post-dominator tree.
    PrintPostdomtree,
    /// The loop forest.
    PrintLoops,
    /// Scalar evolution (`print<scalar-evolution>`).
    PrintScev,
    /// PTX from `gyre_codegen_lite`, also assembled by ptxas when it is found.
    Compile,
    /// The module as read (a `.ll` input: what the LLVM importer makes of it), printed
    /// in the text format.
    Import,
    /// The module exported as LLVM IR text (`gyre_llvm::export_module`), also checked by
    /// LLVM 14 `opt -passes=verify` when it is found.
    Export,
}

impl TestKind {
    /// Every kind.
    pub const ALL: [TestKind; 10] = [
        TestKind::Opt,
        TestKind::Uniformity,
        TestKind::PrintCfg,
        TestKind::PrintDomtree,
        TestKind::PrintPostdomtree,
        TestKind::PrintLoops,
        TestKind::PrintScev,
        TestKind::Compile,
        TestKind::Import,
        TestKind::Export,
    ];

    /// The name after `; test:`.
    pub fn name(self) -> &'static str {
        match self {
            TestKind::Opt => "opt",
            TestKind::Uniformity => "uniformity",
            TestKind::PrintCfg => "print-cfg",
            TestKind::PrintDomtree => "print-domtree",
            TestKind::PrintPostdomtree => "print-postdomtree",
            TestKind::PrintLoops => "print-loops",
            TestKind::PrintScev => "print-scev",
            TestKind::Compile => "compile",
            TestKind::Import => "import",
            TestKind::Export => "export",
        }
    }
}

/// An error in a filetest, at a line of it when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// The 1-based line, if the error has one.
    pub line: Option<usize>,
    /// What is wrong (may span several lines, e.g. with the output attached).
    pub message: String,
}

impl FileError {
    /// An error at `line`.
    pub fn at(line: usize, message: impl Into<String>) -> FileError {
        FileError {
            line: Some(line),
            message: message.into(),
        }
    }

    /// An error of the whole file.
    pub fn whole(message: impl Into<String>) -> FileError {
        FileError {
            line: None,
            message: message.into(),
        }
    }
}

/// A directive's value and its 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The text after the colon, trimmed.
    pub value: String,
    /// Its line.
    pub line: usize,
}

/// The expected output kept in the file after the `; output:` marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSection {
    /// The 0-based index of the marker line: bless replaces from here to the end.
    pub marker: usize,
    /// The expected lines, without their `; ` prefix.
    pub lines: Vec<String>,
}

/// Everything a filetest says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestFile {
    /// The kind.
    pub kind: TestKind,
    /// `; passes:` (opt, compile).
    pub passes: Option<Located>,
    /// `; knobs: a=1 b=2` (opt), each with its line.
    pub knobs: Vec<(String, String, usize)>,
    /// `; expect: unchanged` (opt): its line.
    pub unchanged: Option<usize>,
    /// `; input: unverified`: the input need not pass the verifier.
    pub unverified: bool,
    /// `; run: kernel=.. grid=.. block=.. args=..` lines (opt).
    pub runs: Vec<Located>,
    /// `; target: sm_XX` (compile).
    pub target: Option<Located>,
    /// `; codegen: fp-contract=on canonical-nans=false` (compile): back-end settings.
    pub codegen: Option<Located>,
    /// `; source: PATH`: the module is that file (from the workspace root), not this one.
    pub source: Option<Located>,
    /// `; precise-output`: the whole output must equal the output section.
    pub precise: bool,
    /// The check directives, in order.
    pub directives: Vec<Directive>,
    /// The `; output:` section, if the file has one.
    pub output: Option<OutputSection>,
}

/// The keyword that starts the precise-output section.
pub const OUTPUT_MARKER: &str = "; output:";

/// Parse the comment lines of a filetest. A line `; word: value` whose `word` is not a
/// known key is an error (prose comments start with `;;`), so a misspelt directive cannot
/// silently check nothing.
pub fn parse_test_file(src: &str) -> Result<TestFile, FileError> {
    let mut kind: Option<TestKind> = None;
    let mut t = TestFile {
        kind: TestKind::Opt,
        passes: None,
        knobs: Vec::new(),
        unchanged: None,
        unverified: false,
        runs: Vec::new(),
        target: None,
        codegen: None,
        source: None,
        precise: false,
        directives: Vec::new(),
        output: None,
    };
    let mut applies: Vec<(&'static str, usize, &'static [TestKind])> = Vec::new();
    for (i, raw) in src.lines().enumerate() {
        let line = i + 1;
        if let Some(out) = &mut t.output {
            let text = raw.trim_end();
            let Some(rest) = text.strip_prefix(';') else {
                return Err(FileError::at(
                    line,
                    "the output section runs to the end of the file: every line after \
                     '; output:' must be a ';' comment",
                ));
            };
            out.lines
                .push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            continue;
        }
        let Some(rest) = raw.trim_start().strip_prefix(';') else {
            continue;
        };
        if rest.starts_with(';') {
            continue; // prose
        }
        let rest = rest.trim();
        if rest == "precise-output" {
            t.precise = true;
            continue;
        }
        if rest == "output:" {
            t.output = Some(OutputSection {
                marker: i,
                lines: Vec::new(),
            });
            continue;
        }
        let Some((key, val)) = rest.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let is_word = !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !is_word {
            continue; // an ordinary comment with a colon in it
        }
        let val = val.trim().to_string();
        let located = Located {
            value: val.clone(),
            line,
        };
        const OPT: &[TestKind] = &[TestKind::Opt];
        const VERIFIED: &[TestKind] = &[
            TestKind::Opt,
            TestKind::Uniformity,
            TestKind::PrintCfg,
            TestKind::PrintDomtree,
            TestKind::PrintPostdomtree,
            TestKind::PrintLoops,
            TestKind::PrintScev,
            TestKind::Import,
            TestKind::Export,
        ];
        match key {
            "test" => {
                if kind.is_some() {
                    return Err(FileError::at(line, "a second '; test:' line"));
                }
                let k = TestKind::ALL
                    .into_iter()
                    .find(|k| k.name() == val)
                    .ok_or_else(|| {
                        let names: Vec<_> = TestKind::ALL.iter().map(|k| k.name()).collect();
                        FileError::at(
                            line,
                            format!("unknown test kind '{val}' (one of {})", names.join(", ")),
                        )
                    })?;
                kind = Some(k);
            }
            "passes" => {
                t.passes = Some(located);
                applies.push(("passes", line, &[TestKind::Opt, TestKind::Compile]));
            }
            "knobs" => {
                for kv in val.split_whitespace() {
                    let (k, v) = kv.split_once('=').ok_or_else(|| {
                        FileError::at(line, format!("knob '{kv}' is not name=value"))
                    })?;
                    t.knobs.push((k.to_string(), v.to_string(), line));
                }
                applies.push(("knobs", line, OPT));
            }
            "expect" => {
                if val != "unchanged" {
                    return Err(FileError::at(
                        line,
                        format!("unknown expectation '{val}' (only 'unchanged')"),
                    ));
                }
                t.unchanged = Some(line);
                applies.push(("expect", line, OPT));
            }
            "input" => {
                if val != "unverified" {
                    return Err(FileError::at(
                        line,
                        format!("unknown input mode '{val}' (only 'unverified')"),
                    ));
                }
                t.unverified = true;
                applies.push(("input", line, VERIFIED));
            }
            "run" => {
                t.runs.push(located);
                applies.push(("run", line, OPT));
            }
            "target" => {
                t.target = Some(located);
                applies.push(("target", line, &[TestKind::Compile]));
            }
            "codegen" => {
                t.codegen = Some(located);
                applies.push(("codegen", line, &[TestKind::Compile]));
            }
            "source" => t.source = Some(located),
            _ => match DirectiveKind::from_keyword(key) {
                Some(kind) => t.directives.push(Directive {
                    kind,
                    text: val,
                    line,
                }),
                None => {
                    return Err(FileError::at(
                        line,
                        format!("unknown directive '{key}:' (prose comments start with ';;')"),
                    ))
                }
            },
        }
    }
    t.kind = kind.ok_or_else(|| {
        FileError::at(
            1,
            "missing '; test: KIND' header (opt, uniformity, print-cfg, ...)",
        )
    })?;
    for (key, line, kinds) in applies {
        if !kinds.contains(&t.kind) {
            return Err(FileError::at(
                line,
                format!("'{key}:' does not apply to 'test: {}'", t.kind.name()),
            ));
        }
    }
    if t.kind == TestKind::Opt && t.passes.is_none() {
        return Err(FileError::at(1, "'test: opt' needs a '; passes:' line"));
    }
    if let Some(out) = &t.output {
        if !t.precise {
            return Err(FileError::at(
                out.marker + 1,
                "an output section without '; precise-output'",
            ));
        }
    }
    if t.directives.is_empty() && !t.precise && t.unchanged.is_none() {
        return Err(FileError::whole(
            "no check directives, no '; precise-output' and no '; expect: unchanged': \
             the test cannot fail",
        ));
    }
    Ok(t)
}

/// `src` with its output section (or, when it has none, nothing) replaced by `output`:
/// the file bless writes.
pub fn with_output(src: &str, section: Option<&OutputSection>, output: &str) -> String {
    let mut text: String = match section {
        Some(s) => src
            .lines()
            .take(s.marker)
            .map(|l| format!("{l}\n"))
            .collect(),
        None => {
            let mut s = src.to_string();
            if !s.is_empty() && !s.ends_with('\n') {
                s.push('\n');
            }
            s
        }
    };
    text.push_str(OUTPUT_MARKER);
    text.push('\n');
    for l in output.lines() {
        let l = l.trim_end();
        if l.is_empty() {
            text.push_str(";\n");
        } else {
            text.push_str("; ");
            text.push_str(l);
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(src: &str) -> FileError {
        parse_test_file(src).unwrap_err()
    }

    #[test]
    fn headers_and_options() {
        let t = parse_test_file(
            "; test: opt\n; passes: lcssa\n; knobs: a=1 b=x\n; run: kernel=k\n;; prose: ok\n\
             ; a comment: with a colon\n; check: x\n; nextln: y\n; sameln: z\n; not: w\n",
        )
        .unwrap();
        assert_eq!(t.kind, TestKind::Opt);
        assert_eq!(t.passes.unwrap().value, "lcssa");
        assert_eq!(t.knobs.len(), 2);
        assert_eq!(t.runs[0].line, 4);
        let kinds: Vec<_> = t.directives.iter().map(|d| d.kind).collect();
        use DirectiveKind::*;
        assert_eq!(kinds, [Check, Next, Same, Not]);
        assert_eq!(t.directives[0].line, 7);
    }

    #[test]
    fn errors_name_lines() {
        assert_eq!(err("; check: x\n").line, Some(1)); // no header
        assert_eq!(err("; test: frob\n").line, Some(1));
        assert_eq!(err("; test: uniformity\n; chekc: x\n").line, Some(2));
        assert_eq!(
            err("; test: uniformity\n; passes: lcssa\n; check: x\n").line,
            Some(2)
        );
        assert_eq!(err("; test: opt\n; check: x\n").line, Some(1)); // no passes
        assert_eq!(err("; test: compile\n; expect: unchanged\n").line, Some(2));
        assert_eq!(err("; test: opt\n; passes: x\n; knobs: a\n").line, Some(3));
        assert_eq!(
            err("; test: print-cfg\n; check: x\n; output:\n; a\n").line,
            Some(3)
        );
        assert_eq!(
            err("; test: print-cfg\n; precise-output\n; output:\n; a\nb\n").line,
            Some(5)
        );
        // A test that cannot fail.
        let e = err("; test: print-loops\n;; nothing\n");
        assert_eq!(e.line, None);
        assert!(e.message.contains("cannot fail"));
        assert!(parse_test_file("; test: opt\n; passes: x\n; expect: unchanged\n").is_ok());
    }

    #[test]
    fn output_section_and_bless_text() {
        let src = "; test: print-cfg\n; precise-output\nfunc @f() {\n}\n; output:\n; a\n;\n; b\n";
        let t = parse_test_file(src).unwrap();
        let out = t.output.clone().unwrap();
        assert_eq!(out.marker, 4);
        assert_eq!(out.lines, ["a", "", "b"]);
        // Directive-looking lines inside the section are output, not directives.
        let t2 = parse_test_file(&format!("{src}; check: q\n")).unwrap();
        assert!(t2.directives.is_empty());
        let blessed = with_output(src, t.output.as_ref(), "x\n\ny  \n");
        assert_eq!(
            blessed,
            "; test: print-cfg\n; precise-output\nfunc @f() {\n}\n; output:\n; x\n;\n; y\n"
        );
        assert_eq!(
            parse_test_file(&blessed).unwrap().output.unwrap().lines,
            ["x", "", "y"]
        );
        // No section yet: one is appended.
        assert_eq!(
            with_output("; test: x\n; precise-output", None, "z\n"),
            "; test: x\n; precise-output\n; output:\n; z\n"
        );
    }
}
