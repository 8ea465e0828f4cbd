//! Memory: address windows, allocations with per-byte poison, and race shadows.
//!
//! Every address space is a set of allocations ("heaps"). A pointer of a specific space
//! holds an offset into that space's window; a generic pointer holds the window base plus
//! that offset, so its high bits tell the space:
//!
//! | space  | generic window                         | specific pointer value |
//! |--------|----------------------------------------|------------------------|
//! | global | `0x0000_0000_0000_0000 .. 2^60`        | same as generic        |
//! | const  | `0x1000_0000_0000_0000 ..`             | offset in the window   |
//! | shared | `0x2000_0000_0000_0000 ..`             | offset in the window   |
//! | local  | `0x3000_0000_0000_0000 ..`             | offset in the window   |
//!
//! Allocations are separated by [`GUARD`] unmapped bytes, and none starts at offset 0,
//! so a null pointer and small overruns are out of bounds rather than silently landing
//! in a neighbour.

use gyre_ir::AddrSpace;
use rustc_hash::FxHashMap;

/// Size of each address window (2^60 bytes).
pub const WINDOW: u64 = 1 << 60;
/// Unmapped bytes before and between allocations.
pub const GUARD: u64 = 256;
/// Where the first global buffer is placed (a recognizable, non-null address).
pub const GLOBAL_START: u64 = 0x1_0000_0000;

/// The base of a space's window in the generic address space.
pub fn window_base(space: AddrSpace) -> u64 {
    match space {
        AddrSpace::Generic | AddrSpace::Global => 0,
        AddrSpace::Const => WINDOW,
        AddrSpace::Shared => 2 * WINDOW,
        AddrSpace::Local => 3 * WINDOW,
    }
}

/// Which space a generic address falls into, and its offset there.
pub fn split_generic(addr: u64) -> (AddrSpace, u64) {
    match addr >> 60 {
        0 => (AddrSpace::Global, addr),
        1 => (AddrSpace::Const, addr - WINDOW),
        2 => (AddrSpace::Shared, addr - 2 * WINDOW),
        3 => (AddrSpace::Local, addr - 3 * WINDOW),
        // Addresses above every window belong to no space; global lookup will miss.
        _ => (AddrSpace::Global, addr),
    }
}

/// Race-detection state of one byte: last writer and reader(s) with their barrier epoch
/// and their warp clock (own component of the thread's warp vector clock) at the access.
#[derive(Copy, Clone, Default)]
pub(crate) struct Shadow {
    pub w_tid: u32,
    pub w_epoch: u32,
    pub r_tid: u32,
    pub r_epoch: u32,
    pub w_clk: u32,
    pub r_clk: u32,
    /// The instruction of the last write and read (a program-wide site number, see
    /// `Program::site`), so a race can name both accesses.
    pub w_site: u32,
    pub r_site: u32,
}

/// Thread id meaning "more than one thread" in a [`Shadow`].
pub(crate) const MULTI: u32 = 0x7fff_ffff;
/// Marks a write done by an atomic.
pub(crate) const ATOMIC: u32 = 0x8000_0000;

/// One live allocation.
#[derive(Clone)]
pub(crate) struct Alloc {
    pub name: String,
    /// First byte, in the coordinates of its space (see the module docs).
    pub base: u64,
    pub data: Vec<u8>,
    /// One flag per byte: does it hold poison?
    pub poison: Vec<bool>,
    /// Race shadow, one per byte; empty when detection is off or the space is private.
    pub shadow: Vec<Shadow>,
    pub read_only: bool,
    /// Has a store or an atomic that changed memory written here? (`gyre run` prints the
    /// buffers a kernel wrote, also when it wrote back the values they held.)
    pub written: bool,
}

impl Alloc {
    pub fn end(&self) -> u64 {
        self.base + self.data.len() as u64
    }
}

