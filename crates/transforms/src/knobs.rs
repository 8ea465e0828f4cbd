//! The knob registry: every tunable option of every pass, in one table.
//!
//! Names follow NVIDIA cicc's options (../shared/reference/cicc-standard-loop-passes.md),
//! which are LLVM's `cl::opt` names plus NVIDIA's own. Each knob has a type, a default
//! and a one-line description; it is set from the command line (`-C name=value`) or
//! through [`Knobs::set`]. Passes read typed accessors (`knobs.verify_loop_lcssa()`), so a
//! misspelt knob is a compile error inside Gyre and a clear error outside it.
//!
//! A knob is registered only once a pass reads it: every accessor records the read, and a
//! test runs every pass and fails if a registered knob was never read. The knobs of cicc's
//! passes that Gyre does not have yet are listed in [`PLANNED_KNOBS`]; setting one is an
//! error naming the missing pass, not a silent no-op.

use core::cell::Cell;
use core::fmt;

/// A knob's value type, for listing and parsing.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum KnobType {
    /// `true`/`false` (also `1`/`0`, `on`/`off`).
    Bool,
    /// An unsigned integer.
    UInt,
    /// One of a fixed set of words.
    Enum(&'static [&'static str]),
}

impl fmt::Display for KnobType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobType::Bool => f.write_str("bool"),
            KnobType::UInt => f.write_str("uint"),
            KnobType::Enum(words) => f.write_str(&words.join("|")),
        }
    }
}

/// A knob that could not be set.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum KnobError {
    /// No knob has this name.
    Unknown(String),
    /// The value does not parse as the knob's type.
    BadValue {
        /// The knob.
        name: &'static str,
        /// What was given.
        value: String,
        /// The knob's type.
        expected: KnobType,
    },
    /// `-C` needs `name=value`.
    Malformed(String),
    /// The knob belongs to a pass Gyre does not have yet.
    PassMissing {
        /// The knob.
        name: &'static str,
        /// The pass that will read it.
        pass: &'static str,
    },
}

impl fmt::Display for KnobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnobError::Unknown(n) => write!(
                f,
                "unknown knob '{n}' (`gyre knobs` lists them all){}",
                suggestion(n)
            ),
            KnobError::BadValue {
                name,
                value,
                expected,
            } => write!(
                f,
                "bad value '{value}' for knob '{name}': expected {expected}"
            ),
            KnobError::Malformed(s) => {
                write!(f, "malformed knob setting '{s}': expected name=value")
            }
            KnobError::PassMissing { name, pass } => write!(
                f,
                "knob '{name}' belongs to pass '{pass}', which Gyre does not have yet \
                 (`gyre knobs` lists the knobs of the passes it has)"
            ),
        }
    }
}

impl std::error::Error for KnobError {}

fn suggestion(name: &str) -> String {
    let close: Vec<&str> = KNOBS
        .iter()
        .map(|k| k.name)
        .filter(|k| k.contains(name) || name.contains(k))
        .collect();
    if close.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", close.join(", "))
    }
}

fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "true" | "1" | "on" | "yes" => Some(true),
        "false" | "0" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// Metadata of one knob.
#[derive(Copy, Clone, Debug)]
pub struct KnobInfo {
    /// The option name (`unswitch-uniform-only`).
    pub name: &'static str,
    /// The pass it belongs to (`simple-loop-unswitch`), or `*` for all.
    pub pass: &'static str,
    /// Its type.
    pub ty: KnobType,
    /// One line of documentation.
    pub doc: &'static str,
}

