//! Every kernel shipped in `examples/` gives the right answer against a plain Rust
//! reference, under several thread orders. The references repeat each kernel's float
//! operations in the same order, so results must match bit for bit.

use gyre_interp::{run_kernel, Arg, Launch, Memory, Schedule};
use gyre_ir::Module;
use std::path::Path;

const ORDERS: [Schedule; 3] = [Schedule::Forward, Schedule::Reverse, Schedule::Shuffle(3)];

fn example(name: &str) -> Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    let src = std::fs::read_to_string(&path).expect("example exists");
    gyre_ir::parse_module(&src).unwrap_or_else(|e| panic!("{}", e.render(name, &src)))
}

/// Deterministic test data in [-10, 10).
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

/// Run `kernel` of `file` with `buffers` (name, initial f32 data or i32 data) under
/// every schedule; returns the named output buffer, checking all orders agree.
fn run(
    file: &str,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[Arg],
    bufs: &[(&str, Vec<u8>)],
    out: &str,
) -> Vec<u8> {
    let m = example(file);
    let mut result: Option<Vec<u8>> = None;
    for s in ORDERS {
        let mut mem = Memory::new();
        for (name, bytes) in bufs {
            mem.alloc_buffer(name, bytes.clone());
        }
        let mut launch = Launch::new(grid, block, args.to_vec());
        launch.config.schedule = s;
        run_kernel(&m, kernel, &launch, &mut mem).unwrap_or_else(|e| panic!("{file} {s:?}: {e}"));
        let got = mem.bytes(out).expect("output buffer").to_vec();
        if let Some(r) = &result {
            assert_eq!(r, &got, "{file}: thread order {s:?} changed the result");
        }
        result = Some(got);
    }
    result.expect("ran at least once")
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn as_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn as_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn assert_bits_eq(file: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{file}[{i}]: got {g}, want {w}");
    }
}

#[test]
fn saxpy() {
    let (n, a) = (200usize, 1.5f32);
    let (x, y) = (data(256, 1), data(256, 2));
    let mut want = y.clone();
    for i in 0..n {
        want[i] = a * x[i] + y[i];
    }
    let got = run(
        "saxpy.gir",
        "saxpy",
        [4, 1, 1],
        [64, 1, 1],
        &[
            Arg::buffer("x"),
            Arg::buffer("y"),
            Arg::F32(a),
            Arg::Int(n as u64),
        ],
        &[("x", f32_bytes(&x)), ("y", f32_bytes(&y))],
        "y",
    );
    assert_bits_eq("saxpy", &as_f32(&got), &want);
}

#[test]
fn stencil2d() {
    let (planes, h, w) = (2usize, 9usize, 11usize);
    let input = data(planes * h * w, 3);
    let mut want = vec![0f32; planes * h * w];
    for p in 0..planes {
        for i in 1..h - 1 {
            for j in 1..w - 1 {
                let c = (p * h + i) * w + j;
                let s = input[c] + input[c - 1] + input[c + 1] + input[c - w] + input[c + w];
                want[c] = s * 0.2f32;
            }
        }
    }
    let got = run(
        "stencil2d.gir",
        "stencil2d",
        [2, 1, 1],
        [3, 1, 1],
        &[
            Arg::buffer("out"),
            Arg::buffer("in"),
            Arg::Int(planes as u64),
            Arg::Int(h as u64),
            Arg::Int(w as u64),
        ],
        &[
            ("out", vec![0; planes * h * w * 4]),
            ("in", f32_bytes(&input)),
        ],
        "out",
    );
    assert_bits_eq("stencil2d", &as_f32(&got), &want);
}

