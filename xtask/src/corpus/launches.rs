//! How each corpus kernel is launched: grid and block shapes, scalar arguments and the
//! contents of the buffers its pointers get.
//!
//! Kernels take pointers and sizes, and random sizes fault, so every kernel runs with
//! [`default_plan`] (small sizes, generous buffers) unless [`LAUNCHES`] has an entry for
//! it; each entry says why the default does not fit. A run where the *input* still
//! faults is reported as "not comparable" with the interpreter's error.

use gyre_ir::generate::{RandomSource, SplitMix64};
use gyre_ir::Type;

/// Bytes of each pointer argument's buffer: a 32x32x32 array of 4-byte elements, so
/// 3-D indexing with the default size stays inside.
pub const BUFFER_BYTES: usize = 32 * 32 * 32 * 4;
/// The default value of every integer scalar argument (array sizes, counts).
pub const DEFAULT_INT: u64 = 32;

/// What a pointer argument's buffer holds before the launch.
#[derive(Copy, Clone, PartialEq, Debug)]
pub enum Fill {
    /// Random `f32` values in `[-2, 2)` (most corpus arrays are float).
    F32,
    /// Random `f64` values in `[-2, 2)`.
    F64,
    /// Random 32-bit integers in `0..n` (index and key arrays).
    U32Below(u32),
    /// Random 64-bit integers in `0..n` (index arrays of `i64`/`size_t`).
    U64Below(u64),
    /// Word `i` (32-bit) holds `i`: sorted keys (B+tree nodes).
    Ascending,
    /// Word `i` (32-bit) holds `start + i * step` (bit positions, offsets).
    Arith {
        /// Word 0.
        start: u32,
        /// The difference between neighbours.
        step: u32,
    },
    /// Zeros.
    Zero,
}

/// A scalar argument fixed by a [`Special`] entry.
#[derive(Copy, Clone, PartialEq, Debug)]
pub enum Scalar {
    /// An integer (its low bits for narrower parameters).
    Int(u64),
    /// A float (rounded to `f32` for `f32` parameters).
    Float(f64),
}

/// A launch that differs from the default, with the reason.
#[derive(Clone, Debug)]
pub struct Special {
    /// Corpus file name.
    pub file: &'static str,
    /// Why the default does not fit.
    pub reason: &'static str,
    /// Grid shape, if not the default.
    pub grid: Option<[u32; 3]>,
    /// Block shape, if not the default.
    pub block: Option<[u32; 3]>,
    /// Scalar arguments by parameter index (for a pointer parameter, an integer is a
    /// byte offset into its buffer).
    pub scalars: &'static [(usize, Scalar)],
    /// Buffer contents by parameter index.
    pub fills: &'static [(usize, Fill)],
    /// Bytes of each buffer, if not [`BUFFER_BYTES`].
    pub buffer_bytes: Option<usize>,
}

const NONE: Special = Special {
    file: "",
    reason: "",
    grid: None,
    block: None,
    scalars: &[],
    fills: &[],
    buffer_bytes: None,
};

/// dwt2d's kernels, `<WIN_SX = 192, WIN_SY = 8>`: the host's launch.
const DWT_REASON: &str = "192 threads per block (WIN_SX); the grid is sx/192 x sy/(8*steps) \
                          as the host computes it, for a 192x32 image in steps of 1 (more \
                          steps than the image has rows read outside it)";
const DWT_SIZES: &[(usize, Scalar)] = &[
    (2, Scalar::Int(192)),
    (3, Scalar::Int(32)),
    (4, Scalar::Int(1)),
];

/// nbody's integrateBodies(newPos, oldPos, vel, deviceOffset, deviceNumBodies, dt,
/// damping, numTiles).
const NBODY_REASON: &str = "a thread past deviceNumBodies returns before the tile loop's \
                            barriers, so the bodies must fill the grid (the host launches \
                            numBodies / blockSize blocks): 2 blocks of 64, 128 bodies, \
                            numTiles = 128 / 64, offset 0";
const NBODY_SIZES: &[(usize, Scalar)] = &[
    (3, Scalar::Int(0)),
    (4, Scalar::Int(128)),
    (7, Scalar::Int(2)),
];

