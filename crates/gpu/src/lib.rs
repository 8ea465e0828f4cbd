//! # gyre-gpu
//!
//! Runs a PTX kernel on a real GPU through the CUDA driver API. The driver
//! (`libcuda.so.1`) is opened at run time with `libloading`, never linked, so Gyre builds
//! and tests on machines without CUDA and the same binary runs on a GPU machine; no driver
//! or no device is a typed [`GpuError`], never a crash.
//!
//! A [`Job`] is PTX text, an entry name, a launch shape, the kernel's arguments and the
//! initial contents of its buffers and host-initialised globals. [`Gpu::run`] loads the
//! PTX (JIT-compiling it for the device, with the JIT's error log on failure), lays the
//! arguments out as the `.entry` signature says ([`entry`]), launches once, copies every
//! buffer and global back and, when asked, times more launches with CUDA events.
//!
//! ```no_run
//! use gyre_gpu::{Gpu, Job, KernelArg, LaunchShape};
//! let gpu = Gpu::open()?;
//! let ptx = std::fs::read_to_string("saxpy.ptx").unwrap();
//! let x: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let out = gpu.run(&Job {
//!     ptx: &ptx,
//!     entry: "saxpy",
//!     shape: LaunchShape { grid: [1, 1, 1], block: [2, 1, 1], dynamic_shared: 0 },
//!     args: &[KernelArg::Buffer(0, 0), KernelArg::Buffer(1, 0), KernelArg::F32(2.0), KernelArg::Int(2)],
//!     buffers: &[x.clone(), x],
//!     globals: &[],
//!     timed_launches: 0,
//! })?;
//! println!("{:?}", out.buffers[1]);
//! # Ok::<(), gyre_gpu::GpuError>(())
//! ```

#![warn(missing_docs)]

pub mod compare;
pub mod driver;
pub mod entry;

pub use entry::{entry_names, entry_signature, EntrySignature, KernelArg, Param, ParamKind};

use driver::{CuDevicePtr, Driver, Handle};
use std::ffi::{c_char, c_int, c_uint, c_void, CString};

/// The library [`Gpu::open`] loads unless `GYRE_LIBCUDA` names another.
pub const DEFAULT_LIBRARY: &str = "libcuda.so.1";