/// The live allocations of one space, sorted by base.
#[derive(Clone, Default)]
pub(crate) struct Heap {
    pub allocs: Vec<Alloc>,
    /// Next free address (allocations grow upward).
    pub top: u64,
}

/// Why an access failed; the executor adds the location.
#[derive(Debug)]
pub(crate) enum Fault {
    OutOfBounds,
    Misaligned,
    ReadOnly,
    /// The other thread (if one is known) and the site of its access.
    Race {
        other: Option<u32>,
        site: u32,
    },
}

/// What race detection needs to know about the accessing thread.
#[derive(Copy, Clone)]
pub(crate) struct Access<'a> {
    pub tid: u32,
    pub epoch: u32,
    pub check: bool,
    /// The accessing instruction's program-wide site number.
    pub site: u32,
    /// The thread's vector clock over the lanes of its warp: entry `l` is the last
    /// clock of lane `l` that a warp collective made known to this thread. Accesses
    /// within one barrier epoch are ordered only through it.
    pub vc: &'a [u32; 32],
}

impl Access<'_> {
    /// The thread's own clock.
    #[inline]
    fn clk(&self) -> u32 {
        self.vc[(self.tid % 32) as usize]
    }

    /// Is an access by `tid` at its clock `clk` (same barrier epoch) ordered before
    /// this one by warp collectives: same warp, and a collective since passed `clk` on?
    #[inline]
    fn after(&self, tid: u32, clk: u32) -> bool {
        tid / 32 == self.tid / 32 && self.vc[(tid % 32) as usize] >= clk
    }
}

/// A warp vector clock for lane `lane`: its own entry 1, the others 0 (nothing known).
pub(crate) fn fresh_clock(lane: u32) -> [u32; 32] {
    let mut vc = [0; 32];
    vc[lane as usize] = 1;
    vc
}

impl Heap {
    pub fn new(start: u64) -> Heap {
        Heap {
            allocs: Vec::new(),
            top: start,
        }
    }

    /// Place a new allocation above every existing one.
    pub fn push(&mut self, name: String, data: Vec<u8>, poison: Vec<bool>, align: u64) -> u64 {
        let align = align.max(16).next_power_of_two();
        let base = (self.top + GUARD).next_multiple_of(align);
        self.top = base + data.len() as u64;
        self.allocs.push(Alloc {
            name,
            base,
            data,
            poison,
            shadow: Vec::new(),
            read_only: false,
            written: false,
        });
        base
    }