/// Mandelbrot0 / MandelbrotDS0: blocks walk the tiles `blockIdx.x, + gridDim.x, ...`.
const MANDELBROT_REASON: &str = "the blocks walk the tiles by blockIdx.x alone (the host \
                                 launches a 1-D grid of worker blocks): a second row of \
                                 blocks would blend the same pixels again (frame > 0 \
                                 reads, blends and writes each pixel), a race between CTAs";

/// transposeCoalesced/transposeDiagonal(odata, idata, width, height).
const TRANSPOSE_REASON: &str = "each block moves a 32x32 tile with 32x8 threads \
                                (TILE_DIM, BLOCK_ROWS), so the block is 32x8 and the matrix \
                                64x64 for the 2x2 grid: with 16-wide blocks half of each tile \
                                is never loaded, and with width = height = 32 the blocks' \
                                tiles overlap, a race between CTAs";

/// The kernels whose launch is not the default one.
pub const LAUNCHES: &[Special] = &[
    Special {
        file: "cudasamples__eigenvalues_bisectKernelLarge_OneIntervals.ll",
        reason: "the superdiagonal is read at `g_s[i - 1]`: the host passes a pointer one \
                 float into its array (`g_b = g_b_raw + 1`)",
        scalars: &[(1, Scalar::Int(4))],
        ..NONE
    },
    Special {
        file: "rodinia__backprop_adjust_weights.ll",
        reason: "the weight index depends on blockIdx.y only (the host launches \
                 `grid(1, num_blocks)`): with two blocks along x, both read, add to and \
                 store the same weights, a race between CTAs that a GPU resolves \
                 differently from the interpreter's one-CTA-after-another order",
        grid: Some([1, 2, 1]),
        ..NONE
    },
    Special {
        file: "cudasamples__transpose_transposeCoalesced.ll",
        reason: TRANSPOSE_REASON,
        block: Some([32, 8, 1]),
        scalars: &[(2, Scalar::Int(64)), (3, Scalar::Int(64))],
        ..NONE
    },
    Special {
        file: "cudasamples__transpose_transposeDiagonal.ll",
        reason: TRANSPOSE_REASON,
        block: Some([32, 8, 1]),
        scalars: &[(2, Scalar::Int(64)), (3, Scalar::Int(64))],
        ..NONE
    },
    Special {
        file: "cudasamples__Mandelbrot_Mandelbrot0_float.ll",
        reason: MANDELBROT_REASON,
        grid: Some([2, 1, 1]),
        ..NONE
    },
    Special {
        file: "cudasamples__Mandelbrot_MandelbrotDS0.ll",
        reason: MANDELBROT_REASON,
        grid: Some([2, 1, 1]),
        ..NONE
    },
    Special {
        file: "rodinia__huffman_pack2.ll",
        reason: "cindex holds each block's code length in bits and cindex2 its bit position \
                 (their prefix sum): 96 bits per thread from bit 5 on, so every thread \
                 copies 3 words with a shift of 5 (a shift of 0 would be `x << 32`, \
                 poison in LLVM) and its neighbours meet only in atomicOr; 4 source words \
                 per block",
        scalars: &[(4, Scalar::Int(4))],
        fills: &[
            (1, Fill::Arith { start: 96, step: 0 }),
            (2, Fill::Arith { start: 5, step: 96 }),
            (3, Fill::Zero),
        ],
        ..NONE
    },
    Special {
        file: "cudasamples__shfl_scan_shfl_intimage_rows.ll",
        reason: "one row of the image per block of 120 threads (the host launches 1-D \
                 blocks of 120, each thread a uint4 of pixels); a 2-D block would have its \
                 rows write the same words",
        grid: Some([2, 1, 1]),
        block: Some([120, 1, 1]),
        fills: &[(0, Fill::U32Below(256))],
        ..NONE
    },
    Special {
        file: "cudasamples__shfl_scan_shfl_vertical_shfl.ll",
        reason: "the host's blockSz(32, 8) and a grid of width/32 blocks; the kernel walks \
                 135 steps of 8 rows, so the image has 1080 rows of `width` words \
                 (width 32: one block)",
        grid: Some([1, 1, 1]),
        block: Some([32, 8, 1]),
        scalars: &[(1, Scalar::Int(32)), (2, Scalar::Int(1080))],
        fills: &[(0, Fill::U32Below(1 << 16))],
        buffer_bytes: Some(32 * 1080 * 4),
    },
    Special {
        file: "cudasamples__nbody_integrateBodies_float.ll",
        reason: NBODY_REASON,
        grid: Some([2, 1, 1]),
        block: Some([64, 1, 1]),
        scalars: NBODY_SIZES,
        ..NONE
    },
    Special {
        file: "cudasamples__nbody_integrateBodies_double.ll",
        reason: NBODY_REASON,
        grid: Some([2, 1, 1]),
        block: Some([64, 1, 1]),
        scalars: NBODY_SIZES,
        fills: &[(0, Fill::F64), (1, Fill::F64), (2, Fill::F64)],
        ..NONE
    },
    Special {
        file: "rodinia__srad_v1_srad.ll",
        reason: "iN/iS/jW/jE hold neighbour row/column indices: they must be below the \
                 image size (rows = cols = 32)",
        fills: &[
            (4, Fill::U32Below(32)),
            (5, Fill::U32Below(32)),
            (6, Fill::U32Below(32)),
            (7, Fill::U32Below(32)),
        ],
        ..NONE
    },
    Special {
        file: "rodinia__srad_v1_srad2.ll",
        reason: "iN/iS/jW/jE hold neighbour row/column indices: they must be below the \
                 image size (rows = cols = 32)",
        fills: &[
            (4, Fill::U32Below(32)),
            (5, Fill::U32Below(32)),
            (6, Fill::U32Below(32)),
            (7, Fill::U32Below(32)),
        ],
        ..NONE
    },
    Special {
        file: "rodinia__particlefilter_find_index.ll",
        reason: "arrays of doubles (CDF, u, particle coordinates)",
        fills: &[
            (0, Fill::F64),
            (1, Fill::F64),
            (2, Fill::F64),
            (3, Fill::F64),
            (4, Fill::F64),
            (5, Fill::F64),
            (6, Fill::F64),
        ],
        ..NONE
    },
    Special {
        file: "rodinia__particlefilter_naive_kernel.ll",
        reason: "arrays of doubles (CDF, u, particle coordinates)",
        fills: &[
            (0, Fill::F64),
            (1, Fill::F64),
            (2, Fill::F64),
            (3, Fill::F64),
            (4, Fill::F64),
            (5, Fill::F64),
        ],
        ..NONE
    },
    Special {
        file: "cudasamples__reduction_reduce4_float_256.ll",
        reason: "the block size is the template argument 256 (shared array of 256 floats)",
        block: Some([256, 1, 1]),
        ..NONE
    },
    Special {
        file: "cudasamples__reduction_reduce6_double_256_pow2.ll",
        reason: "the block size is the template argument 256; the data are doubles",
        block: Some([256, 1, 1]),
        fills: &[(0, Fill::F64)],
        ..NONE
    },
    Special {
        file: "cudasamples__reduction_reduce7_float_256_pow2.ll",
        reason: "the block size is the template argument 256",
        block: Some([256, 1, 1]),
        ..NONE
    },
    Special {
        file: "cudasamples__threadFenceReduction_reduceSinglePass_256.ll",
        reason: "the block size is the template argument 256; the grid is 1-D (blockIdx.y \
                 is never read: two rows of blocks would race on g_odata and on the \
                 retirementCount the last block resets)",
        grid: Some([2, 1, 1]),
        block: Some([256, 1, 1]),
        ..NONE
    },
    Special {
        file: "cudasamples__histogram_mergeHistogram64Kernel.ll",
        reason: "MERGE_THREADBLOCK_SIZE is 256 (a shared array of that size is reduced in \
                 halving steps from 128); 64 bins",
        grid: Some([4, 1, 1]),
        block: Some([256, 1, 1]),
        fills: &[(1, Fill::U32Below(1000))],
        ..NONE
    },
    Special {
        file: "cudasamples__sortingNetworks_bitonicMergeShared.ll",
        reason: "SHARED_SIZE_LIMIT is 1024: 512 threads per block, each handles two keys; \
                 arrayLength 1024, size 64 (a power of two below it), stride 32, dir 1",
        grid: Some([1, 1, 1]),
        block: Some([512, 1, 1]),
        scalars: &[
            (4, Scalar::Int(1024)),
            (5, Scalar::Int(64)),
            (6, Scalar::Int(32)),
        ],
        ..NONE
    },
    Special {
        file: "cudasamples__sortingNetworks_oddEvenMergeSortShared.ll",
        reason: "SHARED_SIZE_LIMIT is 1024: 512 threads per block, arrayLength 1024, dir 1",
        grid: Some([1, 1, 1]),
        block: Some([512, 1, 1]),
        scalars: &[(4, Scalar::Int(1024)), (5, Scalar::Int(1))],
        ..NONE
    },
    Special {
        file: "cudasamples__sortingNetworks_oddEvenMergeGlobal.ll",
        reason: "arrayLength 1024, size 64 and stride 32 are powers of two as the host \
                 passes them; 256 threads per block, dir 1",
        grid: Some([2, 1, 1]),
        block: Some([256, 1, 1]),
        scalars: &[
            (4, Scalar::Int(1024)),
            (5, Scalar::Int(64)),
            (6, Scalar::Int(32)),
            (7, Scalar::Int(1)),
        ],
        ..NONE
    },
    Special {
        file: "cudasamples__clock_timedReduction.ll",
        reason: "NUM_THREADS 256 with 2*NUM_THREADS floats of dynamic shared memory; the \
                 timer array takes two i64 per block",
        grid: Some([2, 1, 1]),
        block: Some([256, 1, 1]),
        ..NONE
    },
    Special {
        file: "cudasamples__dwtHaar1D_dwtHaar1D.ll",
        reason: "one level: slength_step_half 256 with 256 threads, dlevels 1, bdim 256",
        grid: Some([1, 1, 1]),
        block: Some([256, 1, 1]),
        scalars: &[
            (3, Scalar::Int(1)),
            (4, Scalar::Int(256)),
            (5, Scalar::Int(256)),
        ],
        ..NONE
    },
    Special {
        file: "polybench__adi_kernel4.ll",
        reason: "rows have the fixed stride 1024 (N); the row index i (param 4) is 5",
        scalars: &[(4, Scalar::Int(5))],
        buffer_bytes: Some(POLYBENCH_1024),
        ..NONE
    },
    Special {
        file: "polybench__adi_kernel5.ll",
        reason: "reads the last row, 1023*1024 floats in: buffers of N*N floats",
        buffer_bytes: Some(POLYBENCH_1024),
        ..NONE
    },
    Special {
        file: "polybench__adi_kernel6.ll",
        reason: "rows have the fixed stride 1024 (N) and it reads row N-i-2: buffers of \
                 N*N floats, i (param 4) is 5",
        scalars: &[(4, Scalar::Int(5))],
        buffer_bytes: Some(POLYBENCH_1024),
        ..NONE
    },
    Special {
        file: "polybench__doitgen_kernel2.ll",
        reason: "indexes r*nq*np + q*np + p: with nq = np = 32 the slice r (param 6) must \
                 be below 32",
        scalars: &[(6, Scalar::Int(3))],
        ..NONE
    },
    Special {
        file: "polybench__fdtd2d_step3_kernel.ll",
        reason: "rows have the fixed stride 2048 (NY): 32 rows need 256 KiB buffers",
        buffer_bytes: Some(2048 * 33 * 4),
        ..NONE
    },
    Special {
        file: "polybench__gemver_kernel1.ll",
        reason: "rows have the fixed stride 4096 (N): 32 rows need 512 KiB buffers",
        buffer_bytes: Some(4096 * 33 * 4),
        ..NONE
    },
    Special {
        file: "polybench__gramschmidt_kernel2.ll",
        reason: "rows have the fixed stride 2048 (N); column k (param 5) is 3",
        scalars: &[(5, Scalar::Int(3))],
        buffer_bytes: Some(2048 * 33 * 4),
        ..NONE
    },
    Special {
        file: "rodinia__nn_euclid.ll",
        reason: "a 2-D grid of 1-D blocks (the index uses ctaid.y but not tid.y)",
        block: Some([64, 1, 1]),
        ..NONE
    },
    Special {
        file: "cudasamples__fastWalshTransform_fwtBatch2Kernel.ll",
        reason: "a 2-D grid of 1-D blocks; the stride (param 2) is a power of two, as the \
                 host passes it",
        block: Some([64, 1, 1]),
        scalars: &[(2, Scalar::Int(16))],
        ..NONE
    },
    Special {
        file: "rodinia__cfd_time_step.ll",
        reason: "no bounds check: nelr (param 1), the stride between the five variables, \
                 must equal the thread count (2 x 64)",
        scalars: &[(1, Scalar::Int(128))],
        ..NONE
    },
    Special {
        file: "rodinia__btree_findK.ll",
        reason: "currKnode and offset (params 4, 5) are node indices below knodes_elem \
                 (param 2, 32); a node's keys must ascend, or several threads match a key \
                 and race (word i of the nodes holds i, so keys are 258..515 within a \
                 node); the searched keys (param 6) are spread over 0..600",
        fills: &[
            (1, Fill::Ascending),
            (4, Fill::U64Below(32)),
            (5, Fill::U64Below(32)),
            (6, Fill::U32Below(600)),
        ],
        ..NONE
    },
    Special {
        file: "rodinia__dwt2d_fdwt53_192x8.ll",
        reason: DWT_REASON,
        grid: Some([1, 4, 1]),
        block: Some([192, 1, 1]),
        scalars: DWT_SIZES,
        ..NONE
    },
    Special {
        file: "rodinia__dwt2d_fdwt97_192x8.ll",
        reason: DWT_REASON,
        grid: Some([1, 4, 1]),
        block: Some([192, 1, 1]),
        scalars: DWT_SIZES,
        ..NONE
    },
    Special {
        file: "rodinia__dwt2d_rdwt53_192x8.ll",
        reason: DWT_REASON,
        grid: Some([1, 4, 1]),
        block: Some([192, 1, 1]),
        scalars: DWT_SIZES,
        ..NONE
    },
    Special {
        file: "rodinia__dwt2d_rdwt97_192x8.ll",
        reason: DWT_REASON,
        grid: Some([1, 4, 1]),
        block: Some([192, 1, 1]),
        scalars: DWT_SIZES,
        ..NONE
    },
    Special {
        file: "polybench__convolution3D_kernel.ll",
        reason: "works on plane i (param 5) only when 0 < i < NI-1: i is 1; planes have \
                 the fixed size 256x256, so planes 0..2 need 768 KiB buffers",
        scalars: &[(5, Scalar::Int(1))],
        buffer_bytes: Some(3 * 65536 * 4),
        ..NONE
    },
    Special {
        file: "polybench__lu_kernel1.ll",
        reason: "updates row k (param 2) right of column k: k is 3 (k = n does nothing)",
        scalars: &[(2, Scalar::Int(3))],
        ..NONE
    },
    Special {
        file: "polybench__lu_kernel2.ll",
        reason: "updates below and right of pivot k (param 2): k is 3 (k = n does nothing)",
        scalars: &[(2, Scalar::Int(3))],
        ..NONE
    },
    Special {
        file: "rodinia__gaussian_fan2.ll",
        reason: "updates rows and columns after step t (param 5): t is 3 (t = Size does \
                 nothing)",
        scalars: &[(5, Scalar::Int(3))],
        ..NONE
    },
    Special {
        file: "rodinia__particlefilter_sum.ll",
        reason: "thread 0 sums ceil(num_blocks / 512) doubles: num_blocks (param 1) is \
                 5000 (10 partial sums; 32 would sum only the first, a no-op)",
        scalars: &[(1, Scalar::Int(5000))],
        fills: &[(0, Fill::F64)],
        ..NONE
    },
    Special {
        file: "rodinia__cfd_initialize_variables.ll",
        reason: "no bounds check: nelr (param 0), the stride between the five variables, \
                 must equal the thread count (2 x 64)",
        scalars: &[(0, Scalar::Int(128))],
        ..NONE
    },
    Special {
        file: "cudasamples__NV12toBGR_nv12ToBGRplanarBatchKernel.ll",
        reason: "pitches are in bytes: source pitch (param 1) 32, destination pitch \
                 (param 3) 128 (32 floats); a 32x32 image (params 4, 5), batch 1 (param 6)",
        scalars: &[
            (1, Scalar::Int(32)),
            (3, Scalar::Int(128)),
            (4, Scalar::Int(32)),
            (5, Scalar::Int(32)),
            (6, Scalar::Int(1)),
        ],
        ..NONE
    },
    Special {
        file: "cudasamples__mergeSort_mergeElementaryIntervals_1u.ll",
        reason: "SAMPLE_STRIDE (128) threads per block; the sample limits (params 4, 5) are \
                 ascending positions (word i holds i), so each merged interval is short \
                 and in bounds; the source keys (param 2) ascend, or equal ranks collide \
                 in shared memory (a race); stride 128 (param 6), N 1024 (param 7)",
        grid: Some([2, 1, 1]),
        block: Some([128, 1, 1]),
        scalars: &[(6, Scalar::Int(128)), (7, Scalar::Int(1024))],
        fills: &[
            (0, Fill::U32Below(1 << 20)),
            (1, Fill::U32Below(1 << 20)),
            (2, Fill::Ascending),
            (3, Fill::U32Below(1 << 20)),
            (4, Fill::Ascending),
            (5, Fill::Ascending),
        ],
        ..NONE
    },
    Special {
        file: "cudasamples__dct8x8_CUDAkernel2IDCT.ll",
        reason: "ThreadsFullWarps is (8, KER2_BLOCK_WIDTH/8, KER2_BLOCK_HEIGHT/8) = (8, 4, 2) \
                 for a 32x16 block of the image (shared 16 rows of 33); a 2x2 grid covers a \
                 64x32 image, ImgStride (param 2) 64",
        block: Some([8, 4, 2]),
        scalars: &[(2, Scalar::Int(64))],
        ..NONE
    },
    Special {
        file: "cudasamples__dct8x8_CUDAkernelShortDCT.ll",
        reason: "ThreadsShort is (8, KERS_BLOCK_WIDTH/8, KERS_BLOCK_HEIGHT/8) = (8, 4, 4) for \
                 a 32x32 block of the image (shared 32 rows of 34 shorts); a 2x2 grid covers \
                 a 64x64 image, ImgStride (param 1) 64",
        block: Some([8, 4, 4]),
        scalars: &[(1, Scalar::Int(64))],
        ..NONE
    },
    Special {
        file: "cudasamples__quasirandomGenerator_quasirandomGeneratorKernel.ll",
        reason: "threadIdx.y is the dimension, below QRNG_DIMENSIONS (3): the c_Table rows",
        grid: Some([2, 1, 1]),
        block: Some([64, 3, 1]),
        ..NONE
    },
];

