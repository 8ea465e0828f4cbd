//! Each construct of the language, compiled and run: the interpreter (before and after
//! `-O`) must give the value the language reference (docs/toy.md) says, and the PTX must
//! pass ptxas and give the same memory in ptx-sim.

use gyre_codegen_lite::Sm;
use gyre_interp::{Arg, Launch, Memory};

/// Arguments of every case: a = -7, b = 3, u = 0xffff_fff0, f = 2.5, d = -1.25.
const HEAD: &str = "kernel t(out: *i64, a: i32, b: i32, u: u32, f: f32, d: f64) {\n";

const PRELUDE: &str = "
fn sign(x: i32) -> i32 {
    if x < 0 {
        return -1;
    } else if x == 0 {
        return 0;
    } else {
        return 1;
    }
}
";

fn cases() -> Vec<(&'static str, &'static str, i64)> {
    vec![
        ("signed division", "out[0] = (a / b) as i64;", -2),
        ("signed remainder", "out[0] = (a % b) as i64;", -1),
        ("unsigned division", "out[0] = (u / 16) as i64;", 0x0fff_ffff),
        ("logical shift right", "out[0] = (u >> 4) as i64;", 0x0fff_ffff),
        ("arithmetic shift right", "out[0] = (a >> 1) as i64;", -4),
        ("u32 zero-extends", "out[0] = u as i64;", 0xffff_fff0),
        ("i32 as u32 keeps bits", "out[0] = a as u32 as i64;", 0xffff_fff9),
        ("unsigned compare", "out[0] = (u > 5) as i64 + (a as u32 > 5) as i64 * 2 + (a > 5) as i64 * 4;", 3),
        ("float to int", "out[0] = f as i64 * 100 + d as i64 * 10 + (f as f64 * d) as i64;", 200 - 10 - 3),
        ("float negation", "out[0] = (-f) as i32 as i64;", -2),
        ("`as` binds looser than unary minus", "out[0] = -a as i64 * 2;", 14),
        ("float to u32", "out[0] = (f as u32) as i64;", 2),
        ("int to float", "out[0] = (((a as f32) * 0.5) as f64 + (u as f64) * 0.0) as i64;", -3),
        ("i64 to i32 truncates", "out[0] = ((a as i64) * 10000000000) as i32 as i64;", (-70_000_000_000i64) as i32 as i64),
        ("i64 arithmetic", "out[0] = (a as i64) * 3000000000;", -21_000_000_000),
        ("u32 wraps", "out[0] = (u + 32) as i64;", 16),
        (
            "minimum literals",
            "out[0] = (-2147483648 as i64) * 2 + (-9223372036854775808 + 1) * 0 + 4294967295u32 as i64;",
            -(1i64 << 32) + 4_294_967_295,
        ),
        (
            "&& short-circuits",
            "if a > 0 && out[1000000] > 0 { out[0] = 1; } else { out[0] = 2; }",
            2,
        ),
        ("|| short-circuits", "if a < 0 || out[1000000] > 0 { out[0] = 3; }", 3),
        (
            "while with break and continue",
            "let s = 0; let i = 0;
             while true { i += 1; if i > 10 { break; } if i % 2 == 0 { continue; } s += i; }
             out[0] = s as i64;",
            25,
        ),
        (
            "nested for with break and continue",
            "let s = 0;
             for i in 0..5 { for j in 0..5 { if j > i { break; } if j == 1 { continue; } s += i * 10 + j; } }
             out[0] = s as i64;",
            316,
        ),
        (
            "u32 for range",
            "let s = 0u32; for i in 0u32..u { if i == 3 { break; } s += i; } out[0] = s as i64;",
            3,
        ),
        ("device function, else if", "out[0] = (sign(a) * 100 + sign(0) * 10 + sign(b)) as i64;", -99),
        ("shadowing and scopes", "let x = 1; { let x = 2; out[1] = x as i64; } out[0] = x as i64;", 1),
        (
            "compound assignment to an element",
            "out[0] = 5; out[0] += 7; out[0] *= 2; out[0] <<= 1; out[0] -= 1; out[0] /= 3;",
            15,
        ),
        (
            "atomics",
            "out[0] = 10;
             let o = atomic_max(out[0], 20);
             let o2 = atomic_min(out[0], 15);
             let o3 = atomic_cas(out[0], 15, 99);
             let o4 = atomic_exch(out[0], o + o2 + o3);
             out[0] += o4 * 1000;",
            99_045,
        ),
        ("integer min, max, abs", "out[0] = (max(a, b) * 1000 + min(a, b) * 100 + abs(a)) as i64;", 2307),
        ("float sqrt, abs, min", "out[0] = ((sqrt(16.0f64) + abs(d)) * 4.0 + min(f, 1.0) as f64) as i64;", 22),
        (
            "bool operators",
            "let t = a < 0; let v = !t ^ true;
             out[0] = (t & v) as i64 + (t | false) as i64 * 2 + (t == v) as i64 * 4 + (t != v) as i64 * 8;",
            7,
        ),
        ("bitwise not and xor", "out[0] = (~a ^ 5) as i64;", 3),
        (
            "NaN compares",
            "let n = 0.0 / (f - f); out[0] = (n != n) as i64 + (n < 1.0) as i64 * 2 + (n == n) as i64 * 4;",
            1,
        ),
        ("early return from a kernel", "if a < 0 { out[0] = 1; return; } out[0] = 2;", 1),
        ("hex literal and precedence", "out[0] = (0xff & 0x0f | 1 << 4 + 1 * 2) as i64;", 0x0f | (1 << 6)),
        (
            "shared array and sync",
            "shared s: [i32; 4]; s[tid.x] = tid.x * 2; sync(); if tid.x == 0 { out[0] = (s[3] + s[0]) as i64; }",
            6,
        ),
        ("special registers", "if tid.x == 1 { out[0] = (tid.x + ntid.x * 10 + ctaid.x * 100 + nctaid.x * 1000 + tid.y + ntid.z) as i64; }", 1042),
    ]
}

