//! `frem` (C `fmod`): PTX has no remainder instruction for floats, so a module that uses
//! `frem` gets a helper `.func` per float type, computing the exact result with integer
//! arithmetic:
//!
//! - NaN if either operand is NaN, `x` is infinite or `y` is zero; `x` if `|x| < |y|`
//!   (which covers an infinite `y` and a zero `x`).
//! - Otherwise both are finite with `|x| >= |y| > 0`. Each is an integer mantissa times a
//!   power of two, `|x| = mx * 2^(ex - B)` and `|y| = my * 2^(ey - B)` (`B` = bias +
//!   mantissa bits; a subnormal has no implicit bit and `e = 1`), and `ex >= ey`. With
//!   `d = ex - ey` the remainder is `(mx * 2^d mod my) * 2^(ey - B)`.
//! - `mx * 2^d mod my` is reduced in chunks in 64-bit integers: `r = mx mod my`, then
//!   while `d > 0`, `r = (r << k) mod my` with `k = min(d, clz(my))`, which cannot
//!   overflow because `r < my`. The trailing zeros of `my` are shifted out first (`s =
//!   min(ctz(my), d)`; `a * 2^d mod (m * 2^s) = 2^s * (a * 2^(d - s) mod m)`), so an `y`
//!   with a short mantissa (3.0, 0.1f) takes chunks of up to 62 bits. The per-bit long
//!   division this replaces took up to ~4200 steps for an f64 with a large exponent gap.
//! - `r < my` converts to a float exactly, and so does the product with `2^(ey - B)`
//!   (built from its bits: a normal or, for `ey <= mantissa bits`, a subnormal power of
//!   two), since the remainder is representable; the result takes the sign of `x`.
//!
//! At most ~190 (f64) or ~6 (f32) iterations of the chunk loop.

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
    // Mantissa bits, and how to move between the float registers and 64-bit integers.
    let (t, f, inf, zero, m, bits_x, bits_y, scale) = if is64 {
        (
            "f64",
            "%fd",
            "0d7FF0000000000000",
            "0d0000000000000000",
            52,
            "mov.b64 %rd1, %fd3;",
            "mov.b64 %rd2, %fd4;",
            "mov.b64 %fd6, %rd11;",
        )
    } else {
        (
            "f32",
            "%f",
            "0f7F800000",
            "0f00000000",
            23,
            "mov.b32 %r5, %f3;\n\tcvt.u64.u32 %rd1, %r5;",
            "mov.b32 %r5, %f4;\n\tcvt.u64.u32 %rd2, %r5;",
            "cvt.u32.u64 %r5, %rd11;\n\tmov.b32 %f6, %r5;",
        )
    };
    let nan = if is64 {
        "0d7FF8000000000000"
    } else {
        "0f7FC00000"
    };
    let mmask = (1u64 << m) - 1;
    let implicit = 1u64 << m;
    format!(
        "{decl}
{{
\t.reg .pred %p<4>;
\t.reg .{t} {f}<8>;
\t.reg .b32 %r<6>;
\t.reg .b64 %rd<14>;
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
\t{bits_x}
\t{bits_y}
\tshr.u64 %rd3, %rd1, {m};
\tshr.u64 %rd4, %rd2, {m};
\tand.b64 %rd5, %rd1, {mmask};
\tand.b64 %rd6, %rd2, {mmask};
\tsetp.ne.u64 %p2, %rd3, 0;
\t@%p2 or.b64 %rd5, %rd5, {implicit};
\tselp.u64 %rd3, %rd3, 1, %p2;
\tsetp.ne.u64 %p2, %rd4, 0;
\t@%p2 or.b64 %rd6, %rd6, {implicit};
\tselp.u64 %rd4, %rd4, 1, %p2;
\tsub.u64 %rd7, %rd3, %rd4;
\tbrev.b64 %rd8, %rd6;
\tclz.b64 %r1, %rd8;
\tcvt.u64.u32 %rd8, %r1;
\tmin.u64 %rd8, %rd8, %rd7;
\tcvt.u32.u64 %r1, %rd8;
\tshr.u64 %rd6, %rd6, %r1;
\tsub.u64 %rd7, %rd7, %rd8;
\trem.u64 %rd5, %rd5, %rd6;
\tclz.b64 %r2, %rd6;
\tcvt.u64.u32 %rd9, %r2;
$Lloop:
\tsetp.eq.u64 %p3, %rd7, 0;
\t@%p3 bra $Ldone;
\tmin.u64 %rd10, %rd7, %rd9;
\tcvt.u32.u64 %r3, %rd10;
\tshl.b64 %rd5, %rd5, %r3;
\trem.u64 %rd5, %rd5, %rd6;
\tsub.u64 %rd7, %rd7, %rd10;
\tbra.uni $Lloop;
$Ldone:
\tshl.b64 %rd5, %rd5, %r1;
\tcvt.rn.{t}.u64 {f}5, %rd5;
\tsetp.gt.u64 %p2, %rd4, {m};
\tsub.u64 %rd11, %rd4, {m};
\tshl.b64 %rd11, %rd11, {m};
\tsub.u64 %rd12, %rd4, 1;
\tcvt.u32.u64 %r4, %rd12;
\tmov.b64 %rd13, 1;
\tshl.b64 %rd13, %rd13, %r4;
\tselp.b64 %rd11, %rd11, %rd13, %p2;
\t{scale}
\tmul.rn.{t} {f}5, {f}5, {f}6;
\tcopysign.{t} {f}5, {f}1, {f}5;
\tst.param.{t} [$$r], {f}5;
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