/// 4 MiB: PolyBench's fixed problem sizes (N = 1024 rows of 1024 floats).
const POLYBENCH_1024: usize = 1024 * 1024 * 4;

/// The special launch of `file`, if any.
pub fn special(file: &str) -> Option<&'static Special> {
    LAUNCHES.iter().find(|s| s.file == file)
}

/// Grid, block and inputs of one kernel, before the per-run random contents.
#[derive(Clone, Debug)]
pub struct Plan {
    /// CTAs per dimension.
    pub grid: [u32; 3],
    /// Threads per CTA dimension.
    pub block: [u32; 3],
    /// Scalar arguments fixed by the table, by parameter index.
    pub scalars: Vec<(usize, Scalar)>,
    /// Buffer contents fixed by the table, by parameter index.
    pub fills: Vec<(usize, Fill)>,
    /// Bytes of each buffer.
    pub buffer_bytes: usize,
    /// The table's reason, if the launch is not the default.
    pub reason: Option<&'static str>,
}

/// The block shape in a MANIFEST `launch` cell (`... ; block=(32,8)`), if it gives one.
pub fn manifest_block(launch: &str) -> Option<[u32; 3]> {
    let rest = &launch[launch.find("block=(")? + "block=(".len()..];
    let inner = &rest[..rest.find(')')?];
    let mut dims = [1u32; 3];
    for (i, d) in inner.split(',').enumerate() {
        *dims.get_mut(i)? = d.trim().parse().ok()?;
    }
    Some(dims)
}