    /// The allocation holding `addr`, or for an address in none of them the nearest
    /// one, with the offset of `addr` from its first byte (for messages).
    pub fn describe(&self, addr: u64) -> Option<crate::error::BufferRef> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let below = i.checked_sub(1).map(|j| &self.allocs[j]);
        let above = self.allocs.get(i);
        let a = match (below, above) {
            (Some(b), _) if addr < b.end() => b,
            (Some(b), Some(n)) => {
                if addr - b.end() < n.base - addr {
                    b
                } else {
                    n
                }
            }
            (Some(b), None) => b,
            (None, Some(n)) => n,
            (None, None) => return None,
        };
        Some(crate::error::BufferRef {
            name: a.name.clone(),
            offset: addr.wrapping_sub(a.base) as i64,
            len: a.data.len() as u64,
        })
    }

    /// Pop allocations down to `n` live ones and reset the bump pointer.
    pub fn truncate(&mut self, n: usize, top: u64) {
        self.allocs.truncate(n);
        self.top = top;
    }

    /// The allocation holding `[addr, addr+size)`, and the offset of `addr` in it.
    #[inline]
    pub fn find(&mut self, addr: u64, size: u64) -> Result<(&mut Alloc, usize), Fault> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        if i == 0 {
            return Err(Fault::OutOfBounds);
        }
        let a = &mut self.allocs[i - 1];
        match addr.checked_add(size) {
            Some(end) if end <= a.end() => {
                if !addr.is_multiple_of(size) {
                    return Err(Fault::Misaligned);
                }
                let off = (addr - a.base) as usize;
                Ok((a, off))
            }
            _ => Err(Fault::OutOfBounds),
        }
    }

    /// Read `size` bytes little-endian; the bool says whether any byte was poison.
    #[inline]
    pub fn load(&mut self, addr: u64, size: u64, acc: Access) -> Result<(u64, bool), Fault> {
        let (a, off) = self.find(addr, size)?;
        let n = size as usize;
        if acc.check && !a.shadow.is_empty() {
            check_read(&mut a.shadow[off..off + n], acc)?;
        }
        let mut buf = [0u8; 8];
        buf[..n].copy_from_slice(&a.data[off..off + n]);
        let poison = a.poison[off..off + n].iter().any(|&p| p);
        Ok((u64::from_le_bytes(buf), poison))
    }

    /// Write the low `size` bytes of `val` little-endian (all poison if `poison`).
    #[inline]
    pub fn store(
        &mut self,
        addr: u64,
        size: u64,
        val: u64,
        poison: bool,
        acc: Access,
    ) -> Result<(), Fault> {
        let (a, off) = self.find(addr, size)?;
        if a.read_only {
            return Err(Fault::ReadOnly);
        }
        let n = size as usize;
        if acc.check && !a.shadow.is_empty() {
            check_write(&mut a.shadow[off..off + n], acc, false)?;
        }
        a.data[off..off + n].copy_from_slice(&val.to_le_bytes()[..n]);
        a.poison[off..off + n].fill(poison);
        a.written = true;
        Ok(())
    }

    /// Read-modify-write for atomics: `f(old, old_poison) -> Option<(new, new_poison)>`
    /// (`None`: leave memory unchanged). Returns the old value and its poison flag.
    pub fn rmw(
        &mut self,
        addr: u64,
        size: u64,
        acc: Access,
        f: impl FnOnce(u64, bool) -> Option<(u64, bool)>,
    ) -> Result<(u64, bool), Fault> {
        let (a, off) = self.find(addr, size)?;
        if a.read_only {
            return Err(Fault::ReadOnly);
        }
        let n = size as usize;
        if acc.check && !a.shadow.is_empty() {
            check_write(&mut a.shadow[off..off + n], acc, true)?;
        }
        let mut buf = [0u8; 8];
        buf[..n].copy_from_slice(&a.data[off..off + n]);
        let old = u64::from_le_bytes(buf);
        let old_p = a.poison[off..off + n].iter().any(|&p| p);
        if let Some((new, new_p)) = f(old, old_p) {
            a.data[off..off + n].copy_from_slice(&new.to_le_bytes()[..n]);
            a.poison[off..off + n].fill(new_p);
            a.written = true;
        }
        Ok((old, old_p))
    }
}

/// A read races with a write by another thread in the same epoch that no warp
/// collective ordered before it.
#[inline]
fn check_read(sh: &mut [Shadow], acc: Access) -> Result<(), Fault> {
    let clk = acc.clk();
    for s in sh {
        let writer = s.w_tid & !ATOMIC;
        if s.w_epoch == acc.epoch && writer != acc.tid && !acc.after(writer, s.w_clk) {
            return Err(Fault::Race {
                other: other(writer),
                site: s.w_site,
            });
        }
        // One reader is kept while each read is ordered after the previous one (a later
        // write ordered after this read is then after all of them).
        if s.r_epoch != acc.epoch || s.r_tid == acc.tid || acc.after(s.r_tid, s.r_clk) {
            s.r_epoch = acc.epoch;
            s.r_tid = acc.tid;
            s.r_clk = clk;
            s.r_site = acc.site;
        } else {
            s.r_tid = MULTI;
        }
    }
    Ok(())
}

