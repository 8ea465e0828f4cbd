//! Sequentializing a parallel copy (the block arguments of one CFG edge).
//!
//! A parallel copy `(d1, ..., dn) := (s1, ..., sn)` reads every source before writing
//! any destination. The classic algorithm (Boissinot et al., "Revisiting Out-of-SSA
//! Translation for Correctness, Code Quality, and Efficiency", CGO 2009, Algorithm 1 in
//! spirit): repeatedly emit a copy whose destination no pending copy still reads; when
//! none is left, every pending destination is read, so the rest are cycles — save one
//! destination in a fresh temporary, redirect its readers there, and continue. Each cycle
//! of length k costs k + 1 moves.
//!
//! Destinations are distinct (they are the parameters of one block); sources may repeat.

use core::hash::Hash;
use rustc_hash::FxHashMap;

/// Emit `copies` as a sequence of moves with the parallel semantics. `tmp(r)` makes a
/// fresh register of `r`'s class; `emit(dst, src)` writes one move.
pub(crate) fn sequentialize<R: Copy + Eq + Hash>(
    copies: &[(R, R)],
    tmp: impl FnMut(R) -> R,
    mut emit: impl FnMut(R, R),
) {
    if let Some(first) = independent(copies) {
        // No destination is read: the general loop below would emit the first copy, then
        // (each `swap_remove` bringing the last one forward) the others from the last;
        // the same moves in the same order, without its vector and map.
        let (d, s) = copies[first];
        emit(d, s);
        for &(d, s) in copies[first + 1..].iter().rev() {
            if d != s {
                emit(d, s);
            }
        }
        return;
    }
    general(copies, tmp, emit);
}

/// [`sequentialize`]'s general loop, for any parallel copy.
fn general<R: Copy + Eq + Hash>(
    copies: &[(R, R)],
    mut tmp: impl FnMut(R) -> R,
    mut emit: impl FnMut(R, R),
) {
    let mut pending: Vec<(R, R)> = copies.iter().copied().filter(|(d, s)| d != s).collect();
    if pending.is_empty() {
        return;
    }
    let mut readers: FxHashMap<R, u32> = FxHashMap::default();
    for &(_, s) in &pending {
        *readers.entry(s).or_insert(0) += 1;
    }
    loop {
        let mut progress = true;
        while progress {
            progress = false;
            let mut i = 0;
            while i < pending.len() {
                let (d, s) = pending[i];
                if readers.get(&d).copied().unwrap_or(0) == 0 {
                    emit(d, s);
                    if let Some(n) = readers.get_mut(&s) {
                        *n -= 1;
                    }
                    pending.swap_remove(i);
                    progress = true;
                } else {
                    i += 1;
                }
            }
        }
        let Some(&(d, _)) = pending.first() else {
            return;
        };
        // Only cycles remain: free `d` by saving its value in a temporary.
        let t = tmp(d);
        emit(t, d);
        let mut n = 0;
        for p in pending.iter_mut() {
            if p.1 == d {
                p.1 = t;
                n += 1;
            }
        }
        readers.insert(d, 0);
        readers.insert(t, n);
    }
}

/// The largest parallel copy [`independent`] checks pairwise (larger ones take the
/// general path, so the check stays linear in the copy's size).
const SMALL: usize = 16;

