//! Generated-code quality: Gyre `-O` against `opt -O2` + `llc -O2 -mcpu=sm_70`.
//!
//! Two sources: the corpus harness's JSON (`cargo xtask corpus --quality-json FILE`: an
//! array of `{"kernel", "gyre": {"static", "dynamic", "regs", "spill_bytes"}, "llvm":
//! {...}}`, dynamic counts from ptx-sim, registers and spills from `ptxas -v`), and the
//! static instruction counts of the examples/ kernels and small generated kernels, which
//! the report compiles itself ([`static_count`]).

use serde_json::Value;
use std::fmt::Write as _;

/// One compiler's figures for one kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// PTX instructions in the text.
    pub static_insts: u64,
    /// PTX instructions executed under ptx-sim (None: not simulated).
    pub dynamic: Option<u64>,
    /// Registers per thread (`ptxas -v`).
    pub regs: Option<u64>,
    /// Spill bytes (stores + loads, `ptxas -v`).
    pub spill_bytes: Option<u64>,
}

/// One kernel, both compilers.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelQuality {
    /// The kernel's name (corpus file or example).
    pub kernel: String,
    /// Gyre `-O` (None: Gyre did not compile it; `null` in the JSON).
    pub gyre: Option<Figures>,
    /// `opt -O2` + `llc` (None: LLVM did not).
    pub llvm: Option<Figures>,
    /// Where Gyre's PTX executes more instructions: the opcode classes with the largest
    /// excess (`"excess"` in the JSON, e.g. `+4096 setp, +4096 selp`).
    pub excess: Option<String>,
    /// Why, from docs/quality-reasons.tsv (`"reason"` in the JSON), when it has a row.
    pub reason: Option<String>,
}

impl KernelQuality {
    /// Both compilers' figures, when both compiled the kernel.
    pub fn both(&self) -> Option<(&Figures, &Figures)> {
        self.gyre.as_ref().zip(self.llvm.as_ref())
    }
}

fn figures(v: &Value, what: &str) -> Result<Option<Figures>, String> {
    if v.is_null() {
        return Ok(None);
    }
    let obj = v
        .as_object()
        .ok_or_else(|| format!("`{what}` is not an object"))?;
    let num = |k: &str| obj.get(k).and_then(Value::as_u64);
    Ok(Some(Figures {
        static_insts: num("static").ok_or_else(|| format!("`{what}.static` is missing"))?,
        dynamic: num("dynamic"),
        regs: num("regs"),
        spill_bytes: num("spill_bytes"),
    }))
}

/// Parse the corpus harness's quality JSON.
pub fn parse_quality_json(text: &str) -> Result<Vec<KernelQuality>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("quality JSON: {e}"))?;
    let arr = v.as_array().ok_or("quality JSON: not an array")?;
    arr.iter()
        .enumerate()
        .map(|(i, k)| {
            let kernel = k
                .get("kernel")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("quality JSON: entry {i} has no `kernel`"))?
                .to_string();
            let g = k
                .get("gyre")
                .ok_or_else(|| format!("{kernel}: no `gyre`"))?;
            let l = k
                .get("llvm")
                .ok_or_else(|| format!("{kernel}: no `llvm`"))?;
            let text = |key: &str| k.get(key).and_then(Value::as_str).map(str::to_string);
            Ok(KernelQuality {
                gyre: figures(g, "gyre").map_err(|e| format!("{kernel}: {e}"))?,
                llvm: figures(l, "llvm").map_err(|e| format!("{kernel}: {e}"))?,
                excess: text("excess"),
                reason: text("reason"),
                kernel,
            })
        })
        .collect()
}