/// A write races with any access by another thread in the same epoch that no warp
/// collective ordered before it; an atomic only with non-atomic ones.
#[inline]
fn check_write(sh: &mut [Shadow], acc: Access, atomic: bool) -> Result<(), Fault> {
    let clk = acc.clk();
    for s in sh {
        let writer = s.w_tid & !ATOMIC;
        // An earlier write still counts when no collective ordered it before this one.
        let live = s.w_epoch == acc.epoch && writer != acc.tid && !acc.after(writer, s.w_clk);
        if live && !(atomic && s.w_tid & ATOMIC != 0) {
            return Err(Fault::Race {
                other: other(writer),
                site: s.w_site,
            });
        }
        if s.r_epoch == acc.epoch && s.r_tid != acc.tid && !acc.after(s.r_tid, s.r_clk) {
            return Err(Fault::Race {
                other: other(s.r_tid),
                site: s.r_site,
            });
        }
        s.w_tid = if atomic {
            if live {
                MULTI | ATOMIC
            } else {
                acc.tid | ATOMIC
            }
        } else {
            acc.tid
        };
        s.w_epoch = acc.epoch;
        s.w_clk = clk;
        s.w_site = acc.site;
    }
    Ok(())
}

fn other(t: u32) -> Option<u32> {
    (t != MULTI).then_some(t)
}

/// A plain value type that can live in a buffer (little-endian).
pub trait Element: Copy {
    /// Size in bytes.
    const SIZE: usize;
    /// Append the little-endian bytes.
    fn put(self, out: &mut Vec<u8>);
    /// Decode from exactly `SIZE` little-endian bytes.
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl Element for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; core::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}
element!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// Device global memory: named buffers the caller allocates before a launch and reads
/// after it. Module globals in the global space are added (zeroed or initialized) by
/// [`run_kernel`](crate::run_kernel) under their own names unless a buffer of that name
/// already exists.
///
/// Every byte carries a poison flag: storing a poison value makes its bytes poison, and
/// loading a value any of whose bytes is poison gives poison. Buffers the caller
/// allocates start fully defined.
#[derive(Clone)]
pub struct Memory {
    pub(crate) heap: Heap,
    names: FxHashMap<String, usize>,
    /// `vprintf` output: (CTA linear id, thread linear id, line).
    pub(crate) printed: Vec<(u64, u32, PrintfLine)>,
}

/// What one `vprintf` printed, and which thread printed it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PrintfLine {
    /// CTA index (x, y, z).
    pub ctaid: [u32; 3],
    /// Thread index within the CTA (x, y, z).
    pub tid: [u32; 3],
    /// The formatted text (newlines included, as the format has them).
    pub text: String,
}

impl Default for Memory {
    fn default() -> Self {
        Memory::new()
    }
}

impl Memory {
    /// No buffers.
    pub fn new() -> Memory {
        Memory {
            heap: Heap::new(GLOBAL_START - GUARD),
            names: FxHashMap::default(),
            printed: Vec::new(),
        }
    }

    /// Everything `vprintf` printed in the launches run on this memory, launch after
    /// launch; within a launch, by CTA (x fastest), then by linear thread id, then in
    /// each thread's program order, whatever the schedule (CUDA does not order the
    /// output of different threads; this order is deterministic).
    pub fn printf_output(&self) -> Vec<&PrintfLine> {
        self.printed.iter().map(|p| &p.2).collect()
    }

    /// Take the printed output (see [`Memory::printf_output`]), leaving none.
    pub fn take_printf_output(&mut self) -> Vec<PrintfLine> {
        std::mem::take(&mut self.printed)
            .into_iter()
            .map(|p| p.2)
            .collect()
    }

    /// Allocate a buffer holding `bytes`; returns its address (a global pointer, which is
    /// also its generic address). A buffer of the same name is replaced (the new one gets
    /// a fresh address; the old address becomes out of bounds).
    pub fn alloc_buffer(&mut self, name: &str, bytes: Vec<u8>) -> u64 {
        self.alloc_aligned(name, bytes, 256)
    }

