//! The structural facts about a module's loops that the passes promise, computed with
//! Gyre's analyses, so that Gyre's output and `opt`'s (imported) output are judged by
//! the same code.

use gyre_analysis::{Cfg, DomTree, LoopInfo};
use gyre_ir::Module;
use gyre_transforms::Forms;

/// Loop facts of one function.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct FuncShape {
    /// Function name.
    pub name: String,
    /// Natural loops.
    pub loops: u32,
    /// Loops with no irreducible cycle inside (the ones passes transform).
    pub reducible: u32,
    /// Reducible loops in loop-simplify form.
    pub simplify: u32,
    /// Reducible loops in rotated form.
    pub rotated: u32,
    /// Loops in LCSSA form.
    pub lcssa: u32,
    /// The CFG could not be built (the message), so nothing else is known.
    pub error: Option<String>,
}

/// Loop facts of every function with a body, sorted by name.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Shape {
    /// One entry per function.
    pub funcs: Vec<FuncShape>,
}

impl FuncShape {
    /// Compute the facts of one function.
    pub fn of(func: &gyre_ir::Function) -> FuncShape {
        let mut s = FuncShape {
            name: func.name.clone(),
            ..FuncShape::default()
        };
        let cfg = match Cfg::with_function(func) {
            Ok(c) => c,
            Err(e) => {
                s.error = Some(e.to_string());
                return s;
            }
        };
        let dt = DomTree::with_function(func, &cfg);
        let li = LoopInfo::with_function(func, &cfg, &dt);
        for l in li.loops() {
            s.loops += 1;
            if li.is_lcssa_form(l, func, &dt) {
                s.lcssa += 1;
            }
            if li.contains_irreducible(l) {
                continue;
            }
            s.reducible += 1;
            s.simplify += u32::from(li.is_loop_simplify_form(l, &cfg));
            s.rotated += u32::from(li.is_rotated_form(l, &cfg));
        }
        s
    }

    /// Why `forms` does not hold, if it does not.
    fn violation(&self, forms: Forms) -> Option<String> {
        let n = &self.name;
        if let Some(e) = &self.error {
            return Some(format!("@{n}: {e}"));
        }
        if forms.loop_simplify && self.simplify != self.reducible {
            return Some(format!(
                "@{n}: {} of {} loops not in simplify form",
                self.reducible - self.simplify,
                self.reducible
            ));
        }
        if forms.lcssa && self.lcssa != self.loops {
            return Some(format!(
                "@{n}: {} of {} loops not in LCSSA form",
                self.loops - self.lcssa,
                self.loops
            ));
        }
        if forms.rotated && self.rotated != self.reducible {
            return Some(format!(
                "@{n}: {} of {} loops not rotated",
                self.reducible - self.rotated,
                self.reducible
            ));
        }
        None
    }

    /// The facts `forms` selects, as text (loop count always included).
    fn describe(&self, forms: Forms) -> String {
        let mut s = format!("{} loops", self.loops);
        if self.reducible != self.loops {
            s.push_str(&format!(" ({} reducible)", self.reducible));
        }
        if forms.loop_simplify {
            s.push_str(&format!(", {} simplified", self.simplify));
        }
        if forms.lcssa {
            s.push_str(&format!(", {} LCSSA", self.lcssa));
        }
        if forms.rotated {
            s.push_str(&format!(", {} rotated", self.rotated));
        }
        s
    }

    /// Do the facts `forms` selects agree?
    fn same(&self, other: &FuncShape, forms: Forms) -> bool {
        self.error.is_none()
            && other.error.is_none()
            && self.loops == other.loops
            && self.reducible == other.reducible
            && (!forms.loop_simplify || self.simplify == other.simplify)
            && (!forms.lcssa || self.lcssa == other.lcssa)
            && (!forms.rotated || self.rotated == other.rotated)
    }
}

impl Shape {
    /// Compute the facts of every function of `m` with a body whose name is not in
    /// `skip` (the stubs standing for external declarations).
    pub fn of(m: &Module, skip: &[String]) -> Shape {
        let mut funcs: Vec<FuncShape> = m
            .functions
            .values()
            .filter(|f| f.layout.entry_block().is_some() && !skip.contains(&f.name))
            .map(FuncShape::of)
            .collect();
        funcs.sort_by(|a, b| a.name.cmp(&b.name));
        Shape { funcs }
    }

    /// Loops over all functions.
    pub fn loops(&self) -> u32 {
        self.funcs.iter().map(|f| f.loops).sum()
    }

    /// `Ok` if every function has the promised forms, else the first violation.
    pub fn holds(&self, forms: Forms) -> Result<(), String> {
        match self.funcs.iter().find_map(|f| f.violation(forms)) {
            Some(v) => Err(v),
            None => Ok(()),
        }
    }

