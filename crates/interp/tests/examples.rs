//! The example kernels against plain Rust references, under several thread orders.

mod common;

use common::parse;
use gyre_interp::{run_kernel, Arg, Launch, Memory, Schedule};

const ORDERS: [Schedule; 3] = [Schedule::Forward, Schedule::Reverse, Schedule::Shuffle(7)];

fn with_order(mut l: Launch, s: Schedule) -> Launch {
    l.config.schedule = s;
    l
}

/// A deterministic stream of test data.
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

pub const SAXPY: &str = "
kernel @saxpy(ptr.global, ptr.global, f32, i32) {
block0(v0: ptr.global, v1: ptr.global, v2: f32, v3: i32):
    v4 = tid.x
    v5 = ctaid.x
    v6 = ntid.x
    v7 = imul v5, v6
    v8 = iadd v7, v4
    v9 = icmp slt v8, v3
    brif v9, block1, block2
block1:
    v10 = sext.i64 v8
    v11 = ptradd v0, v10, 4
    v12 = load.f32 v11
    v13 = ptradd v1, v10, 4
    v14 = load.f32 v13
    v15 = fma v2, v12, v14
    store v15, v13
    jump block2
block2:
    return
}
";

#[test]
fn saxpy() {
    let m = parse(SAXPY);
    let n = 1000;
    let (x, y) = (data(n, 1), data(n, 2));
    let a = 1.75f32;
    let want: Vec<f32> = x.iter().zip(&y).map(|(&x, &y)| a.mul_add(x, y)).collect();
    for s in ORDERS {
        let mut mem = Memory::new();
        mem.alloc_from("x", &x);
        mem.alloc_from("y", &y);
        let l = Launch::linear(
            8,
            128,
            vec![
                Arg::buffer("x"),
                Arg::buffer("y"),
                Arg::F32(a),
                Arg::Int(n as u64),
            ],
        );
        let out = run_kernel(&m, "saxpy", &with_order(l, s), &mut mem).unwrap();
        assert_eq!(mem.read::<f32>("y").unwrap(), want);
        assert_eq!(mem.read::<f32>("x").unwrap(), x);
        assert_eq!(out.ctas, 8);
    }
}

pub const STENCIL: &str = "
kernel @stencil(ptr.global, ptr.global, i32, i32) {
block0(v0: ptr.global, v1: ptr.global, v2: i32, v3: i32):
    v4 = tid.x
    v5 = ctaid.x
    v6 = ntid.x
    v7 = imul v5, v6
    v8 = iadd v7, v4
    v9 = tid.y
    v10 = ctaid.y
    v11 = ntid.y
    v12 = imul v10, v11
    v13 = iadd v12, v9
    v14 = iconst.i32 1
    v15 = isub v2, v14
    v16 = isub v3, v14
    v17 = icmp sge v8, v14
    v18 = icmp slt v8, v15
    v19 = icmp sge v13, v14
    v20 = icmp slt v13, v16
    v21 = and v17, v18
    v22 = and v19, v20
    v23 = and v21, v22
    brif v23, block1, block2
block1:
    v24 = imul v13, v2
    v25 = iadd v24, v8
    v26 = sext.i64 v25
    v27 = ptradd v0, v26, 4
    v28 = iconst.i64 -1
    v29 = iconst.i64 1
    v30 = sext.i64 v2
    v31 = iconst.i64 0
    v32 = isub v31, v30
    v33 = ptradd v27, v28, 4
    v34 = ptradd v27, v29, 4
    v35 = ptradd v27, v32, 4
    v36 = ptradd v27, v30, 4
    v37 = load.f32 v33
    v38 = load.f32 v34
    v39 = load.f32 v35
    v40 = load.f32 v36
    v41 = fadd v37, v38
    v42 = fadd v41, v39
    v43 = fadd v42, v40
    v44 = fconst.f32 0.25
    v45 = fmul v43, v44
    v46 = ptradd v1, v26, 4
    store v45, v46
    jump block2
block2:
    return
}
";

#[test]
fn stencil_2d() {
    let m = parse(STENCIL);
    let (w, h) = (24usize, 20usize);
    let input = data(w * h, 3);
    let mut want = vec![0f32; w * h];
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            want[i] = (input[i - 1] + input[i + 1] + input[i - w] + input[i + w]) * 0.25;
        }
    }
    for s in ORDERS {
        let mut mem = Memory::new();
        mem.alloc_from("in", &input);
        mem.alloc_zeroed("out", w * h * 4);
        let l = Launch::new(
            [3, 5, 1],
            [8, 4, 1],
            vec![
                Arg::buffer("in"),
                Arg::buffer("out"),
                Arg::Int(w as u64),
                Arg::Int(h as u64),
            ],
        );
        run_kernel(&m, "stencil", &with_order(l, s), &mut mem).unwrap();
        assert_eq!(mem.read::<f32>("out").unwrap(), want);
    }
}