    pub(crate) fn alloc_aligned(&mut self, name: &str, bytes: Vec<u8>, align: u64) -> u64 {
        if let Some(&i) = self.names.get(name) {
            self.heap.allocs.remove(i);
            self.names.clear();
            for (j, a) in self.heap.allocs.iter().enumerate() {
                self.names.insert(a.name.clone(), j);
            }
        }
        let poison = vec![false; bytes.len()];
        let base = self.heap.push(name.to_string(), bytes, poison, align);
        self.names
            .insert(name.to_string(), self.heap.allocs.len() - 1);
        base
    }

    /// Allocate a buffer of `len` zero bytes.
    pub fn alloc_zeroed(&mut self, name: &str, len: usize) -> u64 {
        self.alloc_buffer(name, vec![0; len])
    }

    /// Allocate a buffer holding `values` (little-endian).
    pub fn alloc_from<T: Element>(&mut self, name: &str, values: &[T]) -> u64 {
        let mut bytes = Vec::with_capacity(values.len() * T::SIZE);
        for &v in values {
            v.put(&mut bytes);
        }
        self.alloc_buffer(name, bytes)
    }

    /// The contents of a buffer.
    pub fn bytes(&self, name: &str) -> Option<&[u8]> {
        self.names
            .get(name)
            .map(|&i| self.heap.allocs[i].data.as_slice())
    }

    /// The per-byte poison flags of a buffer.
    pub fn poison(&self, name: &str) -> Option<&[bool]> {
        self.names
            .get(name)
            .map(|&i| self.heap.allocs[i].poison.as_slice())
    }

    /// Has the launch stored to the buffer (a store, or an atomic that wrote), even if
    /// the values it wrote are those the buffer held? `None` if there is no such buffer.
    pub fn written(&self, name: &str) -> Option<bool> {
        self.names.get(name).map(|&i| self.heap.allocs[i].written)
    }

    /// The buffer's contents as elements (trailing bytes that do not fill one are
    /// ignored).
    pub fn read<T: Element>(&self, name: &str) -> Option<Vec<T>> {
        let b = self.bytes(name)?;
        Some(b.chunks_exact(T::SIZE).map(T::get).collect())
    }

    /// The address of a buffer.
    pub fn base(&self, name: &str) -> Option<u64> {
        self.names.get(name).map(|&i| self.heap.allocs[i].base)
    }

