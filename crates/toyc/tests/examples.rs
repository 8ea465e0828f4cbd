//! The shipped examples (examples/*.toy), end to end: each compiles, runs in the
//! interpreter on random inputs (before and after `-O`) with the result checked against
//! a plain Rust reference, assembles with ptxas for every target, and gives the same
//! memory in ptx-sim as in the interpreter (each distinct PTX text, plain and `-O`).

use gyre_codegen_lite::Sm;
use gyre_interp::{Arg, Inputs, Launch, Memory};
use gyre_ir::{Module, Type};

/// A deterministic xorshift stream.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A float in [-10, 10) with two decimals.
    fn f(&mut self) -> f64 {
        (self.next() % 2000) as f64 / 100.0 - 10.0
    }
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f() as f32).collect()
    }
}

type Check = Box<dyn Fn(&Memory) -> Result<(), String>>;

/// A launch and the check of its result.
struct Case {
    inputs: Inputs,
    check: Check,
}

fn case(mem: Memory, grid: [u32; 3], block: [u32; 3], args: Vec<Arg>, check: Check) -> Case {
    Case {
        inputs: Inputs {
            launch: Launch::new(grid, block, args),
            memory: mem,
        },
        check,
    }
}

fn buf(n: &str) -> Arg {
    Arg::buffer(n)
}

fn expect_eq<T>(mem: &Memory, name: &str, want: &[T]) -> Result<(), String>
where
    T: PartialEq + std::fmt::Debug + Copy + gyre_interp::Element,
{
    let got: Vec<T> = mem.read(name).ok_or("missing buffer")?;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            return Err(format!("{name}[{i}]: got {g:?}, want {w:?}"));
        }
    }
    Ok(())
}

