//! Pipeline strings in LLVM's new-pass-manager syntax.
//!
//! ```text
//! pipeline := element (',' element)*
//! element  := name ('<' param (';' param)* '>')? ('(' pipeline ')')?
//! ```
//! For example `loop-simplify,lcssa,loop(loop-rotate,indvars,simple-loop-unswitch<nontrivial>)`.
//! `module(...)`, `function(...)` and `loop(...)` (also `loop-mssa(...)`) are adaptors that
//! nest a pipeline; `default<O2>` stands for [`DEFAULT_PIPELINE`] (as in `opt`) and
//! `print<domtree>` (also `cfg`, `postdomtree`, `loops`, `uniformity`) prints an analysis
//! of each function; every other name is a pass. Parsing is iterative (an explicit
//! stack), so a pathological nesting depth cannot overflow the stack.

use core::fmt;

/// Gyre's default GPU pipeline (`-O`, `-O1`..`-O3`, `default<O2>`): the inliner first (as
/// LLVM runs it before its function simplification and loop passes), scalar replacement of
/// the slots it leaves (`sroa`, as LLVM runs SROA right after inlining), then the loop passes
/// in the order cicc runs them (loop-simplifycfg first, non-trivial unswitching after indvars,
/// loop-deletion, then full unrolling last, as LLVM's `loop-full-unroll` ends its loop
/// pipeline), `sroa` again (LLVM's "delete small array after loop unroll": full unrolling
/// makes a private array's counter-indexed addresses constant), then the e-graph
/// simplifier, `simplifycfg` (folds the branches it made constant and merges straight-line
/// blocks, where LLVM runs SimplifyCFG after InstCombine), the simplifier again (on the
/// values the merges made constant, as LLVM runs InstCombine again), redundant load
/// elimination and store-to-load forwarding (`early-cse`, after `simplify` since it
/// matches addresses by value-numbered base), then select formation (cheap if-thens become
/// `select`s, as LLVM's SimplifyCFG does) and `simplifycfg` once more (the joins select
/// formation leaves with one predecessor merge, and branches the second simplifier made
/// constant fold), and last `sink` (instructions move down to the blocks of their uses, as
/// LLVM's InstCombine and Sink do: after the passes that hoist, so that index arithmetic
/// computed before a bounds guard runs only on the threads that pass it). Non-trivial unswitching is on, of
/// warp-uniform conditions only (`unswitch-uniform-only`); see docs/passes.md. `licm` is
/// not in it yet: see [`LICM_PIPELINE`].
pub const DEFAULT_PIPELINE: &str =
    "inline,sroa,loop-simplify,lcssa,loop(loop-simplifycfg,loop-rotate,\
     indvars,simple-loop-unswitch<nontrivial>,loop-deletion,loop-unroll),sroa,simplify,simplifycfg,\
     simplify,early-cse,select-formation,simplifycfg,sink";

/// `-O` with `licm` before and after `loop-rotate`, where LLVM 14 runs it
/// (`loop-mssa(licm,loop-rotate,licm,..)`). Not the default yet: the guards of rotated inner
/// loops it hoists are invariant branches that non-trivial unswitching then clones at every
/// level of a deep nest, which is quadratic (docs/passes.md, "licm").
pub const LICM_PIPELINE: &str =
    "inline,sroa,loop-simplify,lcssa,loop(loop-simplifycfg,licm,loop-rotate,licm,\
     indvars,simple-loop-unswitch<nontrivial>,loop-deletion,loop-unroll),sroa,simplify,simplifycfg,\
     simplify,early-cse,select-formation,simplifycfg,sink";

/// What `gyre compile -O` (and `cargo xtask corpus`) run after [`DEFAULT_PIPELINE`],
/// before emission: accesses whose indices differ by a constant share one address
/// (`separate-const-offset`, NVPTX's `SeparateConstOffsetFromGEP`), then loop strength
/// reduction of addresses, which llc runs in its codegen pipeline rather than opt in its
/// -O pipeline. `-C disable-lsr=true` and `-C disable-separate-const-offset=true` turn
/// them off.
pub const CODEGEN_LOOP_PIPELINE: &str = "separate-const-offset,loop(loop-reduce)";

/// The analyses `print<...>` can print.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum PrintWhat {
    /// Successors and predecessors of every block.
    Cfg,
    /// The dominator tree.
    Domtree,
    /// The post-dominator tree.
    Postdomtree,
    /// The loop forest.
    Loops,
    /// Every value and branch annotated uniform or divergent.
    Uniformity,
}

impl PrintWhat {
    /// Every printable analysis with its pipeline name.
    pub const ALL: [(&'static str, PrintWhat); 5] = [
        ("cfg", PrintWhat::Cfg),
        ("domtree", PrintWhat::Domtree),
        ("postdomtree", PrintWhat::Postdomtree),
        ("loops", PrintWhat::Loops),
        ("uniformity", PrintWhat::Uniformity),
    ];

    /// The analysis named in `print<NAME>`.
    pub fn from_name(name: &str) -> Option<PrintWhat> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, w)| w)
    }
}

/// One element of a pipeline: a pass with its parameters, or an adaptor with a nested pipeline.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PipelineElement {
    /// Pass or adaptor name.
    pub name: String,
    /// Parameters given in `<...>`, split at `;`.
    pub params: Vec<String>,
    /// The nested pipeline of an adaptor (`loop(...)`); empty for a plain pass.
    pub nested: Vec<PipelineElement>,
    /// 1-based column of the name in the pipeline string, for error messages.
    pub col: usize,
}

