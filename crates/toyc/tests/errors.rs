//! Bad programs: every error is located and rendered with its source line and a caret,
//! one run reports several, deep nesting is an error and not a stack overflow, and no
//! input (random bytes, mutated examples, token soup) makes the compiler panic or emit IR
//! the verifier rejects.

use std::panic::{catch_unwind, AssertUnwindSafe};

fn errors(src: &str) -> String {
    match gyre_toyc::compile("t.toy", src) {
        Ok(_) => panic!("expected errors for:\n{src}"),
        Err(d) => {
            assert!(
                d.errors.iter().all(|e| !e.internal),
                "{}",
                d.render("t.toy", src)
            );
            d.render("t.toy", src)
        }
    }
}

#[test]
fn several_errors_rendered_in_source_order() {
    let src = "kernel k(n: i32, p: *f32) {\n    let x: f32 = n;\n    y = 1;\n    if n { }\n    let z = (1;\n    break;\n}\n";
    let want = "\
t.toy:2:18: error: mismatched types: `x` is f32 but the value is i32
        let x: f32 = n;
                     ^
t.toy:3:5: error: unknown variable `y`
        y = 1;
        ^
t.toy:4:8: error: a condition must be bool, not i32 (compare with `!= 0`)
        if n { }
           ^
t.toy:5:15: error: expected `)`, found `;`
        let z = (1;
                  ^
t.toy:6:5: error: `break` outside of a loop
        break;
        ^
";
    assert_eq!(errors(src), want);
}

#[test]
fn each_kind_of_error() {
    let cases: &[(&str, &str)] = &[
        (
            "kernel k() { let a = 1 + 2.0; }",
            "1:24: error: mismatched types: i32 + f32",
        ),
        (
            "kernel k() { let a = 1.5 % 2; }",
            "an integer literal where f32 is expected",
        ),
        (
            "kernel k(p: *f32) { p[1.0] = 2.0; }",
            "an index must be an integer, not f32",
        ),
        (
            "kernel k(x: f32) { let y = x << x; }",
            "operator `<<` does not apply to f32",
        ),
        (
            "kernel k(x: u32) { let y = -x; }",
            "operator `-` does not apply to u32",
        ),
        (
            "kernel k(x: i32) { let y = !x; }",
            "operator `!` does not apply to i32",
        ),
        (
            "kernel k(x: i32) { let b = x < 1 < 2; }",
            "comparisons cannot be chained",
        ),
        ("kernel k() { continue; }", "`continue` outside of a loop"),
        ("kernel k() { return 1; }", "a kernel returns no value"),
        (
            "fn f() -> i32 { return; } kernel k() { }",
            "returns a value of type i32",
        ),
        (
            "fn f(x: i32) -> i32 { if x > 0 { return 1; } }",
            "may reach its end without returning",
        ),
        ("kernel k() -> i32 { }", "kernel `k` cannot return a value"),
        ("fn f() { } fn f() { }", "`f` is defined more than once"),
        ("fn sync() { }", "`sync` is a built-in function"),
        ("kernel k() { g(); }", "unknown function `g`"),
        (
            "fn f(a: i32) { } kernel k() { f(); }",
            "`f` takes 1 arguments, not 0",
        ),
        (
            "fn f(a: i32) { } kernel k() { f(1.0); }",
            "mismatched types: f32 passed for `a`",
        ),
        ("kernel j() { } kernel k() { j(); }", "`j` is a kernel"),
        (
            "fn f() { shared s: [f32; 4]; }",
            "shared arrays are declared in kernels only",
        ),
        (
            "kernel k() { shared s: [f32; 4]; s = 1.0; }",
            "cannot assign to a shared array",
        ),
        ("kernel k() { 1 = 2; }", "cannot assign to this expression"),
        ("kernel k(x: f32) { x[0] = 1.0; }", "cannot index f32"),
        (
            "kernel k(p: *f32) { atomic_and(p[0], 1.0); }",
            "`atomic_and` does not apply to f32",
        ),
        (
            "kernel k(p: *i32) { let v = p[0]; atomic_add(v, 1); }",
            "must be an element `a[i]`",
        ),
        (
            "kernel k() { let x = sync(); }",
            "this expression has no value",
        ),
        (
            "kernel k() { let x = 3000000000; }",
            "literal 3000000000 does not fit in i32",
        ),
        (
            "kernel k() { let x = 2147483648; }",
            "literal 2147483648 does not fit in i32",
        ),
        (
            "kernel k() { let x = 9223372036854775808i64; }",
            "does not fit in i64",
        ),
        ("kernel k() { let x = 1q; }", "unknown literal suffix `q`"),
        ("kernel k() { let x = 1 @ 2; }", "unexpected character `@`"),
        ("kernel k() { /* open", "unterminated block comment"),
        ("kernel k( { }", "expected a parameter name"),
        ("kernel k() { let p: *bool = 1; }", "expected a type"),
        ("kernel k() { let x = tid.w; }", "expected `x`, `y` or `z`"),
        (
            "kernel k() { for i in 0.0..1.0 { } }",
            "a `for` range must be of integers",
        ),
        ("kernel k(x: f64) { let y = x as bool; }", "expected a type"),
        (
            "kernel k(p: *f32) { let y = p as i32; }",
            "cannot cast *f32 to i32",
        ),
        ("let x = 1;", "expected `kernel` or `fn`"),
        ("kernel k() {", "expected `}`, found the end of the file"),
    ];
    let mut failures = Vec::new();
    for (src, want) in cases {
        let got = errors(src);
        if !got.contains(want) {
            failures.push(format!("{src}\n  want: {want}\n  got:\n{got}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn many_errors_are_capped() {
    let src: String = (0..300)
        .map(|i| format!("kernel k{i}() {{ x{i} = 1; }}\n"))
        .collect();
    let text = errors(&src);
    assert_eq!(
        text.matches(": error: ").count(),
        gyre_toyc::diag::MAX_ERRORS
    );
    assert!(
        text.ends_with("t.toy: 200 more errors not shown\n"),
        "{}",
        &text[text.len() - 200..]
    );
}

/// Deeply nested input is a located error, never a stack overflow (run on a thread with
/// a small stack, so the bound is really tested).
#[test]
fn deep_nesting_is_an_error() {
    let deep = 100_000;
    let inputs = vec![
        format!(
            "kernel k() {{ let x = {}1{}; }}",
            "(".repeat(deep),
            ")".repeat(deep)
        ),
        format!("kernel k() {{ let x = {}1; }}", "-".repeat(deep)),
        format!("kernel k() {{ let x = 1{}; }}", " + 1".repeat(deep)),
        format!("kernel k() {{ let x = 1.0{}; }}", " as f32".repeat(deep)),
        format!("kernel k(p: *i32) {{ let x = p{}; }}", "[0]".repeat(deep)),
        format!("kernel k() {} {}", "{".repeat(deep), "}".repeat(deep)),
        format!("kernel k() {{ {} }}", "if true { ".repeat(deep)),
        format!(
            "kernel k() {{ if true {{ }} {} }}",
            "else if true { } ".repeat(deep)
        ),
        format!(
            "fn f(a: i32) -> i32 {{ return a; }} kernel k() {{ let x = {}1{}; }}",
            "f(".repeat(deep),
            ")".repeat(deep)
        ),
    ];
    let handle = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let mut out = Vec::new();
            for src in &inputs {
                let r = gyre_toyc::compile("t.toy", src);
                out.push(match r {
                    Ok(_) => "compiled".to_string(),
                    Err(d) => d.render("t.toy", src),
                });
            }
            out
        })
        .expect("spawn");
    let results = handle.join().expect("no stack overflow or panic");
    for (i, r) in results.iter().enumerate() {
        assert!(
            r.contains("nesting too deep"),
            "input {i}: {}",
            &r[..r.len().min(300)]
        );
    }
}

/// Just below the limit compiles, so the limit does not reject reasonable programs.
#[test]
fn moderate_nesting_compiles() {
    let n = 60;
    let src = format!(
        "kernel k(p: *i32) {{ {} p[0] = {}1{}; {} }}",
        "if true { ".repeat(n),
        "(".repeat(n),
        " + 1)".repeat(n),
        "}".repeat(n)
    );
    let m =
        gyre_toyc::compile("t.toy", &src).unwrap_or_else(|d| panic!("{}", d.render("t.toy", &src)));
    let mut mem = gyre_interp::Memory::new();
    mem.alloc_from("p", &[0i32]);
    let launch = gyre_interp::Launch::linear(1, 1, vec![gyre_interp::Arg::buffer("p")]);
    gyre_interp::run_kernel(&m, "k", &launch, &mut mem).expect("runs");
    assert_eq!(mem.read::<i32>("p").unwrap(), vec![n as i32 + 1]);
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Compile `src`; a panic, an internal error, or a compiled module that `-O` or the PTX
/// back end rejects fails the test with the input.
fn no_panic(src: &str) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        match gyre_toyc::compile("fuzz.toy", src) {
            Err(d) => {
                let text = d.render("fuzz.toy", src);
                assert!(
                    d.errors.iter().all(|e| !e.internal),
                    "internal error:\n{text}"
                );
                assert!(!d.errors.is_empty());
            }
            Ok(mut m) => {
                gyre_toyc::emit_ptx(&m, gyre_codegen_lite::Sm::Sm80)
                    .expect("PTX of a compiled program");
                gyre_transforms::optimize(&mut m, gyre_transforms::OptLevel::O2)
                    .expect("-O of a compiled program");
                gyre_toyc::emit_ptx(&m, gyre_codegen_lite::Sm::Sm80).expect("PTX after -O");
            }
        }
    }));
    if let Err(e) = r {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!("input {src:?} failed: {msg}");
    }
}