macro_rules! knobs {
    ($(
        $(#[$attr:meta])*
        $field:ident : $ty:tt = $default:expr, $name:literal, $pass:literal, $doc:literal;
    )*) => {
        /// Positions of the knobs in [`KNOBS`] (and bits of the read mask).
        #[allow(non_camel_case_types)]
        #[repr(u32)]
        enum Idx { $($field,)* }

        /// The value of every knob. `Knobs::default()` holds the documented defaults.
        ///
        /// Values are read through accessors named like the fields, which record that the
        /// knob was read ([`Knobs::read_knobs`]).
        #[derive(Clone, Debug)]
        pub struct Knobs {
            $($field: knobs!(@rust $ty),)*
            /// Bit `i` is set once `KNOBS[i]` has been read.
            reads: Cell<u64>,
        }

        impl Default for Knobs {
            fn default() -> Knobs {
                Knobs { $($field: $default,)* reads: Cell::new(0) }
            }
        }

        /// Equal values; which knobs were read does not matter.
        impl PartialEq for Knobs {
            fn eq(&self, o: &Knobs) -> bool {
                true $(&& self.$field == o.$field)*
            }
        }

        /// Every knob, in registry order.
        pub const KNOBS: &[KnobInfo] = &[
            $(KnobInfo {
                name: $name,
                pass: $pass,
                ty: knobs!(@ty $ty),
                doc: $doc,
            },)*
        ];

        impl Knobs {
            $(
                #[doc = $doc]
                #[doc = ""]
                #[doc = concat!("`-C ", $name, "`, read by `", $pass, "`.")]
                pub fn $field(&self) -> knobs!(@rust $ty) {
                    self.reads.set(self.reads.get() | 1 << Idx::$field as u32);
                    self.$field
                }
            )*

            /// Set a knob from its command-line spelling.
            pub fn set(&mut self, name: &str, value: &str) -> Result<(), KnobError> {
                match name {
                    $($name => {
                        self.$field = knobs!(@parse $ty, $name, value)?;
                        Ok(())
                    })*
                    _ => match PLANNED_KNOBS.iter().find(|(k, _)| *k == name) {
                        Some(&(name, pass)) => Err(KnobError::PassMissing { name, pass }),
                        None => Err(KnobError::Unknown(name.to_string())),
                    },
                }
            }

            /// The current value of a knob, as it would be written on the command line
            /// (not counted as a read).
            pub fn get(&self, name: &str) -> Option<String> {
                match name {
                    $($name => Some(knobs!(@show $ty, self.$field)),)*
                    _ => None,
                }
            }
        }
    };
    (@rust bool) => { bool };
    (@rust u32) => { u32 };
    (@rust ExitValues) => { ExitValues };
    (@ty bool) => { KnobType::Bool };
    (@ty u32) => { KnobType::UInt };
    (@ty ExitValues) => { KnobType::Enum(ExitValues::WORDS) };
    (@parse ExitValues, $name:literal, $v:expr) => {
        ExitValues::parse($v).ok_or_else(|| KnobError::BadValue {
            name: $name, value: $v.to_string(), expected: KnobType::Enum(ExitValues::WORDS),
        })
    };
    (@show ExitValues, $v:expr) => { $v.word().to_string() };
    (@parse bool, $name:literal, $v:expr) => {
        parse_bool($v).ok_or_else(|| KnobError::BadValue {
            name: $name, value: $v.to_string(), expected: KnobType::Bool,
        })
    };
    (@parse u32, $name:literal, $v:expr) => {
        $v.parse::<u32>().map_err(|_| KnobError::BadValue {
            name: $name, value: $v.to_string(), expected: KnobType::UInt,
        })
    };
    (@show bool, $v:expr) => { $v.to_string() };
    (@show u32, $v:expr) => { $v.to_string() };
}

/// `replexitval`: which exit values `indvars` replaces by their closed forms (LLVM's
/// `ReplaceExitVal`, cicc's `{never=0, cheap=1, always=2}`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ExitValues {
    /// Never rewrite exit values.
    Never,
    /// Only when the closed form is cheap to compute, or the loop becomes deletable.
    Cheap,
    /// Whenever a closed form is known.
    Always,
}

impl ExitValues {
    /// The accepted spellings, in order.
    pub const WORDS: &'static [&'static str] = &["never", "cheap", "always"];
    /// Parse a spelling (also cicc's numbers 0, 1, 2).
    pub fn parse(s: &str) -> Option<ExitValues> {
        match s {
            "never" | "0" => Some(ExitValues::Never),
            "cheap" | "1" => Some(ExitValues::Cheap),
            "always" | "2" => Some(ExitValues::Always),
            _ => None,
        }
    }
    /// The spelling.
    pub fn word(self) -> &'static str {
        Self::WORDS[self as usize]
    }
}

