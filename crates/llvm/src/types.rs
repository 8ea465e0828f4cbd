//! LLVM types as the importer sees them, interned in an arena, with their memory layout.
//!
//! Typed pointers (`i32 addrspace(1)*`) keep only their address space: Gyre pointers
//! are untyped, and every LLVM instruction that needs a pointee type (load, store, GEP)
//! spells it out anyway.

use gyre_ir::{AddrSpace, Type};
use rustc_hash::FxHashMap;

/// An interned LLVM type.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct TyId(pub u32);

/// The shape of an LLVM type.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum LType {
    Void,
    Int(u32),
    Float,
    Double,
    /// `half`, `bfloat`, `fp128`, `x86_fp80`, ...: parsed, never supported.
    OtherFloat(String),
    /// A pointer into an address space (typed or opaque).
    Ptr(u32),
    Array(u64, TyId),
    Struct(Vec<TyId>, bool),
    /// A named struct (`%T`), by index into [`Types::named`].
    Named(u32),
    Vector,
    Label,
    Metadata,
    Token,
    /// A function type (only ever behind a pointer or in a `call`).
    Func,
}

/// Layout parameters from the `target datalayout` string that the importer honours.
#[derive(Copy, Clone, Debug)]
pub(crate) struct DataLayout {
    pub i64_align: u64,
    pub f64_align: u64,
}

impl Default for DataLayout {
    fn default() -> Self {
        // NVPTX and x86-64 both align i64 and double to 8.
        DataLayout {
            i64_align: 8,
            f64_align: 8,
        }
    }
}

/// Nesting limit for type layout queries (named types can chain without bound).
pub(crate) const MAX_TYPE_DEPTH: u32 = 64;
/// Most scalar leaves an aggregate SSA value may have (each becomes a Gyre value).
pub(crate) const MAX_LEAVES: u64 = 1024;

/// The type arena of one module.
#[derive(Default)]
pub(crate) struct Types {
    list: Vec<LType>,
    /// The Gyre type of each scalar type of `list` (`None` for the others): what
    /// [`Types::scalar`] returns, read without matching on the type for every operand.
    scalars: Vec<Option<Type>>,
    intern: FxHashMap<LType, TyId>,
    /// The ids of `void`, `float`, `double`, `i1`..`i64` and `ptr addrspace(0..8)`,
    /// once interned (see [`Types::intern`]).
    simple: [Option<TyId>; 16],
    /// Named struct bodies by index (`None` while only referenced or `opaque`).
    pub named: Vec<(String, Option<TyId>)>,
    named_index: FxHashMap<String, u32>,
    pub layout: DataLayout,
}

/// A type of one word with pointer suffixes, as the parser's fast path reads it from the
/// token records: 8 bytes, where an [`LType`] (with its `String` and `Vec` variants)
/// is 32, moved through memory on every type parsed.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Simple {
    Void,
    Int(u32),
    Float,
    Double,
    Ptr(u32),
}

impl Simple {
    fn ltype(self) -> LType {
        match self {
            Simple::Void => LType::Void,
            Simple::Int(n) => LType::Int(n),
            Simple::Float => LType::Float,
            Simple::Double => LType::Double,
            Simple::Ptr(n) => LType::Ptr(n),
        }
    }

    /// Its slot in [`Types::simple`], as [`Types::intern`] picks it.
    #[inline]
    fn slot(self) -> Option<usize> {
        match self {
            Simple::Void => Some(0),
            Simple::Float => Some(1),
            Simple::Double => Some(2),
            Simple::Int(1) => Some(3),
            Simple::Int(8) => Some(4),
            Simple::Int(16) => Some(5),
            Simple::Int(32) => Some(6),
            Simple::Int(64) => Some(7),
            Simple::Ptr(n) if n < 8 => Some(8 + n as usize),
            _ => None,
        }
    }
}

impl Types {
    /// [`Types::intern`] of a [`Simple`] type: the same id, read from its slot without
    /// building an [`LType`] once the type was seen.
    #[inline]
    pub fn intern_simple(&mut self, s: Simple) -> TyId {
        if let Some(id) = s.slot().and_then(|k| self.simple[k]) {
            return id;
        }
        self.intern(s.ltype())
    }