fn examples() -> Vec<String> {
    let dir = format!("{}/../../examples", env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/")
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "toy").then(|| std::fs::read_to_string(&p).ok())?
        })
        .collect();
    v.sort();
    v
}

#[test]
fn fuzz_random_bytes() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    for _ in 0..2000 {
        let n = r.below(200);
        let bytes: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        no_panic(&String::from_utf8_lossy(&bytes));
        // Mostly printable ASCII reaches further into the parser.
        let ascii: String = (0..n).map(|_| (32 + r.below(95)) as u8 as char).collect();
        no_panic(&ascii);
    }
}

const TOKENS: &[&str] = &[
    "kernel",
    "fn",
    "let",
    "shared",
    "if",
    "else",
    "while",
    "for",
    "in",
    "break",
    "continue",
    "return",
    "as",
    "true",
    "false",
    "i32",
    "i64",
    "u32",
    "f32",
    "f64",
    "bool",
    "tid.x",
    "ctaid.y",
    "ntid.z",
    "nctaid.x",
    "sync()",
    "atomic_add",
    "atomic_cas",
    "min",
    "max",
    "abs",
    "sqrt",
    "x",
    "y",
    "p",
    "n",
    "0",
    "1",
    "7u32",
    "2i64",
    "1.5",
    "0.25f64",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    "..",
    "->",
    "=",
    "+=",
    "<<=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "!",
    "~",
    "<",
    ">",
    "==",
    "!=",
    "<=",
    ">=",
    "&&",
    "||",
    "<<",
    ">>",
    "*f32",
    "\n",
    "//c\n",
    "/*",
    "*/",
];

