//! Host-visible global memory.

use rustc_hash::FxHashMap;

use crate::error::MemoryError;

/// First address handed out by [`Memory::alloc`].
pub const GLOBAL_BASE: u64 = 0x0000_0001_0000_0000;
/// Generic-address window of `.const` memory: generic = `CONST_WINDOW + const address`.
pub const CONST_WINDOW: u64 = 0x0000_7D00_0000_0000;
/// Generic-address window of `.local` memory: generic = `LOCAL_WINDOW + local address`.
pub const LOCAL_WINDOW: u64 = 0x0000_7E00_0000_0000;
/// Generic-address window of `.shared` memory: generic = `SHARED_WINDOW + shared address`.
pub const SHARED_WINDOW: u64 = 0x0000_7F00_0000_0000;
/// Size of each of the const/local/shared generic windows (1 TiB).
pub const WINDOW_SIZE: u64 = 1 << 40;

/// Unused bytes left between allocations so that small overruns are caught.
const GUARD: u64 = 256;

#[derive(Clone, Debug)]
struct Region {
    base: u64,
    data: Vec<u8>,
}

/// Simulated device global memory.
///
/// Buffers are allocated with [`Memory::alloc`] at addresses starting at
/// [`GLOBAL_BASE`], separated by unmapped guard gaps; any kernel access that
/// is not entirely inside one allocation is an out-of-bounds error.
/// Global addresses are also the generic addresses of global memory.
///
/// Module-scope `.global` variables are allocated here on the first launch
/// of a module that uses them and persist across launches (looked up by
/// name, see [`Memory::symbol`]).
#[derive(Clone, Debug)]
pub struct Memory {
    regions: Vec<Region>,
    next: u64,
    last: usize,
    symbols: FxHashMap<String, (u64, u64)>,
    /// `vprintf` output: (CTA linear id, thread linear id, line).
    pub(crate) printed: Vec<(u64, u32, Printed)>,
}

/// What one `vprintf` call printed, and which thread called it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// CTA index (x, y, z).
    pub ctaid: [u32; 3],
    /// Thread index within the CTA (x, y, z).
    pub tid: [u32; 3],
    /// The formatted text.
    pub text: String,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! typed_access {
    ($alloc:ident, $write:ident, $read:ident, $t:ty, $n:expr) => {
        /// Allocates a buffer initialized with `vals` (little endian) and returns its address.
        pub fn $alloc(&mut self, vals: &[$t]) -> u64 {
            let a = self.alloc(vals.len() * $n, 256);
            self.$write(a, vals).expect("fresh allocation is in bounds");
            a
        }
        /// Writes `vals` (little endian) starting at `addr`.
        pub fn $write(&mut self, addr: u64, vals: &[$t]) -> Result<(), MemoryError> {
            let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
            self.write_bytes(addr, &bytes)
        }
        /// Reads `n` values (little endian) starting at `addr`.
        pub fn $read(&self, addr: u64, n: usize) -> Result<Vec<$t>, MemoryError> {
            let bytes = self.read_bytes(addr, n * $n)?;
            Ok(bytes
                .chunks_exact($n)
                .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunk has exact size")))
                .collect())
        }
    };
}

impl Memory {
    /// Creates an empty memory.
    pub fn new() -> Self {
        Memory {
            regions: Vec::new(),
            next: GLOBAL_BASE,
            last: 0,
            symbols: FxHashMap::default(),
            printed: Vec::new(),
        }
    }

    /// Everything `vprintf` printed in the launches run on this memory, launch after
    /// launch; within a launch by CTA (x fastest), then by linear thread id, then in
    /// each thread's program order.
    pub fn printf_output(&self) -> Vec<&Printed> {
        self.printed.iter().map(|p| &p.2).collect()
    }

    /// Take the printed output, leaving none.
    pub fn take_printf_output(&mut self) -> Vec<Printed> {
        std::mem::take(&mut self.printed)
            .into_iter()
            .map(|p| p.2)
            .collect()
    }

    /// Allocates `bytes` zero-initialized bytes aligned to `align` (rounded up
    /// to a power of two, at least 1) and returns the address.
    pub fn alloc(&mut self, bytes: usize, align: u64) -> u64 {
        let align = align.max(1).next_power_of_two();
        let base = self.next.div_ceil(align) * align;
        self.next = base + bytes as u64 + GUARD;
        self.regions.push(Region {
            base,
            data: vec![0; bytes],
        });
        base
    }

    /// Releases the allocation starting exactly at `addr`. Returns whether one was found.
    /// Freed address ranges are never reused.
    pub fn free(&mut self, addr: u64) -> bool {
        match self.regions.binary_search_by_key(&addr, |r| r.base) {
            Ok(i) => {
                self.regions.remove(i);
                self.symbols.retain(|_, (a, _)| *a != addr);
                self.last = 0;
                true
            }
            Err(_) => false,
        }
    }