    pub fn intern(&mut self, t: LType) -> TyId {
        // The common scalar types skip hashing: most types parsed are one of them.
        let slot = match &t {
            LType::Void => Some(0),
            LType::Float => Some(1),
            LType::Double => Some(2),
            LType::Int(1) => Some(3),
            LType::Int(8) => Some(4),
            LType::Int(16) => Some(5),
            LType::Int(32) => Some(6),
            LType::Int(64) => Some(7),
            LType::Ptr(n) if *n < 8 => Some(8 + *n as usize),
            _ => None,
        };
        if let Some(id) = slot.and_then(|k| self.simple[k]) {
            return id;
        }
        if let Some(&id) = self.intern.get(&t) {
            return id;
        }
        let id = TyId(self.list.len() as u32);
        let scalar = match t {
            LType::Int(1) => Some(Type::I1),
            LType::Int(8) => Some(Type::I8),
            LType::Int(16) => Some(Type::I16),
            LType::Int(32) => Some(Type::I32),
            LType::Int(64) => Some(Type::I64),
            LType::Float => Some(Type::F32),
            LType::Double => Some(Type::F64),
            LType::Ptr(n) => AddrSpace::from_llvm_number(n).map(Type::Ptr),
            _ => None,
        };
        self.scalars.push(scalar);
        self.list.push(t.clone());
        self.intern.insert(t, id);
        if let Some(k) = slot {
            self.simple[k] = Some(id);
        }
        id
    }

    pub fn get(&self, id: TyId) -> &LType {
        &self.list[id.0 as usize]
    }

    /// The index of a named type, created on first mention.
    pub fn named(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.named_index.get(name) {
            return i;
        }
        let i = self.named.len() as u32;
        self.named.push((name.to_string(), None));
        self.named_index.insert(name.to_string(), i);
        i
    }

    /// Follow named types to their bodies (bounded, so cycles give `None`).
    pub fn resolve(&self, mut id: TyId) -> Option<TyId> {
        for _ in 0..MAX_TYPE_DEPTH {
            match self.get(id) {
                LType::Named(i) => id = self.named[*i as usize].1?,
                _ => return Some(id),
            }
        }
        None
    }

    /// The Gyre scalar type of an LLVM first-class type, or a description of why not.
    #[inline]
    pub fn scalar(&self, id: TyId) -> Result<Type, String> {
        match self.scalars.get(id.0 as usize) {
            Some(&Some(t)) => Ok(t),
            _ => self.non_scalar(id),
        }
    }

    /// [`Types::scalar`] of a type that is not one of Gyre's scalars: the error (or, for
    /// an id from outside the arena, the same match as for any other).
    #[cold]
    fn non_scalar(&self, id: TyId) -> Result<Type, String> {
        Ok(match self.get(id) {
            LType::Int(1) => Type::I1,
            LType::Int(8) => Type::I8,
            LType::Int(16) => Type::I16,
            LType::Int(32) => Type::I32,
            LType::Int(64) => Type::I64,
            LType::Int(n) => return Err(format!("integer type i{n}")),
            LType::Float => Type::F32,
            LType::Double => Type::F64,
            LType::OtherFloat(n) => return Err(format!("floating-point type {n}")),
            LType::Ptr(n) => Type::Ptr(
                AddrSpace::from_llvm_number(*n).ok_or_else(|| format!("address space {n}"))?,
            ),
            LType::Vector => return Err("vector type".into()),
            LType::Array(..) | LType::Struct(..) | LType::Named(_) => {
                return Err(format!("aggregate value of type {}", self.display(id)))
            }
            LType::Void => return Err("void value".into()),
            LType::Label => return Err("label value".into()),
            LType::Metadata => return Err("metadata value".into()),
            LType::Token => return Err("token type".into()),
            LType::Func => return Err("function type value".into()),
        })
    }

    /// Allocation size and ABI alignment in bytes.
    pub fn size_align(&self, id: TyId) -> Result<(u64, u64), String> {
        self.size_align_depth(id, 0)
    }

