//! The CUDA driver API entry points Gyre uses, resolved from `libcuda.so.1` at run time.
//!
//! Only the handful of functions a launch needs are declared, with the C signatures of
//! `cuda.h` (driver API, CUDA 11 and later); handles are opaque pointers, device
//! pointers 64-bit integers.

use crate::GpuError;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `CUresult`.
pub type CuResult = c_int;
/// `CUdevice`.
pub type CuDevice = c_int;
/// `CUdeviceptr` (64-bit).
pub type CuDevicePtr = u64;
/// `CUcontext`, `CUmodule`, `CUfunction`, `CUevent`, `CUstream`: opaque handles.
pub type Handle = *mut c_void;

/// `CUDA_SUCCESS`.
pub const SUCCESS: CuResult = 0;
/// `CUDA_ERROR_NO_DEVICE`.
pub const ERROR_NO_DEVICE: CuResult = 100;
/// `CUDA_ERROR_NOT_FOUND` (no such global or function in a module).
pub const ERROR_NOT_FOUND: CuResult = 500;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
pub const ATTR_CC_MAJOR: c_int = 75;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
pub const ATTR_CC_MINOR: c_int = 76;
/// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
pub const ATTR_MAX_SHARED_OPTIN: c_int = 97;
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
pub const FUNC_ATTR_MAX_DYNAMIC_SHARED: c_int = 8;
/// `CU_JIT_INFO_LOG_BUFFER`, `..._SIZE_BYTES`, `CU_JIT_ERROR_LOG_BUFFER`, `..._SIZE_BYTES`.
pub const JIT_INFO_LOG_BUFFER: c_int = 3;
/// See [`JIT_INFO_LOG_BUFFER`].
pub const JIT_INFO_LOG_BUFFER_SIZE_BYTES: c_int = 4;
/// See [`JIT_INFO_LOG_BUFFER`].
pub const JIT_ERROR_LOG_BUFFER: c_int = 5;
/// See [`JIT_INFO_LOG_BUFFER`].
pub const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
/// `CU_LAUNCH_PARAM_END`, `CU_LAUNCH_PARAM_BUFFER_POINTER`, `CU_LAUNCH_PARAM_BUFFER_SIZE`.
pub const LAUNCH_PARAM_END: usize = 0;
/// See [`LAUNCH_PARAM_END`].
pub const LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
/// See [`LAUNCH_PARAM_END`].
pub const LAUNCH_PARAM_BUFFER_SIZE: usize = 2;

macro_rules! entry_points {
    ($($field:ident = $sym:literal : fn($($arg:ty),*);)*) => {
        /// The driver library and its entry points.
        pub struct Driver {
            // Kept open for as long as the function pointers below are used.
            _lib: libloading::Library,
            $(
                #[doc = concat!("`", $sym, "`.")]
                pub $field: unsafe extern "C" fn($($arg),*) -> CuResult,
            )*
        }

        impl Driver {
            /// Open the driver library at `path` (a name the dynamic loader searches
            /// for, like `libcuda.so.1`, or a path) and resolve every entry point.
            pub fn open(path: &str) -> Result<Driver, GpuError> {
                // SAFETY: loading the CUDA driver runs its initialisers, which have no
                // preconditions on our side; a library that is not the driver is caught
                // by the symbol lookups below.
                let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
                    GpuError::NoDriver {
                        library: path.to_string(),
                        reason: e.to_string(),
                    }
                })?;
                $(
                    // SAFETY: the type is the entry point's C signature from cuda.h.
                    let $field = unsafe {
                        lib.get::<unsafe extern "C" fn($($arg),*) -> CuResult>(
                            concat!($sym, "\0").as_bytes(),
                        )
                    }
                    .map(|s| *s)
                    .map_err(|e| GpuError::MissingSymbol {
                        library: path.to_string(),
                        symbol: $sym,
                        reason: e.to_string(),
                    })?;
                )*
                Ok(Driver { _lib: lib, $($field,)* })
            }
        }
    };
}

entry_points! {
    init = "cuInit": fn(c_uint);
    device_get_count = "cuDeviceGetCount": fn(*mut c_int);
    device_get = "cuDeviceGet": fn(*mut CuDevice, c_int);
    device_get_name = "cuDeviceGetName": fn(*mut c_char, c_int, CuDevice);
    device_get_attribute = "cuDeviceGetAttribute": fn(*mut c_int, c_int, CuDevice);
    ctx_create = "cuCtxCreate_v2": fn(*mut Handle, c_uint, CuDevice);
    ctx_destroy = "cuCtxDestroy_v2": fn(Handle);
    ctx_synchronize = "cuCtxSynchronize": fn();
    module_load_data_ex = "cuModuleLoadDataEx":
        fn(*mut Handle, *const c_void, c_uint, *mut c_int, *mut *mut c_void);
    module_unload = "cuModuleUnload": fn(Handle);
    module_get_function = "cuModuleGetFunction": fn(*mut Handle, Handle, *const c_char);
    module_get_global = "cuModuleGetGlobal_v2":
        fn(*mut CuDevicePtr, *mut usize, Handle, *const c_char);
    func_set_attribute = "cuFuncSetAttribute": fn(Handle, c_int, c_int);
    mem_alloc = "cuMemAlloc_v2": fn(*mut CuDevicePtr, usize);
    mem_free = "cuMemFree_v2": fn(CuDevicePtr);
    memcpy_htod = "cuMemcpyHtoD_v2": fn(CuDevicePtr, *const c_void, usize);
    memcpy_dtoh = "cuMemcpyDtoH_v2": fn(*mut c_void, CuDevicePtr, usize);
    launch_kernel = "cuLaunchKernel": fn(
        Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle,
        *mut *mut c_void, *mut *mut c_void);
    event_create = "cuEventCreate": fn(*mut Handle, c_uint);
    event_destroy = "cuEventDestroy_v2": fn(Handle);
    event_record = "cuEventRecord": fn(Handle, Handle);
    event_synchronize = "cuEventSynchronize": fn(Handle);
    event_elapsed_time = "cuEventElapsedTime": fn(*mut f32, Handle, Handle);
    get_error_string = "cuGetErrorString": fn(CuResult, *mut *const c_char);
    get_error_name = "cuGetErrorName": fn(CuResult, *mut *const c_char);
}

impl Driver {
    /// `CUDA_ERROR_...: description` for a result code.
    pub fn describe(&self, code: CuResult) -> String {
        let mut name: *const c_char = std::ptr::null();
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: both calls only write a pointer to a static string (or leave it null
        // for an unknown code).
        unsafe {
            (self.get_error_name)(code, &mut name);
            (self.get_error_string)(code, &mut text);
        }
        let read = |p: *const c_char| {
            // SAFETY: non-null results are NUL-terminated static strings.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        match (read(name), read(text)) {
            (Some(n), Some(t)) => format!("{n}: {t}"),
            (Some(n), None) => n,
            _ => format!("CUDA error {code}"),
        }
    }

    /// `Ok` for `CUDA_SUCCESS`, else the typed error of call `call`.
    pub fn check(&self, call: &'static str, code: CuResult) -> Result<(), GpuError> {
        if code == SUCCESS {
            return Ok(());
        }
        Err(GpuError::Driver {
            call,
            code,
            message: self.describe(code),
        })
    }
}