/// The default launch: the manifest's block shape (else 16x8 for kernels with 2-D
/// indexing and 64 threads for the rest), a grid of 2x2 (2-D) or 2 CTAs, every integer
/// scalar [`DEFAULT_INT`], every buffer [`BUFFER_BYTES`] of random `f32`s.
pub fn default_plan(features: &str, launch: &str) -> Plan {
    let two_d = features.contains("2D-index");
    let block = manifest_block(launch).unwrap_or(if two_d { [16, 8, 1] } else { [64, 1, 1] });
    let grid = if two_d || block[1] > 1 {
        [2, 2, 1]
    } else {
        [2, 1, 1]
    };
    Plan {
        grid,
        block,
        scalars: Vec::new(),
        fills: Vec::new(),
        buffer_bytes: BUFFER_BYTES,
        reason: None,
    }
}

/// The plan for a corpus file: [`default_plan`] with its [`LAUNCHES`] entry applied.
pub fn plan(file: &str, features: &str, launch: &str) -> Plan {
    let mut p = default_plan(features, launch);
    if let Some(s) = special(file) {
        p.grid = s.grid.unwrap_or(p.grid);
        p.block = s.block.unwrap_or(p.block);
        p.scalars = s.scalars.to_vec();
        p.fills = s.fills.to_vec();
        p.buffer_bytes = s.buffer_bytes.unwrap_or(p.buffer_bytes);
        p.reason = Some(s.reason);
    }
    p
}

