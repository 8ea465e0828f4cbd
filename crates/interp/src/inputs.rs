//! Random inputs for kernels from the UB-free generator, following their
//! [`KernelContract`].

use crate::compare::Inputs;
use crate::memory::Memory;
use crate::{Arg, Launch};
use gyre_ir::generate::{KernelContract, ParamContract, RandomSource, SplitMix64};
use gyre_ir::Type;

/// Largest CTA [`random_inputs`] picks (kept small so property tests stay fast).
pub const MAX_RANDOM_CTA: u32 = 64;
/// Most CTAs [`random_inputs`] launches.
pub const MAX_RANDOM_GRID: u32 = 3;

/// Random launch and buffers for a generated kernel, as its contract requires: a 1-D
/// grid of 1 to [`MAX_RANDOM_GRID`] CTAs of 1 to `min(max_cta_threads,`
/// [`MAX_RANDOM_CTA`]`)` threads, one buffer per buffer parameter (named `p0`, `p1`, ...
/// after the parameter's position) filled with random elements, and random scalars.
/// Values favour edge cases (0, ±1, extremes, infinities, NaN) a quarter of the time.
/// The same contract and seed give the same inputs.
pub fn random_inputs(contract: &KernelContract, seed: u64) -> Inputs {
    let mut rng = SplitMix64::new(seed);
    let ntid = 1 + rng.below(u64::from(contract.max_cta_threads.clamp(1, MAX_RANDOM_CTA))) as u32;
    let nctaid = 1 + rng.below(u64::from(MAX_RANDOM_GRID)) as u32;
    random_inputs_for_shape(contract, nctaid, ntid, &mut rng)
}

/// Like [`random_inputs`], for a 1-D launch of `nctaid` CTAs of `ntid` threads chosen by
/// the caller (for example whole warps, which a uniformity check needs); the buffers and
/// scalars are drawn from `rng`.
pub fn random_inputs_for_shape(
    contract: &KernelContract,
    nctaid: u32,
    ntid: u32,
    rng: &mut SplitMix64,
) -> Inputs {
    let threads = u64::from(ntid) * u64::from(nctaid);
    let mut memory = Memory::new();
    let mut args = Vec::with_capacity(contract.params.len());
    for (i, p) in contract.params.iter().enumerate() {
        let name = format!("p{i}");
        let (elem, len) = match *p {
            ParamContract::Output { elem, per_thread } => (elem, threads * u64::from(per_thread)),
            ParamContract::Input { elem, len } => (elem, u64::from(len)),
            ParamContract::Scalar { ty } => {
                args.push(scalar(ty, rng));
                continue;
            }
        };
        let size = elem.bytes() as usize;
        let mut bytes = Vec::with_capacity(len as usize * size);
        for _ in 0..len {
            let bits = match scalar(elem, rng) {
                Arg::Int(x) => x,
                Arg::F32(x) => u64::from(x.to_bits()),
                Arg::F64(x) => x.to_bits(),
                _ => 0,
            };
            bytes.extend_from_slice(&bits.to_le_bytes()[..size]);
        }
        memory.alloc_buffer(&name, bytes);
        args.push(Arg::Buffer(name, 0));
    }
    Inputs {
        launch: Launch::linear(nctaid, ntid, args),
        memory,
    }
}

/// A random value of a scalar type; pointers get a null pointer (no contract asks for a
/// raw one).
fn scalar(ty: Type, rng: &mut SplitMix64) -> Arg {
    let special = rng.below(4) == 0;
    match ty {
        Type::F32 => Arg::F32(if special {
            const S: [f32; 8] = [
                0.0,
                -0.0,
                1.0,
                -1.0,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                f32::MAX,
            ];
            S[rng.below(S.len() as u64) as usize]
        } else {
            (rng.below(1 << 20) as f32 - (1 << 19) as f32) / 1024.0
        }),
        Type::F64 => Arg::F64(if special {
            const S: [f64; 8] = [
                0.0,
                -0.0,
                1.0,
                -1.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                f64::MAX,
            ];
            S[rng.below(S.len() as u64) as usize]
        } else {
            (rng.below(1 << 30) as f64 - (1 << 29) as f64) / 4096.0
        }),
        Type::Ptr(_) => Arg::Ptr(0),
        t => {
            let bits = t.bits();
            let v = if special {
                let min = 1u64 << (bits - 1);
                let s = [0, 1, u64::MAX, min, min.wrapping_sub(1)];
                s[rng.below(s.len() as u64) as usize]
            } else if rng.below(2) == 0 {
                // Small magnitudes keep loop bounds and indices interesting.
                (rng.below(64) as i64 - 16) as u64
            } else {
                rng.next_u64()
            };
            Arg::Int(v & crate::semantics::mask(bits as u8))
        }
    }
}