#[test]
fn fuzz_mutated_examples() {
    let examples = examples();
    assert!(examples.len() >= 4);
    let mut r = Rng(0xdead_beef_cafe_f00d);
    let mut compiled = 0;
    for round in 0..3000 {
        let mut s: Vec<char> = examples[round % examples.len()].chars().collect();
        for _ in 0..1 + r.below(4) {
            let at = r.below(s.len() + 1);
            match r.below(5) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 => {
                    let t = TOKENS[r.below(TOKENS.len())];
                    for (k, c) in format!(" {t} ").chars().enumerate() {
                        s.insert(at + k, c);
                    }
                }
                2 if at < s.len() => {
                    let end = (at + r.below(20)).min(s.len());
                    s.drain(at..end);
                }
                3 if at < s.len() => {
                    // Swap a digit or an operator for another.
                    let repl = ['0', '1', '9', '+', '-', '<', '>', '=', ';', '}', '{', 'u'];
                    s[at] = repl[r.below(repl.len())];
                }
                _ => {
                    // Duplicate a slice (repeats statements, braces, operators).
                    let end = (at + r.below(40)).min(s.len());
                    let dup: Vec<char> = s[at..end].to_vec();
                    for (k, c) in dup.into_iter().enumerate() {
                        s.insert(end + k, c);
                    }
                }
            }
        }
        let src: String = s.into_iter().collect();
        if gyre_toyc::compile("m.toy", &src).is_ok() {
            compiled += 1;
        }
        no_panic(&src);
    }
    // Some mutants are valid programs, so the lowering and back end are exercised too.
    assert!(compiled > 100, "only {compiled} mutants compiled");
}

#[test]
fn fuzz_token_soup() {
    let mut r = Rng(0x0bad_5eed_0bad_5eed);
    for _ in 0..3000 {
        let mut src = String::from("kernel k(p: *f32, n: i32, x: i32) { ");
        for _ in 0..r.below(40) {
            src.push_str(TOKENS[r.below(TOKENS.len())]);
            src.push(' ');
        }
        src.push('}');
        no_panic(&src);
    }
}