/// The `"note"` of each entry of a quality JSON that has one (why a figure is missing),
/// as `(kernel, note)`; the examples' JSON of `cargo xtask perf` writes them.
pub fn parse_notes(text: &str) -> Vec<(String, String)> {
    let Ok(Value::Array(arr)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    arr.iter()
        .filter_map(|k| {
            Some((
                k.get("kernel")?.as_str()?.to_string(),
                k.get("note")?.as_str()?.to_string(),
            ))
        })
        .collect()
}

/// The geometric mean of `ratios` (None when empty).
pub fn geomean(ratios: &[f64]) -> Option<f64> {
    if ratios.is_empty() {
        return None;
    }
    let s: f64 = ratios.iter().map(|r| r.ln()).sum();
    Some((s / ratios.len() as f64).exp())
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (a > 0 && b > 0).then(|| a as f64 / b as f64)
}

fn opt_cell(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

/// Gyre / LLVM ratios of static and dynamic instruction counts, one per kernel where
/// both are known and non-zero.
pub fn ratios(ks: &[KernelQuality]) -> (Vec<f64>, Vec<f64>) {
    let st = ks
        .iter()
        .filter_map(|k| {
            let (g, l) = k.both()?;
            ratio(g.static_insts, l.static_insts)
        })
        .collect();
    let dy = ks
        .iter()
        .filter_map(|k| {
            let (g, l) = k.both()?;
            ratio(g.dynamic?, l.dynamic?)
        })
        .collect();
    (st, dy)
}

/// Kernels where Gyre's code executes more instructions than LLVM's, worst first, with
/// the ratio.
pub fn worse_dynamic(ks: &[KernelQuality]) -> Vec<(&KernelQuality, u64, u64, f64)> {
    let mut v: Vec<_> = ks
        .iter()
        .filter_map(|k| {
            let (g, l) = k.both()?;
            let (g, l) = (g.dynamic?, l.dynamic?);
            (g > l).then(|| (k, g, l, g as f64 / l.max(1) as f64))
        })
        .collect();
    v.sort_by(|a, b| b.3.total_cmp(&a.3));
    v
}

/// The markdown table of `ks` with summary ratios and the kernels where Gyre executes
/// more instructions.
pub fn render(ks: &[KernelQuality]) -> String {
    let mut s = String::new();
    s.push_str("| kernel | Gyre static | LLVM static | ratio | Gyre dynamic | LLVM dynamic | ratio | Gyre regs | LLVM regs | Gyre spill B | LLVM spill B |\n");
    s.push_str("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for k in ks {
        let r = |a: Option<f64>| a.map_or("-".into(), |r| format!("{r:.2}"));
        let Some((g, l)) = k.both() else {
            let fails = |f: &Option<Figures>| {
                f.as_ref().map_or("does not compile".to_string(), |f| {
                    f.static_insts.to_string()
                })
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | - | - | - | - | - | - | - | - |",
                k.kernel,
                fails(&k.gyre),
                fails(&k.llvm)
            );
            continue;
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            k.kernel,
            g.static_insts,
            l.static_insts,
            r(ratio(g.static_insts, l.static_insts)),
            opt_cell(g.dynamic),
            opt_cell(l.dynamic),
            r(g.dynamic.zip(l.dynamic).and_then(|(a, b)| ratio(a, b))),
            opt_cell(g.regs),
            opt_cell(l.regs),
            opt_cell(g.spill_bytes),
            opt_cell(l.spill_bytes),
        );
    }
    let (st, dy) = ratios(ks);
    let above = st.iter().filter(|&&r| r > 1.25).count();
    let _ = writeln!(s);
    match geomean(&st) {
        Some(g) => {
            let _ = writeln!(
                s,
                "Static instructions, Gyre / LLVM: geometric mean **{g:.2}x** over {} kernels ({above} above 1.25x).",
                st.len()
            );
        }
        None => s.push_str("Static instructions: no kernel with both counts.\n"),
    }
    match geomean(&dy) {
        Some(g) => {
            let _ = writeln!(
                s,
                "\nDynamic instructions (ptx-sim), Gyre / LLVM: geometric mean **{g:.2}x** over {} kernels.",
                dy.len()
            );
        }
        None => s.push_str("\nDynamic instructions: none simulated for both.\n"),
    }
    let worse = worse_dynamic(ks);
    if !worse.is_empty() {
        let _ = writeln!(
            s,
            "\nKernels where Gyre's PTX executes more instructions than LLVM's ({}), each with \
             the opcode classes it executes most in excess of LLVM's (ptx-sim) and, where \
             docs/quality-reasons.tsv has one, the reason read from both PTX texts:\n",
            worse.len()
        );
        for (k, g, l, r) in worse {
            let _ = write!(s, "- `{}`: {g} vs {l} ({r:.2}x)", k.kernel);
            if let Some(x) = &k.excess {
                let _ = write!(s, "; extra: {x}");
            }
            if let Some(x) = &k.reason {
                let _ = write!(s, "; why: {}", x.replace('|', "\\|"));
            }
            s.push('\n');
        }
    }
    s
}

/// Instructions in PTX text: the lines of function bodies that end in `;` and start with
/// an opcode or a guard predicate (`@%p1 bra ...`), so directives (`.reg`, `.param`),
/// labels, braces and comments do not count.
pub fn static_count(ptx: &str) -> u64 {
    ptx.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
        .filter(|l| {
            l.ends_with(';')
                && l.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '@')
        })
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample of what `cargo xtask corpus --quality-json` writes (issue 23's format).
    pub const SAMPLE: &str = r#"[
      {"kernel": "vecadd.ll", "gyre": {"static": 20, "dynamic": 200, "regs": 8, "spill_bytes": 0},
                              "llvm": {"static": 10, "dynamic": 100, "regs": 6, "spill_bytes": 0},
                              "excess": "+60 setp, +40 bra", "reason": "NaN policy: setp.nan"},
      {"kernel": "reduce.ll", "gyre": {"static": 30, "dynamic": null, "regs": 12, "spill_bytes": 0},
                              "llvm": {"static": 40, "dynamic": null, "regs": 10, "spill_bytes": 8}},
      {"kernel": "scan.ll",   "gyre": {"static": 50, "dynamic": 400, "regs": 16, "spill_bytes": 0},
                              "llvm": {"static": 50, "dynamic": 500, "regs": 16, "spill_bytes": 0}},
      {"kernel": "wmma.ll",   "gyre": null,
                              "llvm": {"static": 111, "dynamic": null, "regs": 38, "spill_bytes": 0}}
    ]"#;

    #[test]
    fn parses_the_sample_and_renders_table_ratios_and_worse_list() {
        let ks = parse_quality_json(SAMPLE).expect("parses");
        assert_eq!(ks.len(), 4);
        assert_eq!(ks[1].gyre.as_ref().unwrap().dynamic, None);
        assert_eq!(ks[1].llvm.as_ref().unwrap().spill_bytes, Some(8));
        assert_eq!(ks[3].gyre, None);
        let (st, dy) = ratios(&ks);
        assert_eq!(st, [2.0, 0.75, 1.0]);
        assert_eq!(dy, [2.0, 0.8]);
        let g = geomean(&st).expect("non-empty");
        assert!((g - (2.0f64 * 0.75).cbrt()).abs() < 1e-12, "{g}");
        let worse = worse_dynamic(&ks);
        assert_eq!(worse.len(), 1);
        assert_eq!(
            (
                worse[0].0.kernel.as_str(),
                worse[0].1,
                worse[0].2,
                worse[0].3
            ),
            ("vecadd.ll", 200, 100, 2.0)
        );
        assert_eq!(worse[0].0.excess.as_deref(), Some("+60 setp, +40 bra"));
        assert_eq!(ks[2].excess, None);
        let md = render(&ks);
        assert!(
            md.contains("| vecadd.ll | 20 | 10 | 2.00 | 200 | 100 | 2.00 | 8 | 6 | 0 | 0 |"),
            "{md}"
        );
        assert!(
            md.contains("| reduce.ll | 30 | 40 | 0.75 | - | - | - |"),
            "{md}"
        );
        assert!(
            md.contains("- `vecadd.ll`: 200 vs 100 (2.00x); extra: +60 setp, +40 bra; why: NaN policy: setp.nan"),
            "{md}"
        );
        assert!(
            md.contains("geometric mean **1.14x** over 3 kernels (1 above 1.25x)"),
            "{md}"
        );
        assert!(md.contains("- `vecadd.ll`: 200 vs 100 (2.00x)"), "{md}");
        assert!(!md.contains("- `scan.ll`"), "{md}");
        assert!(
            md.contains("| wmma.ll | does not compile | 111 | - |"),
            "{md}"
        );
    }

    #[test]
    fn reads_notes() {
        let text = r#"[{"kernel": "a.gir", "gyre": null, "llvm": null, "note": "sim: no runs"},
                       {"kernel": "b.gir", "gyre": null, "llvm": null}]"#;
        assert_eq!(
            parse_notes(text),
            [("a.gir".to_string(), "sim: no runs".to_string())]
        );
        assert_eq!(parse_quality_json(text).expect("parses").len(), 2);
        assert!(parse_notes("nonsense").is_empty());
    }

    #[test]
    fn rejects_malformed_json() {
        assert!(parse_quality_json("{}").is_err());
        assert!(parse_quality_json("[{\"gyre\": {}}]").is_err());
        assert!(parse_quality_json("[{\"kernel\": \"k\", \"gyre\": {\"static\": 1}}]").is_err());
        assert!(parse_quality_json(
            "[{\"kernel\": \"k\", \"gyre\": {}, \"llvm\": {\"static\": 1}}]"
        )
        .is_err());
        assert!(parse_quality_json("not json").is_err());
        assert_eq!(geomean(&[]), None);
    }

    #[test]
    fn counts_instructions_not_directives_labels_or_comments() {
        let ptx = "\
.version 7.0
.target sm_70
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .b32 \t%r<4>;
\tld.param.u64 \t%rd1, [k_param_0]; // the buffer
$L__BB0_1:
\tsetp.lt.s32 \t%p1, %r1, 4;
\t@%p1 bra \t$L__BB0_1;
\t// st.global.u32 [%rd1], %r1;
\tret;
}
";
        assert_eq!(static_count(ptx), 4);
    }
}