    fn size_align_depth(&self, id: TyId, depth: u32) -> Result<(u64, u64), String> {
        if depth > MAX_TYPE_DEPTH {
            return Err("type nesting too deep (or recursive)".into());
        }
        Ok(match self.get(id) {
            LType::Int(n) => {
                let bytes = u64::from(n.div_ceil(8)).next_power_of_two();
                let align = if *n > 32 {
                    self.layout.i64_align
                } else {
                    bytes
                };
                (bytes.max(align), align)
            }
            LType::Float => (4, 4),
            LType::Double => (8, self.layout.f64_align),
            LType::Ptr(_) => (8, 8),
            LType::Array(n, e) => {
                let (s, a) = self.size_align_depth(*e, depth + 1)?;
                let total = s
                    .checked_mul(*n)
                    .ok_or_else(|| "array type too large".to_string())?;
                (total, a)
            }
            LType::Struct(fields, packed) => {
                let mut off = 0u64;
                let mut align = 1u64;
                for &f in fields {
                    let (s, a) = self.size_align_depth(f, depth + 1)?;
                    let a = if *packed { 1 } else { a };
                    off = off.div_ceil(a) * a;
                    off = off
                        .checked_add(s)
                        .ok_or_else(|| "struct type too large".to_string())?;
                    align = align.max(a);
                }
                (off.div_ceil(align) * align, align)
            }
            LType::Named(i) => match self.named[*i as usize].1 {
                Some(body) => self.size_align_depth(body, depth + 1)?,
                None => {
                    return Err(format!(
                        "opaque type %{} has no size",
                        self.named[*i as usize].0
                    ))
                }
            },
            _ => return Err(format!("type {} has no size", self.display(id))),
        })
    }

    /// Byte offset of field `idx` of a struct type.
    pub fn field_offset(&self, id: TyId, idx: u64) -> Result<(u64, TyId), String> {
        let id = self
            .resolve(id)
            .ok_or_else(|| "unresolvable named type".to_string())?;
        let LType::Struct(fields, packed) = self.get(id) else {
            return Err("field index into a non-struct type".into());
        };
        if idx >= fields.len() as u64 {
            return Err(format!("struct field index {idx} out of range"));
        }
        let mut off = 0u64;
        for (i, &f) in fields.iter().enumerate() {
            let (s, a) = self.size_align(f)?;
            let a = if *packed { 1 } else { a };
            off = off.div_ceil(a) * a;
            if i as u64 == idx {
                return Ok((off, f));
            }
            off += s;
        }
        unreachable!("field index checked against the field count")
    }

    /// The scalar leaves of an aggregate (struct or array) type in memory order: the
    /// byte offset and LLVM type of each. `Ok(None)` for a type that is not an
    /// aggregate. The importer keeps an aggregate SSA value as one Gyre value per leaf.
    pub fn leaves(&self, id: TyId) -> Result<Option<Vec<(u64, TyId)>>, String> {
        let r = self
            .resolve(id)
            .ok_or_else(|| "unresolvable named type".to_string())?;
        if !matches!(self.get(r), LType::Array(..) | LType::Struct(..)) {
            return Ok(None);
        }
        let mut out = Vec::new();
        // Explicit stack, children pushed in reverse so they pop in memory order.
        let mut stack = vec![(0u64, id, 0u32)];
        while let Some((off, t, depth)) = stack.pop() {
            if depth > MAX_TYPE_DEPTH {
                return Err("type nesting too deep (or recursive)".into());
            }
            let r = self
                .resolve(t)
                .ok_or_else(|| "unresolvable named type".to_string())?;
            match self.get(r) {
                LType::Array(n, e) => {
                    let (es, _) = self.size_align(*e)?;
                    if n.saturating_add(out.len() as u64) > MAX_LEAVES {
                        return Err("aggregate value with too many elements".into());
                    }
                    for i in (0..*n).rev() {
                        stack.push((off + i * es, *e, depth + 1));
                    }
                }
                LType::Struct(fields, _) => {
                    for i in (0..fields.len()).rev() {
                        let (fo, ft) = self.field_offset(r, i as u64)?;
                        stack.push((off + fo, ft, depth + 1));
                    }
                }
                _ => {
                    out.push((off, t));
                    if out.len() as u64 > MAX_LEAVES {
                        return Err("aggregate value with too many elements".into());
                    }
                }
            }
        }
        Ok(Some(out))
    }

    /// Number of leaves of a type (1 for a scalar).
    pub fn leaf_count(&self, id: TyId) -> Result<usize, String> {
        Ok(self.leaves(id)?.map_or(1, |l| l.len()))
    }