/// Dropping is iterative: the derived drop glue would recurse once per nesting level and
/// overflow the stack on a pathologically deep pipeline.
impl Drop for PipelineElement {
    fn drop(&mut self) {
        let mut stack = core::mem::take(&mut self.nested);
        while let Some(mut e) = stack.pop() {
            stack.append(&mut e.nested);
        }
    }
}

/// A syntax error in a pipeline string.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PipelineError {
    /// 1-based column.
    pub col: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "pipeline:{}: {}", self.col, self.message)
    }
}

impl std::error::Error for PipelineError {}

fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.'
}

/// Parse a pipeline string into its elements.
pub fn parse_pipeline(text: &str) -> Result<Vec<PipelineElement>, PipelineError> {
    let bytes = text.as_bytes();
    let err = |i: usize, m: &str| PipelineError {
        col: i + 1,
        message: m.to_string(),
    };
    // Each stack entry is the list being filled plus the adaptor that owns it.
    let mut stack: Vec<(Vec<PipelineElement>, Option<PipelineElement>)> = vec![(Vec::new(), None)];
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < bytes.len() && bytes[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        let start = i;
        while i < bytes.len() && is_name_char(bytes[i]) {
            i += 1;
        }
        if start == i {
            return Err(err(
                i,
                if i >= bytes.len() {
                    "expected a pass name"
                } else {
                    "expected a pass name here"
                },
            ));
        }
        let mut elem = PipelineElement {
            name: text[start..i].to_string(),
            params: Vec::new(),
            nested: Vec::new(),
            col: start + 1,
        };
        skip_ws(&mut i);
        if i < bytes.len() && bytes[i] == b'<' {
            let open = i;
            let close = text[i..]
                .find('>')
                .map(|k| i + k)
                .ok_or_else(|| err(open, "unclosed '<'"))?;
            elem.params = text[open + 1..close]
                .split(';')
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            i = close + 1;
            skip_ws(&mut i);
        }
        if i < bytes.len() && bytes[i] == b'(' {
            i += 1;
            stack.push((Vec::new(), Some(elem)));
            continue;
        }
        stack.last_mut().expect("stack never empty").0.push(elem);
        // After an element: ',' continues the list, ')' closes an adaptor, end finishes.
        loop {
            skip_ws(&mut i);
            if i >= bytes.len() {
                if stack.len() > 1 {
                    let owner = stack.last().and_then(|s| s.1.as_ref()).map(|e| e.col);
                    return Err(err(owner.unwrap_or(1) - 1, "unclosed '('"));
                }
                return Ok(stack.pop().expect("stack never empty").0);
            }
            match bytes[i] {
                b',' => {
                    i += 1;
                    break;
                }
                b')' if stack.len() > 1 => {
                    i += 1;
                    let (list, owner) = stack.pop().expect("checked length");
                    let mut owner = owner.expect("nested lists have an owner");
                    if list.is_empty() {
                        return Err(err(i - 1, "empty nested pipeline"));
                    }
                    owner.nested = list;
                    stack.last_mut().expect("stack never empty").0.push(owner);
                }
                b')' => return Err(err(i, "unmatched ')'")),
                _ => return Err(err(i, "expected ',' or ')'")),
            }
        }
    }
}

impl fmt::Display for PipelineElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Iterative printing: a stack of (element, next child index).
        let mut stack: Vec<(&PipelineElement, usize)> = vec![(self, 0)];
        while let Some((e, k)) = stack.pop() {
            if k == 0 {
                f.write_str(&e.name)?;
                if !e.params.is_empty() {
                    write!(f, "<{}>", e.params.join(";"))?;
                }
                if e.nested.is_empty() {
                    continue;
                }
                f.write_str("(")?;
            } else if k < e.nested.len() {
                f.write_str(",")?;
            }
            if k < e.nested.len() {
                stack.push((e, k + 1));
                stack.push((&e.nested[k], 0));
            } else {
                f.write_str(")")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(s: &str) -> String {
        parse_pipeline(s)
            .unwrap()
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn parses_nested_pipelines() {
        let s = "loop-simplify,lcssa,loop(loop-rotate,indvars,simple-loop-unswitch<nontrivial>)";
        assert_eq!(round_trip(s), s);
        let p = parse_pipeline(s).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[2].nested[2].params, vec!["nontrivial".to_string()]);
        assert_eq!(p[2].nested[0].col, 26);
        assert_eq!(
            round_trip(" function( loop(a<x;y>) , b ) "),
            "function(loop(a<x;y>),b)"
        );
    }

    #[test]
    fn reports_errors_with_columns() {
        for (s, col, msg) in [
            ("", 1, "expected a pass name"),
            ("a,,b", 3, "expected a pass name here"),
            ("loop(a", 1, "unclosed '('"),
            ("a)", 2, "unmatched ')'"),
            ("a<x", 2, "unclosed '<'"),
            ("loop()", 6, "expected a pass name here"),
            ("a b", 3, "expected ',' or ')'"),
        ] {
            let e = parse_pipeline(s).unwrap_err();
            assert_eq!((e.col, e.message.as_str()), (col, msg), "{s:?}");
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let depth = 100_000;
        let s = format!("{}x{}", "loop(".repeat(depth), ")".repeat(depth));
        let p = parse_pipeline(&s).unwrap();
        assert_eq!(p.len(), 1);
    }
}
