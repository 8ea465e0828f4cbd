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
    /// Who can name the global from outside the module.
    pub linkage: Linkage,
    /// The host may write the global before a launch (`cudaMemcpyToSymbol` on a
    /// `__constant__` or `__device__` variable; LLVM's `externally_initialized`). Its
    /// contents are then an input of the launch: `init` is only the value the module was
    /// compiled with, and no pass may fold loads from it. Needs [`Linkage::Visible`] and
    /// the global or const space.
    pub externally_initialized: bool,
}

/// The linkage of a global: whether its symbol is visible outside the module.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default)]
pub enum Linkage {
    /// Private to the module (LLVM `internal`/`private`; PTX without a linkage directive).
    #[default]
    Internal,
    /// Defined here and visible to the host and other modules (LLVM's default external
    /// linkage; PTX `.visible`, or `.weak` for LLVM's weak linkages is not distinguished).
    Visible,
    /// Declared here, storage provided at launch: only the dynamically sized shared array
    /// (`extern __shared__ T a[];`, LLVM `external addrspace(3) global [0 x T]`; PTX
    /// `.extern .shared ... a[]`). Every such global of a kernel starts at the same address
    /// of the launch's dynamic shared memory. Needs the shared space, no elements and no
    /// initializer.
    Extern,
}

impl Linkage {
    /// The text spelling (`internal` is the default and printed as nothing).
    pub fn name(self) -> &'static str {
        match self {
            Linkage::Internal => "internal",
            Linkage::Visible => "visible",
            Linkage::Extern => "extern",
        }
    }
}

impl GlobalData {
    /// An internal, uninitialized global.
    pub fn new(name: &str, space: AddrSpace, elem: Type, count: u32, align: u32) -> GlobalData {
        GlobalData {
            name: name.to_string(),
            space,
            elem,
            count,
            align,
            init: None,
            linkage: Linkage::Internal,
            externally_initialized: false,
        }
    }

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

    /// Add a function and return a handle for calling it
    /// ([`InstBuilder::call_ref`](crate::builder::InstBuilder::call_ref)).
    pub fn push_function(&mut self, func: Function) -> FuncRef {
        let ret = func.sig.ret;
        let id = self.functions.push(func);
        FuncRef { id, ret }
    }

    /// Add a global and return a handle for taking its address
    /// ([`InstBuilder::global_addr_ref`](crate::builder::InstBuilder::global_addr_ref)).
    pub fn push_global(&mut self, global: GlobalData) -> GlobalRef {
        let space = global.space;
        let id = self.globals.push(global);
        GlobalRef { id, space }
    }

    /// A handle for calling the function with this name.
    pub fn func_ref(&self, name: &str) -> Option<FuncRef> {
        let id = self.func_by_name(name)?;
        Some(FuncRef {
            id,
            ret: self.functions[id].sig.ret,
        })
    }

    /// A handle for taking the address of the global with this name.
    pub fn global_ref(&self, name: &str) -> Option<GlobalRef> {
        let id = self.global_by_name(name)?;
        Some(GlobalRef {
            id,
            space: self.globals[id].space,
        })
    }
}

/// A function of a module as a call site needs it: its id and its return type.
///
/// A [`FunctionBuilder`](crate::builder::FunctionBuilder) borrows one function, not the
/// module, so it cannot look the callee up; a front end takes these handles from the
/// module ([`Module::push_function`], [`Module::func_ref`]) before building bodies.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct FuncRef {
    /// The callee.
    pub id: FuncId,
    /// Its signature's return type.
    pub ret: Option<Type>,
}

/// A global of a module as `global_addr` needs it: its id and its address space.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct GlobalRef {
    /// The global.
    pub id: GlobalId,
    /// Its state space (the space of the pointer `global_addr` yields).
    pub space: AddrSpace,
}