/// The launches an example is checked with, for one random seed.
fn cases(name: &str, seed: u64) -> Vec<Case> {
    let mut r = Rng::new(seed);
    let mut mem = Memory::new();
    match name {
        "vadd" => {
            let n = 900 + (r.next() % 100) as usize;
            let (a, b) = (r.f32s(n), r.f32s(n));
            mem.alloc_from("c", &vec![0f32; n]);
            mem.alloc_from("a", &a);
            mem.alloc_from("b", &b);
            let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
            let args = vec![buf("c"), buf("a"), buf("b"), Arg::Int(n as u64)];
            let ctas = n.div_ceil(128) as u32;
            vec![case(
                mem,
                [ctas, 1, 1],
                [128, 1, 1],
                args,
                Box::new(move |m| expect_eq(m, "c", &want)),
            )]
        }
        "saxpy" => {
            let n = 500 + (r.next() % 500) as usize;
            let (x, y) = (r.f32s(n), r.f32s(n));
            let a = r.f() as f32;
            mem.alloc_from("x", &x);
            mem.alloc_from("y", &y);
            let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
            let args = vec![buf("x"), buf("y"), Arg::F32(a), Arg::Int(n as u64)];
            // Fewer threads than elements: the grid-stride loop covers the rest.
            vec![case(
                mem,
                [3, 1, 1],
                [64, 1, 1],
                args,
                Box::new(move |m| expect_eq(m, "y", &want)),
            )]
        }
        "matmul_tiled" => {
            let n = 17 + (r.next() % 24) as usize;
            let (a, b) = (r.f32s(n * n), r.f32s(n * n));
            let mut want = vec![0f32; n * n];
            for i in 0..n {
                for j in 0..n {
                    let mut acc = 0f32;
                    for k in 0..n {
                        acc += a[i * n + k] * b[k * n + j];
                    }
                    want[i * n + j] = acc;
                }
            }
            mem.alloc_from("c", &vec![0f32; n * n]);
            mem.alloc_from("a", &a);
            mem.alloc_from("b", &b);
            let t = n.div_ceil(16) as u32;
            let args = vec![buf("c"), buf("a"), buf("b"), Arg::Int(n as u64)];
            vec![case(
                mem,
                [t, t, 1],
                [16, 16, 1],
                args,
                Box::new(move |m| expect_eq(m, "c", &want)),
            )]
        }
        "stencil2d" => {
            let (h, w) = (5 + (r.next() % 12) as usize, 5 + (r.next() % 20) as usize);
            let inp = r.f32s(h * w);
            let mut want = inp.clone();
            for y in 1..h - 1 {
                for x in 1..w - 1 {
                    let i = y * w + x;
                    let sum = inp[i - 1] + inp[i + 1] + inp[i - w] + inp[i + w];
                    want[i] = 0.5 * inp[i] + 0.125 * sum;
                }
            }
            mem.alloc_from("out", &vec![0f32; h * w]);
            mem.alloc_from("inp", &inp);
            let args = vec![
                buf("out"),
                buf("inp"),
                Arg::Int(h as u64),
                Arg::Int(w as u64),
            ];
            let grid = [w.div_ceil(8) as u32, h.div_ceil(4) as u32, 1];
            vec![case(
                mem,
                grid,
                [8, 4, 1],
                args,
                Box::new(move |m| expect_eq(m, "out", &want)),
            )]
        }
        "block_reduce" => {
            let n = 200 + (r.next() % 800) as usize;
            let inp: Vec<i32> = (0..n).map(|_| (r.next() % 2001) as i32 - 1000).collect();
            let want = vec![inp.iter().copied().fold(0i32, i32::wrapping_add)];
            mem.alloc_from("out", &[0i32]);
            mem.alloc_from("inp", &inp);
            let args = vec![buf("out"), buf("inp"), Arg::Int(n as u64)];
            let ctas = n.div_ceil(64) as u32;
            vec![case(
                mem,
                [ctas, 1, 1],
                [64, 1, 1],
                args,
                Box::new(move |m| expect_eq(m, "out", &want)),
            )]
        }
        "histogram" => {
            let n = 1000 + (r.next() % 3000) as usize;
            let bins = 1 + (r.next() % 256) as u32;
            let data: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
            let mut want = vec![0u32; bins as usize];
            for &d in &data {
                want[(d % bins) as usize] += 1;
            }
            mem.alloc_from("hist", &vec![0u32; bins as usize]);
            mem.alloc_from("data", &data);
            let args = vec![
                buf("hist"),
                buf("data"),
                Arg::Int(n as u64),
                Arg::Int(u64::from(bins)),
            ];
            vec![case(
                mem,
                [4, 1, 1],
                [96, 1, 1],
                args,
                Box::new(move |m| expect_eq(m, "hist", &want)),
            )]
        }
        "prefix_scan" => {
            let n = 100 + (r.next() % 400) as usize;
            let inp: Vec<i64> = (0..n)
                .map(|_| (r.next() >> 20) as i64 - (1 << 43))
                .collect();
            let mut want = vec![0i64; n];
            for (i, w) in want.iter_mut().enumerate() {
                let seg = i / 128 * 128;
                *w = inp[seg..=i].iter().copied().fold(0i64, i64::wrapping_add);
            }
            mem.alloc_from("out", &vec![0i64; n]);
            mem.alloc_from("inp", &inp);
            let args = vec![buf("out"), buf("inp"), Arg::Int(n as u64)];
            let ctas = n.div_ceil(128) as u32;
            vec![case(
                mem,
                [ctas, 1, 1],
                [128, 1, 1],
                args,
                Box::new(move |m| expect_eq(m, "out", &want)),
            )]
        }
        "invariant_branch" => {
            let (rows, m) = (10 + (r.next() % 60) as usize, (r.next() % 30) as usize);
            let inp: Vec<f64> = (0..rows * m).map(|_| r.f()).collect();
            let mut out = Vec::new();
            for mode in 0..2u64 {
                let want: Vec<f64> = (0..rows)
                    .map(|row| {
                        let mut acc = 0f64;
                        for &x in &inp[row * m..row * m + m] {
                            if x < 0.0 {
                                continue;
                            }
                            acc = if mode == 0 { acc + x } else { acc.max(x) };
                        }
                        acc
                    })
                    .collect();
                let mut mem = Memory::new();
                mem.alloc_from("out", &vec![0f64; rows]);
                mem.alloc_from("inp", &inp);
                let args = vec![
                    buf("out"),
                    buf("inp"),
                    Arg::Int(rows as u64),
                    Arg::Int(m as u64),
                    Arg::Int(mode),
                ];
                let ctas = rows.div_ceil(32) as u32;
                out.push(case(
                    mem,
                    [ctas, 1, 1],
                    [32, 1, 1],
                    args,
                    Box::new(move |m| expect_eq(m, "out", &want)),
                ));
            }
            out
        }
        _ => panic!("no cases for {name}"),
    }
}