/// Why a GPU run did not happen or did not finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuError {
    /// The driver library could not be loaded (no NVIDIA driver installed).
    NoDriver {
        /// The library looked for.
        library: String,
        /// The loader's message.
        reason: String,
    },
    /// The library loaded but lacks a driver entry point (not the CUDA driver, or too
    /// old a one).
    MissingSymbol {
        /// The library.
        library: String,
        /// The missing entry point.
        symbol: &'static str,
        /// The loader's message.
        reason: String,
    },
    /// The driver is there but finds no CUDA device.
    NoDevice {
        /// What the driver said.
        message: String,
    },
    /// A driver call failed.
    Driver {
        /// The entry point.
        call: &'static str,
        /// Its `CUresult`.
        code: i32,
        /// `CUDA_ERROR_...: description`.
        message: String,
    },
    /// The driver's JIT rejected the PTX.
    Jit {
        /// What `cuModuleLoadDataEx` returned.
        message: String,
        /// The JIT's error log.
        log: String,
    },
    /// The PTX has no `.entry` of that name.
    NoEntry {
        /// The entry looked for.
        name: String,
        /// The entries the PTX has.
        available: Vec<String>,
    },
    /// The `.entry` parameter list could not be read.
    Signature {
        /// The entry.
        entry: String,
        /// What is wrong.
        message: String,
    },
    /// The arguments do not fit the entry's parameters.
    Arguments {
        /// The entry.
        entry: String,
        /// What does not fit.
        message: String,
    },
    /// A host-initialised global is not in the loaded module, or has another size.
    Global {
        /// The names tried.
        names: Vec<String>,
        /// What is wrong.
        message: String,
    },
    /// The launch failed (at launch, or when the kernel ran: a trap, a bad address).
    Launch {
        /// The entry.
        entry: String,
        /// `CUDA_ERROR_...: description`.
        message: String,
    },
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GpuError::NoDriver { library, reason } => write!(
                f,
                "no CUDA driver: cannot load {library} ({reason}); --gpu needs an NVIDIA GPU \
                 and its driver (GYRE_LIBCUDA names another library)"
            ),
            GpuError::MissingSymbol {
                library,
                symbol,
                reason,
            } => write!(
                f,
                "{library} is not a usable CUDA driver: it lacks {symbol} ({reason})"
            ),
            GpuError::NoDevice { message } => {
                write!(f, "no CUDA device: the driver finds none ({message})")
            }
            GpuError::Driver {
                call,
                code,
                message,
            } => write!(f, "{call} failed ({code}): {message}"),
            GpuError::Jit { message, log } => {
                write!(f, "the driver's JIT rejected the PTX: {message}")?;
                if !log.trim().is_empty() {
                    write!(f, "\n{}", log.trim_end())?;
                }
                Ok(())
            }
            GpuError::NoEntry { name, available } => write!(
                f,
                "the PTX has no .entry {name} (it has: {})",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            ),
            GpuError::Signature { entry, message } => {
                write!(f, "cannot read the parameters of .entry {entry}: {message}")
            }
            GpuError::Arguments { entry, message } => {
                write!(f, "arguments of .entry {entry}: {message}")
            }
            GpuError::Global { names, message } => {
                write!(f, "global {}: {message}", names.join(" / "))
            }
            GpuError::Launch { entry, message } => {
                write!(f, "the launch of {entry} failed: {message}")
            }
        }
    }
}

impl std::error::Error for GpuError {}

/// Grid and block shape and dynamic shared memory of a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// CTAs per grid dimension.
    pub grid: [u32; 3],
    /// Threads per CTA dimension.
    pub block: [u32; 3],
    /// Bytes of dynamic shared memory per CTA.
    pub dynamic_shared: u32,
}

/// The initial contents of a global of the module (a host-initialised `__constant__`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalInit {
    /// The names it may have in the PTX, tried in order (Gyre and llc spell some names
    /// differently).
    pub symbols: Vec<String>,
    /// Its bytes; the global's size must be exactly this.
    pub bytes: Vec<u8>,
}

/// One run: PTX, entry, launch shape and inputs.
#[derive(Clone, Debug)]
pub struct Job<'a> {
    /// PTX text.
    pub ptx: &'a str,
    /// The `.entry` to launch.
    pub entry: &'a str,
    /// Grid, block and dynamic shared memory.
    pub shape: LaunchShape,
    /// One argument per parameter.
    pub args: &'a [KernelArg],
    /// Initial contents of each buffer, in device memory of its own
    /// ([`KernelArg::Buffer`] names them by index).
    pub buffers: &'a [Vec<u8>],
    /// Host-initialised globals to fill before the launch.
    pub globals: &'a [GlobalInit],
    /// Launches to time after the first (0: none). Each timed launch starts from the
    /// initial contents again, so all see the same inputs.
    pub timed_launches: u32,
}

/// What a run left.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutput {
    /// Each buffer's contents after the first launch.
    pub buffers: Vec<Vec<u8>>,
    /// Each global's contents after the first launch.
    pub globals: Vec<Vec<u8>>,
    /// Kernel time of each timed launch, in milliseconds (CUDA events).
    pub times_ms: Vec<f32>,
    /// The JIT's informational log (usually empty).
    pub jit_log: String,
}

impl RunOutput {
    /// The median of [`RunOutput::times_ms`] (the mean of the middle two for an even
    /// count), or `None` when nothing was timed.
    pub fn median_ms(&self) -> Option<f32> {
        median(&self.times_ms)
    }
}