#[test]
fn matmul_tiled() {
    let n = 32usize;
    let (a, b) = (data(n * n, 4), data(n * n, 5));
    let mut want = vec![0f32; n * n];
    for r in 0..n {
        for c in 0..n {
            let mut acc = 0f32;
            for k in 0..n {
                acc += a[r * n + k] * b[k * n + c];
            }
            want[r * n + c] = acc;
        }
    }
    let got = run(
        "matmul_tiled.gir",
        "matmul_tiled",
        [2, 2, 1],
        [16, 16, 1],
        &[
            Arg::buffer("c"),
            Arg::buffer("a"),
            Arg::buffer("b"),
            Arg::Int(n as u64),
        ],
        &[
            ("c", vec![0; n * n * 4]),
            ("a", f32_bytes(&a)),
            ("b", f32_bytes(&b)),
        ],
        "c",
    );
    assert_bits_eq("matmul_tiled", &as_f32(&got), &want);
}

#[test]
fn block_reduce() {
    let (ctas, threads) = (3usize, 128usize);
    let input = data(ctas * threads, 6);
    let want: Vec<f32> = input
        .chunks(threads)
        .map(|chunk| {
            let mut partial = chunk.to_vec();
            let mut s = threads / 2;
            while s > 0 {
                for t in 0..s {
                    partial[t] += partial[t + s];
                }
                s /= 2;
            }
            partial[0]
        })
        .collect();
    let got = run(
        "block_reduce.gir",
        "block_reduce",
        [ctas as u32, 1, 1],
        [threads as u32, 1, 1],
        &[Arg::buffer("out"), Arg::buffer("in")],
        &[("out", vec![0; ctas * 4]), ("in", f32_bytes(&input))],
        "out",
    );
    assert_bits_eq("block_reduce", &as_f32(&got), &want);
}

#[test]
fn search() {
    let (threads, seg, key) = (64usize, 16usize, 7i32);
    let input: Vec<i32> = (0..threads * seg)
        .map(|i| ((i * 7919) % 97) as i32)
        .collect();
    let want: Vec<i32> = (0..threads)
        .map(|g| {
            (g * seg..(g + 1) * seg)
                .find(|&j| input[j] == key)
                .map_or(-1, |j| j as i32)
        })
        .collect();
    assert!(
        want.contains(&-1) && want.iter().any(|&w| w >= 0),
        "test data exercises both exits"
    );
    let got = run(
        "search.gir",
        "search",
        [2, 1, 1],
        [32, 1, 1],
        &[
            Arg::buffer("out"),
            Arg::buffer("in"),
            Arg::Int(key as u64),
            Arg::Int(seg as u64),
        ],
        &[("out", vec![0; threads * 4]), ("in", i32_bytes(&input))],
        "out",
    );
    assert_eq!(as_i32(&got), want);
}

#[test]
fn invariant_branch() {
    let (n, scale) = (300usize, 2.5f32);
    let input = data(n, 7);
    for mode in [0i32, 1] {
        let want: Vec<f32> = input
            .iter()
            .map(|&x| if mode != 0 { x * scale } else { x + scale })
            .collect();
        let got = run(
            "invariant_branch.gir",
            "invariant_branch",
            [2, 1, 1],
            [32, 1, 1],
            &[
                Arg::buffer("out"),
                Arg::buffer("in"),
                Arg::Int(n as u64),
                Arg::F32(scale),
                Arg::Int(mode as u64),
            ],
            &[("out", vec![0; n * 4]), ("in", f32_bytes(&input))],
            "out",
        );
        assert_bits_eq("invariant_branch", &as_f32(&got), &want);
    }
}

#[test]
fn tid_branch() {
    let (n, ctas, threads) = (37usize, 2usize, 32usize);
    let input = data(n, 8);
    let want: Vec<f32> = (0..ctas * threads)
        .map(|gid| {
            let tid = gid % threads;
            let mut acc = 0f32;
            for &x in &input {
                acc = if tid % 2 == 0 { acc + x * x } else { acc + x };
            }
            acc
        })
        .collect();
    let got = run(
        "tid_branch.gir",
        "tid_branch",
        [ctas as u32, 1, 1],
        [threads as u32, 1, 1],
        &[Arg::buffer("out"), Arg::buffer("in"), Arg::Int(n as u64)],
        &[
            ("out", vec![0; ctas * threads * 4]),
            ("in", f32_bytes(&input)),
        ],
        "out",
    );
    assert_bits_eq("tid_branch", &as_f32(&got), &want);
}