    /// The leaves an `extractvalue`/`insertvalue` index path selects in an aggregate of
    /// type `id`: the first leaf's position, and the type at the path.
    pub fn leaf_path(&self, id: TyId, path: &[u64]) -> Result<(usize, TyId), String> {
        let mut start = 0usize;
        let mut cur = id;
        for &i in path {
            let r = self
                .resolve(cur)
                .ok_or_else(|| "unresolvable named type".to_string())?;
            match self.get(r) {
                LType::Array(n, e) => {
                    if i >= *n {
                        return Err(format!("index {i} out of range"));
                    }
                    start += i as usize * self.leaf_count(*e)?;
                    cur = *e;
                }
                LType::Struct(fields, _) => {
                    let Some(&f) = fields.get(i as usize) else {
                        return Err(format!("index {i} out of range"));
                    };
                    for &g in &fields[..i as usize] {
                        start += self.leaf_count(g)?;
                    }
                    cur = f;
                }
                _ => return Err("index into a non-aggregate type".into()),
            }
        }
        Ok((start, cur))
    }

    /// Short LLVM spelling for messages (bounded: deep types are elided).
    pub fn display(&self, id: TyId) -> String {
        let mut s = String::new();
        self.display_into(id, &mut s, 0);
        s
    }

    fn display_into(&self, id: TyId, s: &mut String, depth: u32) {
        if depth > 4 {
            s.push_str("...");
            return;
        }
        match self.get(id) {
            LType::Void => s.push_str("void"),
            LType::Int(n) => s.push_str(&format!("i{n}")),
            LType::Float => s.push_str("float"),
            LType::Double => s.push_str("double"),
            LType::OtherFloat(n) => s.push_str(n),
            LType::Ptr(0) => s.push_str("ptr"),
            LType::Ptr(n) => s.push_str(&format!("ptr addrspace({n})")),
            LType::Array(n, e) => {
                s.push_str(&format!("[{n} x "));
                self.display_into(*e, s, depth + 1);
                s.push(']');
            }
            LType::Struct(f, packed) => {
                s.push_str(if *packed { "<{" } else { "{" });
                for (i, &t) in f.iter().enumerate() {
                    s.push_str(if i == 0 { " " } else { ", " });
                    self.display_into(t, s, depth + 1);
                }
                s.push_str(if *packed { " }>" } else { " }" });
            }
            LType::Named(i) => {
                s.push('%');
                s.push_str(&self.named[*i as usize].0);
            }
            LType::Vector => s.push_str("<vector>"),
            LType::Label => s.push_str("label"),
            LType::Metadata => s.push_str("metadata"),
            LType::Token => s.push_str("token"),
            LType::Func => s.push_str("<function>"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_types_intern_as_ltypes() {
        // The fast path gives the id `intern` gives, whichever of the two sees a type
        // first, slotted or not.
        let all = [
            Simple::Void,
            Simple::Float,
            Simple::Double,
            Simple::Int(1),
            Simple::Int(8),
            Simple::Int(16),
            Simple::Int(32),
            Simple::Int(64),
            Simple::Int(7),
            Simple::Int(128),
            Simple::Ptr(0),
            Simple::Ptr(3),
            Simple::Ptr(7),
            Simple::Ptr(8),
            Simple::Ptr(1 << 20),
        ];
        let mut t = Types::default();
        for (k, &s) in all.iter().enumerate() {
            let (a, b) = if k % 2 == 0 {
                let a = t.intern_simple(s);
                (a, t.intern(s.ltype()))
            } else {
                let b = t.intern(s.ltype());
                (t.intern_simple(s), b)
            };
            assert_eq!(a, b, "{s:?}");
            assert_eq!(*t.get(a), s.ltype());
            assert_eq!(t.intern_simple(s), a);
        }
    }

    #[test]
    fn struct_layout() {
        let mut t = Types::default();
        let i8t = t.intern(LType::Int(8));
        let i32t = t.intern(LType::Int(32));
        let i64t = t.intern(LType::Int(64));
        let s = t.intern(LType::Struct(vec![i8t, i64t, i32t], false));
        assert_eq!(t.size_align(s).unwrap(), (24, 8));
        assert_eq!(t.field_offset(s, 1).unwrap().0, 8);
        assert_eq!(t.field_offset(s, 2).unwrap().0, 16);
        let p = t.intern(LType::Struct(vec![i8t, i64t, i32t], true));
        assert_eq!(t.size_align(p).unwrap(), (13, 1));
        let a = t.intern(LType::Array(10, s));
        assert_eq!(t.size_align(a).unwrap(), (240, 8));
        assert!(t.field_offset(s, 3).is_err());
        // A self-containing named type is caught, not a stack overflow.
        let n = t.named("T");
        let nt = t.intern(LType::Named(n));
        let body = t.intern(LType::Struct(vec![nt], false));
        t.named[n as usize].1 = Some(body);
        assert!(t.size_align(nt).is_err());
    }
}