/// One kernel argument of a run.
#[derive(Clone, PartialEq, Debug)]
pub enum Value {
    /// An integer scalar (low bits for narrow parameters).
    Int(u64),
    /// An `f32` scalar.
    F32(f32),
    /// An `f64` scalar.
    F64(f64),
    /// Buffer number `.0` of [`Case::buffers`], `.1` bytes past its start.
    Buffer(usize, u64),
    /// The bytes of a `byval` parameter (a struct passed by value).
    Bytes(Vec<u8>),
}

/// The inputs of one run: arguments and the initial contents of the buffers.
#[derive(Clone, Debug)]
pub struct Case {
    /// One value per kernel parameter.
    pub args: Vec<Value>,
    /// Buffers: name (for the interpreter) and bytes.
    pub buffers: Vec<(String, Vec<u8>)>,
    /// Per buffer: filled with floats (compared with a tolerance between compilers).
    pub floats: Vec<bool>,
}

/// Fill `len` bytes as `fill` says.
pub fn fill_bytes(fill: Fill, len: usize, rng: &mut SplitMix64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    // A float in [-2, 2) on a 1/256 grid: exact in both widths, no NaN or infinity.
    let unit = |rng: &mut SplitMix64| (rng.below(1024) as f64 - 512.0) / 256.0;
    while out.len() < len {
        match fill {
            Fill::F32 => out.extend_from_slice(&(unit(rng) as f32).to_le_bytes()),
            Fill::F64 => out.extend_from_slice(&unit(rng).to_le_bytes()),
            Fill::U32Below(n) => {
                out.extend_from_slice(&(rng.below(u64::from(n.max(1))) as u32).to_le_bytes())
            }
            Fill::U64Below(n) => out.extend_from_slice(&rng.below(n.max(1)).to_le_bytes()),
            Fill::Ascending => out.extend_from_slice(&((out.len() / 4) as u32).to_le_bytes()),
            Fill::Arith { start, step } => {
                let i = (out.len() / 4) as u32;
                out.extend_from_slice(&start.wrapping_add(i.wrapping_mul(step)).to_le_bytes())
            }
            Fill::Zero => out.push(0),
        }
    }
    out.truncate(len);
    out
}

