//! The parser (and the interpreter on whatever parses) must never panic on
//! random or mutated input.

mod common;

use gyre_ptx_sim::{parse, run_kernel_with_options, Launch, Memory, ParamValue, RunOptions};

/// Small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    ";",
    ",",
    ":",
    "@",
    "!",
    "|",
    "+",
    "-",
    "<",
    ">",
    "=",
    "%r1",
    "%rd1",
    "%p1",
    "%f1",
    "%tid.x",
    ".reg",
    ".b32",
    ".u64",
    ".f32",
    ".pred",
    ".global",
    ".shared",
    ".local",
    ".param",
    ".entry",
    ".func",
    "ld",
    "st",
    "mov",
    "add",
    "bra",
    "call",
    "ret",
    "exit",
    "bar.sync 0",
    "0f7FC00000",
    "0d3FF0000000000000",
    "0xFFFFFFFF",
    "-1",
    "99999999999999999999",
    "$L__BB0_2",
    "\n",
    " ",
    "/*",
    "*/",
    "//",
    "\"",
    ".align 0",
    ".align 8",
    "[0]",
    "[99999999999]",
    "<99999999>",
    "%r<4>",
    "WARP_SZ",
    "é",
    "\u{0}",
    "cvt.rzi.s32.f32",
    "atom.global.cas.b32",
    "setp.lt.and.s32",
    "{ .param .b32 param0; }",
    ".version 7.0",
    ".address_size 64",
];

const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "7",
    "8",
    "16",
    "31",
    "32",
    "63",
    "64",
    "255",
    "4096",
    "0xFFFFFFFF",
];
const SUFFIXES: &[&str] = &[
    ".u32", ".s32", ".b32", ".u64", ".s64", ".b64", ".u16", ".s8", ".f32", ".f64", ".pred",
    ".global", ".shared", ".local", ".param", ".const", ".lo", ".hi", ".wide", ".rn", ".rzi",
    ".uni", ".eq", ".lt", ".ge", ".ltu",
];

/// Syntax-preserving mutation: replace one number or one dotted modifier.
fn mutate_token(rng: &mut Rng, src: &str) -> String {
    let b = src.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            spans.push((start, i, true));
        } else if b[i] == b'.' && i + 1 < b.len() && b[i + 1].is_ascii_alphabetic() {
            i += 1;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            spans.push((start, i, false));
        } else {
            i += 1;
        }
    }
    if spans.is_empty() {
        return src.to_string();
    }
    let (a, e, num) = spans[rng.below(spans.len())];
    let rep = if num {
        NUMBERS[rng.below(NUMBERS.len())]
    } else {
        SUFFIXES[rng.below(SUFFIXES.len())]
    };
    format!("{}{}{}", &src[..a], rep, &src[e..])
}

fn mutate(rng: &mut Rng, src: &str) -> String {
    if rng.below(2) == 0 {
        let mut s = src.to_string();
        for _ in 0..1 + rng.below(3) {
            s = mutate_token(rng, &s);
        }
        return s;
    }
    let mut s: Vec<char> = src.chars().collect();
    let n = if rng.below(2) == 0 {
        1
    } else {
        1 + rng.below(6)
    };
    for _ in 0..n {
        let len = s.len();
        match rng.below(6) {
            0 if len > 0 => {
                // delete a range
                let a = rng.below(len);
                let b = (a + 1 + rng.below(20)).min(len);
                s.drain(a..b);
            }
            1 => {
                // insert a piece
                let a = rng.below(len + 1);
                let p: Vec<char> = PIECES[rng.below(PIECES.len())].chars().collect();
                s.splice(a..a, p);
            }
            2 if len > 0 => {
                // replace a char with a random printable or special one
                let a = rng.below(len);
                let c = match rng.below(4) {
                    0 => ' ',
                    1 => char::from(b'0' + rng.below(10) as u8),
                    2 => char::from(b'!' + rng.below(94) as u8),
                    _ => ['\n', '%', '.', '[', '{', ';'][rng.below(6)],
                };
                s[a] = c;
            }
            3 if len > 0 => {
                // duplicate a range
                let a = rng.below(len);
                let b = (a + 1 + rng.below(60)).min(len);
                let dup: Vec<char> = s[a..b].to_vec();
                let at = rng.below(len + 1);
                s.splice(at..at, dup);
            }
            4 if len > 0 => {
                // swap two lines
                let text: String = s.iter().collect();
                let mut lines: Vec<&str> = text.lines().collect();
                if lines.len() > 2 {
                    let (i, j) = (rng.below(lines.len()), rng.below(lines.len()));
                    lines.swap(i, j);
                }
                s = lines.join("\n").chars().collect();
            }
            _ => {
                // truncate
                let a = rng.below(len + 1);
                s.truncate(a);
            }
        }
    }
    s.into_iter().collect()
}