pub const MATMUL: &str = "
global @As: shared [16 x f32] align 4
global @Bs: shared [16 x f32] align 4

kernel @matmul(ptr.global, ptr.global, ptr.global, i32) convergent {
block0(v0: ptr.global, v1: ptr.global, v2: ptr.global, v3: i32):
    v4 = tid.x
    v5 = tid.y
    v6 = ctaid.x
    v7 = ctaid.y
    v8 = iconst.i32 4
    v9 = imul v7, v8
    v10 = iadd v9, v5
    v11 = imul v6, v8
    v12 = iadd v11, v4
    v13 = fconst.f32 0.0
    v14 = iconst.i32 0
    v15 = udiv v3, v8
    v16 = global_addr @As
    v17 = global_addr @Bs
    v18 = imul v5, v8
    v19 = iadd v18, v4
    v20 = sext.i64 v19
    v21 = ptradd v16, v20, 4
    v22 = ptradd v17, v20, 4
    v23 = imul v10, v3
    jump block1(v14, v13)
block1(v30: i32, v31: f32):
    v32 = icmp slt v30, v15
    brif v32, block2, block4
block2:
    v33 = imul v30, v8
    v34 = iadd v23, v33
    v35 = iadd v34, v4
    v36 = sext.i64 v35
    v37 = ptradd v0, v36, 4
    v38 = load.f32 v37
    store v38, v21
    v39 = iadd v33, v5
    v40 = imul v39, v3
    v41 = iadd v40, v12
    v42 = sext.i64 v41
    v43 = ptradd v1, v42, 4
    v44 = load.f32 v43
    store v44, v22
    barrier
    jump block3(v14, v31)
block3(v50: i32, v51: f32):
    v52 = icmp slt v50, v8
    brif v52, block5, block6
block5:
    v53 = iadd v18, v50
    v54 = sext.i64 v53
    v55 = ptradd v16, v54, 4
    v56 = load.f32 v55
    v57 = imul v50, v8
    v58 = iadd v57, v4
    v59 = sext.i64 v58
    v60 = ptradd v17, v59, 4
    v61 = load.f32 v60
    v62 = fma v56, v61, v51
    v63 = iconst.i32 1
    v64 = iadd v50, v63
    jump block3(v64, v62)
block6:
    barrier
    v65 = iconst.i32 1
    v66 = iadd v30, v65
    jump block1(v66, v51)
block4:
    v67 = iadd v23, v12
    v68 = sext.i64 v67
    v69 = ptradd v2, v68, 4
    store v31, v69
    return
}
";

#[test]
fn tiled_matmul_with_barriers() {
    let m = parse(MATMUL);
    let n = 12usize;
    let (a, b) = (data(n * n, 4), data(n * n, 5));
    let mut want = vec![0f32; n * n];
    for r in 0..n {
        for c in 0..n {
            let mut acc = 0f32;
            for k in 0..n {
                acc = a[r * n + k].mul_add(b[k * n + c], acc);
            }
            want[r * n + c] = acc;
        }
    }
    for s in ORDERS {
        let mut mem = Memory::new();
        mem.alloc_from("a", &a);
        mem.alloc_from("b", &b);
        mem.alloc_zeroed("c", n * n * 4);
        let l = Launch::new(
            [3, 3, 1],
            [4, 4, 1],
            vec![
                Arg::buffer("a"),
                Arg::buffer("b"),
                Arg::buffer("c"),
                Arg::Int(n as u64),
            ],
        );
        let out = run_kernel(&m, "matmul", &with_order(l, s), &mut mem).unwrap();
        assert_eq!(mem.read::<f32>("c").unwrap(), want);
        // Two barriers per tile, three tiles, nine CTAs.
        assert_eq!(out.barriers, 2 * 3 * 9);
    }
}

pub const REDUCE: &str = "
global @sdata: shared [64 x f32] align 4