/// The median of `times` (the mean of the middle two for an even count).
pub fn median(times: &[f32]) -> Option<f32> {
    if times.is_empty() {
        return None;
    }
    let mut t = times.to_vec();
    t.sort_by(f32::total_cmp);
    let n = t.len();
    Some(if n % 2 == 1 {
        t[n / 2]
    } else {
        (t[n / 2 - 1] + t[n / 2]) / 2.0
    })
}

/// An open device with a context current on this thread.
pub struct Gpu {
    driver: Driver,
    ctx: Handle,
    name: String,
    cc: (u32, u32),
    max_shared_optin: u32,
}

impl Gpu {
    /// Open device 0 through [`DEFAULT_LIBRARY`], or the library `GYRE_LIBCUDA` names.
    pub fn open() -> Result<Gpu, GpuError> {
        let lib = std::env::var("GYRE_LIBCUDA").unwrap_or_else(|_| DEFAULT_LIBRARY.to_string());
        Gpu::open_library(&lib, 0)
    }

    /// Open device `ordinal` through the driver library `library`.
    pub fn open_library(library: &str, ordinal: u32) -> Result<Gpu, GpuError> {
        let driver = Driver::open(library)?;
        // SAFETY (all calls below): each passes pointers to live locals of the type the
        // entry point writes, and handles the driver returned.
        let code = unsafe { (driver.init)(0) };
        if code == driver::ERROR_NO_DEVICE {
            return Err(GpuError::NoDevice {
                message: driver.describe(code),
            });
        }
        driver.check("cuInit", code)?;
        let mut count: c_int = 0;
        driver.check("cuDeviceGetCount", unsafe {
            (driver.device_get_count)(&mut count)
        })?;
        if count <= ordinal as c_int {
            return Err(GpuError::NoDevice {
                message: format!("{count} device(s), device {ordinal} asked for"),
            });
        }
        let mut dev = 0;
        driver.check("cuDeviceGet", unsafe {
            (driver.device_get)(&mut dev, ordinal as c_int)
        })?;
        let mut raw = [0 as c_char; 256];
        driver.check("cuDeviceGetName", unsafe {
            (driver.device_get_name)(raw.as_mut_ptr(), raw.len() as c_int, dev)
        })?;
        let bytes: Vec<u8> = raw
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        let name = String::from_utf8_lossy(&bytes).into_owned();
        let attr = |a: c_int, call: &'static str| -> Result<u32, GpuError> {
            let mut v: c_int = 0;
            driver.check(call, unsafe {
                (driver.device_get_attribute)(&mut v, a, dev)
            })?;
            Ok(v.max(0) as u32)
        };
        let major = attr(driver::ATTR_CC_MAJOR, "cuDeviceGetAttribute")?;
        let minor = attr(driver::ATTR_CC_MINOR, "cuDeviceGetAttribute")?;
        let max_shared_optin = attr(driver::ATTR_MAX_SHARED_OPTIN, "cuDeviceGetAttribute")?;
        let mut ctx: Handle = std::ptr::null_mut();
        driver.check("cuCtxCreate_v2", unsafe {
            (driver.ctx_create)(&mut ctx, 0, dev)
        })?;
        Ok(Gpu {
            driver,
            ctx,
            name,
            cc: (major, minor),
            max_shared_optin,
        })
    }

    /// The device's name (`NVIDIA H100 80GB HBM3`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device's compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.cc
    }

    /// Run a job: load, launch once, copy back, then time `timed_launches` more.
    pub fn run(&self, job: &Job) -> Result<RunOutput, GpuError> {
        let d = &self.driver;
        let sig = entry_signature(job.ptx, job.entry)?;
        let module = self.load(job.ptx)?;
        let entry_c = CString::new(job.entry).map_err(|_| GpuError::NoEntry {
            name: job.entry.to_string(),
            available: entry_names(job.ptx),
        })?;
        let mut func: Handle = std::ptr::null_mut();
        // SAFETY: a live module handle and a NUL-terminated name.
        let code = unsafe { (d.module_get_function)(&mut func, module.handle, entry_c.as_ptr()) };
        if code == driver::ERROR_NOT_FOUND {
            return Err(GpuError::NoEntry {
                name: job.entry.to_string(),
                available: entry_names(job.ptx),
            });
        }
        d.check("cuModuleGetFunction", code)?;

        let mut mems = Vec::with_capacity(job.buffers.len());
        for b in job.buffers {
            mems.push(DeviceMem::alloc(d, b.len())?);
        }
        let mut globals = Vec::with_capacity(job.globals.len());
        for g in job.globals {
            globals.push(self.global(module.handle, g)?);
        }
        let params = sig.marshal(job.args, |i| mems.get(i).map(|m| m.ptr))?;

        let shape = job.shape;
        if shape.dynamic_shared > 48 * 1024 {
            // Above 48 KiB a kernel must opt in (up to the device's limit).
            if shape.dynamic_shared > self.max_shared_optin {
                return Err(GpuError::Launch {
                    entry: job.entry.to_string(),
                    message: format!(
                        "{} bytes of dynamic shared memory; the device allows {}",
                        shape.dynamic_shared, self.max_shared_optin
                    ),
                });
            }
            // SAFETY: a live function handle.
            d.check("cuFuncSetAttribute", unsafe {
                (d.func_set_attribute)(
                    func,
                    driver::FUNC_ATTR_MAX_DYNAMIC_SHARED,
                    shape.dynamic_shared as c_int,
                )
            })?;
        }
        let upload = |mems: &[DeviceMem], globals: &[(CuDevicePtr, usize)]| {
            for (m, b) in mems.iter().zip(job.buffers) {
                m.upload(d, b)?;
            }
            for (&(ptr, _), g) in globals.iter().zip(job.globals) {
                // SAFETY: `ptr` is the global's address, `g.bytes` its exact size.
                d.check("cuMemcpyHtoD_v2", unsafe {
                    (d.memcpy_htod)(ptr, g.bytes.as_ptr().cast(), g.bytes.len())
                })?;
            }
            Ok::<(), GpuError>(())
        };
        upload(&mems, &globals)?;
        self.launch(func, job.entry, shape, &params)?;
        self.sync(job.entry)?;
        let mut out = RunOutput {
            jit_log: module.info_log.clone(),
            ..RunOutput::default()
        };
        for (m, b) in mems.iter().zip(job.buffers) {
            out.buffers.push(m.download(d, b.len())?);
        }
        for &(ptr, size) in &globals {
            let mut v = vec![0u8; size];
            // SAFETY: `v` has the global's size.
            d.check("cuMemcpyDtoH_v2", unsafe {
                (d.memcpy_dtoh)(v.as_mut_ptr().cast(), ptr, size)
            })?;
            out.globals.push(v);
        }
        if job.timed_launches > 0 {
            let start = Event::new(d)?;
            let stop = Event::new(d)?;
            for _ in 0..job.timed_launches {
                upload(&mems, &globals)?;
                // SAFETY: live events on the default stream.
                d.check("cuEventRecord", unsafe {
                    (d.event_record)(start.0, std::ptr::null_mut())
                })?;
                self.launch(func, job.entry, shape, &params)?;
                d.check("cuEventRecord", unsafe {
                    (d.event_record)(stop.0, std::ptr::null_mut())
                })?;
                let code = unsafe { (d.event_synchronize)(stop.0) };
                if code != driver::SUCCESS {
                    return Err(GpuError::Launch {
                        entry: job.entry.to_string(),
                        message: d.describe(code),
                    });
                }
                let mut ms = 0f32;
                d.check("cuEventElapsedTime", unsafe {
                    (d.event_elapsed_time)(&mut ms, start.0, stop.0)
                })?;
                out.times_ms.push(ms);
            }
            // Destroyed before the memory they timed; on the same context.
            start.destroy(d);
            stop.destroy(d);
        }
        for m in mems {
            m.free(d);
        }
        module.unload(d);
        Ok(out)
    }

    /// JIT-load PTX text, with the JIT's logs.
    fn load(&self, ptx: &str) -> Result<Module, GpuError> {
        let d = &self.driver;
        let text = CString::new(ptx).map_err(|_| GpuError::Jit {
            message: "the PTX contains a NUL byte".into(),
            log: String::new(),
        })?;
        const LOG: usize = 1 << 16;
        let mut info = vec![0u8; LOG];
        let mut error = vec![0u8; LOG];
        let mut opts: [c_int; 4] = [
            driver::JIT_INFO_LOG_BUFFER,
            driver::JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            driver::JIT_ERROR_LOG_BUFFER,
            driver::JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // Sizes are passed in the pointer-sized value slots, as cuda.h specifies.
        let mut vals: [*mut c_void; 4] = [
            info.as_mut_ptr().cast(),
            LOG as *mut c_void,
            error.as_mut_ptr().cast(),
            LOG as *mut c_void,
        ];
        let mut handle: Handle = std::ptr::null_mut();
        // SAFETY: NUL-terminated PTX; option values point to live buffers of LOG bytes.
        let code = unsafe {
            (d.module_load_data_ex)(
                &mut handle,
                text.as_ptr().cast(),
                opts.len() as c_uint,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        let log = |b: &[u8]| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).into_owned()
        };
        if code != driver::SUCCESS {
            return Err(GpuError::Jit {
                message: d.describe(code),
                log: log(&error),
            });
        }
        Ok(Module {
            handle,
            info_log: log(&info),
        })
    }

    /// The address and size of a global, checked against its initial contents.
    fn global(&self, module: Handle, g: &GlobalInit) -> Result<(CuDevicePtr, usize), GpuError> {
        let d = &self.driver;
        for sym in &g.symbols {
            let Ok(c) = CString::new(sym.as_str()) else {
                continue;
            };
            let mut ptr: CuDevicePtr = 0;
            let mut size: usize = 0;
            // SAFETY: a live module and a NUL-terminated name.
            let code = unsafe { (d.module_get_global)(&mut ptr, &mut size, module, c.as_ptr()) };
            if code == driver::ERROR_NOT_FOUND {
                continue;
            }
            d.check("cuModuleGetGlobal_v2", code)?;
            if size != g.bytes.len() {
                return Err(GpuError::Global {
                    names: g.symbols.clone(),
                    message: format!(
                        "{} bytes given, the module's {sym} has {size}",
                        g.bytes.len()
                    ),
                });
            }
            return Ok((ptr, size));
        }
        Err(GpuError::Global {
            names: g.symbols.clone(),
            message: "not in the loaded module".into(),
        })
    }

    fn launch(
        &self,
        func: Handle,
        entry: &str,
        s: LaunchShape,
        params: &[u8],
    ) -> Result<(), GpuError> {
        let d = &self.driver;
        let mut size: usize = params.len();
        // The whole parameter buffer, laid out as the `.entry` declares it.
        let mut extra: [*mut c_void; 5] = [
            driver::LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
            params.as_ptr() as *mut c_void,
            driver::LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
            (&mut size as *mut usize).cast(),
            driver::LAUNCH_PARAM_END as *mut c_void,
        ];
        // SAFETY: a live function; `extra` and what it points to outlive the call (the
        // driver copies the parameters at launch).
        let code = unsafe {
            (d.launch_kernel)(
                func,
                s.grid[0],
                s.grid[1],
                s.grid[2],
                s.block[0],
                s.block[1],
                s.block[2],
                s.dynamic_shared,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                extra.as_mut_ptr(),
            )
        };
        if code != driver::SUCCESS {
            return Err(GpuError::Launch {
                entry: entry.to_string(),
                message: d.describe(code),
            });
        }
        Ok(())
    }

    /// Wait for the launch; a fault in the kernel surfaces here.
    fn sync(&self, entry: &str) -> Result<(), GpuError> {
        let d = &self.driver;
        // SAFETY: no arguments.
        let code = unsafe { (d.ctx_synchronize)() };
        if code != driver::SUCCESS {
            return Err(GpuError::Launch {
                entry: entry.to_string(),
                message: d.describe(code),
            });
        }
        Ok(())
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: the context this Gpu created; destroying it frees everything in it
        // (modules, memory and events an error path left behind).
        unsafe {
            (self.driver.ctx_destroy)(self.ctx);
        }
    }
}

