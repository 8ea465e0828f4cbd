//! `frem` (C `fmod`): PTX has no remainder instruction for floats, so a module that uses
//! `frem` gets a helper `.func` per float type, computing the exact result by binary long
//! division:
//!
//! - NaN if either operand is NaN, `x` is infinite or `y` is zero; `x` if `|x| < |y|`
//!   (which covers an infinite `y` and a zero `x`).
//! - Otherwise `t = |y| * 2^k`, the largest such with `t <= |x|` (doubling stops when
//!   `2t > r` or overflows to infinity); then `r = |x|` and, while `t >= |y|`:
//!   `if r >= t { r -= t }; t /= 2`. The invariant `r < 2t` makes every subtraction
//!   exact (Sterbenz: `t <= r < 2t`), and halving `t` down to `|y|` is exact, so the
//!   result `r` is exactly `|x| mod |y|`; it takes the sign of `x`.
//!
//! At most ~280 (f32) or ~2100 (f64) iterations of each loop.

/// The helper's PTX name for `f32` (`is64 == false`) or `f64`.
pub(crate) fn helper_name(is64: bool) -> &'static str {
    if is64 {
        "$$gyre_fmod_f64"
    } else {
        "$$gyre_fmod_f32"
    }
}

/// The helper's declaration line (without a trailing `;` or body).
pub(crate) fn helper_decl(is64: bool) -> String {
    let t = if is64 { "f64" } else { "f32" };
    format!(
        ".func (.param .{t} $$r) {}(.param .{t} $$x, .param .{t} $$y)",
        helper_name(is64)
    )
}

/// The helper's full definition.
pub(crate) fn helper_def(is64: bool) -> String {
    let (t, b, f, r, inf, zero, half, nan, sign) = if is64 {
        (
            "f64",
            "b64",
            "%fd",
            "%rd",
            "0d7FF0000000000000",
            "0d0000000000000000",
            "0d3FE0000000000000",
            "0d7FF8000000000000",
            "0x8000000000000000",
        )
    } else {
        (
            "f32",
            "b32",
            "%f",
            "%r",
            "0f7F800000",
            "0f00000000",
            "0f3F000000",
            "0f7FC00000",
            "0x80000000",
        )
    };
    let freg = if is64 { ".f64" } else { ".f32" };
    format!(
        "{decl}
{{
\t.reg .pred %p<6>;
\t.reg {freg} {f}<8>;
\t.reg .{b} {r}<4>;
\tld.param.{t} {f}1, [$$x];
\tld.param.{t} {f}2, [$$y];
\tabs.{t} {f}3, {f}1;
\tabs.{t} {f}4, {f}2;
\tsetp.nan.{t} %p1, {f}1, {f}2;
\tsetp.eq.{t} %p2, {f}3, {inf};
\tor.pred %p1, %p1, %p2;
\tsetp.eq.{t} %p2, {f}4, {zero};
\tor.pred %p1, %p1, %p2;
\t@%p1 bra $Lnan;
\tsetp.lt.{t} %p2, {f}3, {f}4;
\t@%p2 bra $Lsmall;
\tmov.{t} {f}5, {f}4;
$Lup:
\tadd.rn.{t} {f}6, {f}5, {f}5;
\tsetp.le.{t} %p3, {f}6, {f}3;
\t@!%p3 bra $Ldown;
\tmov.{t} {f}5, {f}6;
\tbra.uni $Lup;
$Ldown:
\tmov.{t} {f}7, {f}3;
$Lloop:
\tsetp.ge.{t} %p4, {f}7, {f}5;
\t@%p4 sub.rn.{t} {f}7, {f}7, {f}5;
\tsetp.eq.{t} %p5, {f}5, {f}4;
\t@%p5 bra $Ldone;
\tmul.rn.{t} {f}5, {f}5, {half};
\tbra.uni $Lloop;
$Ldone:
\tmov.{b} {r}1, {f}1;
\tand.{b} {r}1, {r}1, {sign};
\tmov.{b} {r}2, {f}7;
\tor.{b} {r}2, {r}2, {r}1;
\tmov.{b} {f}7, {r}2;
\tst.param.{t} [$$r], {f}7;
\tret;
$Lsmall:
\tst.param.{t} [$$r], {f}1;
\tret;
$Lnan:
\tmov.{t} {f}7, {nan};
\tst.param.{t} [$$r], {f}7;
\tret;
}}
",
        decl = helper_decl(is64)
    )
}