/// The inputs of run `seed` of a kernel with parameters `params`, of which those in
/// `byval` (index, bytes) are structs passed by value (random bytes, or the buffer
/// fill the plan gives for that parameter).
pub fn case(plan: &Plan, params: &[Type], byval: &[(usize, usize)], seed: u64) -> Case {
    let mut rng = SplitMix64::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xc0de);
    let mut args = Vec::with_capacity(params.len());
    let mut buffers = Vec::new();
    let mut floats = Vec::new();
    for (i, &t) in params.iter().enumerate() {
        let fixed = plan.scalars.iter().find(|(k, _)| *k == i).map(|p| p.1);
        if let Some(&(_, size)) = byval.iter().find(|(k, _)| *k == i) {
            let fill = plan.fills.iter().find(|(k, _)| *k == i).map(|p| p.1);
            let bytes = match fill {
                Some(f) => fill_bytes(f, size, &mut rng),
                None => (0..size).map(|_| rng.below(256) as u8).collect(),
            };
            args.push(Value::Bytes(bytes));
            continue;
        }
        let v = match (t, fixed) {
            (Type::Ptr(_), _) => {
                let fill = plan
                    .fills
                    .iter()
                    .find(|(k, _)| *k == i)
                    .map_or(Fill::F32, |p| p.1);
                buffers.push((
                    format!("__corpus.arg{i}"),
                    fill_bytes(fill, plan.buffer_bytes, &mut rng),
                ));
                floats.push(matches!(fill, Fill::F32 | Fill::F64));
                // An integer given for a pointer is a byte offset into its buffer (a
                // host that passes `a + 1`).
                let off = match fixed {
                    Some(Scalar::Int(o)) => o,
                    _ => 0,
                };
                Value::Buffer(buffers.len() - 1, off)
            }
            (Type::F32, Some(Scalar::Float(x))) => Value::F32(x as f32),
            (Type::F64, Some(Scalar::Float(x))) => Value::F64(x),
            (Type::F32, _) => Value::F32(0.5 + rng.below(64) as f32 / 32.0),
            (Type::F64, _) => Value::F64(0.5 + rng.below(64) as f64 / 32.0),
            (_, Some(Scalar::Int(n))) => Value::Int(n),
            (Type::I1, _) => Value::Int(rng.below(2)),
            (_, _) => Value::Int(DEFAULT_INT),
        };
        args.push(v);
    }
    Case {
        args,
        buffers,
        floats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_block_shapes() {
        assert_eq!(
            manifest_block("host: <<<grid2,block>>> ; block=(32,8)"),
            Some([32, 8, 1])
        );
        assert_eq!(manifest_block("host: <<<a, b>>>"), None);
    }

    #[test]
    fn table_entries_have_reasons_and_distinct_files() {
        for (i, s) in LAUNCHES.iter().enumerate() {
            assert!(!s.reason.is_empty(), "{}", s.file);
            assert!(
                LAUNCHES[..i].iter().all(|t| t.file != s.file),
                "{} twice",
                s.file
            );
        }
    }

    #[test]
    fn cases_follow_the_plan() {
        let mut p = default_plan("2D-index", "-");
        assert_eq!((p.grid, p.block), ([2, 2, 1], [16, 8, 1]));
        p.fills = vec![(1, Fill::U32Below(5))];
        p.buffer_bytes = 64;
        let c = case(
            &p,
            &[Type::I32, Type::Ptr(gyre_ir::AddrSpace::Global)],
            &[],
            3,
        );
        assert_eq!(c.args, vec![Value::Int(DEFAULT_INT), Value::Buffer(0, 0)]);
        assert_eq!(c.buffers[0].1.len(), 64);
        assert!(c.buffers[0]
            .1
            .chunks(4)
            .all(|w| u32::from_le_bytes(w.try_into().unwrap()) < 5));
    }
}