knobs! {
    verify_loop_lcssa: bool = false, "verify-loop-lcssa", "lcssa",
        "Check LCSSA form of every loop after the lcssa pass and fail if it does not hold (--verify-each always checks it).";
    rotation_max_header_size: u32 = 16, "rotation-max-header-size", "loop-rotate",
        "The most header instructions loop-rotate duplicates (terminator, parameters and constants not counted).";
    enable_loop_header_duplication: bool = true, "enable-loop-header-duplication", "loop-rotate",
        "Default of loop-rotate's <header-duplication> parameter; false rotates only headers with nothing to duplicate.";
    iv_loop_level: u32 = 1, "iv-loop-level", "indvars",
        "cicc: indvars processes only loops at nesting depth <= this (1: outermost loops only).";
    disable_unknown_trip_iv: bool = false, "Disable-unknown-trip-iv", "indvars",
        "cicc: indvars skips loops whose trip count is not computable (or is a constant <= 1).";
    replexitval: ExitValues = ExitValues::Cheap, "replexitval", "indvars",
        "Replace values used after a loop by their closed forms: never, cheap (cost <= 4 or the loop becomes dead), always.";
    disable_lftr: bool = false, "disable-lftr", "indvars",
        "Disable linear-function test replacement (exit tests rewritten to `icmp ne/eq iv, limit`).";
    indvars_widen_indvars: bool = true, "indvars-widen-indvars", "indvars",
        "Widen a narrow induction variable that is sign- or zero-extended in the loop and provably does not wrap.";
    indvars_post_increment_ranges: bool = true, "indvars-post-increment-ranges", "indvars",
        "Fold comparisons of post-increment values (iv.next) by their ranges too, not only of header parameters.";
    indvars_predicate_loops: bool = true, "indvars-predicate-loops", "indvars",
        "In loops without side effects and with every exit count known, test each exit against the loop's count (loop-invariant exits).";
    verify_indvars: bool = false, "verify-indvars", "indvars",
        "After indvars changes a loop, recompute its scalar evolution and fail if its trip count grew (it may shrink: exit predication).";
    enable_simple_loop_unswitch: bool = true, "enable-simple-loop-unswitch", "simple-loop-unswitch",
        "Run simple-loop-unswitch at all; false leaves every loop alone.";
    enable_nontrivial_unswitch: bool = false, "enable-nontrivial-unswitch", "simple-loop-unswitch",
        "Unswitch non-trivially (clone the loop) whatever the pass's <nontrivial> parameter says.";
    unswitch_uniform_only: bool = true, "unswitch-uniform-only", "simple-loop-unswitch",
        "Unswitch non-trivially only conditions the uniformity analysis proves warp-uniform (remark DivergentCondition otherwise).";
    unswitch_threshold: u32 = 50, "unswitch-threshold", "simple-loop-unswitch",
        "Non-trivial unswitching is rejected when its cost (duplicated instructions x multiplier) reaches this.";
    enable_unswitch_cost_multiplier: bool = true, "enable-unswitch-cost-multiplier", "simple-loop-unswitch",
        "Scale the cost by a multiplier that grows with the candidates (clones) and the loop's siblings.";
    unswitch_num_initial_unscaled_candidates: u32 = 8, "unswitch-num-initial-unscaled-candidates", "simple-loop-unswitch",
        "Candidates (clones) not counted in the multiplier's power of two.";
    unswitch_siblings_toplevel_div: u32 = 2, "unswitch-siblings-toplevel-div", "simple-loop-unswitch",
        "Divisor of the sibling count of top-level loops in the multiplier (0 reads as 1).";
    freeze_loop_unswitch_cond: bool = true, "freeze-loop-unswitch-cond", "simple-loop-unswitch",
        "Freeze a non-trivially unswitched condition unless it cannot be poison or is branched on every iteration.";
    disable_loop_unswitching: bool = false, "disable-loop-unswitching", "simple-loop-unswitch",
        "Turn simple-loop-unswitch off.";
    simplify_rewrite_depth: u32 = 4, "simplify-rewrite-depth", "simplify",
        "How deep simplify rewrites the nodes its rules create (0: no rewriting, only value numbering and code motion).";
    simplify_eclass_size: u32 = 8, "simplify-eclass-size", "simplify",
        "The most e-nodes in one e-class of simplify; a class that big gets no more rewrites.";
    simplify_licm: bool = true, "simplify-licm", "simplify",
        "Whether simplify hoists loop-invariant pure operations to loop preheaders.";
    disable_loop_deletion_pass: bool = false, "disable-LoopDeletionPass", "loop-deletion",
        "Turn loop-deletion off (cicc's switch).";
    loop_deletion_enable_symbolic_execution: bool = true, "loop-deletion-enable-symbolic-execution", "loop-deletion",
        "Evaluate a loop's first iteration with the preheader's constants to prove its backedge is never taken.";
    enable_loop_simplifycfg_term_folding: bool = true, "enable-loop-simplifycfg-term-folding", "loop-simplifycfg",
        "Let loop-simplifycfg fold branches on constants inside loops (and remove what they made unreachable).";
    // --- loop-unroll (issue 23) ---
    disable_loop_unrolling: bool = false, "disable-loop-unrolling", "loop-unroll",
        "Turn loop-unroll off (LLVM's pipeline option).";
    unroll_threshold: u32 = 150, "unroll-threshold", "loop-unroll",
        "Fully unroll a loop only if its unrolled size ((size - 2) * trip count + 2) is under this (LLVM's -O2 default).";
    unroll_full_max_count: u32 = u32::MAX, "unroll-full-max-count", "loop-unroll",
        "Fully unroll only loops with at most this many iterations.";
    unroll_count: u32 = 0, "unroll-count", "loop-unroll",
        "Unroll factor (0: not set); below a loop's trip count, partial unrolling by it if it divides the trip count.";
    unroll_allow_partial: bool = false, "unroll-allow-partial", "loop-unroll",
        "Partially unroll (by a factor dividing the constant trip count) loops too large to unroll fully.";
    unroll_partial_threshold: u32 = 37, "unroll-partial-threshold", "loop-unroll",
        "Size limit of a partially unrolled loop body ((size - 2) * factor + 2); 37 is NVPTX's threshold / 4.";
    unroll_max_count: u32 = u32::MAX, "unroll-max-count", "loop-unroll",
        "The largest partial unrolling factor chosen by the size heuristic.";
    disable_licm_pass: bool = false, "disable-LICMPass", "licm",
        "Turn licm off (cicc's switch).";
    // --- inline (issue 23) ---
    inline_threshold: u32 = 225, "inline-threshold", "inline",
        "Inline a call when the callee's cost (5 per instruction, less 5 per argument and for the call) is at most this (LLVM's default).";
    inlinehint_threshold: u32 = 325, "inlinehint-threshold", "inline",
        "The threshold for callees marked inlinehint (LLVM's default; clang marks C++ inline functions and templates).";
    disable_inlining: bool = false, "disable-inlining", "inline",
        "Turn the inliner off (LLVM's switch): not even alwaysinline callees are inlined.";
    inline_threshold_multiplier: u32 = 5, "inline-threshold-multiplier", "inline",
        "The target's factor on both inline thresholds (5: NVPTX's TTI getInliningThresholdMultiplier, calls being expensive on GPUs).";
    // --- select-formation (issue 23) ---
    select_formation_threshold: u32 = 4, "select-formation-threshold", "select-formation",
        "The most speculated instructions plus selects select-formation spends to flatten one if-then(-else) (LLVM's two-entry-phi-node-folding-threshold).";
    // --- loop-unroll: runtime unrolling (issue 23) ---
    unroll_runtime: bool = true, "unroll-runtime", "loop-unroll",
        "Unroll innermost loops whose trip count is known only at run time, with an epilogue remainder loop (NVPTX's TTI sets UP.Runtime).";
    unroll_runtime_convergent: bool = false, "unroll-runtime-convergent", "loop-unroll",
        "Allow runtime unrolling of loops with convergent operations (cicc's knob): the remainder loop puts them under a new condition.";
    // --- inline: simplified callees (issue 23) ---
    inline_simplify_callees: bool = true, "inline-simplify-callees", "inline",
        "Run sroa and simplify on each device function once its own calls are done, before it is costed and copied (LLVM's CGSCC pipeline simplifies callees before their callers).";
    // --- loop-reduce (issue 23) ---
    disable_lsr: bool = false, "disable-lsr", "loop-reduce",
        "Turn loop-reduce off (llc's -disable-lsr): gyre compile -O then emits the -O pipeline's addresses as they are.";
    lsr_max_ivs: u32 = 4, "lsr-max-ivs", "loop-reduce",
        "The most pointer IVs loop-reduce gives one loop (each is a 64-bit register live through the loop).";
    // --- separate-const-offset (issue 23) ---
    disable_separate_const_offset: bool = false, "disable-separate-const-offset", "separate-const-offset",
        "Turn separate-const-offset off: accesses whose indices differ by a constant then each compute their own address.";
    // --- simplifycfg (issue 23) ---
    simplifycfg_keep_loops: bool = true, "simplifycfg-keep-loops", "simplifycfg",
        "Keep empty blocks that jump to a loop header (preheaders, latches) or exit a loop in simplifycfg (LLVM's NeedCanonicalLoops).";
}