fn random_text(rng: &mut Rng) -> String {
    let n = rng.below(60);
    let mut s = String::new();
    for _ in 0..n {
        if rng.below(3) == 0 {
            s.push(char::from(rng.below(128) as u8));
        } else {
            s.push_str(PIECES[rng.below(PIECES.len())]);
            s.push(' ');
        }
    }
    s
}

/// Parses `src`; if it parses, runs every kernel briefly with plausible arguments.
fn exercise(src: &str) -> bool {
    let Ok(m) = parse(src) else {
        return false;
    };
    let opts = RunOptions {
        step_limit: 20_000,
        dynamic_shared_bytes: 64,
        max_call_depth: 16,
    };
    for k in m.kernels() {
        let mut mem = Memory::new();
        let buf = mem.alloc(4096, 256);
        let params: Vec<ParamValue> = m
            .kernel_param_sizes(k)
            .unwrap_or_default()
            .into_iter()
            .map(|size| match size {
                8 => ParamValue::U64(buf),
                4 => ParamValue::U32(16),
                n => ParamValue::Bytes(vec![1; n]),
            })
            .collect();
        let _ = run_kernel_with_options(&m, k, &Launch::linear(2, 33), &params, &mut mem, &opts);
    }
    true
}

#[test]
fn corpus_parses() {
    for src in common::corpus() {
        parse(src).unwrap_or_else(|e| panic!("{e}"));
    }
}

#[test]
fn mutated_inputs_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let corpus = common::corpus();
    let mut parsed = 0;
    // Set PTXSIM_FUZZ_ITERS for a longer run.
    let total: usize = std::env::var("PTXSIM_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    for i in 0..total {
        let seed = corpus[i % corpus.len()];
        let src = mutate(&mut rng, seed);
        if exercise(&src) {
            parsed += 1;
        }
    }
    eprintln!("{parsed} of {total} mutants parsed");
    // A healthy share of mutants must still parse so the interpreter is exercised too.
    assert!(
        parsed > total / 10,
        "only {parsed} of {total} mutants parsed"
    );
}

#[test]
fn random_inputs_never_panic() {
    let mut rng = Rng(12345);
    for _ in 0..3000 {
        let s = random_text(&mut rng);
        exercise(&s);
    }
    // Some adversarial fixed inputs.
    for s in [
        "",
        ".entry",
        ".entry k(",
        ".entry k() {",
        ".entry k() { { { { ",
        ".entry k() { .reg .b32 %r<4294967295>; }",
        ".global .b8 g[18446744073709551615];",
        ".const .b32 c[4] = {1, 2, 3, 4, 5};",
        ".const .b32 c[] = {1, 2, 3};",
        ".entry k() { ld.global.v4.u32 {%r1}, [%rd1]; }",
        ".entry k() { .reg .b64 %rd; ld.global.u32 %rd, [%rd+-9223372036854775808]; }",
        ".func f() { call f; } .entry k() { call f; }",
        ".func (.param .b32 r) f() { ret; } .entry k() { .reg .b32 %r; call (%r), f; }",
        "0f 0d 0x 0b 09 1e 1.e5 .",
        ".entry k() { $a: $a: ret; }",
    ] {
        exercise(s);
    }
}

#[test]
fn infinite_recursion_is_bounded() {
    let src = ".version 7.0\n.target sm_80\n.address_size 64\n\
               .func f() { call f; ret; }\n.visible .entry k() { call f; ret; }";
    let m = parse(src).unwrap();
    let e = run_kernel_with_options(
        &m,
        "k",
        &Launch::linear(1, 1),
        &[],
        &mut Memory::new(),
        &RunOptions {
            max_call_depth: 100,
            ..RunOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        e.kind,
        gyre_ptx_sim::SimErrorKind::CallDepthExceeded { limit: 100 }
    );
}
