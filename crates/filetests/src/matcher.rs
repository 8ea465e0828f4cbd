//! The directives `check`, `nextln`, `sameln` and `not`, matched in order against the
//! lines of a test's output (substring matches, as in the transforms runner they replace).

/// What a directive asks of the output.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DirectiveKind {
    /// `check: TEXT`: a line at or after the one after the previous match contains TEXT.
    Check,
    /// `nextln: TEXT`: the line right after the previous match contains TEXT.
    Next,
    /// `sameln: TEXT`: the line of the previous match contains TEXT too.
    Same,
    /// `not: TEXT`: no line between the previous match and the next one (or the end)
    /// contains TEXT.
    Not,
}

impl DirectiveKind {
    /// The directive's keyword in a file.
    pub fn keyword(self) -> &'static str {
        match self {
            DirectiveKind::Check => "check",
            DirectiveKind::Next => "nextln",
            DirectiveKind::Same => "sameln",
            DirectiveKind::Not => "not",
        }
    }

    /// The kind for a keyword.
    pub fn from_keyword(k: &str) -> Option<DirectiveKind> {
        Some(match k {
            "check" => DirectiveKind::Check,
            "nextln" => DirectiveKind::Next,
            "sameln" => DirectiveKind::Same,
            "not" => DirectiveKind::Not,
            _ => return None,
        })
    }
}

/// One directive of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// What it asks.
    pub kind: DirectiveKind,
    /// The text to find (trimmed).
    pub text: String,
    /// Its 1-based line in the file.
    pub line: usize,
}

/// A directive that did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The directive's line in the file.
    pub line: usize,
    /// What went wrong, naming output lines 1-based.
    pub message: String,
}

/// Match `directives`, in order, against `output`; the first one that does not hold.
pub fn match_directives(output: &str, directives: &[Directive]) -> Result<(), Mismatch> {
    let lines: Vec<&str> = output.lines().collect();
    let mut cur = 0usize; // first line a `check` may match
    let mut last: Option<usize> = None; // line of the previous positive match
    let mut nots: Vec<&Directive> = Vec::new();
    let check_nots = |nots: &mut Vec<&Directive>, from: usize, to: usize| {
        for n in nots.drain(..) {
            if let Some(k) = (from..to).find(|&k| lines[k].contains(&n.text)) {
                return Err(Mismatch {
                    line: n.line,
                    message: format!(
                        "'not: {}' matched output line {}: {}",
                        n.text,
                        k + 1,
                        lines[k]
                    ),
                });
            }
        }
        Ok(())
    };
    for d in directives {
        let found = match d.kind {
            DirectiveKind::Not => {
                nots.push(d);
                continue;
            }
            DirectiveKind::Check => (cur..lines.len()).find(|&k| lines[k].contains(&d.text)),
            DirectiveKind::Next => last
                .map(|l| l + 1)
                .filter(|&k| k < lines.len() && lines[k].contains(&d.text)),
            DirectiveKind::Same => last.filter(|&k| lines[k].contains(&d.text)),
        };
        let Some(k) = found else {
            let at = last.map_or("the start".to_string(), |l| {
                format!("output line {}", l + 1)
            });
            return Err(Mismatch {
                line: d.line,
                message: format!("'{}: {}' not found after {at}", d.kind.keyword(), d.text),
            });
        };
        check_nots(&mut nots, cur, k)?;
        last = Some(k);
        cur = k + 1;
    }
    check_nots(&mut nots, cur, lines.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(kind: DirectiveKind, text: &str) -> Directive {
        Directive {
            kind,
            text: text.into(),
            line: 7,
        }
    }

    #[test]
    fn matcher_can_fail() {
        use DirectiveKind::*;
        let out = "a\nb\nc\n";
        assert!(match_directives(out, &[d(Check, "a"), d(Next, "b")]).is_ok());
        assert!(match_directives(out, &[d(Check, "a"), d(Next, "c")]).is_err());
        assert!(match_directives(out, &[d(Check, "b"), d(Check, "a")]).is_err());
        assert!(match_directives(out, &[d(Not, "b"), d(Check, "c")]).is_err());
        assert!(match_directives(out, &[d(Check, "b"), d(Not, "a")]).is_ok());
        assert!(match_directives(out, &[d(Check, "c"), d(Same, "c")]).is_ok());
        assert!(match_directives(out, &[d(Check, "c"), d(Same, "b")]).is_err());
        assert!(match_directives(out, &[d(Check, "c"), d(Next, "c")]).is_err());
        assert!(match_directives(out, &[d(Next, "a")]).is_err());
        assert!(match_directives(out, &[d(Check, "a"), d(Not, "c")]).is_err());
        let e = match_directives(out, &[d(Check, "zz")]).unwrap_err();
        assert_eq!(e.line, 7);
        assert_eq!(e.message, "'check: zz' not found after the start");
    }
}