impl Knobs {
    /// The names of the knobs read since this value was created (or cloned from one
    /// that had been read).
    pub fn read_knobs(&self) -> Vec<&'static str> {
        let r = self.reads.get();
        KNOBS
            .iter()
            .enumerate()
            .filter(|(i, _)| r & (1 << i) != 0)
            .map(|(_, k)| k.name)
            .collect()
    }
}

/// Knobs of cicc's loop passes that Gyre does not have yet, with the pass that will read
/// each (../shared/reference/cicc-standard-loop-passes.md). They are registered in
/// [`KNOBS`] by the issue that brings the pass; until then `-C` with one of them is a
/// [`KnobError::PassMissing`].
pub const PLANNED_KNOBS: &[(&str, &str)] = &[];

/// Parse a `-C name=value` setting and apply it.
pub fn apply_setting(knobs: &mut Knobs, setting: &str) -> Result<(), KnobError> {
    let (name, value) = setting
        .split_once('=')
        .ok_or_else(|| KnobError::Malformed(setting.to_string()))?;
    knobs.set(name.trim(), value.trim())
}

/// The knob table as text, one knob per line: name, type, default, pass, description.
pub fn list_knobs() -> String {
    let defaults = Knobs::default();
    let mut out = String::new();
    for k in KNOBS {
        let value = defaults
            .get(k.name)
            .expect("every registered knob has a value");
        out.push_str(&format!(
            "{:<42} {:<18} default {:<6} [{}] {}\n",
            k.name,
            k.ty.to_string(),
            value,
            k.pass,
            k.doc
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_knob_round_trips_its_default() {
        let mut k = Knobs::default();
        for info in KNOBS {
            let v = k.get(info.name).unwrap();
            k.set(info.name, &v).unwrap();
        }
        assert_eq!(k, Knobs::default());
        assert_eq!(KNOBS.len(), list_knobs().lines().count());
        assert!(k.read_knobs().is_empty(), "set and get are not reads");
    }

    #[test]
    fn setting_and_errors() {
        let mut k = Knobs::default();
        apply_setting(&mut k, "verify-loop-lcssa=true").unwrap();
        assert!(k.verify_loop_lcssa());
        assert_eq!(k.read_knobs(), vec!["verify-loop-lcssa"]);
        assert!(matches!(
            apply_setting(&mut k, "verify-loop-lcssa=maybe"),
            Err(KnobError::BadValue { .. })
        ));
        let e = apply_setting(&mut k, "loop-lcssa=1").unwrap_err();
        assert!(
            e.to_string().contains("did you mean verify-loop-lcssa"),
            "{e}"
        );
        assert!(matches!(
            apply_setting(&mut k, "novalue"),
            Err(KnobError::Malformed(_))
        ));
        // An enum knob: its words (and cicc's numbers) and nothing else.
        apply_setting(&mut k, "replexitval=never").unwrap();
        assert_eq!(k.replexitval(), ExitValues::Never);
        apply_setting(&mut k, "replexitval=2").unwrap();
        assert_eq!(k.get("replexitval").as_deref(), Some("always"));
        let e = apply_setting(&mut k, "replexitval=sometimes").unwrap_err();
        assert!(e.to_string().contains("expected never|cheap|always"), "{e}");
    }

    #[test]
    fn planned_knobs_are_not_registered_and_name_a_missing_pass() {
        for (name, pass) in PLANNED_KNOBS {
            assert!(KNOBS.iter().all(|k| k.name != *name), "{name} is live");
            assert!(
                crate::registry::lookup(pass).is_none(),
                "{pass} exists: register {name} with it"
            );
        }
    }
}