struct Module {
    handle: Handle,
    info_log: String,
}

impl Module {
    fn unload(self, d: &Driver) {
        // SAFETY: a module this run loaded.
        unsafe {
            (d.module_unload)(self.handle);
        }
    }
}

struct DeviceMem {
    ptr: CuDevicePtr,
}

impl DeviceMem {
    fn alloc(d: &Driver, len: usize) -> Result<DeviceMem, GpuError> {
        let mut ptr: CuDevicePtr = 0;
        // cuMemAlloc refuses 0 bytes; an empty buffer still gets an address.
        // SAFETY: writes the address to a live local.
        d.check("cuMemAlloc_v2", unsafe {
            (d.mem_alloc)(&mut ptr, len.max(1))
        })?;
        Ok(DeviceMem { ptr })
    }

    fn upload(&self, d: &Driver, bytes: &[u8]) -> Result<(), GpuError> {
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the allocation holds at least `bytes.len()` bytes.
        d.check("cuMemcpyHtoD_v2", unsafe {
            (d.memcpy_htod)(self.ptr, bytes.as_ptr().cast(), bytes.len())
        })
    }

    fn download(&self, d: &Driver, len: usize) -> Result<Vec<u8>, GpuError> {
        let mut v = vec![0u8; len];
        if len > 0 {
            // SAFETY: `v` holds `len` bytes, the allocation at least as many.
            d.check("cuMemcpyDtoH_v2", unsafe {
                (d.memcpy_dtoh)(v.as_mut_ptr().cast(), self.ptr, len)
            })?;
        }
        Ok(v)
    }