    /// Buffer names in allocation order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.heap.allocs.iter().map(|a| a.name.as_str())
    }

    /// Does a buffer of this name exist?
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// Turn race shadows on (allocating them) or off for every buffer.
    pub(crate) fn set_shadows(&mut self, on: bool) {
        for a in &mut self.heap.allocs {
            if on {
                a.shadow.clear();
                a.shadow.resize(a.data.len(), Shadow::default());
            } else {
                a.shadow = Vec::new();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VC: [u32; 32] = [1; 32];
    const ACC: Access = Access {
        vc: &VC,
        tid: 0,
        epoch: 1,
        check: false,
        site: 0,
    };

    #[test]
    fn windows_round_trip() {
        for s in [AddrSpace::Const, AddrSpace::Shared, AddrSpace::Local] {
            assert_eq!(split_generic(window_base(s) + 0x140), (s, 0x140));
        }
        assert_eq!(split_generic(0x1234), (AddrSpace::Global, 0x1234));
    }

    #[test]
    fn bounds_alignment_and_guards() {
        let mut m = Memory::new();
        let a = m.alloc_from::<u32>("a", &[1, 2, 3]);
        let b = m.alloc_from::<u32>("b", &[4]);
        assert!(b >= a + 12 + GUARD);
        let h = &mut m.heap;
        assert_eq!(h.load(a + 8, 4, ACC).unwrap(), (3, false));
        assert!(matches!(h.load(a + 12, 4, ACC), Err(Fault::OutOfBounds)));
        assert!(matches!(h.load(a + 10, 4, ACC), Err(Fault::OutOfBounds)));
        assert!(matches!(h.load(a + 2, 4, ACC), Err(Fault::Misaligned)));
        assert!(matches!(h.load(a - 4, 4, ACC), Err(Fault::OutOfBounds)));
        assert!(matches!(h.load(0, 4, ACC), Err(Fault::OutOfBounds)));
        h.store(b, 4, 0xdead_beef, true, ACC).unwrap();
        assert_eq!(h.load(b, 2, ACC).unwrap(), (0xbeef, true));
        assert_eq!(m.read::<u32>("a").unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn shadow_detects_conflicts_only_within_an_epoch() {
        let mut m = Memory::new();
        let a = m.alloc_zeroed("a", 8);
        m.set_shadows(true);
        let h = &mut m.heap;
        // No warp collective: every thread knows only its own clock.
        let vcs: Vec<[u32; 32]> = (0..32).map(fresh_clock).collect();
        let t = |tid: u32, epoch| Access {
            tid,
            epoch,
            check: true,
            site: tid,
            vc: &vcs[tid as usize],
        };
        h.store(a, 4, 1, false, t(0, 1)).unwrap();
        h.load(a, 4, t(0, 1)).unwrap();
        assert!(matches!(
            h.load(a, 4, t(1, 1)),
            Err(Fault::Race {
                other: Some(0),
                site: 0
            })
        ));
        // Next epoch: two readers are fine, then a write by a third races.
        h.load(a + 4, 4, t(1, 2)).unwrap();
        h.load(a + 4, 4, t(2, 2)).unwrap();
        assert!(matches!(
            h.store(a + 4, 4, 0, false, t(1, 2)),
            Err(Fault::Race { other: None, .. })
        ));
        // Atomics among themselves do not race; a plain read after them does.
        h.rmw(a, 4, t(3, 3), |o, p| Some((o + 1, p))).unwrap();
        h.rmw(a, 4, t(4, 3), |o, p| Some((o + 1, p))).unwrap();
        assert!(matches!(
            h.load(a, 4, t(3, 3)),
            Err(Fault::Race { other: None, .. })
        ));
    }

    #[test]
    fn warp_clocks_order_accesses_within_a_warp_only() {
        let mut m = Memory::new();
        let a = m.alloc_zeroed("a", 8);
        m.set_shadows(true);
        let h = &mut m.heap;
        fn acc(tid: u32, vc: &[u32; 32]) -> Access<'_> {
            Access {
                tid,
                epoch: 1,
                check: true,
                site: 0,
                vc,
            }
        }
        // Lane 0 writes at its clock 1; lane 1 learnt clock 1 of lane 0 in a collective.
        let (w0, mut r1) = (fresh_clock(0), fresh_clock(1));
        h.store(a, 4, 7, false, acc(0, &w0)).unwrap();
        assert!(h.load(a, 4, acc(1, &r1)).is_err());
        r1[0] = 1;
        h.load(a, 4, acc(1, &r1)).unwrap();
        // Lane 0 writes again, after the collective (clock 2): lane 1 has not seen it.
        let mut w0b = fresh_clock(0);
        w0b[0] = 2;
        // The write is ordered after lane 1's read only if lane 0 learnt lane 1's clock.
        assert!(h.store(a, 4, 8, false, acc(0, &w0b)).is_err());
        let mut w0c = w0b;
        w0c[1] = 1;
        h.store(a, 4, 8, false, acc(0, &w0c)).unwrap();
        assert!(h.load(a, 4, acc(1, &r1)).is_err());
        // Thread 32 is in another warp: its clock entries say nothing about lane 0.
        let other = [u32::MAX; 32];
        assert!(h.load(a + 4, 4, acc(32, &other)).is_ok());
        h.store(a + 4, 4, 1, false, acc(32, &other)).unwrap();
        assert!(h.load(a + 4, 4, acc(0, &[u32::MAX; 32])).is_err());
    }
}