/// The index of the first non-trivial copy when no copy reads another's destination
/// (the common case: a loop's back edge passing fresh values); `None` when some copy
/// does, when every copy is trivial, or when there are more than [`SMALL`].
fn independent<R: Copy + Eq>(copies: &[(R, R)]) -> Option<usize> {
    if copies.len() > SMALL {
        return None;
    }
    let first = copies.iter().position(|(d, s)| d != s)?;
    let live = |&(d, s): &(R, R)| d != s;
    let reads_a_dest = copies
        .iter()
        .filter(|c| live(c))
        .any(|&(_, s)| copies.iter().filter(|c| live(c)).any(|&(d, _)| d == s));
    (!reads_a_dest).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run the moves on a register file and compare with the parallel semantics.
    fn check(copies: &[(u32, u32)]) -> usize {
        let mut regs: Vec<u32> = (0..100).collect();
        let want: Vec<u32> = {
            let mut w = regs.clone();
            for &(d, s) in copies {
                w[d as usize] = regs[s as usize];
            }
            w
        };
        let mut next = 50;
        let mut moves = Vec::new();
        sequentialize(
            copies,
            |_| {
                next += 1;
                next
            },
            |d, s| moves.push((d, s)),
        );
        for &(d, s) in &moves {
            regs[d as usize] = regs[s as usize];
        }
        for &(d, _) in copies {
            assert_eq!(
                regs[d as usize], want[d as usize],
                "{copies:?} -> {moves:?}"
            );
        }
        moves.len()
    }

    /// [`sequentialize`] or [`general`] on `u32` registers.
    type Seq = fn(&[(u32, u32)], &mut dyn FnMut(u32) -> u32, &mut dyn FnMut(u32, u32));

    /// The moves of `f` (sequentialize or general) with temporaries from 50.
    fn moves_of(f: Seq, copies: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut next = 50;
        let mut moves = Vec::new();
        f(
            copies,
            &mut |_| {
                next += 1;
                next
            },
            &mut |d, s| moves.push((d, s)),
        );
        moves
    }

    #[test]
    fn fast_path_emits_the_general_loops_moves() {
        let fast: Seq = |c, t, e| sequentialize(c, t, e);
        let slow: Seq = |c, t, e| general(c, t, e);
        let cases: &[&[(u32, u32)]] = &[
            &[(1, 2)],
            &[(1, 2), (3, 4), (5, 6), (7, 8)],
            &[(1, 1), (3, 4), (5, 5), (7, 8), (9, 4)],
            &[(1, 1), (2, 2)],
            &[(1, 2), (2, 3)],
            &[(1, 2), (2, 1), (3, 4)],
        ];
        for c in cases {
            assert_eq!(moves_of(fast, c), moves_of(slow, c), "{c:?}");
        }
        assert_eq!(independent(&[(1u32, 1u32), (3, 4), (5, 6)]), Some(1));
        assert_eq!(independent(&[(1u32, 2u32), (2, 3)]), None);
        assert_eq!(independent(&[(1u32, 1u32)]), None);
        // Random copies into distinct destinations, sources from an overlapping range.
        fn prop(srcs: Vec<u8>) -> bool {
            let fast: Seq = |c, t, e| sequentialize(c, t, e);
            let slow: Seq = |c, t, e| general(c, t, e);
            let copies: Vec<(u32, u32)> = srcs
                .iter()
                .take(20)
                .enumerate()
                .map(|(i, &s)| (i as u32, u32::from(s % 40)))
                .collect();
            moves_of(fast, &copies) == moves_of(slow, &copies)
        }
        quickcheck::quickcheck(prop as fn(Vec<u8>) -> bool);
        // Independent but large: the general path, the same moves.
        let big: Vec<(u32, u32)> = (0..40).map(|i| (i, i + 100)).collect();
        assert_eq!(independent(&big), None);
        assert_eq!(moves_of(fast, &big), moves_of(slow, &big));
    }

    #[test]
    fn swaps_cycles_and_fanout() {
        assert_eq!(check(&[(1, 2), (2, 1)]), 3);
        assert_eq!(check(&[(1, 2), (2, 3), (3, 1)]), 4);
        assert_eq!(check(&[(1, 1), (2, 3)]), 1);
        assert_eq!(check(&[(1, 2), (2, 3), (3, 4)]), 3);
        check(&[(1, 2), (2, 1), (3, 1), (4, 2), (5, 6), (6, 5)]);
        check(&[(1, 3), (2, 3), (3, 1)]);
    }

    #[test]
    fn random_permutations_quickcheck() {
        fn prop(perm: Vec<u8>, extra: Vec<(u8, u8)>) -> bool {
            // A permutation of 0..n plus fan-out copies into fresh destinations.
            let n = perm.len().min(20);
            let mut dsts: Vec<u32> = (0..n as u32).collect();
            let mut copies = Vec::new();
            for (i, &p) in perm.iter().take(n).enumerate() {
                let j = (p as usize) % (i + 1);
                dsts.swap(i, j);
            }
            for (i, &d) in dsts.iter().enumerate() {
                copies.push((d, i as u32));
            }
            for (k, &(_, s)) in extra.iter().take(10).enumerate() {
                copies.push((30 + k as u32, u32::from(s) % 30));
            }
            check(&copies);
            true
        }
        quickcheck::quickcheck(prop as fn(Vec<u8>, Vec<(u8, u8)>) -> bool);
    }
}