kernel @reduce(ptr.global, ptr.global) convergent {
block0(v0: ptr.global, v1: ptr.global):
    v2 = tid.x
    v3 = ctaid.x
    v4 = ntid.x
    v5 = imul v3, v4
    v6 = iadd v5, v2
    v7 = sext.i64 v6
    v8 = ptradd v0, v7, 4
    v9 = load.f32 v8
    v10 = global_addr @sdata
    v11 = sext.i64 v2
    v12 = ptradd v10, v11, 4
    store v9, v12
    barrier
    v13 = iconst.i32 1
    v14 = lshr v4, v13
    jump block1(v14)
block1(v20: i32):
    v21 = iconst.i32 0
    v22 = icmp ugt v20, v21
    brif v22, block2, block5
block2:
    v23 = icmp ult v2, v20
    brif v23, block3, block4
block3:
    v24 = load.f32 v12
    v25 = sext.i64 v20
    v26 = ptradd v12, v25, 4
    v27 = load.f32 v26
    v28 = fadd v24, v27
    store v28, v12
    jump block4
block4:
    barrier
    v29 = iconst.i32 1
    v30 = lshr v20, v29
    jump block1(v30)
block5:
    v31 = iconst.i32 0
    v32 = icmp eq v2, v31
    brif v32, block6, block7
block6:
    v33 = load.f32 v10
    v34 = sext.i64 v3
    v35 = ptradd v1, v34, 4
    store v33, v35
    jump block7
block7:
    return
}
";

#[test]
fn block_reduction_with_barriers() {
    let m = parse(REDUCE);
    let (ctas, bs) = (5usize, 64usize);
    let input = data(ctas * bs, 6);
    let want: Vec<f32> = input
        .chunks(bs)
        .map(|c| {
            let mut v = c.to_vec();
            let mut s = bs / 2;
            while s > 0 {
                for i in 0..s {
                    v[i] += v[i + s];
                }
                s /= 2;
            }
            v[0]
        })
        .collect();
    for s in ORDERS {
        let mut mem = Memory::new();
        mem.alloc_from("in", &input);
        mem.alloc_zeroed("out", ctas * 4);
        let l = Launch::linear(
            ctas as u32,
            bs as u32,
            vec![Arg::buffer("in"), Arg::buffer("out")],
        );
        run_kernel(&m, "reduce", &with_order(l, s), &mut mem).unwrap();
        assert_eq!(mem.read::<f32>("out").unwrap(), want);
    }
}

pub const SEARCH: &str = "
kernel @search(ptr.global, ptr.global, i32, i32) {
block0(v0: ptr.global, v1: ptr.global, v2: i32, v3: i32):
    v4 = tid.x
    v5 = ctaid.x
    v6 = ntid.x
    v7 = imul v5, v6
    v8 = iadd v7, v4
    v9 = imul v8, v2
    v10 = iconst.i32 0
    v11 = iconst.i32 -1
    jump block1(v10)
block1(v20: i32):
    v21 = icmp slt v20, v2
    brif v21, block2, block4(v11)
block2:
    v22 = iadd v9, v20
    v23 = sext.i64 v22
    v24 = ptradd v0, v23, 4
    v25 = load.i32 v24
    v26 = icmp eq v25, v3
    brif v26, block4(v20), block3
block3:
    v27 = iconst.i32 1
    v28 = iadd v20, v27
    jump block1(v28)
block4(v30: i32):
    v31 = sext.i64 v8
    v32 = ptradd v1, v31, 4
    store v30, v32
    return
}
";

#[test]
fn early_exit_search() {
    let m = parse(SEARCH);
    let (rows, len) = (64usize, 50usize);
    let table: Vec<i32> = (0..rows * len).map(|i| ((i * 7919) % 97) as i32).collect();
    let key = 42;
    let want: Vec<i32> = table
        .chunks(len)
        .map(|r| r.iter().position(|&x| x == key).map_or(-1, |p| p as i32))
        .collect();
    assert!(
        want.contains(&-1) && want.iter().any(|&w| w > 0),
        "test data covers both exits"
    );
    for s in ORDERS {
        let mut mem = Memory::new();
        mem.alloc_from("t", &table);
        mem.alloc_zeroed("out", rows * 4);
        let l = Launch::linear(
            2,
            32,
            vec![
                Arg::buffer("t"),
                Arg::buffer("out"),
                Arg::Int(len as u64),
                Arg::Int(key as u64),
            ],
        );
        run_kernel(&m, "search", &with_order(l, s), &mut mem).unwrap();
        assert_eq!(mem.read::<i32>("out").unwrap(), want);
    }
}