    /// Address of a module-scope `.global` variable allocated by a previous launch.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.get(name).map(|&(a, _)| a)
    }

    /// Allocate module-scope `.global` variable `name` with contents `bytes` before the
    /// first launch (the host's `cudaMemcpyToSymbol`): a launch of a module declaring a
    /// variable of that name and size uses this allocation instead of a fresh one.
    /// Returns its address.
    pub fn define_symbol(&mut self, name: &str, bytes: &[u8], align: u64) -> u64 {
        let a = self.alloc(bytes.len(), align);
        self.write_bytes(a, bytes)
            .expect("fresh allocation is in bounds");
        self.symbols
            .insert(name.to_string(), (a, bytes.len() as u64));
        a
    }

    /// Returns the address of `.global` variable `name`, allocating and
    /// initializing it if needed.
    pub(crate) fn symbol_or_alloc(
        &mut self,
        name: &str,
        size: u64,
        align: u64,
        init: &[u8],
    ) -> u64 {
        if let Some(&(a, s)) = self.symbols.get(name) {
            if s == size {
                return a;
            }
        }
        let a = self.alloc(size as usize, align);
        if let Some(r) = self.regions.last_mut() {
            r.data[..init.len()].copy_from_slice(init);
        }
        self.symbols.insert(name.to_string(), (a, size));
        a
    }

    fn find(&self, addr: u64, len: u64) -> Option<(usize, usize)> {
        let i = self
            .regions
            .partition_point(|r| r.base <= addr)
            .checked_sub(1)?;
        let r = &self.regions[i];
        let off = addr - r.base;
        if off.checked_add(len)? <= r.data.len() as u64 {
            Some((i, off as usize))
        } else {
            None
        }
    }

    /// Fast path used by the interpreter: a mutable slice of `len` bytes at `addr`.
    #[inline]
    pub(crate) fn slice_mut(&mut self, addr: u64, len: usize) -> Option<&mut [u8]> {
        let li = self.last;
        if let Some(r) = self.regions.get(li) {
            if addr >= r.base {
                let off = addr - r.base;
                if off + (len as u64) <= r.data.len() as u64 {
                    let off = off as usize;
                    return Some(&mut self.regions[li].data[off..off + len]);
                }
            }
        }
        let (i, off) = self.find(addr, len as u64)?;
        self.last = i;
        Some(&mut self.regions[i].data[off..off + len])
    }

    /// Copies `data` into memory at `addr`.
    pub fn write_bytes(&mut self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        let err = MemoryError {
            addr,
            len: data.len(),
        };
        let s = self.slice_mut(addr, data.len()).ok_or(err)?;
        s.copy_from_slice(data);
        Ok(())
    }

    /// Reads `len` bytes at `addr`.
    pub fn read_bytes(&self, addr: u64, len: usize) -> Result<Vec<u8>, MemoryError> {
        let (i, off) = self
            .find(addr, len as u64)
            .ok_or(MemoryError { addr, len })?;
        Ok(self.regions[i].data[off..off + len].to_vec())
    }

    typed_access!(alloc_u8s, write_u8s, read_u8s, u8, 1);
    typed_access!(alloc_u16s, write_u16s, read_u16s, u16, 2);
    typed_access!(alloc_u32s, write_u32s, read_u32s, u32, 4);
    typed_access!(alloc_i32s, write_i32s, read_i32s, i32, 4);
    typed_access!(alloc_u64s, write_u64s, read_u64s, u64, 8);
    typed_access!(alloc_i64s, write_i64s, read_i64s, i64, 8);
    typed_access!(alloc_f32s, write_f32s, read_f32s, f32, 4);
    typed_access!(alloc_f64s, write_f64s, read_f64s, f64, 8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_read_write() {
        let mut m = Memory::new();
        let a = m.alloc_u32s(&[1, 2, 3]);
        let b = m.alloc(10, 64);
        assert_eq!(b % 64, 0);
        assert!(b >= a + 12 + GUARD);
        assert_eq!(m.read_u32s(a, 3).unwrap(), vec![1, 2, 3]);
        m.write_u32s(a + 4, &[9]).unwrap();
        assert_eq!(m.read_u32s(a, 3).unwrap(), vec![1, 9, 3]);
        assert!(m.read_bytes(a + 10, 4).is_err());
        assert!(m.read_bytes(a - 1, 1).is_err());
        assert!(m.write_bytes(b + 10, &[1]).is_err());
        assert!(m.free(a));
        assert!(m.read_bytes(a, 1).is_err());
        assert_eq!(m.read_bytes(b, 10).unwrap(), vec![0; 10]);
    }
}