    /// `Ok` if, function by function, the promised forms hold in both modules or fail
    /// in both (the pass's structural promise, judged the same way), else the first
    /// function where they differ.
    pub fn compare_property(&self, opt: &Shape, forms: Forms) -> Result<(), String> {
        for g in &self.funcs {
            let Some(o) = opt.funcs.iter().find(|o| o.name == g.name) else {
                return Err(format!("@{} missing from opt's output", g.name));
            };
            match (g.violation(forms), o.violation(forms)) {
                (None, Some(v)) => {
                    return Err(format!("holds in Gyre's output, not in opt's: {v}"))
                }
                (Some(v), None) => {
                    return Err(format!("holds in opt's output, not in Gyre's: {v}"))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Function by function, how many of `self`'s functions `opt`'s output has with the
    /// same facts (loop counts, and the counts `forms` selects), and of how many.
    pub fn count_same(&self, opt: &Shape, forms: Forms) -> (u32, u32) {
        let same = self
            .funcs
            .iter()
            .filter(|g| {
                opt.funcs
                    .iter()
                    .find(|o| o.name == g.name)
                    .is_some_and(|o| g.same(o, forms))
            })
            .count();
        (same as u32, self.funcs.len() as u32)
    }

    /// `Ok` if both modules have the same functions with the same facts (loop counts,
    /// and the counts `forms` selects), else the first difference. Stricter than
    /// [`Shape::compare_property`]: two outputs can both be in simplify form with a
    /// different number of loops.
    pub fn compare(&self, opt: &Shape, forms: Forms) -> Result<(), String> {
        for g in &self.funcs {
            let Some(o) = opt.funcs.iter().find(|o| o.name == g.name) else {
                return Err(format!("@{} missing from opt's output", g.name));
            };
            if !g.same(o, forms) {
                return Err(format!(
                    "@{}: Gyre {}; opt {}",
                    g.name,
                    g.describe(forms),
                    o.describe(forms)
                ));
            }
        }
        if let Some(o) = opt
            .funcs
            .iter()
            .find(|o| !self.funcs.iter().any(|g| g.name == o.name))
        {
            return Err(format!("@{} only in opt's output", o.name));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_LATCHES: &str = "
define void @f(i1 %c, i1 %d) {
entry:
  br label %h
h:
  br i1 %c, label %a, label %b
a:
  br i1 %d, label %h, label %exit
b:
  br label %h
exit:
  ret void
}
";

    fn shape(src: &str) -> Shape {
        let m = gyre_llvm::import_module(src).expect("test input imports");
        Shape::of(&m, &[])
    }

    #[test]
    fn two_latches_are_not_simplified() {
        let s = shape(TWO_LATCHES);
        let forms = Forms {
            loop_simplify: true,
            ..Forms::default()
        };
        assert_eq!(s.loops(), 1);
        let err = s.holds(forms).expect_err("two latches break simplify form");
        assert!(err.contains("1 of 1 loops not in simplify form"), "{err}");
        // LCSSA holds: no value leaves the loop.
        let lcssa = Forms {
            lcssa: true,
            ..Forms::default()
        };
        assert!(s.holds(lcssa).is_ok());
    }

    #[test]
    fn one_latch_with_two_back_edges_is_not_simplified() {
        // LLVM's `getLoopLatch` counts edges: `br i1 %d, label %h, label %h` is two.
        let s = shape(
            "
define void @f(i1 %c, i1 %d) {
entry:
  br label %h
h:
  br i1 %c, label %a, label %exit
a:
  br i1 %d, label %h, label %h
exit:
  ret void
}
",
        );
        let forms = Forms {
            loop_simplify: true,
            ..Forms::default()
        };
        let err = s
            .holds(forms)
            .expect_err("two back edges break simplify form");
        assert!(err.contains("1 of 1 loops not in simplify form"), "{err}");
    }

    #[test]
    fn compare_reports_the_differing_function() {
        let a = shape(TWO_LATCHES);
        let b = shape("define void @f(i1 %c, i1 %d) {\nentry:\n  ret void\n}\n");
        let err = a
            .compare(&b, Forms::default())
            .expect_err("loop counts differ");
        assert!(err.starts_with("@f: Gyre 1 loops"), "{err}");
        assert!(a.compare(&a.clone(), Forms::default()).is_ok());
        assert_eq!(a.count_same(&b, Forms::default()), (0, 1));
        assert_eq!(a.count_same(&a.clone(), Forms::default()), (1, 1));
        // Both "hold" trivially for no forms, though the loops differ.
        assert!(a.compare_property(&b, Forms::default()).is_ok());
        let simplify = Forms {
            loop_simplify: true,
            ..Forms::default()
        };
        let err = a
            .compare_property(&b, simplify)
            .expect_err("only b is simplified");
        assert!(err.starts_with("holds in opt's output"), "{err}");
    }
}
