//! How each corpus kernel is launched: grid and block shapes, scalar arguments and the
//! contents of the buffers its pointers get.
//!
//! Kernels take pointers and sizes, and random sizes fault, so every kernel runs with
//! [`default_plan`] (small sizes, generous buffers) unless [`LAUNCHES`] has an entry for
//! it; each entry says why the default does not fit. A run where the *input* still
//! faults is reported as "not comparable" with the interpreter's error.

use gyre_ir::gen::{RandomSource, SplitMix64};
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
    /// Scalar arguments by parameter index.
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

/// The kernels whose launch is not the default one.
pub const LAUNCHES: &[Special] = &[
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
        reason: "the block size is the template argument 256",
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
];

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
    /// The start of buffer number `.0` of [`Case::buffers`].
    Buffer(usize),
}

/// The inputs of one run: arguments and the initial contents of the buffers.
#[derive(Clone, Debug)]
pub struct Case {
    /// One value per kernel parameter.
    pub args: Vec<Value>,
    /// Buffers: name (for the interpreter) and bytes.
    pub buffers: Vec<(String, Vec<u8>)>,
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
            Fill::Zero => out.push(0),
        }
    }
    out.truncate(len);
    out
}

/// The inputs of run `seed` of a kernel with parameters `params`.
pub fn case(plan: &Plan, params: &[Type], seed: u64) -> Case {
    let mut rng = SplitMix64::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xc0de);
    let mut args = Vec::with_capacity(params.len());
    let mut buffers = Vec::new();
    for (i, &t) in params.iter().enumerate() {
        let fixed = plan.scalars.iter().find(|(k, _)| *k == i).map(|p| p.1);
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
                Value::Buffer(buffers.len() - 1)
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
    Case { args, buffers }
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
        let c = case(&p, &[Type::I32, Type::Ptr(gyre_ir::AddrSpace::Global)], 3);
        assert_eq!(c.args, vec![Value::Int(DEFAULT_INT), Value::Buffer(0)]);
        assert_eq!(c.buffers[0].1.len(), 64);
        assert!(c.buffers[0]
            .1
            .chunks(4)
            .all(|w| u32::from_le_bytes(w.try_into().unwrap()) < 5));
    }
}
