//! One call to optimize a module at an optimization level, for front ends that want
//! what `gyre compile -O` does without assembling a [`PassManager`].

use crate::manager::{Options, PassError, PassManager, Report};
use crate::Knobs;
use gyre_ir::Module;

/// An optimization level, as `-O0`..`-O3` (and `default<O0>`..`default<O3>` in a
/// pipeline string) spell it.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum OptLevel {
    /// No optimization.
    O0,
    /// [`DEFAULT_PIPELINE`](crate::DEFAULT_PIPELINE).
    O1,
    /// [`DEFAULT_PIPELINE`](crate::DEFAULT_PIPELINE) (what `-O` means).
    #[default]
    O2,
    /// [`DEFAULT_PIPELINE`](crate::DEFAULT_PIPELINE).
    O3,
}

impl OptLevel {
    /// The pipeline string for this level (`default<O2>`), as `gyre opt -passes=` takes it.
    pub fn pipeline(self) -> &'static str {
        match self {
            OptLevel::O0 => "default<O0>",
            OptLevel::O1 => "default<O1>",
            OptLevel::O2 => "default<O2>",
            OptLevel::O3 => "default<O3>",
        }
    }

    /// The level of `-O<n>` (`None` above 3).
    pub fn from_number(n: u8) -> Option<OptLevel> {
        [OptLevel::O0, OptLevel::O1, OptLevel::O2, OptLevel::O3]
            .get(usize::from(n))
            .copied()
    }
}

/// Optimize `module` in place with the pipeline of `level`, default knobs and options.
/// The same as
/// `PassManager::from_pipeline(level.pipeline(), Knobs::default(), Options::default())`
/// then [`PassManager::run_module`]; build a [`PassManager`] for knobs, a custom
/// pipeline or `verify_each`.
pub fn optimize(module: &mut Module, level: OptLevel) -> Result<Report, PassError> {
    let mut pm = PassManager::from_pipeline(level.pipeline(), Knobs::default(), Options::default())
        .map_err(PassError)?;
    pm.run_module(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOP: &str = "
kernel @k(ptr.global, i32) {
block0(v0: ptr.global, v1: i32):
    v2 = iconst.i32 0
    jump block1(v2)
block1(v3: i32):
    v4 = icmp slt v3, v1
    brif v4, block2, block3
block2:
    v5 = ptradd v0, v3, 4
    store v3, v5
    v6 = iconst.i32 1
    v7 = iadd v3, v6
    jump block1(v7)
block3:
    return
}
";

    fn text(m: &Module) -> String {
        let mut s = String::new();
        gyre_ir::write_module(&mut s, m).unwrap();
        s
    }

    #[test]
    fn levels_run_their_pipelines() {
        let orig = gyre_ir::parse_module(LOOP).unwrap();
        let mut m = orig.clone();
        let report = optimize(&mut m, OptLevel::O0).unwrap();
        assert!(report.pass_times.is_empty() && report.loop_visits.is_empty());
        assert_eq!(text(&m), text(&orig));
        let mut expected = orig.clone();
        let mut pm = PassManager::from_pipeline(
            crate::DEFAULT_PIPELINE,
            Knobs::default(),
            Options::default(),
        )
        .unwrap();
        pm.run_module(&mut expected).unwrap();
        for level in [OptLevel::O1, OptLevel::O2, OptLevel::O3] {
            let mut m = orig.clone();
            let report = optimize(&mut m, level).unwrap();
            assert!(report
                .loop_visits
                .iter()
                .any(|(p, n)| *p == "loop-rotate" && *n > 0));
            assert_eq!(text(&m), text(&expected), "{level:?}");
            gyre_ir::verifier::verify_module(&m).unwrap();
        }
        // The pipeline rotated the loop: the module changed.
        assert_ne!(text(&expected), text(&orig));
        assert_eq!(OptLevel::from_number(3), Some(OptLevel::O3));
        assert_eq!(OptLevel::from_number(4), None);
        assert_eq!(OptLevel::default(), OptLevel::O2);
    }
}
