//! Modules: functions and global variables.

use crate::entities::{FuncId, GlobalId};
use crate::function::Function;
use crate::types::{AddrSpace, Type};
use cranelift_entity::PrimaryMap;

/// A module-level variable: a shared-memory array, a constant table or a global buffer.
#[derive(Clone, PartialEq, Debug)]
pub struct GlobalData {
    /// Name without the `@`.
    pub name: String,
    /// The state space it lives in (`global_addr` yields a pointer into it).
    pub space: AddrSpace,
    /// Element type (a scalar type).
    pub elem: Type,
    /// Number of elements.
    pub count: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// Initial element bits (zero-extended), if initialized; `count` entries.
    pub init: Option<Vec<u64>>,
}

impl GlobalData {
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        u64::from(self.elem.bytes()) * u64::from(self.count)
    }
}

/// A compilation unit: device functions, kernels and globals.
#[derive(Clone, Default)]
pub struct Module {
    /// The functions, in definition order.
    pub functions: PrimaryMap<FuncId, Function>,
    /// The globals, in definition order.
    pub globals: PrimaryMap<GlobalId, GlobalData>,
}

impl Module {
    /// An empty module.
    pub fn new() -> Module {
        Module::default()
    }

    /// The function with this name.
    pub fn func_by_name(&self, name: &str) -> Option<FuncId> {
        self.functions
            .iter()
            .find(|(_, f)| f.name == name)
            .map(|(id, _)| id)
    }

    /// The global with this name.
    pub fn global_by_name(&self, name: &str) -> Option<GlobalId> {
        self.globals
            .iter()
            .find(|(_, g)| g.name == name)
            .map(|(id, _)| id)
    }
}