fn source(name: &str) -> String {
    let path = format!("{}/../../examples/{name}.toy", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn compile(name: &str) -> Module {
    let src = source(name);
    let file = format!("{name}.toy");
    gyre_toyc::compile(&file, &src).unwrap_or_else(|d| panic!("{}", d.render(&file, &src)))
}

/// Run `kernel` on `inputs` in the interpreter and, from `ptx`, in ptx-sim; compare every
/// buffer byte the interpreter did not leave poison.
fn compare_ptx_sim(m: &Module, kernel: &str, inputs: &Inputs, ptx: &str) -> Result<(), String> {
    let mut imem = inputs.memory.clone();
    gyre_interp::run_kernel(m, kernel, &inputs.launch, &mut imem)
        .map_err(|e| format!("interpreter: {e}"))?;
    let sim = gyre_ptx_sim::parse(ptx).map_err(|e| format!("ptx-sim parse: {e}\n{ptx}"))?;
    let func = m.func_by_name(kernel).ok_or("no kernel")?;
    let param_types = &m.functions[func].sig.params;
    let mut smem = gyre_ptx_sim::Memory::new();
    let mut bases: Vec<(String, u64)> = Vec::new();
    let mut params = Vec::new();
    for (arg, &ty) in inputs.launch.args.iter().zip(param_types) {
        params.push(match arg {
            Arg::Buffer(name, off) => {
                let bytes = inputs.memory.bytes(name).ok_or("missing buffer")?;
                let b = smem.alloc(bytes.len().max(1), 256);
                smem.write_bytes(b, bytes).map_err(|e| e.to_string())?;
                bases.push((name.clone(), b));
                gyre_ptx_sim::ParamValue::U64(b + off)
            }
            Arg::Int(v) => match ty {
                Type::I1 | Type::I8 => gyre_ptx_sim::ParamValue::U8(*v as u8),
                Type::I32 => gyre_ptx_sim::ParamValue::U32(*v as u32),
                _ => gyre_ptx_sim::ParamValue::U64(*v),
            },
            Arg::F32(x) => gyre_ptx_sim::ParamValue::F32(*x),
            Arg::F64(x) => gyre_ptx_sim::ParamValue::F64(*x),
            other => return Err(format!("unexpected argument {other}")),
        });
    }
    let launch = gyre_ptx_sim::Launch {
        grid: inputs.launch.grid,
        block: inputs.launch.block,
    };
    gyre_ptx_sim::run_kernel(
        &sim,
        &gyre_codegen_lite::mangle(kernel),
        &launch,
        &params,
        &mut smem,
    )
    .map_err(|e| format!("ptx-sim: {e}"))?;
    for (name, base) in &bases {
        let want = imem.bytes(name).ok_or("missing buffer")?;
        let poison = imem.poison(name).ok_or("missing buffer")?;
        let got = smem
            .read_bytes(*base, want.len())
            .map_err(|e| e.to_string())?;
        for i in 0..want.len() {
            if !poison[i] && want[i] != got[i] {
                return Err(format!(
                    "buffer {name}, byte {i}: interpreter {:#04x}, ptx-sim {:#04x}",
                    want[i], got[i]
                ));
            }
        }
    }
    Ok(())
}

fn run_example(name: &str) {
    let plain = compile(name);
    let mut opt = plain.clone();
    gyre_transforms::optimize(&mut opt, gyre_transforms::OptLevel::O2)
        .unwrap_or_else(|e| panic!("{name}: -O: {e}"));
    let ptxas = gyre_test_tools::require(gyre_test_tools::Tool::Ptxas, "toyc examples");
    // Every target through ptxas; ptx-sim runs each distinct text once (the texts of
    // one module differ only in `.version`/`.target` today, so once per module).
    let mut texts: Vec<(&str, &Module, Sm, String)> = Vec::new();
    for (what, m) in [("plain", &plain), ("-O", &opt)] {
        for sm in Sm::ALL {
            let ptx = gyre_toyc::emit_ptx(m, sm)
                .unwrap_or_else(|e| panic!("{name} ({what}, {sm:?}): codegen: {e}"));
            if let Some(p) = &ptxas {
                gyre_test_tools::run_ptxas(p, &ptx, sm.target())
                    .unwrap_or_else(|e| panic!("{name} ({what}, {sm:?}): ptxas: {e}"));
            }
            let seen = texts
                .iter()
                .any(|(w, _, _, t)| *w == what && body(t).eq(body(&ptx)));
            if !seen {
                texts.push((what, m, sm, ptx));
            }
        }
    }
    assert!(texts.len() >= 2, "{name}: a plain and an -O text");
    for seed in 1..=3 {
        for (k, c) in cases(name, seed).into_iter().enumerate() {
            for (what, m) in [("plain", &plain), ("-O", &opt)] {
                let mut mem = c.inputs.memory.clone();
                gyre_interp::run_kernel(m, name, &c.inputs.launch, &mut mem)
                    .unwrap_or_else(|e| panic!("{name} ({what}, seed {seed}, case {k}): {e}"));
                (c.check)(&mem)
                    .unwrap_or_else(|e| panic!("{name} ({what}, seed {seed}, case {k}): {e}"));
            }
            for (what, m, sm, ptx) in &texts {
                compare_ptx_sim(m, name, &c.inputs, ptx).unwrap_or_else(|e| {
                    panic!("{name} (ptx-sim, {what}, {sm:?}, seed {seed}, case {k}): {e}")
                });
            }
        }
    }
}

/// A PTX text without its `.version` and `.target` lines.
fn body(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines().filter(|l| {
        let t = l.trim_start();
        !t.starts_with(".version") && !t.starts_with(".target")
    })
}

macro_rules! examples {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            run_example(stringify!($name));
        }
    )*};
}

examples!(
    vadd,
    saxpy,
    matmul_tiled,
    stencil2d,
    block_reduce,
    histogram,
    prefix_scan,
    invariant_branch
);

/// Every file in examples/ with the `.toy` extension is covered by a test above.
#[test]
fn every_example_is_tested() {
    let dir = format!("{}/../../examples", env!("CARGO_MANIFEST_DIR"));
    let tested = [
        "vadd",
        "saxpy",
        "matmul_tiled",
        "stencil2d",
        "block_reduce",
        "histogram",
        "prefix_scan",
        "invariant_branch",
    ];
    for e in std::fs::read_dir(&dir).expect("examples/") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == gyre_toyc::EXTENSION) {
            let stem = p
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            assert!(
                tested.contains(&stem.as_str()),
                "{} has no test",
                p.display()
            );
        }
    }
}
