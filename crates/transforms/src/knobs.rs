//! The knob registry: every tunable option of every pass, in one table.
//!
//! Names follow NVIDIA cicc's options (../shared/reference/cicc-standard-loop-passes.md),
//! which are LLVM's `cl::opt` names plus NVIDIA's own. Each knob has a type, a default
//! and a one-line description; it is set from the command line (`-C name=value`) or
//! through [`Knobs::set`]. Passes read typed fields (`knobs.unswitch_uniform_only`), so a
//! misspelt knob is a compile error inside Gyre and a clear error outside it.

use core::fmt;

/// How `indvars` replaces loop exit values with closed forms (`replexitval`).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ReplaceExitVal {
    /// Never rewrite exit values.
    Never,
    /// Rewrite when the closed form is cheap to expand.
    Cheap,
    /// Always rewrite.
    Always,
}

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
        /// The value of every knob. `Knobs::default()` holds the documented defaults.
        #[derive(Clone, PartialEq, Debug)]
        pub struct Knobs {
            $(
                #[doc = $doc]
                pub $field: knobs!(@rust $ty),
            )*
        }

        impl Default for Knobs {
            fn default() -> Knobs {
                Knobs { $($field: $default,)* }
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
            /// Set a knob from its command-line spelling.
            pub fn set(&mut self, name: &str, value: &str) -> Result<(), KnobError> {
                match name {
                    $($name => {
                        self.$field = knobs!(@parse $ty, $name, value)?;
                        Ok(())
                    })*
                    _ => Err(KnobError::Unknown(name.to_string())),
                }
            }

            /// The current value of a knob, as it would be written on the command line.
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
    (@rust ReplaceExitVal) => { ReplaceExitVal };
    (@ty bool) => { KnobType::Bool };
    (@ty u32) => { KnobType::UInt };
    (@ty ReplaceExitVal) => { KnobType::Enum(&["never", "cheap", "always"]) };
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
    (@parse ReplaceExitVal, $name:literal, $v:expr) => {
        match $v {
            "never" | "0" => Ok(ReplaceExitVal::Never),
            "cheap" | "1" => Ok(ReplaceExitVal::Cheap),
            "always" | "2" => Ok(ReplaceExitVal::Always),
            _ => Err(KnobError::BadValue {
                name: $name, value: $v.to_string(),
                expected: KnobType::Enum(&["never", "cheap", "always"]),
            }),
        }
    };
    (@show bool, $v:expr) => { $v.to_string() };
    (@show u32, $v:expr) => { $v.to_string() };
    (@show ReplaceExitVal, $v:expr) => {
        match $v {
            ReplaceExitVal::Never => "never",
            ReplaceExitVal::Cheap => "cheap",
            ReplaceExitVal::Always => "always",
        }.to_string()
    };
}

knobs! {
    verify_loop_lcssa: bool = false, "verify-loop-lcssa", "lcssa",
        "Check LCSSA form of every loop after the lcssa pass (always on under --verify-each).";
    enable_loop_header_duplication: bool = true, "enable-loop-header-duplication", "loop-rotate",
        "Let loop-rotate duplicate the header into the preheader (its default parameter).";
    rotation_max_header_size: u32 = 16, "rotation-max-header-size", "loop-rotate",
        "Largest header (in instructions) that loop-rotate duplicates.";
    iv_loop_level: u32 = 1, "iv-loop-level", "indvars",
        "Deepest loop nesting level indvars transforms (1: outermost loops only).";
    disable_unknown_trip_iv: bool = false, "Disable-unknown-trip-iv", "indvars",
        "Skip indvars on loops whose trip count is unknown.";
    disable_lftr: bool = false, "disable-lftr", "indvars",
        "Disable linear function test replacement of the exit test.";
    replexitval: ReplaceExitVal = ReplaceExitVal::Cheap, "replexitval", "indvars",
        "Replace loop exit values with closed forms: never, cheap (when cheap to expand) or always.";
    indvars_post_increment_ranges: bool = true, "indvars-post-increment-ranges", "indvars",
        "Use post-increment ranges of induction variables when simplifying comparisons.";
    indvars_predicate_loops: bool = true, "indvars-predicate-loops", "indvars",
        "Predicate loop exits on their trip counts where possible.";
    indvars_widen_indvars: bool = true, "indvars-widen-indvars", "indvars",
        "Widen narrow induction variables that are sign- or zero-extended in the loop.";
    verify_indvars: bool = false, "verify-indvars", "indvars",
        "Check indvars' scalar-evolution results after it runs.";
    enable_simple_loop_unswitch: bool = true, "enable-simple-loop-unswitch", "simple-loop-unswitch",
        "Master switch for simple-loop-unswitch.";
    enable_nontrivial_unswitch: bool = false, "enable-nontrivial-unswitch", "simple-loop-unswitch",
        "Allow non-trivial (loop-cloning) unswitching even without the `<nontrivial>` parameter.";
    unswitch_uniform_only: bool = true, "unswitch-uniform-only", "simple-loop-unswitch",
        "Only unswitch conditions the uniformity analysis proves warp-uniform.";
    unswitch_threshold: u32 = 50, "unswitch-threshold", "simple-loop-unswitch",
        "Largest loop cost (in instructions) that non-trivial unswitching clones.";
    enable_unswitch_cost_multiplier: bool = true, "enable-unswitch-cost-multiplier", "simple-loop-unswitch",
        "Scale the unswitch cost by the number of clones already made, preventing exponential growth.";
    unswitch_num_initial_unscaled_candidates: u32 = 8, "unswitch-num-initial-unscaled-candidates", "simple-loop-unswitch",
        "Number of unswitch candidates ignored when computing the cost multiplier.";
    unswitch_siblings_toplevel_div: u32 = 2, "unswitch-siblings-toplevel-div", "simple-loop-unswitch",
        "Divisor of the cost multiplier for sibling loops at the top level.";
    freeze_loop_unswitch_cond: bool = true, "freeze-loop-unswitch-cond", "simple-loop-unswitch",
        "Freeze the unswitched condition so an undefined condition cannot miscompile.";
    disable_loop_unswitching: bool = false, "disable-loop-unswitching", "simple-loop-unswitch",
        "Disable loop unswitching entirely.";
    enable_loop_simplifycfg_term_folding: bool = true, "enable-loop-simplifycfg-term-folding", "loop-simplifycfg",
        "Let loop-simplifycfg fold terminators with constant conditions.";
    disable_loop_deletion_pass: bool = false, "disable-LoopDeletionPass", "loop-deletion",
        "Disable the loop-deletion pass.";
    loop_deletion_enable_symbolic_execution: bool = true, "loop-deletion-enable-symbolic-execution", "loop-deletion",
        "Let loop-deletion symbolically execute the first iteration to prove a loop dead.";
}

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
    }

    #[test]
    fn setting_and_errors() {
        let mut k = Knobs::default();
        apply_setting(&mut k, "unswitch-uniform-only=false").unwrap();
        assert!(!k.unswitch_uniform_only);
        apply_setting(&mut k, "replexitval=always").unwrap();
        assert_eq!(k.replexitval, ReplaceExitVal::Always);
        apply_setting(&mut k, "iv-loop-level=3").unwrap();
        assert_eq!(k.iv_loop_level, 3);
        assert!(matches!(
            apply_setting(&mut k, "iv-loop-level=-1"),
            Err(KnobError::BadValue { .. })
        ));
        assert!(matches!(
            apply_setting(&mut k, "replexitval=sometimes"),
            Err(KnobError::BadValue { .. })
        ));
        let e = apply_setting(&mut k, "unswitch-uniform=1").unwrap_err();
        assert!(
            e.to_string().contains("did you mean unswitch-uniform-only"),
            "{e}"
        );
        assert!(matches!(
            apply_setting(&mut k, "novalue"),
            Err(KnobError::Malformed(_))
        ));
    }
}
