//! Every example kernel, plain and `-O`, compiles for every target, passes ptxas without
//! a message, and gives the same memory in ptx-sim as in the IR interpreter (each
//! distinct text once).

mod common;

use common::{compare, compile, parse, ptxas_or_skip, run_ptxas};
use gyre_codegen_lite::Sm;
use gyre_interp::{Arg, Inputs, Launch, Memory};

/// A deterministic stream of floats in [-10, 10).
fn data(n: usize, seed: u32) -> Vec<f32> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x % 2000) as f32 / 100.0 - 10.0
        })
        .collect()
}

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}.gir", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The launches each example is checked with (respecting the contract in its comment).
fn launches(name: &str) -> Vec<Inputs> {
    let mut out = Vec::new();
    let mut mem = Memory::new();
    let mut push = |mem: Memory, grid: [u32; 3], block: [u32; 3], args: Vec<Arg>| {
        out.push(Inputs {
            launch: Launch::new(grid, block, args),
            memory: mem,
        })
    };
    let buf = |n: &str| Arg::buffer(n);
    match name {
        "saxpy" => {
            let n = 200;
            mem.alloc_from("x", &data(n, 1));
            mem.alloc_from("y", &data(n, 2));
            let args = vec![buf("x"), buf("y"), Arg::F32(1.75), Arg::Int(n as u64)];
            push(mem, [4, 1, 1], [64, 1, 1], args);
        }
        "stencil2d" => {
            let (planes, h, w) = (2usize, 9usize, 11usize);
            mem.alloc_from("out", &vec![0f32; planes * h * w]);
            mem.alloc_from("in", &data(planes * h * w, 3));
            let args = vec![
                buf("out"),
                buf("in"),
                Arg::Int(planes as u64),
                Arg::Int(h as u64),
                Arg::Int(w as u64),
            ];
            push(mem, [2, 1, 1], [3, 1, 1], args);
        }
        "matmul_tiled" => {
            let n = 32usize;
            mem.alloc_from("c", &vec![0f32; n * n]);
            mem.alloc_from("a", &data(n * n, 4));
            mem.alloc_from("b", &data(n * n, 5));
            let args = vec![buf("c"), buf("a"), buf("b"), Arg::Int(n as u64)];
            push(mem, [2, 2, 1], [16, 16, 1], args);
        }
        "block_reduce" => {
            mem.alloc_from("out", &[0f32; 3]);
            mem.alloc_from("in", &data(3 * 64, 6));
            push(mem, [3, 1, 1], [64, 1, 1], vec![buf("out"), buf("in")]);
        }
        "search" => {
            let seg = 5usize;
            let input: Vec<i32> = (0..16 * seg).map(|i| ((i * 7 + 3) % 11) as i32).collect();
            mem.alloc_from("out", &[0i32; 16]);
            mem.alloc_from("in", &input);
            let args = vec![buf("out"), buf("in"), Arg::Int(3), Arg::Int(seg as u64)];
            push(mem, [2, 1, 1], [8, 1, 1], args);
        }
        "invariant_branch" => {
            for mode in [0u64, 1] {
                let mut mem = Memory::new();
                let n = 100;
                mem.alloc_from("out", &vec![0f32; n]);
                mem.alloc_from("in", &data(n, 7));
                let args = vec![
                    buf("out"),
                    buf("in"),
                    Arg::Int(n as u64),
                    Arg::F32(0.5),
                    Arg::Int(mode),
                ];
                push(mem, [2, 1, 1], [32, 1, 1], args);
            }
        }
        "tid_branch" => {
            let n = 20;
            mem.alloc_from("out", &[0f32; 64]);
            mem.alloc_from("in", &data(n, 8));
            push(
                mem,
                [2, 1, 1],
                [32, 1, 1],
                vec![buf("out"), buf("in"), Arg::Int(n as u64)],
            );
        }
        other => panic!("no launch configuration for example {other}: add one"),
    }
    out
}

#[test]
fn examples_compile_assemble_and_match_the_interpreter() {
    let dir = format!("{}/../../examples", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples directory")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".gir")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(
        names.len() >= 7,
        "expected the seven examples, found {names:?}"
    );
    let ptxas = ptxas_or_skip("examples_compile_assemble_and_match_the_interpreter (ptxas part)");
    let mut runs = 0;
    for name in &names {
        let plain = parse(&example(name));
        let kernel = plain
            .functions
            .values()
            .find(|f| f.kind == gyre_ir::FuncKind::Kernel)
            .expect("an example has a kernel")
            .name
            .clone();
        let mut opt = plain.clone();
        gyre_transforms::optimize(&mut opt, gyre_transforms::OptLevel::O2)
            .unwrap_or_else(|e| panic!("{name}: -O: {e}"));
        for (what, m) in [("plain", &plain), ("-O", &opt)] {
            // Each distinct text runs in ptx-sim once: the targets' texts differ only
            // in `.version`/`.target` today, which the simulator does not read.
            let mut seen: Vec<String> = Vec::new();
            for sm in Sm::ALL {
                let ptx = compile(m, sm);
                if let Some(p) = &ptxas {
                    run_ptxas(p, &ptx, sm)
                        .unwrap_or_else(|e| panic!("{name} ({what}, {sm}): {e}\n{ptx}"));
                }
                let b = body(&ptx);
                if seen.contains(&b) {
                    continue;
                }
                seen.push(b);
                for inputs in launches(name) {
                    compare(m, &kernel, &inputs, &ptx)
                        .unwrap_or_else(|e| panic!("{name} ({what}, {sm}): {e}\n{ptx}"));
                    runs += 1;
                }
            }
        }
    }
    assert!(runs >= 2 * names.len());
}

/// A PTX text without its `.version` and `.target` lines.
fn body(ptx: &str) -> String {
    ptx.lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with(".version") && !t.starts_with(".target")
        })
        .collect::<Vec<_>>()
        .join("\n")
}
