//! Value types: integers, floats and address-space-qualified pointers.

use core::fmt;

/// A PTX state space a pointer points into.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum AddrSpace {
    /// Generic addressing: may point into global, shared or local memory.
    Generic,
    /// Device global memory (LLVM addrspace 1).
    Global,
    /// Per-CTA shared memory (LLVM addrspace 3).
    Shared,
    /// Read-only constant memory (LLVM addrspace 4).
    Const,
    /// Per-thread local memory (LLVM addrspace 5).
    Local,
}

impl AddrSpace {
    /// All address spaces, in a fixed order.
    pub const ALL: [AddrSpace; 5] = [
        AddrSpace::Generic,
        AddrSpace::Global,
        AddrSpace::Shared,
        AddrSpace::Const,
        AddrSpace::Local,
    ];

    /// The spelling used in the text format (`global`, `shared`, ...).
    pub fn name(self) -> &'static str {
        match self {
            AddrSpace::Generic => "generic",
            AddrSpace::Global => "global",
            AddrSpace::Shared => "shared",
            AddrSpace::Const => "const",
            AddrSpace::Local => "local",
        }
    }

    /// Parse the text-format spelling.
    pub fn from_name(s: &str) -> Option<AddrSpace> {
        AddrSpace::ALL.iter().copied().find(|a| a.name() == s)
    }

    /// The LLVM NVPTX address-space number.
    pub fn llvm_number(self) -> u32 {
        match self {
            AddrSpace::Generic => 0,
            AddrSpace::Global => 1,
            AddrSpace::Shared => 3,
            AddrSpace::Const => 4,
            AddrSpace::Local => 5,
        }
    }

    /// The address space for an LLVM NVPTX address-space number.
    pub fn from_llvm_number(n: u32) -> Option<AddrSpace> {
        AddrSpace::ALL
            .iter()
            .copied()
            .find(|a| a.llvm_number() == n)
    }
}

impl fmt::Display for AddrSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of an SSA value.
///
/// Pointers are 64 bits wide in every address space (PTX `.address_size 64`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Type {
    /// A boolean (branch conditions, comparison results).
    I1,
    /// 8-bit integer.
    I8,
    /// 16-bit integer.
    I16,
    /// 32-bit integer.
    I32,
    /// 64-bit integer.
    I64,
    /// IEEE-754 binary32.
    F32,
    /// IEEE-754 binary64.
    F64,
    /// A 64-bit pointer into an address space.
    Ptr(AddrSpace),
}

impl Type {
    /// Every scalar type and every pointer type, in a fixed order.
    pub const ALL: [Type; 12] = [
        Type::I1,
        Type::I8,
        Type::I16,
        Type::I32,
        Type::I64,
        Type::F32,
        Type::F64,
        Type::Ptr(AddrSpace::Generic),
        Type::Ptr(AddrSpace::Global),
        Type::Ptr(AddrSpace::Shared),
        Type::Ptr(AddrSpace::Const),
        Type::Ptr(AddrSpace::Local),
    ];

    /// Width in bits (1 for `i1`, 64 for pointers).
    pub fn bits(self) -> u32 {
        match self {
            Type::I1 => 1,
            Type::I8 => 8,
            Type::I16 => 16,
            Type::I32 | Type::F32 => 32,
            Type::I64 | Type::F64 | Type::Ptr(_) => 64,
        }
    }

    /// Size in bytes when stored to memory (`i1` occupies one byte).
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Is this an integer type (including `i1`)?
    pub fn is_int(self) -> bool {
        matches!(
            self,
            Type::I1 | Type::I8 | Type::I16 | Type::I32 | Type::I64
        )
    }

    /// Is this a floating-point type?
    pub fn is_float(self) -> bool {
        matches!(self, Type::F32 | Type::F64)
    }

    /// Is this a pointer type?
    pub fn is_ptr(self) -> bool {
        matches!(self, Type::Ptr(_))
    }

    /// The address space of a pointer type.
    pub fn addr_space(self) -> Option<AddrSpace> {
        match self {
            Type::Ptr(a) => Some(a),
            _ => None,
        }
    }

    /// The integer type of the given width, if there is one.
    pub fn int(bits: u32) -> Option<Type> {
        Some(match bits {
            1 => Type::I1,
            8 => Type::I8,
            16 => Type::I16,
            32 => Type::I32,
            64 => Type::I64,
            _ => return None,
        })
    }

    /// Parse the text-format spelling (`i32`, `f64`, `ptr.global`, `ptr` for generic).
    pub fn from_name(s: &str) -> Option<Type> {
        Some(match s {
            "i1" => Type::I1,
            "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "f32" => Type::F32,
            "f64" => Type::F64,
            "ptr" => Type::Ptr(AddrSpace::Generic),
            _ => Type::Ptr(AddrSpace::from_name(s.strip_prefix("ptr.")?)?),
        })
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::I1 => f.write_str("i1"),
            Type::I8 => f.write_str("i8"),
            Type::I16 => f.write_str("i16"),
            Type::I32 => f.write_str("i32"),
            Type::I64 => f.write_str("i64"),
            Type::F32 => f.write_str("f32"),
            Type::F64 => f.write_str("f64"),
            Type::Ptr(AddrSpace::Generic) => f.write_str("ptr"),
            Type::Ptr(a) => write!(f, "ptr.{a}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in Type::ALL {
            assert_eq!(Type::from_name(&t.to_string()), Some(t));
        }
        assert_eq!(Type::from_name("ptr.bogus"), None);
        assert_eq!(Type::from_name("i7"), None);
    }
}