    fn free(self, d: &Driver) {
        // SAFETY: an allocation of this run.
        unsafe {
            (d.mem_free)(self.ptr);
        }
    }
}

struct Event(Handle);

impl Event {
    fn new(d: &Driver) -> Result<Event, GpuError> {
        let mut e: Handle = std::ptr::null_mut();
        // SAFETY: writes the handle to a live local; flags 0 (default, timing enabled).
        d.check("cuEventCreate", unsafe { (d.event_create)(&mut e, 0) })?;
        Ok(Event(e))
    }

    fn destroy(self, d: &Driver) {
        // SAFETY: an event of this run.
        unsafe {
            (d.event_destroy)(self.0);
        }
    }
}

/// The highest of `targets` (numbers like 86 for sm_86) the device of compute capability
/// `cc` runs: PTX for an older target is JIT-compiled for the newer device.
pub fn best_target(cc: (u32, u32), targets: &[u32]) -> Option<u32> {
    let dev = cc.0 * 10 + cc.1;
    targets.iter().copied().filter(|&t| t <= dev).max()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn best_target_is_the_highest_not_above_the_device() {
        let t = [70, 75, 80, 86, 89, 90, 100, 120];
        assert_eq!(best_target((9, 0), &t), Some(90));
        assert_eq!(best_target((8, 7), &t), Some(86));
        assert_eq!(best_target((10, 3), &t), Some(100));
        assert_eq!(best_target((6, 1), &t), None);
    }
}