#[test]
fn every_construct_computes_what_the_reference_says() {
    let ptxas = gyre_test_tools::require(gyre_test_tools::Tool::Ptxas, "toyc semantics");
    let mut failures = Vec::new();
    for (what, body, want) in cases() {
        // One thread writes the result; a body that names the special registers picks
        // its thread itself (and every thread reaches its barrier).
        let src = if body.contains("tid.") {
            format!("{PRELUDE}{HEAD}    {body}\n}}\n")
        } else {
            format!("{PRELUDE}{HEAD}    if tid.x == 0 {{ {body} }}\n}}\n")
        };
        let m = match gyre_toyc::compile("t.toy", &src) {
            Ok(m) => m,
            Err(d) => {
                failures.push(format!("{what}: {}", d.render("t.toy", &src)));
                continue;
            }
        };
        let mut opt = m.clone();
        gyre_transforms::optimize(&mut opt, gyre_transforms::OptLevel::O2).expect("-O");
        let args = vec![
            Arg::buffer("out"),
            Arg::Int((-7i64) as u64),
            Arg::Int(3),
            Arg::Int(0xffff_fff0),
            Arg::F32(2.5),
            Arg::F64(-1.25),
        ];
        let launch = Launch::new([1, 1, 1], [4, 1, 1], args.clone());
        for (which, module) in [("plain", &m), ("-O", &opt)] {
            let mut mem = Memory::new();
            mem.alloc_from("out", &[0i64; 4]);
            match gyre_interp::run_kernel(module, "t", &launch, &mut mem) {
                Ok(_) => {
                    let got = mem.read::<i64>("out").expect("out")[0];
                    if got != want {
                        failures.push(format!("{what} ({which}): got {got}, want {want}"));
                    }
                }
                Err(e) => failures.push(format!("{what} ({which}): {e}")),
            }
        }
        let ptx = gyre_toyc::emit_ptx(&opt, Sm::Sm80).expect("PTX");
        if let Some(p) = &ptxas {
            if let Err(e) = gyre_test_tools::run_ptxas(p, &ptx, Sm::Sm80.target()) {
                failures.push(format!("{what}: ptxas: {e}"));
            }
        }
        // ptx-sim: the same result.
        let sim = gyre_ptx_sim::parse(&ptx).expect("ptx-sim parses Gyre's PTX");
        let mut smem = gyre_ptx_sim::Memory::new();
        let out = smem.alloc(32, 256);
        smem.write_bytes(out, &[0u8; 32]).expect("write");
        use gyre_ptx_sim::ParamValue as P;
        let params = [
            P::U64(out),
            P::U32((-7i32) as u32),
            P::U32(3),
            P::U32(0xffff_fff0),
            P::F32(2.5),
            P::F64(-1.25),
        ];
        let sl = gyre_ptx_sim::Launch {
            grid: [1, 1, 1],
            block: [4, 1, 1],
        };
        match gyre_ptx_sim::run_kernel(&sim, "t", &sl, &params, &mut smem) {
            Ok(_) => {
                let b = smem.read_bytes(out, 8).expect("read");
                let got = i64::from_le_bytes(b.try_into().expect("8 bytes"));
                if got != want {
                    failures.push(format!("{what} (ptx-sim): got {got}, want {want}"));
                }
            }
            Err(e) => failures.push(format!("{what} (ptx-sim): {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
