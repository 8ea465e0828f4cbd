//! CUDA's math library (`__nv_*` libdevice calls, NVVM math intrinsics and LLVM's math
//! intrinsics) expanded into Gyre IR.
//!
//! The fast functions (`__nv_fast_*`, `__nv_rsqrtf`, `__nv_exp2f`, ...) are the PTX
//! primitives `ex2_approx`, `lg2_approx`, `sin_approx`, `cos_approx`, `rsqrt_approx`
//! and `fdiv_approx`, scaled by a constant where libdevice scales, exactly as libdevice
//! computes them. The accurate functions (`expf`, `exp10f`, `logf`, `log2f`,
//! `log10f`, `powf`, `sinf`, `cosf`, `tanf`, `sincosf`, `exp`, `log`, `sin`, `cos`, `frexpf`) are
//! straight-line expansions: argument reduction, a polynomial
//! or one primitive, and `select`s for the special cases (no branches, so no new blocks
//! in the middle of the importer's block; every operation is defined on every input,
//! so no poison can arise on the unselected paths). The algorithms and constants of the
//! logarithms, of the f64 exponential and of f64 sin/cos are FreeBSD msun's `e_logf.c`,
//! `e_log2f.c`, `e_log10f.c`, `e_log.c`, `e_exp.c`, `e_rem_pio2.c`, `k_sin.c` and
//! `k_cos.c` (as in musl;
//! BSD-style licence: "Developed at SunPro, a Sun Microsystems, Inc. business.
//! Permission to use, copy, modify, and distribute this software is freely granted,
//! provided that this notice is preserved."). docs/llvm.md lists every function with
//! its accuracy, and `tests/math.rs` checks each against the host's libm.
//!
//! Why inline and not a library of device functions: each expansion is 15-35
//! instructions without control flow, so a call would cost about as much as the body,
//! and inline code stays visible to every pass (constant folding, hoisting out of
//! loops) without an inliner.

use super::Lower;
use super::PResult;
use gyre_ir::{
    Block, FloatCC, InstructionData, IntCC, IntFlags, MemFlags, Opcode, Type, Value, ValueList,
};

/// An f32 constant from its bits (the msun constants are given as bit patterns).
const fn fb(bits: u32) -> f32 {
    f32::from_bits(bits)
}

impl Lower<'_> {
    // ---- small emitters, all appending to block `b` --------------------------------------

    fn m_f32(&mut self, x: f32) -> Value {
        self.fconst(Type::F32, u64::from(x.to_bits()))
    }

    fn m_f64(&mut self, x: f64) -> Value {
        self.fconst(Type::F64, x.to_bits())
    }

    fn m_i64(&mut self, x: i64) -> Value {
        self.iconst(Type::I64, x as u64)
    }

    /// `x * c` for an f64 constant `c`.
    fn m_mulc64(&mut self, b: Block, x: Value, c: f64) -> Value {
        let k = self.m_f64(c);
        self.m_bin(b, Opcode::Fmul, x, k)
    }

    fn m_i32(&mut self, x: i32) -> Value {
        self.iconst(Type::I32, x as u32 as u64)
    }

    fn m_bin(&mut self, b: Block, op: Opcode, x: Value, y: Value) -> Value {
        self.binary(Some(b), op, x, y, IntFlags::NONE)
    }

    fn m_un(&mut self, b: Block, op: Opcode, x: Value) -> Value {
        let t = self.f.dfg.value_type(x);
        self.unary(Some(b), op, x, t)
    }

    fn m_fma(&mut self, b: Block, x: Value, y: Value, z: Value) -> Value {
        let t = self.f.dfg.value_type(x);
        self.emit(
            Some(b),
            InstructionData::Ternary {
                opcode: Opcode::Fma,
                args: [x, y, z],
            },
            t,
        )
    }

    /// `y`, or `x` itself when `x` is NaN (its payload passes through, as libm's does).
    fn nan_passes(&mut self, b: Block, x: Value, y: Value) -> Value {
        let nan = self.m_fcmp(b, FloatCC::Uno, x, x);
        self.m_sel(b, nan, x, y)
    }

    fn m_sel(&mut self, b: Block, c: Value, x: Value, y: Value) -> Value {
        let t = self.f.dfg.value_type(x);
        self.emit(
            Some(b),
            InstructionData::Ternary {
                opcode: Opcode::Select,
                args: [c, x, y],
            },
            t,
        )
    }

    fn m_fcmp(&mut self, b: Block, cond: FloatCC, x: Value, y: Value) -> Value {
        self.emit(
            Some(b),
            InstructionData::FloatCompare { cond, args: [x, y] },
            Type::I1,
        )
    }

    fn m_icmp(&mut self, b: Block, cond: IntCC, x: Value, y: Value) -> Value {
        self.emit(
            Some(b),
            InstructionData::IntCompare { cond, args: [x, y] },
            Type::I1,
        )
    }

    fn m_cast(&mut self, b: Block, op: Opcode, x: Value, to: Type) -> Value {
        self.unary(Some(b), op, x, to)
    }

    /// `x * c` for an f32 constant `c`.
    fn m_mulc(&mut self, b: Block, x: Value, c: f32) -> Value {
        let k = self.m_f32(c);
        self.m_bin(b, Opcode::Fmul, x, k)
    }

    // ---- the functions ---------------------------------------------------------------------

    /// A libdevice function of the math set (`r` without `__nv_`), or `None` if `r` is
    /// not one. Checks the signature against the arguments and the declared return type.
    pub(super) fn math_libdevice(
        &mut self,
        b: Block,
        r: &str,
        callee: &str,
        rt: Option<Type>,
        args: &[Value],
        at: usize,
    ) -> PResult<Option<Option<Value>>> {
        let tys: Vec<Type> = args.iter().map(|&a| self.f.dfg.value_type(a)).collect();
        let sig = |want: &[Type], ret: Type| tys == want && rt == Some(ret);
        let bad = |l: &Self| Err(l.perr(at, format!("unexpected signature for @{callee}")));
        use Type::{F32, F64, I32};
        let unary_f32: Option<fn(&mut Self, Block, Value) -> Value> = match r {
            "fast_expf" => Some(|l, b, x| {
                let t = l.m_mulc(b, x, std::f32::consts::LOG2_E);
                l.m_un(b, Opcode::Ex2Approx, t)
            }),
            "fast_exp10f" => Some(|l, b, x| {
                let t = l.m_mulc(b, x, std::f32::consts::LOG2_10);
                l.m_un(b, Opcode::Ex2Approx, t)
            }),
            "exp2f" | "fast_exp2f" => Some(|l, b, x| l.m_un(b, Opcode::Ex2Approx, x)),
            "fast_log2f" => Some(|l, b, x| l.m_un(b, Opcode::Lg2Approx, x)),
            "fast_logf" => Some(|l, b, x| {
                let t = l.m_un(b, Opcode::Lg2Approx, x);
                l.m_mulc(b, t, std::f32::consts::LN_2)
            }),
            "fast_log10f" => Some(|l, b, x| {
                let t = l.m_un(b, Opcode::Lg2Approx, x);
                l.m_mulc(b, t, std::f32::consts::LOG10_2)
            }),
            "fast_sinf" => Some(|l, b, x| l.m_un(b, Opcode::SinApprox, x)),
            "fast_cosf" => Some(|l, b, x| l.m_un(b, Opcode::CosApprox, x)),
            "fast_tanf" => Some(|l, b, x| {
                let s = l.m_un(b, Opcode::SinApprox, x);
                let c = l.m_un(b, Opcode::CosApprox, x);
                l.m_bin(b, Opcode::FdivApprox, s, c)
            }),
            "rsqrtf" => Some(|l, b, x| l.m_un(b, Opcode::RsqrtApprox, x)),
            "saturatef" => Some(|l, b, x| l.saturate(b, x)),
            "sinhf" => Some(|l, b, x| l.via_f64(b, x, Self::sinh_d)),
            "coshf" => Some(|l, b, x| l.via_f64(b, x, Self::cosh_d)),
            "tanhf" => Some(|l, b, x| l.via_f64(b, x, Self::tanh_d)),
            "expm1f" => Some(|l, b, x| l.via_f64(b, x, Self::expm1_d)),
            "log1pf" => Some(|l, b, x| l.via_f64(b, x, Self::log1p_d)),
            "cbrtf" => Some(|l, b, x| l.via_f64(b, x, Self::cbrt_d)),
            "atanf" => Some(|l, b, x| l.via_f64(b, x, Self::atan_d)),
            "asinf" => Some(|l, b, x| l.via_f64(b, x, Self::asin_d)),
            "acosf" => Some(|l, b, x| l.via_f64(b, x, Self::acos_d)),
            "asinhf" => Some(|l, b, x| l.via_f64(b, x, Self::asinh_d)),
            "acoshf" => Some(|l, b, x| l.via_f64(b, x, Self::acosh_d)),
            "atanhf" => Some(|l, b, x| l.via_f64(b, x, Self::atanh_d)),
            "rcbrtf" => Some(|l, b, x| {
                l.via_f64(b, x, |l, b, x| {
                    let c = l.cbrt_d(b, x);
                    let one = l.m_f64(1.0);
                    l.m_bin(b, Opcode::Fdiv, one, c)
                })
            }),
            "sinf" => Some(|l, b, x| l.trig_f32(b, x)[0]),
            "cosf" => Some(|l, b, x| l.trig_f32(b, x)[1]),
            "tanf" => Some(|l, b, x| l.trig_f32(b, x)[2]),
            "expf" => Some(|l, b, x| l.exp_f32(b, x, false)),
            "exp10f" => Some(|l, b, x| l.exp_f32(b, x, true)),
            "logf" => Some(|l, b, x| l.log_f32(b, x, LogBase::E)),
            "log2f" => Some(|l, b, x| l.log_f32(b, x, LogBase::Two)),
            "log10f" => Some(|l, b, x| l.log_f32(b, x, LogBase::Ten)),
            _ => None,
        };
        if let Some(g) = unary_f32 {
            if !sig(&[F32], F32) {
                return bad(self);
            }
            return Ok(Some(Some(g(self, b, args[0]))));
        }
        let unary_f64: Option<fn(&mut Self, Block, Value) -> Value> = match r {
            "exp" => Some(|l, b, x| l.exp_f64(b, x)),
            "log" => Some(|l, b, x| l.log_f64(b, x)),
            "sin" => Some(|l, b, x| l.trig_f64(b, x)[0]),
            "cos" => Some(|l, b, x| l.trig_f64(b, x)[1]),
            _ => None,
        };
        if let Some(g) = unary_f64 {
            if !sig(&[F64], F64) {
                return bad(self);
            }
            return Ok(Some(Some(g(self, b, args[0]))));
        }
        match r {
            "powif" | "powi" => {
                let (t, name) = if r == "powif" {
                    (F32, "f32")
                } else {
                    (F64, "f64")
                };
                if !sig(&[t, I32], t) {
                    return bad(self);
                }
                let src = POWI_GIR.replace("NAME", callee).replace("T", name);
                Ok(Some(Some(self.library_call(b, callee, &src, args, t))))
            }
            "ldexpf" | "scalbnf" => {
                if !sig(&[F32, I32], F32) {
                    return bad(self);
                }
                Ok(Some(Some(self.ldexp_f32(b, args[0], args[1]))))
            }
            "copysignf" | "copysign" => {
                let t = tys.first().copied().unwrap_or(I32);
                if !t.is_float() || !sig(&[t, t], t) {
                    return bad(self);
                }
                Ok(Some(Some(self.copysign(b, args[0], args[1]))))
            }
            "fdimf" | "fdim" => {
                let t = tys.first().copied().unwrap_or(I32);
                if !t.is_float() || !sig(&[t, t], t) {
                    return bad(self);
                }
                // x - y if x > y, +0 if not, NaN if either is NaN.
                let (x, y) = (args[0], args[1]);
                let d = self.m_bin(b, Opcode::Fsub, x, y);
                let gt = self.m_fcmp(b, FloatCC::Ogt, x, y);
                let z = self.zero(t);
                let r = self.m_sel(b, gt, d, z);
                let nan = self.m_fcmp(b, FloatCC::Uno, x, y);
                let s = self.m_bin(b, Opcode::Fadd, x, y);
                Ok(Some(Some(self.m_sel(b, nan, s, r))))
            }
            "fast_sincosf" => {
                if tys.len() != 3 || tys[0] != F32 || !tys[1].is_ptr() || !tys[2].is_ptr() {
                    return bad(self);
                }
                if rt.is_some() {
                    return bad(self);
                }
                let sv = self.m_un(b, Opcode::SinApprox, args[0]);
                let cv = self.m_un(b, Opcode::CosApprox, args[0]);
                for (v, p) in [(sv, args[1]), (cv, args[2])] {
                    self.f.append_inst(
                        b,
                        InstructionData::Store {
                            args: [v, p],
                            flags: MemFlags::default(),
                        },
                        None,
                    );
                }
                Ok(Some(None))
            }
            "atan2f" | "hypotf" | "rhypotf" => {
                if !sig(&[F32, F32], F32) {
                    return bad(self);
                }
                let y = self.m_cast(b, Opcode::Fpext, args[0], F64);
                let x = self.m_cast(b, Opcode::Fpext, args[1], F64);
                let v = match r {
                    "atan2f" => self.atan2_d(b, y, x),
                    "hypotf" => self.hypot_d(b, y, x),
                    _ => {
                        let h = self.hypot_d(b, y, x);
                        let one = self.m_f64(1.0);
                        self.m_bin(b, Opcode::Fdiv, one, h)
                    }
                };
                Ok(Some(Some(self.m_cast(b, Opcode::Fptrunc, v, F32))))
            }
            "powf" => {
                if !sig(&[F32, F32], F32) {
                    return bad(self);
                }
                Ok(Some(Some(self.pow_f32(b, args[0], args[1]))))
            }
            "rsqrt" => {
                if !sig(&[F64], F64) {
                    return bad(self);
                }
                Ok(Some(Some(self.m_un(b, Opcode::RsqrtApprox, args[0]))))
            }
            "fast_fdividef" | "fdividef" => {
                if !sig(&[F32, F32], F32) {
                    return bad(self);
                }
                Ok(Some(Some(self.m_bin(
                    b,
                    Opcode::FdivApprox,
                    args[0],
                    args[1],
                ))))
            }
            "fast_powf" => {
                if !sig(&[F32, F32], F32) {
                    return bad(self);
                }
                let l2 = self.m_un(b, Opcode::Lg2Approx, args[0]);
                let t = self.m_bin(b, Opcode::Fmul, args[1], l2);
                Ok(Some(Some(self.m_un(b, Opcode::Ex2Approx, t))))
            }
            "mul24" | "umul24" => {
                if !sig(&[I32, I32], I32) {
                    return bad(self);
                }
                let op = if r == "mul24" {
                    Opcode::Mul24
                } else {
                    Opcode::Umul24
                };
                Ok(Some(Some(self.m_bin(b, op, args[0], args[1]))))
            }
            "sincosf" => {
                if tys.len() != 3 || tys[0] != F32 || !tys[1].is_ptr() || !tys[2].is_ptr() {
                    return bad(self);
                }
                if rt.is_some() {
                    return bad(self);
                }
                let [sv, cv, _] = self.trig_f32(b, args[0]);
                for (v, p) in [(sv, args[1]), (cv, args[2])] {
                    self.f.append_inst(
                        b,
                        InstructionData::Store {
                            args: [v, p],
                            flags: MemFlags::default(),
                        },
                        None,
                    );
                }
                Ok(Some(None))
            }
            "frexpf" => {
                if tys.len() != 2 || tys[0] != F32 || !tys[1].is_ptr() || rt != Some(F32) {
                    return bad(self);
                }
                Ok(Some(Some(self.frexp_f32(b, args[0], args[1]))))
            }
            _ => Ok(None),
        }
    }

    /// An NVVM math intrinsic (`r` without `llvm.nvvm.`), or `None` if `r` is not one.
    /// The `.ftz` forms are the same opcode: Gyre keeps subnormals, so the result differs
    /// from the `.ftz` instruction only where that flushes an operand or result to zero.
    pub(super) fn math_nvvm(
        &mut self,
        b: Block,
        r: &str,
        callee: &str,
        rt: Option<Type>,
        args: &[Value],
        at: usize,
    ) -> PResult<Option<Option<Value>>> {
        let tys: Vec<Type> = args.iter().map(|&a| self.f.dfg.value_type(a)).collect();
        let base = r.replace(".ftz", "");
        let (op, want, ret): (Opcode, &[Type], Type) = match base.as_str() {
            "mul24.i" => (Opcode::Mul24, &[Type::I32, Type::I32], Type::I32),
            "umul24.i" => (Opcode::Umul24, &[Type::I32, Type::I32], Type::I32),
            "ex2.approx.f" => (Opcode::Ex2Approx, &[Type::F32], Type::F32),
            "lg2.approx.f" => (Opcode::Lg2Approx, &[Type::F32], Type::F32),
            "sin.approx.f" => (Opcode::SinApprox, &[Type::F32], Type::F32),
            "cos.approx.f" => (Opcode::CosApprox, &[Type::F32], Type::F32),
            "rsqrt.approx.f" => (Opcode::RsqrtApprox, &[Type::F32], Type::F32),
            "rsqrt.approx.d" => (Opcode::RsqrtApprox, &[Type::F64], Type::F64),
            // div.approx differs from div.full only for |b| > 2^126 (0 instead of the
            // tiny quotient); Gyre's fdiv_approx means the exact quotient either way.
            "div.approx.f" | "div.full" => (Opcode::FdivApprox, &[Type::F32, Type::F32], Type::F32),
            "saturate.f" => (Opcode::Fmax, &[Type::F32], Type::F32),
            _ => return Ok(None),
        };
        if tys != want || rt != Some(ret) {
            return Err(self.perr(at, format!("unexpected signature for @{callee}")));
        }
        let v = match (op, want.len()) {
            (Opcode::Fmax, _) => self.saturate(b, args[0]),
            (_, 1) => self.m_un(b, op, args[0]),
            _ => self.m_bin(b, op, args[0], args[1]),
        };
        Ok(Some(Some(v)))
    }

    /// An LLVM math intrinsic beyond the 1:1 ones (`head` is the name's first part after
    /// `llvm.`), or `None`.
    pub(super) fn math_llvm(
        &mut self,
        b: Block,
        head: &str,
        callee: &str,
        rt: Option<Type>,
        args: &[Value],
        at: usize,
    ) -> PResult<Option<Option<Value>>> {
        let tys: Vec<Type> = args.iter().map(|&a| self.f.dfg.value_type(a)).collect();
        let bad = |l: &Self| Err(l.perr(at, format!("unexpected signature for @{callee}")));
        match head {
            "exp" | "log" if tys.as_slice() == [Type::F64] => {
                if rt != Some(Type::F64) {
                    return bad(self);
                }
                let v = if head == "exp" {
                    self.exp_f64(b, args[0])
                } else {
                    self.log_f64(b, args[0])
                };
                Ok(Some(Some(v)))
            }
            "powi" if matches!(tys.as_slice(), [Type::F32 | Type::F64, Type::I32]) => {
                let t = tys[0];
                if rt != Some(t) {
                    return bad(self);
                }
                // The same function as libdevice's __nv_powif/__nv_powi (LLVM leaves the
                // order of the multiplications unspecified).
                let (name, ts) = if t == Type::F32 {
                    ("__nv_powif", "f32")
                } else {
                    ("__nv_powi", "f64")
                };
                let src = POWI_GIR.replace("NAME", name).replace("T", ts);
                Ok(Some(Some(self.library_call(b, name, &src, args, t))))
            }
            "pow" if tys.as_slice() == [Type::F32, Type::F32] => {
                if rt != Some(Type::F32) {
                    return bad(self);
                }
                Ok(Some(Some(self.pow_f32(b, args[0], args[1]))))
            }
            "exp" | "exp2" | "log" | "log2" | "log10" => {
                if tys.as_slice() == [Type::F64] {
                    return Err(self.unsup(at, format!("intrinsic @{callee} (f64)")));
                }
                if tys.as_slice() != [Type::F32] || rt != Some(Type::F32) {
                    return bad(self);
                }
                let x = args[0];
                let v = match head {
                    "exp" => self.exp_f32(b, x, false),
                    "exp2" => self.m_un(b, Opcode::Ex2Approx, x),
                    "log" => self.log_f32(b, x, LogBase::E),
                    "log2" => self.log_f32(b, x, LogBase::Two),
                    _ => self.log_f32(b, x, LogBase::Ten),
                };
                Ok(Some(Some(v)))
            }
            "sin" | "cos" if tys.as_slice() == [Type::F64] => {
                if rt != Some(Type::F64) {
                    return bad(self);
                }
                let t = self.trig_f64(b, args[0]);
                Ok(Some(Some(if head == "sin" { t[0] } else { t[1] })))
            }
            "sin" | "cos" if tys.as_slice() == [Type::F32] => {
                if rt != Some(Type::F32) {
                    return bad(self);
                }
                let t = self.trig_f32(b, args[0]);
                Ok(Some(Some(if head == "sin" { t[0] } else { t[1] })))
            }
            "copysign" => {
                let t = tys.first().copied().unwrap_or(Type::I1);
                if !t.is_float() || tys.as_slice() != [t, t] || rt != Some(t) {
                    return bad(self);
                }
                Ok(Some(Some(self.copysign(b, args[0], args[1]))))
            }
            _ => Ok(None),
        }
    }

    /// A call of the library function `name` (a device function of the module, added
    /// from its Gyre text `src` at the first call). For functions that need a loop: an
    /// expansion here cannot split the block the importer is filling.
    fn library_call(
        &mut self,
        b: Block,
        name: &str,
        src: &str,
        args: &[Value],
        ret: Type,
    ) -> Value {
        // A defined LLVM function of this name would have been called directly, and a
        // declared one has no Gyre function, so a function of this name is ours.
        let id = match self.st.module.func_by_name(name) {
            Some(id) => id,
            None => {
                let lib = gyre_ir::parse_module(src).expect("library function text parses");
                let mut f = lib
                    .functions
                    .into_iter()
                    .next()
                    .expect("library text holds one function")
                    .1;
                // Ours alone: the inliner may delete it once every call is inlined.
                f.internal = true;
                // It stands for an LLVM intrinsic, whose NaNs LLVM leaves unspecified.
                f.any_nan = true;
                self.st.module.functions.push(f)
            }
        };
        let list = ValueList::from_slice(args, &mut self.f.dfg.value_lists);
        self.f
            .append_inst(
                b,
                InstructionData::Call {
                    func: id,
                    args: list,
                },
                Some(ret),
            )
            .1
            .expect("typed call")
    }

    /// `copysign(x, y)` on the bits: the magnitude of `x`, the sign of `y` (NaNs too).
    fn copysign(&mut self, b: Block, x: Value, y: Value) -> Value {
        let t = self.f.dfg.value_type(x);
        let it = if t == Type::F64 { Type::I64 } else { Type::I32 };
        let sign = if t == Type::F64 { 1u64 << 63 } else { 1 << 31 };
        let (xi, yi) = (
            self.m_cast(b, Opcode::Bitcast, x, it),
            self.m_cast(b, Opcode::Bitcast, y, it),
        );
        let mag = self.iconst(it, !sign);
        let sg = self.iconst(it, sign);
        let xm = self.m_bin(b, Opcode::And, xi, mag);
        let ys = self.m_bin(b, Opcode::And, yi, sg);
        let r = self.m_bin(b, Opcode::Or, xm, ys);
        self.m_cast(b, Opcode::Bitcast, r, t)
    }

    /// `__saturatef`: clamp to [0, 1]; NaN gives +0 (`fmax` ignores the NaN operand).
    fn saturate(&mut self, b: Block, x: Value) -> Value {
        let z = self.m_f32(0.0);
        let one = self.m_f32(1.0);
        let t = self.m_bin(b, Opcode::Fmax, x, z);
        self.m_bin(b, Opcode::Fmin, t, one)
    }

    /// `expf` (or `exp10f`): `x = j·ln2 + r` (Cody-Waite, two-part constant), `e^r` as
    /// `ex2_approx(r·log2 e)`, scaled by `2^j` in two exact steps so that results down to
    /// the subnormals and up to the overflow are one rounding away from `2^j·e^r`.
    /// Error ≤ 1 ulp in the interpreter (where `ex2_approx` is exact); on hardware
    /// `ex2.approx`'s 2^-22 relative error adds about 2 ulp, as CUDA documents for its
    /// own `expf` (2 ulp).
    fn exp_f32(&mut self, b: Block, x: Value, ten: bool) -> Value {
        // (log2 of the base, ln(2)/ln(base) split so that j·hi is exact for |j| < 2^9)
        let (log2b, hi, lo, lim_lo, lim_hi) = if ten {
            // log10(2) = 0x3e9a2080 + 0x355427db (msun's e_log10f.c split)
            (
                std::f32::consts::LOG2_10,
                fb(0x3e9a_2080),
                fb(0x3554_27db),
                -46.0,
                39.0,
            )
        } else {
            // ln(2) = 0x3f317200 + 0x35bfbe8e (msun's e_expf.c split)
            (
                std::f32::consts::LOG2_E,
                fb(0x3f31_7200),
                fb(0x35bf_be8e),
                -104.0,
                89.0,
            )
        };
        // Clamp first (a NaN becomes the lower limit here and is restored at the end), so
        // that the exponent arithmetic below stays in range: the clamped results are
        // already 0 or inf.
        let lo_c = self.m_f32(lim_lo);
        let hi_c = self.m_f32(lim_hi);
        let xa = self.m_bin(b, Opcode::Fmax, x, lo_c);
        let xc = self.m_bin(b, Opcode::Fmin, xa, hi_c);
        let t = self.m_mulc(b, xc, log2b);
        let j = self.m_un(b, Opcode::Nearest, t);
        let nhi = self.m_f32(-hi);
        let nlo = self.m_f32(-lo);
        let r1 = self.m_fma(b, j, nhi, xc);
        let r = self.m_fma(b, j, nlo, r1);
        let rl = self.m_mulc(b, r, log2b);
        let p = self.m_un(b, Opcode::Ex2Approx, rl);
        // 2^j = 2^h · 2^(j-h), h = j >> 1: both halves are normal for j in [-152, 129].
        let ji = self.m_cast(b, Opcode::Fptosi, j, Type::I32);
        let one = self.m_i32(1);
        let h = self.m_bin(b, Opcode::Ashr, ji, one);
        let h2 = self.m_bin(b, Opcode::Isub, ji, h);
        let s1 = self.pow2_f32(b, h);
        let s2 = self.pow2_f32(b, h2);
        let y1 = self.m_bin(b, Opcode::Fmul, p, s1);
        let y = self.m_bin(b, Opcode::Fmul, y1, s2);
        self.nan_passes(b, x, y)
    }

    /// `2^k` as an f32 for `k` in the normal range [-126, 127].
    fn pow2_f32(&mut self, b: Block, k: Value) -> Value {
        let bias = self.m_i32(127);
        let sh = self.m_i32(23);
        let e = self.m_bin(b, Opcode::Iadd, k, bias);
        let bits = self.m_bin(b, Opcode::Shl, e, sh);
        self.m_cast(b, Opcode::Bitcast, bits, Type::F32)
    }

    /// `logf`, `log2f`, `log10f` after msun (`e_logf.c`, `e_log2f.c`, `e_log10f.c`):
    /// `x = 2^k·(1+f)` with `1+f` in [√2/2, √2], `log(1+f) = f - f²/2 + s·(f²/2 + R(s²))`
    /// with `s = f/(2+f)`; the base-2 and base-10 forms split `f - f²/2` so that the
    /// products with the two-part constants are exact. Error < 1 ulp (msun's bound),
    /// checked against the host's libm in `tests/math.rs`.
    fn log_f32(&mut self, b: Block, x: Value, base: LogBase) -> Value {
        // Lg1..Lg4: msun's minimax coefficients, |error| < 2^-25.
        let lg1 = fb(0x3f2a_aaaa);
        let lg2 = fb(0x3ecc_ce13);
        let lg3 = fb(0x3e91_e9ee);
        let lg4 = fb(0x3e78_9e26);
        let xi = self.m_cast(b, Opcode::Bitcast, x, Type::I32);
        // Subnormals: scale by 2^25 first.
        let min_normal = self.m_i32(0x0080_0000);
        let is_sub = self.m_icmp(b, IntCC::Ult, xi, min_normal);
        let xs = self.m_mulc(b, x, fb(0x4c00_0000)); // 2^25
        let xsi = self.m_cast(b, Opcode::Bitcast, xs, Type::I32);
        let ix = self.m_sel(b, is_sub, xsi, xi);
        let m25 = self.m_i32(-25);
        let z0 = self.m_i32(0);
        let k0 = self.m_sel(b, is_sub, m25, z0);
        // Reduce into [√2/2, √2]: 0x3f3504f3 is √2/2.
        let adj = self.m_i32(0x3f80_0000 - 0x3f35_04f3);
        let ix2 = self.m_bin(b, Opcode::Iadd, ix, adj);
        let sh = self.m_i32(23);
        let e = self.m_bin(b, Opcode::Lshr, ix2, sh);
        let bias = self.m_i32(0x7f);
        let e2 = self.m_bin(b, Opcode::Isub, e, bias);
        let k = self.m_bin(b, Opcode::Iadd, k0, e2);
        let mmask = self.m_i32(0x007f_ffff);
        let mb = self.m_bin(b, Opcode::And, ix2, mmask);
        let s2 = self.m_i32(0x3f35_04f3);
        let mi = self.m_bin(b, Opcode::Iadd, mb, s2);
        let m = self.m_cast(b, Opcode::Bitcast, mi, Type::F32);
        let one = self.m_f32(1.0);
        let two = self.m_f32(2.0);
        let f = self.m_bin(b, Opcode::Fsub, m, one);
        let den = self.m_bin(b, Opcode::Fadd, two, f);
        let s = self.m_bin(b, Opcode::Fdiv, f, den);
        let z = self.m_bin(b, Opcode::Fmul, s, s);
        let w = self.m_bin(b, Opcode::Fmul, z, z);
        // t1 = w*(Lg2 + w*Lg4); t2 = z*(Lg1 + w*Lg3); R = t2 + t1
        let c4 = self.m_mulc(b, w, lg4);
        let c2 = self.m_f32(lg2);
        let a1 = self.m_bin(b, Opcode::Fadd, c2, c4);
        let t1 = self.m_bin(b, Opcode::Fmul, w, a1);
        let c3 = self.m_mulc(b, w, lg3);
        let c1 = self.m_f32(lg1);
        let a2 = self.m_bin(b, Opcode::Fadd, c1, c3);
        let t2 = self.m_bin(b, Opcode::Fmul, z, a2);
        let rr = self.m_bin(b, Opcode::Fadd, t2, t1);
        // hfsq = 0.5*f*f
        let hf = self.m_mulc(b, f, 0.5);
        let hfsq = self.m_bin(b, Opcode::Fmul, hf, f);
        let dk = self.m_cast(b, Opcode::Sitofp, k, Type::F32);
        let hr = self.m_bin(b, Opcode::Fadd, hfsq, rr);
        let shr = self.m_bin(b, Opcode::Fmul, s, hr);
        let y = match base {
            LogBase::E => {
                // s*(hfsq+R) + dk*ln2_lo - hfsq + f + dk*ln2_hi, left to right
                let lo = self.m_mulc(b, dk, fb(0x3717_f7d1));
                let hi = self.m_mulc(b, dk, fb(0x3f31_7180));
                let a = self.m_bin(b, Opcode::Fadd, shr, lo);
                let a = self.m_bin(b, Opcode::Fsub, a, hfsq);
                let a = self.m_bin(b, Opcode::Fadd, a, f);
                self.m_bin(b, Opcode::Fadd, a, hi)
            }
            LogBase::Two | LogBase::Ten => {
                // hi = f - hfsq with its low 12 bits cleared; lo = f - hi - hfsq + s*(hfsq+R)
                let fh = self.m_bin(b, Opcode::Fsub, f, hfsq);
                let fhi = self.m_cast(b, Opcode::Bitcast, fh, Type::I32);
                let cut = self.m_i32(0xffff_f000_u32 as i32);
                let hib = self.m_bin(b, Opcode::And, fhi, cut);
                let hi = self.m_cast(b, Opcode::Bitcast, hib, Type::F32);
                let lo = self.m_bin(b, Opcode::Fsub, f, hi);
                let lo = self.m_bin(b, Opcode::Fsub, lo, hfsq);
                let lo = self.m_bin(b, Opcode::Fadd, lo, shr);
                let sum = self.m_bin(b, Opcode::Fadd, lo, hi);
                if base == LogBase::Two {
                    // (lo+hi)*ivln2lo + lo*ivln2hi + hi*ivln2hi + k
                    let a = self.m_mulc(b, sum, fb(0xb938_9ad4));
                    let c = self.m_mulc(b, lo, fb(0x3fb8_b000));
                    let d = self.m_mulc(b, hi, fb(0x3fb8_b000));
                    let a = self.m_bin(b, Opcode::Fadd, a, c);
                    let a = self.m_bin(b, Opcode::Fadd, a, d);
                    self.m_bin(b, Opcode::Fadd, a, dk)
                } else {
                    // dk*log10_2lo + (lo+hi)*ivln10lo + lo*ivln10hi + hi*ivln10hi + dk*log10_2hi
                    let a = self.m_mulc(b, dk, fb(0x3554_27db));
                    let c = self.m_mulc(b, sum, fb(0xb804_ead9));
                    let d = self.m_mulc(b, lo, fb(0x3ede_6000));
                    let e = self.m_mulc(b, hi, fb(0x3ede_6000));
                    let g = self.m_mulc(b, dk, fb(0x3e9a_2080));
                    let a = self.m_bin(b, Opcode::Fadd, a, c);
                    let a = self.m_bin(b, Opcode::Fadd, a, d);
                    let a = self.m_bin(b, Opcode::Fadd, a, e);
                    self.m_bin(b, Opcode::Fadd, a, g)
                }
            }
        };
        // x = 1 gives +0 exactly (the base-10 form could give -0 there).
        self.log_specials(b, x, y)
    }

    /// `exp` (f64) after msun's `e_exp.c`: `x = k·ln2 + r` (two-part ln 2), a degree-5
    /// rational approximation `1 + r + r·c/(2 - c)`, scaled by `2^k` in two exact steps.
    /// Clamping first keeps `k` in range (the clamped results are already 0 or inf); a
    /// NaN is restored at the end. Error < 1 ulp (msun's bound).
    fn exp_f64(&mut self, b: Block, x: Value) -> Value {
        let (p1, p2, p3, p4, p5) = (
            f64::from_bits(0x3fc5_5555_5555_553e),
            f64::from_bits(0xbf66_c16c_16be_bd93),
            f64::from_bits(0x3f11_566a_af25_de2c),
            f64::from_bits(0xbebb_bd41_c5d2_6bf1),
            f64::from_bits(0x3e66_3769_72be_a4d0),
        );
        let ln2_hi = f64::from_bits(0x3fe6_2e42_fee0_0000);
        let ln2_lo = f64::from_bits(0x3dea_39ef_3579_3c76);
        let lo_c = self.m_f64(-746.0);
        let hi_c = self.m_f64(710.0);
        let xa = self.m_bin(b, Opcode::Fmax, x, lo_c);
        let xc = self.m_bin(b, Opcode::Fmin, xa, hi_c);
        let t = self.m_mulc64(b, xc, std::f64::consts::LOG2_E);
        let k = self.m_un(b, Opcode::Nearest, t);
        let nhi = self.m_f64(-ln2_hi);
        let hi = self.m_fma(b, k, nhi, xc);
        let lo = self.m_mulc64(b, k, ln2_lo);
        let r = self.m_bin(b, Opcode::Fsub, hi, lo);
        let rr = self.m_bin(b, Opcode::Fmul, r, r);
        // c = r - rr*(P1 + rr*(P2 + rr*(P3 + rr*(P4 + rr*P5))))
        let mut poly = self.m_mulc64(b, rr, p5);
        for p in [p4, p3, p2] {
            let c = self.m_f64(p);
            let a = self.m_bin(b, Opcode::Fadd, c, poly);
            poly = self.m_bin(b, Opcode::Fmul, rr, a);
        }
        let c1 = self.m_f64(p1);
        let a = self.m_bin(b, Opcode::Fadd, c1, poly);
        let ta = self.m_bin(b, Opcode::Fmul, rr, a);
        let c = self.m_bin(b, Opcode::Fsub, r, ta);
        // y = 1 - ((lo - (r*c)/(2 - c)) - hi)
        let two = self.m_f64(2.0);
        let one = self.m_f64(1.0);
        let rc = self.m_bin(b, Opcode::Fmul, r, c);
        let d = self.m_bin(b, Opcode::Fsub, two, c);
        let q = self.m_bin(b, Opcode::Fdiv, rc, d);
        let u = self.m_bin(b, Opcode::Fsub, lo, q);
        let u = self.m_bin(b, Opcode::Fsub, u, hi);
        let y = self.m_bin(b, Opcode::Fsub, one, u);
        // 2^k = 2^h · 2^(k-h), h = k >> 1: both normal for k in [-1077, 1025].
        let ki = self.m_cast(b, Opcode::Fptosi, k, Type::I64);
        let c1i = self.m_i64(1);
        let h = self.m_bin(b, Opcode::Ashr, ki, c1i);
        let h2 = self.m_bin(b, Opcode::Isub, ki, h);
        let s1 = self.pow2_f64(b, h);
        let s2 = self.pow2_f64(b, h2);
        let y1 = self.m_bin(b, Opcode::Fmul, y, s1);
        let y = self.m_bin(b, Opcode::Fmul, y1, s2);
        self.nan_passes(b, x, y)
    }

    /// `2^k` as an f64 for `k` (i64) in the normal range [-1022, 1023].
    fn pow2_f64(&mut self, b: Block, k: Value) -> Value {
        let bias = self.m_i64(1023);
        let sh = self.m_i64(52);
        let e = self.m_bin(b, Opcode::Iadd, k, bias);
        let bits = self.m_bin(b, Opcode::Shl, e, sh);
        self.m_cast(b, Opcode::Bitcast, bits, Type::F64)
    }

    /// `log` (f64) after msun's `e_log.c`, in the single-expression form musl used:
    /// the same reduction as `logf` on the high word, a degree-14 polynomial in `s`.
    /// Error < 1 ulp (msun's bound).
    fn log_f64(&mut self, b: Block, x: Value) -> Value {
        let lg = [
            f64::from_bits(0x3fe5_5555_5555_5593),
            f64::from_bits(0x3fd9_9999_9997_fa04),
            f64::from_bits(0x3fd2_4924_9422_9359),
            f64::from_bits(0x3fcc_71c5_1d8e_78af),
            f64::from_bits(0x3fc7_4664_96cb_03de),
            f64::from_bits(0x3fc3_9a09_d078_c69f),
            f64::from_bits(0x3fc2_f112_df3e_5244),
        ];
        let ln2_hi = f64::from_bits(0x3fe6_2e42_fee0_0000);
        let ln2_lo = f64::from_bits(0x3dea_39ef_3579_3c76);
        let xi = self.m_cast(b, Opcode::Bitcast, x, Type::I64);
        let min_normal = self.m_i64(0x0010_0000_0000_0000);
        let is_sub = self.m_icmp(b, IntCC::Ult, xi, min_normal);
        let xs = self.m_mulc64(b, x, f64::from_bits(0x4350_0000_0000_0000)); // 2^54
        let xsi = self.m_cast(b, Opcode::Bitcast, xs, Type::I64);
        let ix = self.m_sel(b, is_sub, xsi, xi);
        let m54 = self.m_i64(-54);
        let z0 = self.m_i64(0);
        let k0 = self.m_sel(b, is_sub, m54, z0);
        // Reduce into [√2/2, √2] on the high word: 0x3fe6a09e is √2/2's.
        let adj = self.m_i64((0x3ff0_0000 - 0x3fe6_a09e) << 32);
        let ix2 = self.m_bin(b, Opcode::Iadd, ix, adj);
        let sh = self.m_i64(52);
        let e = self.m_bin(b, Opcode::Lshr, ix2, sh);
        let bias = self.m_i64(0x3ff);
        let e2 = self.m_bin(b, Opcode::Isub, e, bias);
        let k = self.m_bin(b, Opcode::Iadd, k0, e2);
        let mmask = self.m_i64(0x000f_ffff_ffff_ffff);
        let mb = self.m_bin(b, Opcode::And, ix2, mmask);
        let s2 = self.m_i64(0x3fe6_a09e << 32);
        let mi = self.m_bin(b, Opcode::Iadd, mb, s2);
        let m = self.m_cast(b, Opcode::Bitcast, mi, Type::F64);
        let one = self.m_f64(1.0);
        let two = self.m_f64(2.0);
        let f = self.m_bin(b, Opcode::Fsub, m, one);
        let den = self.m_bin(b, Opcode::Fadd, two, f);
        let s = self.m_bin(b, Opcode::Fdiv, f, den);
        let z = self.m_bin(b, Opcode::Fmul, s, s);
        let w = self.m_bin(b, Opcode::Fmul, z, z);
        // t1 = w*(Lg2 + w*(Lg4 + w*Lg6)); t2 = z*(Lg1 + w*(Lg3 + w*(Lg5 + w*Lg7)))
        let horner = |l: &mut Self, cs: &[f64]| -> Value {
            let mut acc = l.m_f64(cs[cs.len() - 1]);
            for &c in cs[..cs.len() - 1].iter().rev() {
                let t = l.m_bin(b, Opcode::Fmul, w, acc);
                let cv = l.m_f64(c);
                acc = l.m_bin(b, Opcode::Fadd, cv, t);
            }
            acc
        };
        let a1 = horner(self, &[lg[1], lg[3], lg[5]]);
        let t1 = self.m_bin(b, Opcode::Fmul, w, a1);
        let a2 = horner(self, &[lg[0], lg[2], lg[4], lg[6]]);
        let t2 = self.m_bin(b, Opcode::Fmul, z, a2);
        let rr = self.m_bin(b, Opcode::Fadd, t2, t1);
        let hf = self.m_mulc64(b, f, 0.5);
        let hfsq = self.m_bin(b, Opcode::Fmul, hf, f);
        let dk = self.m_cast(b, Opcode::Sitofp, k, Type::F64);
        let hr = self.m_bin(b, Opcode::Fadd, hfsq, rr);
        let shr = self.m_bin(b, Opcode::Fmul, s, hr);
        // s*(hfsq+R) + dk*ln2_lo - hfsq + f + dk*ln2_hi, left to right
        let lo = self.m_mulc64(b, dk, ln2_lo);
        let hi = self.m_mulc64(b, dk, ln2_hi);
        let a = self.m_bin(b, Opcode::Fadd, shr, lo);
        let a = self.m_bin(b, Opcode::Fsub, a, hfsq);
        let a = self.m_bin(b, Opcode::Fadd, a, f);
        let y = self.m_bin(b, Opcode::Fadd, a, hi);
        self.log_specials(b, x, y)
    }

    /// The special cases of a logarithm of `x` (either float type) over the value `y`
    /// computed for finite positive `x`: 1 → +0, +inf and NaN → x, x < 0 → NaN,
    /// ±0 → -inf.
    fn log_specials(&mut self, b: Block, x: Value, y: Value) -> Value {
        let t = self.f.dfg.value_type(x);
        let c = |l: &mut Self, v: f64| {
            if t == Type::F64 {
                l.m_f64(v)
            } else {
                l.m_f32(v as f32)
            }
        };
        let one = c(self, 1.0);
        let is_one = self.m_fcmp(b, FloatCC::Oeq, x, one);
        let zero = c(self, 0.0);
        let y = self.m_sel(b, is_one, zero, y);
        let inf = c(self, f64::INFINITY);
        let not_fin = self.m_fcmp(b, FloatCC::Ueq, x, inf);
        let y = self.m_sel(b, not_fin, x, y);
        let neg = self.m_fcmp(b, FloatCC::Olt, x, zero);
        let nan = c(self, f64::NAN);
        let y = self.m_sel(b, neg, nan, y);
        let is_zero = self.m_fcmp(b, FloatCC::Oeq, x, zero);
        let ninf = c(self, f64::NEG_INFINITY);
        self.m_sel(b, is_zero, ninf, y)
    }

    /// `powf(x, y)`: `exp(y·log|x|)` evaluated in f64 with `log_f64` and `exp_f64`
    /// (their error, amplified by |y·log x| < 2^8 where the result is finite, stays far
    /// below an f32 ulp), rounded once to f32; then C99's special cases: sign for a
    /// negative base and an odd integer exponent, NaN for a finite negative base and a
    /// non-integer exponent, `pow(x, ±0) = 1`, `pow(1, y) = 1`, `pow(-1, ±inf) = 1`.
    fn pow_f32(&mut self, b: Block, x: Value, y: Value) -> Value {
        let ax = self.m_un(b, Opcode::Fabs, x);
        let axd = self.m_cast(b, Opcode::Fpext, ax, Type::F64);
        let yd = self.m_cast(b, Opcode::Fpext, y, Type::F64);
        let l = self.log_f64(b, axd);
        let t = self.m_bin(b, Opcode::Fmul, yd, l);
        let e = self.exp_f64(b, t);
        let r = self.m_cast(b, Opcode::Fptrunc, e, Type::F32);
        // y odd? (frem is exact: ±1 exactly for odd integers; infinities are not odd)
        let yt = self.m_un(b, Opcode::Ftrunc, y);
        let two = self.m_f32(2.0);
        let ym = self.m_bin(b, Opcode::Frem, y, two);
        let yma = self.m_un(b, Opcode::Fabs, ym);
        let one = self.m_f32(1.0);
        let y_odd = self.m_fcmp(b, FloatCC::Oeq, yma, one);
        // The sign bit of x (so -0 and -inf count as negative bases).
        let xi = self.m_cast(b, Opcode::Bitcast, x, Type::I32);
        let z0 = self.m_i32(0);
        let x_neg = self.m_icmp(b, IntCC::Slt, xi, z0);
        let flip = self.m_bin(b, Opcode::And, x_neg, y_odd);
        let nr = self.m_un(b, Opcode::Fneg, r);
        let r = self.m_sel(b, flip, nr, r);
        // A finite negative base with a non-integer exponent: NaN.
        let zero = self.m_f32(0.0);
        let ninf = self.m_f32(f32::NEG_INFINITY);
        let lt0 = self.m_fcmp(b, FloatCC::Olt, x, zero);
        let fin = self.m_fcmp(b, FloatCC::Ogt, x, ninf);
        let fneg = self.m_bin(b, Opcode::And, lt0, fin);
        let not_int = self.m_fcmp(b, FloatCC::Une, yt, y);
        let bad = self.m_bin(b, Opcode::And, fneg, not_int);
        let nan = self.m_f32(f32::NAN);
        let r = self.m_sel(b, bad, nan, r);
        // pow(-1, ±inf) = 1
        let m1 = self.m_f32(-1.0);
        let x_m1 = self.m_fcmp(b, FloatCC::Oeq, x, m1);
        let ya = self.m_un(b, Opcode::Fabs, y);
        let inf = self.m_f32(f32::INFINITY);
        let y_inf = self.m_fcmp(b, FloatCC::Oeq, ya, inf);
        let m1inf = self.m_bin(b, Opcode::And, x_m1, y_inf);
        // pow(1, y) = 1 and pow(x, ±0) = 1, even for NaN
        let x_1 = self.m_fcmp(b, FloatCC::Oeq, x, one);
        let y_0 = self.m_fcmp(b, FloatCC::Oeq, y, zero);
        let ones = self.m_bin(b, Opcode::Or, x_1, y_0);
        let ones = self.m_bin(b, Opcode::Or, ones, m1inf);
        self.m_sel(b, ones, one, r)
    }

    /// `sinf`, `cosf` and `tanf` of `x` (all three; unused ones are dead code), computed
    /// in f64 and rounded once. The reduction `|x| = j·π/2 + r`, |r| ≤ π/4, is
    /// Cody-Waite with a three-part π/2 (30 + 23 bits of `FRAC_PI_2`, then π/2 - FRAC_PI_2)
    /// below 2^19, where every product `j·P` is exact and every subtraction exact or
    /// harmless; above, it is Payne-Hanek: with `|x| = M·2^E` (M the 24-bit significand),
    /// `|x|·2/π mod 4` is the top 64 bits of `M` times a 96-bit window of the bits of 2/π
    /// (the window starts where the bits of weight 4 and more end; the dropped tail is
    /// below 2^-70). sin and cos of `r` are Taylor polynomials to degree 15/16 in f64
    /// (truncation error below 2^-60), so the f32 results are within 1 ulp; tan is
    /// their quotient. Both reductions are computed and one selected (no branches);
    /// the fast path's input is clamped so that it stays defined for any `x`.
    fn trig_f32(&mut self, b: Block, x: Value) -> [Value; 3] {
        use std::f64::consts::FRAC_PI_2;
        let xd = self.m_cast(b, Opcode::Fpext, x, Type::F64);
        let ax = self.m_un(b, Opcode::Fabs, xd);
        // --- Cody-Waite, |x| < 2^19 ---
        let p1 = f64::from_bits(FRAC_PI_2.to_bits() & !((1u64 << 23) - 1));
        let p2 = FRAC_PI_2 - p1;
        let p3 = f64::from_bits(0x3c91_a626_3314_5c07); // π/2 - FRAC_PI_2
        let lim = self.m_f64(524_288.0);
        let axf = self.m_bin(b, Opcode::Fmin, ax, lim);
        let t = self.m_mulc64(b, axf, std::f64::consts::FRAC_2_PI);
        let j = self.m_un(b, Opcode::Nearest, t);
        let np1 = self.m_f64(-p1);
        let np2 = self.m_f64(-p2);
        let np3 = self.m_f64(-p3);
        let r1 = self.m_fma(b, j, np1, axf);
        let r2 = self.m_fma(b, j, np2, r1);
        let r_fast = self.m_fma(b, j, np3, r2);
        let ji = self.m_cast(b, Opcode::Fptosi, j, Type::I64);
        // --- Payne-Hanek, |x| >= 2^19 ---
        // 2/π = 0.A2F9836E 4E441529 FC2757D1 ... (hex), after 64 zero bits of padding.
        let q: [u64; 5] = [
            0,
            0xa2f9_836e_4e44_1529,
            0xfc27_57d1_f534_ddc0,
            0xdb62_9599_3c43_9041,
            0xfe51_63ab_debb_c561,
        ];
        let xi = self.m_cast(b, Opcode::Bitcast, x, Type::I32);
        let xl = self.m_cast(b, Opcode::Zext, xi, Type::I64);
        let c23 = self.m_i64(23);
        let eb = self.m_bin(b, Opcode::Lshr, xl, c23);
        let c255 = self.m_i64(0xff);
        let e = self.m_bin(b, Opcode::And, eb, c255);
        let mmask = self.m_i64(0x7f_ffff);
        let implicit = self.m_i64(0x80_0000);
        let mb = self.m_bin(b, Opcode::And, xl, mmask);
        let mm = self.m_bin(b, Opcode::Or, mb, implicit);
        // First window bit (0-based in the padded string): E + 62 with E = e - 150.
        let c88 = self.m_i64(88);
        let sp = self.m_bin(b, Opcode::Isub, e, c88);
        let z64 = self.m_i64(0);
        let sp = self.m_bin(b, Opcode::Smax, sp, z64);
        let c6 = self.m_i64(6);
        let wi = self.m_bin(b, Opcode::Lshr, sp, c6);
        let c63 = self.m_i64(63);
        let sh = self.m_bin(b, Opcode::And, sp, c63);
        let inv = self.m_bin(b, Opcode::Isub, c63, sh);
        // word(k) = q[wi + k] for wi in 0..=2 (larger e only for inf/NaN: any value).
        let one = self.m_i64(1);
        let two = self.m_i64(2);
        let is1 = self.m_icmp(b, IntCC::Eq, wi, one);
        let is2 = self.m_icmp(b, IntCC::Uge, wi, two);
        let mut words = [z64; 3];
        for (k, w) in words.iter_mut().enumerate() {
            let a0 = self.m_i64(q[k] as i64);
            let a1 = self.m_i64(q[k + 1] as i64);
            let a2 = self.m_i64(q[k + 2] as i64);
            let s01 = self.m_sel(b, is1, a1, a0);
            *w = self.m_sel(b, is2, a2, s01);
        }
        // (a << sh) | ((c >> 1) >> (63 - sh)): every shift amount below 64.
        let funnel = |l: &mut Self, a: Value, c: Value| {
            let hi = l.m_bin(b, Opcode::Shl, a, sh);
            let c1 = l.m_bin(b, Opcode::Lshr, c, one);
            let lo = l.m_bin(b, Opcode::Lshr, c1, inv);
            l.m_bin(b, Opcode::Or, hi, lo)
        };
        let w_hi = funnel(self, words[0], words[1]);
        let w_mid = funnel(self, words[1], words[2]);
        let c32 = self.m_i64(32);
        let w_lo = self.m_bin(b, Opcode::Lshr, w_mid, c32);
        // top64 = M·W_hi + (M·W_lo >> 32) (mod 2^64) = (|x|·2/π mod 4)·2^62.
        let ph = self.m_bin(b, Opcode::Imul, mm, w_hi);
        let pl = self.m_bin(b, Opcode::Imul, mm, w_lo);
        let pls = self.m_bin(b, Opcode::Lshr, pl, c32);
        let top = self.m_bin(b, Opcode::Iadd, ph, pls);
        // Round to the nearest quadrant: q = (top + 2^61) >> 62, fraction as signed 2^-64s.
        let half = self.m_i64(1 << 61);
        let tr = self.m_bin(b, Opcode::Iadd, top, half);
        let c62 = self.m_i64(62);
        let q_slow = self.m_bin(b, Opcode::Lshr, tr, c62);
        let fr = self.m_bin(b, Opcode::Shl, top, two);
        let frf = self.m_cast(b, Opcode::Sitofp, fr, Type::F64);
        // 2^-64 · π/2
        let r_slow = self.m_mulc64(b, frf, FRAC_PI_2 / 18_446_744_073_709_551_616.0);
        // --- pick one ---
        let big = self.m_fcmp(b, FloatCC::Oge, ax, lim);
        let r = self.m_sel(b, big, r_slow, r_fast);
        let qv = self.m_sel(b, big, q_slow, ji);
        // --- sin and cos of r, |r| <= π/4: Taylor to x^15 / x^16 ---
        let z = self.m_bin(b, Opcode::Fmul, r, r);
        // Horner in z over c_k = (-1)^k / (first + 2k)!, k = 0..=7 (first = 1: sin(r)/r,
        // first = 0: cos(r)).
        let taylor = |l: &mut Self, first: u32| -> Value {
            let mut fact = [1f64; 8];
            let mut f = 1f64;
            for n in 1..=first + 14 {
                f *= f64::from(n);
                if n >= first && (n - first).is_multiple_of(2) {
                    let k = ((n - first) / 2) as usize;
                    fact[k] = if k.is_multiple_of(2) {
                        1.0 / f
                    } else {
                        -1.0 / f
                    };
                }
            }
            let mut acc = l.m_f64(fact[7]);
            for &c in fact[..7].iter().rev() {
                let m = l.m_bin(b, Opcode::Fmul, acc, z);
                let cv = l.m_f64(c);
                acc = l.m_bin(b, Opcode::Fadd, m, cv);
            }
            acc
        };
        let sp_ = taylor(self, 1);
        let sn = self.m_bin(b, Opcode::Fmul, r, sp_);
        let cs = taylor(self, 0);
        // Quadrant: sin(|x|) = [s, c, -s, -c][q], cos(|x|) = [c, -s, -c, s][q],
        // tan(|x|) = q odd ? -c/s : s/c.
        let c3 = self.m_i64(3);
        let qq = self.m_bin(b, Opcode::And, qv, c3);
        let odd = self.m_bin(b, Opcode::And, qq, one);
        let is_odd = self.m_icmp(b, IntCC::Ne, odd, z64);
        let hi_half = self.m_icmp(b, IntCC::Uge, qq, two);
        let qp1 = self.m_bin(b, Opcode::Iadd, qq, one);
        let qp1 = self.m_bin(b, Opcode::And, qp1, c3);
        let cos_neg = self.m_icmp(b, IntCC::Uge, qp1, two);
        let s_or_c = self.m_sel(b, is_odd, cs, sn);
        let c_or_s = self.m_sel(b, is_odd, sn, cs);
        let ns = self.m_un(b, Opcode::Fneg, s_or_c);
        let sin_ax = self.m_sel(b, hi_half, ns, s_or_c);
        let nc = self.m_un(b, Opcode::Fneg, c_or_s);
        let cos_ax = self.m_sel(b, cos_neg, nc, c_or_s);
        let tq = self.m_bin(b, Opcode::Fdiv, sn, cs);
        let cq = self.m_bin(b, Opcode::Fdiv, cs, sn);
        let ncq = self.m_un(b, Opcode::Fneg, cq);
        let tan_ax = self.m_sel(b, is_odd, ncq, tq);
        // Odd functions take x's sign (so sin(-0) = -0); inf and NaN give NaN.
        let zi = self.m_i32(0);
        let x_neg = self.m_icmp(b, IntCC::Slt, xi, zi);
        let nsin = self.m_un(b, Opcode::Fneg, sin_ax);
        let sin_x = self.m_sel(b, x_neg, nsin, sin_ax);
        let ntan = self.m_un(b, Opcode::Fneg, tan_ax);
        let tan_x = self.m_sel(b, x_neg, ntan, tan_ax);
        let inf = self.m_f64(f64::INFINITY);
        let bad = self.m_fcmp(b, FloatCC::Ueq, ax, inf);
        let nan = self.m_f64(f64::NAN);
        let mut out = [sin_x, cos_ax, tan_x];
        for v in &mut out {
            let w = self.m_sel(b, bad, nan, *v);
            *v = self.m_cast(b, Opcode::Fptrunc, w, Type::F32);
        }
        out
    }

    /// `sin` and `cos` (f64) of `x` after msun's `e_rem_pio2.c` (medium path),
    /// `k_sin.c` and `k_cos.c`: `x = n·π/2 + (y0 + y1)` with π/2 in three 33-bit parts
    /// and their tails (each product `n·pio2_k` is exact for |n| < 2^20; the second and
    /// third rounds are computed always and selected where msun would branch on the
    /// cancellation), then the degree-13/14 kernels on the double-double `y0 + y1` and
    /// the quadrant `n & 3`. For |x| >= 2^20 the reduction is Payne-Hanek
    /// ([`Self::rem_pio2_large`]), selected without a branch. Error < 1 ulp (msun's
    /// bound) for every finite `x`. ±0 keeps its sign for sin; inf and NaN give NaN.
    fn trig_f64(&mut self, b: Block, x: Value) -> [Value; 2] {
        let c = |bits: u64| f64::from_bits(bits);
        let invpio2 = c(0x3fe4_5f30_6dc9_c883);
        let parts = [
            (c(0x3ff9_21fb_5440_0000), c(0x3dd0_b461_1a62_6331)),
            (c(0x3dd0_b461_1a60_0000), c(0x3ba3_198a_2e03_7073)),
            (c(0x3ba3_198a_2e00_0000), c(0x397b_839a_2520_49c1)),
        ];
        // Clamp to ±2^60 so that `fptosi n` is defined for any input (fmin/fmax also
        // replace a NaN; inf and NaN are selected away at the end).
        let lim = self.m_f64(c(0x43b0_0000_0000_0000));
        let nlim = self.m_f64(-c(0x43b0_0000_0000_0000));
        let xa = self.m_bin(b, Opcode::Fmin, x, lim);
        let xc = self.m_bin(b, Opcode::Fmax, xa, nlim);
        let t = self.m_mulc64(b, xc, invpio2);
        let fnv = self.m_un(b, Opcode::Nearest, t);
        // The biased exponent of a value (msun's `high word >> 20 & 0x7ff`).
        let expo = |l: &mut Self, v: Value| {
            let vi = l.m_cast(b, Opcode::Bitcast, v, Type::I64);
            let sh = l.m_i64(52);
            let e = l.m_bin(b, Opcode::Lshr, vi, sh);
            let m = l.m_i64(0x7ff);
            l.m_bin(b, Opcode::And, e, m)
        };
        let j = expo(self, xc);
        // Round 1: r = x - fn*pio2_1 (exact), w = fn*pio2_1t.
        let p1 = self.m_mulc64(b, fnv, parts[0].0);
        let mut r = self.m_bin(b, Opcode::Fsub, xc, p1);
        let mut w = self.m_mulc64(b, fnv, parts[0].1);
        let mut y0 = self.m_bin(b, Opcode::Fsub, r, w);
        // Rounds 2 and 3, taken when the exponent dropped by more than 16 (then 49).
        for (k, lim) in [(1, 16), (2, 49)] {
            let e = expo(self, y0);
            let i = self.m_bin(b, Opcode::Isub, j, e);
            let li = self.m_i64(lim);
            let take = self.m_icmp(b, IntCC::Sgt, i, li);
            let tt = r;
            let w1 = self.m_mulc64(b, fnv, parts[k].0);
            let r2 = self.m_bin(b, Opcode::Fsub, tt, w1);
            let w2 = self.m_mulc64(b, fnv, parts[k].1);
            let d = self.m_bin(b, Opcode::Fsub, tt, r2);
            let d = self.m_bin(b, Opcode::Fsub, d, w1);
            let w3 = self.m_bin(b, Opcode::Fsub, w2, d);
            let y02 = self.m_bin(b, Opcode::Fsub, r2, w3);
            r = self.m_sel(b, take, r2, r);
            w = self.m_sel(b, take, w3, w);
            y0 = self.m_sel(b, take, y02, y0);
        }
        let d = self.m_bin(b, Opcode::Fsub, r, y0);
        let y1 = self.m_bin(b, Opcode::Fsub, d, w);
        let n_med = self.m_cast(b, Opcode::Fptosi, fnv, Type::I64);
        // |x| >= 2^20 (biased exponent >= 1043): Payne-Hanek.
        let [y0_l, y1_l, n_l] = self.rem_pio2_large(b, x);
        let xe = expo(self, x);
        let c1043 = self.m_i64(1043);
        let large = self.m_icmp(b, IntCC::Uge, xe, c1043);
        let y0 = self.m_sel(b, large, y0_l, y0);
        let y1 = self.m_sel(b, large, y1_l, y1);
        let ni = self.m_sel(b, large, n_l, n_med);
        // __kernel_sin(y0, y1, 1) and __kernel_cos(y0, y1).
        let z = self.m_bin(b, Opcode::Fmul, y0, y0);
        let ww = self.m_bin(b, Opcode::Fmul, z, z);
        let s1 = c(0xbfc5_5555_5555_5549);
        let sa = self.poly_d(
            b,
            z,
            &[
                c(0x3f81_1111_1110_f8a6),
                c(0xbf2a_01a0_19c1_61d5),
                c(0x3ec7_1de3_57b1_fe7d),
            ],
        );
        let sb = self.poly_d(b, z, &[c(0xbe5a_e5e6_8a2b_9ceb), c(0x3de5_d93a_5acf_d57c)]);
        let zw = self.m_bin(b, Opcode::Fmul, z, ww);
        let sb = self.m_bin(b, Opcode::Fmul, zw, sb);
        let sr = self.m_bin(b, Opcode::Fadd, sa, sb);
        let v = self.m_bin(b, Opcode::Fmul, z, y0);
        // x - ((z*(half*y - v*r) - y) - v*S1)
        let hy = self.m_mulc64(b, y1, 0.5);
        let vr = self.m_bin(b, Opcode::Fmul, v, sr);
        let a = self.m_bin(b, Opcode::Fsub, hy, vr);
        let a = self.m_bin(b, Opcode::Fmul, z, a);
        let a = self.m_bin(b, Opcode::Fsub, a, y1);
        let vs1 = self.m_mulc64(b, v, s1);
        let a = self.m_bin(b, Opcode::Fsub, a, vs1);
        let sn = self.m_bin(b, Opcode::Fsub, y0, a);
        // r = z*(C1 + z*(C2 + z*C3)) + w*w*(C4 + z*(C5 + z*C6))
        let ca = self.poly_d(
            b,
            z,
            &[
                c(0x3fa5_5555_5555_554c),
                c(0xbf56_c16c_16c1_5177),
                c(0x3efa_01a0_19cb_1590),
            ],
        );
        let ca = self.m_bin(b, Opcode::Fmul, z, ca);
        let cb = self.poly_d(
            b,
            z,
            &[
                c(0xbe92_7e4f_809c_52ad),
                c(0x3e21_ee9e_bdb4_b1c4),
                c(0xbda8_fae9_be88_38d4),
            ],
        );
        let w2 = self.m_bin(b, Opcode::Fmul, ww, ww);
        let cb = self.m_bin(b, Opcode::Fmul, w2, cb);
        let cr = self.m_bin(b, Opcode::Fadd, ca, cb);
        // hz = 0.5*z; w = 1 - hz; w + (((1 - w) - hz) + (z*r - x*y))
        let one = self.m_f64(1.0);
        let hz = self.m_mulc64(b, z, 0.5);
        let wc = self.m_bin(b, Opcode::Fsub, one, hz);
        let a = self.m_bin(b, Opcode::Fsub, one, wc);
        let a = self.m_bin(b, Opcode::Fsub, a, hz);
        let zr = self.m_bin(b, Opcode::Fmul, z, cr);
        let xy = self.m_bin(b, Opcode::Fmul, y0, y1);
        let e = self.m_bin(b, Opcode::Fsub, zr, xy);
        let a = self.m_bin(b, Opcode::Fadd, a, e);
        let cs = self.m_bin(b, Opcode::Fadd, wc, a);
        // Quadrant n & 3: sin = [s, c, -s, -c], cos = [c, -s, -c, s].
        let c3 = self.m_i64(3);
        let one_i = self.m_i64(1);
        let two_i = self.m_i64(2);
        let z64 = self.m_i64(0);
        let qq = self.m_bin(b, Opcode::And, ni, c3);
        let odd = self.m_bin(b, Opcode::And, qq, one_i);
        let is_odd = self.m_icmp(b, IntCC::Ne, odd, z64);
        let hi_half = self.m_icmp(b, IntCC::Uge, qq, two_i);
        let qp1 = self.m_bin(b, Opcode::Iadd, qq, one_i);
        let qp1 = self.m_bin(b, Opcode::And, qp1, c3);
        let cos_neg = self.m_icmp(b, IntCC::Uge, qp1, two_i);
        let s_or_c = self.m_sel(b, is_odd, cs, sn);
        let c_or_s = self.m_sel(b, is_odd, sn, cs);
        let ns = self.m_un(b, Opcode::Fneg, s_or_c);
        let sin_x = self.m_sel(b, hi_half, ns, s_or_c);
        let nc = self.m_un(b, Opcode::Fneg, c_or_s);
        let cos_x = self.m_sel(b, cos_neg, nc, c_or_s);
        // sin(±0) = ±0 (the reduction computes -0 - -0 = +0); inf and NaN give NaN.
        let zero = self.m_f64(0.0);
        let is_zero = self.m_fcmp(b, FloatCC::Oeq, x, zero);
        let sin_x = self.m_sel(b, is_zero, x, sin_x);
        let ax = self.m_un(b, Opcode::Fabs, x);
        let inf = self.m_f64(f64::INFINITY);
        let bad = self.m_fcmp(b, FloatCC::Ueq, ax, inf);
        let nan = self.m_f64(f64::NAN);
        let sin_x = self.m_sel(b, bad, nan, sin_x);
        let cos_x = self.m_sel(b, bad, nan, cos_x);
        [sin_x, cos_x]
    }

    /// Payne-Hanek reduction of an f64 `x` with |x| >= 2^20 (the role of msun's
    /// `__kernel_rem_pio2`, done in integers): returns `[y0, y1, n]` with
    /// `x = n·π/2 + y0 + y1` (`n` an i64 whose low two bits are the quadrant, `y0 + y1`
    /// a double-double of magnitude at most π/4). With `|x| = M·2^E` (M the 53-bit
    /// significand), `|x|·2/π mod 4` is `M` times a 192-bit window of the bits of 2/π
    /// that starts where the bits whose products are multiples of 4 end; the low 192 bits
    /// of that product are the quadrant (top two bits) and a 190-bit fraction, whose error
    /// from the dropped tail of 2/π is below 2^-137. The closest a double comes to a
    /// multiple of π/2 is about 2^-61 (in units of π/2), so the top 128 bits of the
    /// fraction, normalised and turned into a double-double times π/2 (with `fma`),
    /// carry about 2^-100 relative error, far inside what msun's kernels need for < 1
    /// ulp. Every shift amount stays below 64 and every operation is defined for any
    /// `x` (inputs below 2^20, inf and NaN give values the caller selects away).
    fn rem_pio2_large(&mut self, b: Block, x: Value) -> [Value; 3] {
        // The bits of 2/π = 0.A2F9836E 4E441529 ... (hex) after 64 zero bits of padding:
        // 1216 bits reach the window of the largest exponent (words up to index 19).
        const TWO_OVER_PI: [u64; 20] = [
            0,
            0xa2f9_836e_4e44_1529,
            0xfc27_57d1_f534_ddc0,
            0xdb62_9599_3c43_9041,
            0xfe51_63ab_debb_c561,
            0xb724_6e3a_424d_d2e0,
            0x0649_2eea_09d1_921c,
            0xfe1d_eb1c_b129_a73e,
            0xe882_35f5_2ebb_4484,
            0xe99c_7026_b45f_7e41,
            0x3991_d639_8353_39f4,
            0x9c84_5f8b_bdf9_283b,
            0x1ff8_97ff_de05_980f,
            0xef2f_118b_5a0a_6d1f,
            0x6d36_7ecf_27cb_09b7,
            0x4f46_3f66_9e5f_ea2d,
            0x7527_bac7_ebe5_f17b,
            0x3d07_39f7_8a52_92ea,
            0x6bfb_5fb1_1f8d_5d08,
            0x5603_3046_fc7b_6bab,
        ];
        let xi = self.m_cast(b, Opcode::Bitcast, x, Type::I64);
        let c52 = self.m_i64(52);
        let eb = self.m_bin(b, Opcode::Lshr, xi, c52);
        let c7ff = self.m_i64(0x7ff);
        let e = self.m_bin(b, Opcode::And, eb, c7ff);
        let mmask = self.m_i64((1 << 52) - 1);
        let implicit = self.m_i64(1 << 52);
        let mb = self.m_bin(b, Opcode::And, xi, mmask);
        let mm = self.m_bin(b, Opcode::Or, mb, implicit);
        // The first window bit is the bit of 2/π of weight 2^-(E-1), E = e - 1075: at
        // E - 1 + 63 = e - 1013 in the padded string (>= 30 for e >= 1043).
        let c1013 = self.m_i64(1013);
        let sp = self.m_bin(b, Opcode::Isub, e, c1013);
        let z64 = self.m_i64(0);
        let sp = self.m_bin(b, Opcode::Smax, sp, z64);
        let c6 = self.m_i64(6);
        let wi = self.m_bin(b, Opcode::Lshr, sp, c6);
        let c63 = self.m_i64(63);
        let sh = self.m_bin(b, Opcode::And, sp, c63);
        let inv = self.m_bin(b, Opcode::Isub, c63, sh);
        // word(k) = TWO_OVER_PI[wi + k], k = 0..4, wi <= 16: a chain of selects.
        let hits: Vec<Value> = (0..=16)
            .map(|j| {
                let jv = self.m_i64(j);
                self.m_icmp(b, IntCC::Eq, wi, jv)
            })
            .collect();
        let mut words = [z64; 4];
        for (k, w) in words.iter_mut().enumerate() {
            let mut acc = self.m_i64(TWO_OVER_PI[k] as i64);
            for (j, &hit) in hits.iter().enumerate().skip(1) {
                let v = self.m_i64(TWO_OVER_PI[j + k] as i64);
                acc = self.m_sel(b, hit, v, acc);
            }
            *w = acc;
        }
        // (a << sh) | ((c >> 1) >> (63 - sh)): every shift amount below 64.
        let one = self.m_i64(1);
        let funnel = |l: &mut Self, a: Value, c: Value| {
            let hi = l.m_bin(b, Opcode::Shl, a, sh);
            let c1 = l.m_bin(b, Opcode::Lshr, c, one);
            let lo = l.m_bin(b, Opcode::Lshr, c1, inv);
            l.m_bin(b, Opcode::Or, hi, lo)
        };
        let win: Vec<Value> = (0..3)
            .map(|k| funnel(self, words[k], words[k + 1]))
            .collect();
        // Six 32-bit digits of the window, least significant first, and two of M.
        let c32 = self.m_i64(32);
        let lo32 = self.m_i64(0xffff_ffff);
        let mut wd = [z64; 6];
        for k in 0..3 {
            let hi = self.m_bin(b, Opcode::Lshr, win[2 - k], c32);
            let lo = self.m_bin(b, Opcode::And, win[2 - k], lo32);
            wd[2 * k] = lo;
            wd[2 * k + 1] = hi;
        }
        let m0 = self.m_bin(b, Opcode::And, mm, lo32);
        let m1 = self.m_bin(b, Opcode::Lshr, mm, c32);
        // Column sums of the 32x32 -> 64-bit partial products, each product split into
        // its halves so that no column sum can overflow (at most 4·2^32 + carry).
        let mut col: [Option<Value>; 6] = [None; 6];
        let mut add = |l: &mut Self, c: usize, v: Value| {
            col[c] = Some(match col[c] {
                None => v,
                Some(a) => l.m_bin(b, Opcode::Iadd, a, v),
            });
        };
        for (mi, &md) in [m0, m1].iter().enumerate() {
            for (j, &w) in wd.iter().enumerate() {
                let c = mi + j;
                if c > 5 {
                    continue;
                }
                let p = self.m_bin(b, Opcode::Imul, md, w);
                let pl = self.m_bin(b, Opcode::And, p, lo32);
                add(self, c, pl);
                if c < 5 {
                    let ph = self.m_bin(b, Opcode::Lshr, p, c32);
                    add(self, c + 1, ph);
                }
            }
        }
        let mut d = [z64; 6];
        let mut carry = None;
        for (c, slot) in col.iter().enumerate() {
            let mut a = slot.expect("every column has a product");
            if let Some(cy) = carry {
                a = self.m_bin(b, Opcode::Iadd, a, cy);
            }
            d[c] = self.m_bin(b, Opcode::And, a, lo32);
            carry = Some(self.m_bin(b, Opcode::Lshr, a, c32));
        }
        // top = (|x|·2/π mod 4)·2^62; n = nearest quadrant.
        let d5s = self.m_bin(b, Opcode::Shl, d[5], c32);
        let top = self.m_bin(b, Opcode::Or, d5s, d[4]);
        let half = self.m_i64(1 << 61);
        let tr = self.m_bin(b, Opcode::Iadd, top, half);
        let c62 = self.m_i64(62);
        let n = self.m_bin(b, Opcode::Lshr, tr, c62);
        // The signed fraction (|x|·2/π - n) as a 128-bit two's complement (hi, lo), in
        // units of 2^-128: bits 190..63 of the 192-bit product, after the two quadrant
        // bits.
        let two = self.m_i64(2);
        let c30 = self.m_i64(30);
        let c34 = self.m_i64(34);
        let t_hi = self.m_bin(b, Opcode::Shl, top, two);
        let d3h = self.m_bin(b, Opcode::Lshr, d[3], c30);
        let t_hi = self.m_bin(b, Opcode::Or, t_hi, d3h);
        let d3l = self.m_bin(b, Opcode::Shl, d[3], c34);
        let d2l = self.m_bin(b, Opcode::Shl, d[2], two);
        let d1h = self.m_bin(b, Opcode::Lshr, d[1], c30);
        let t_lo = self.m_bin(b, Opcode::Or, d3l, d2l);
        let t_lo = self.m_bin(b, Opcode::Or, t_lo, d1h);
        // Magnitude: negate (hi, lo) when negative.
        let neg = self.m_icmp(b, IntCC::Slt, t_hi, z64);
        let n_lo = self.m_bin(b, Opcode::Isub, z64, t_lo);
        let m1v = self.m_i64(-1);
        let nh = self.m_bin(b, Opcode::Xor, t_hi, m1v);
        let lz0 = self.m_icmp(b, IntCC::Eq, t_lo, z64);
        let cin = self.m_cast(b, Opcode::Zext, lz0, Type::I64);
        let n_hi = self.m_bin(b, Opcode::Iadd, nh, cin);
        let a_hi = self.m_sel(b, neg, n_hi, t_hi);
        let a_lo = self.m_sel(b, neg, n_lo, t_lo);
        // Normalise: shift left by 64 if the high word is zero, then by its leading
        // zeros (at most 63, so every shift is defined).
        let hz = self.m_icmp(b, IntCC::Eq, a_hi, z64);
        let b_hi = self.m_sel(b, hz, a_lo, a_hi);
        let b_lo = self.m_sel(b, hz, z64, a_lo);
        let c64 = self.m_i64(64);
        let s64 = self.m_sel(b, hz, c64, z64);
        let lz = self.m_un(b, Opcode::Clz, b_hi);
        let lz = self.m_bin(b, Opcode::Umin, lz, c63);
        let ilz = self.m_bin(b, Opcode::Isub, c63, lz);
        let nhi = self.m_bin(b, Opcode::Shl, b_hi, lz);
        let bl1 = self.m_bin(b, Opcode::Lshr, b_lo, one);
        let bl1 = self.m_bin(b, Opcode::Lshr, bl1, ilz);
        let nhi = self.m_bin(b, Opcode::Or, nhi, bl1);
        let nlo = self.m_bin(b, Opcode::Shl, b_lo, lz);
        let shift = self.m_bin(b, Opcode::Iadd, s64, lz);
        // N = nhi·2^64 + nlo = h + l·2^11 (+ < 2^11): h the top 53 bits (exact), l the
        // next 64 bits rounded.
        let low11 = self.m_i64(0x7ff);
        let not11 = self.m_i64(!0x7ff);
        let hh = self.m_bin(b, Opcode::And, nhi, not11);
        let h = self.m_cast(b, Opcode::Uitofp, hh, Type::F64);
        let hl = self.m_bin(b, Opcode::And, nhi, low11);
        let c53 = self.m_i64(53);
        let c11 = self.m_i64(11);
        let hl = self.m_bin(b, Opcode::Shl, hl, c53);
        let ll = self.m_bin(b, Opcode::Lshr, nlo, c11);
        let ll = self.m_bin(b, Opcode::Or, hl, ll);
        let l = self.m_cast(b, Opcode::Uitofp, ll, Type::F64);
        // |fraction| = h·2^-(64+shift) + l·2^-(117+shift); shift <= 127 keeps both
        // scales normal.
        let mut scale = |bias: i64| {
            let k = self.m_i64(bias);
            let ex = self.m_bin(b, Opcode::Isub, k, shift);
            let ex = self.m_bin(b, Opcode::Shl, ex, c52);
            self.m_cast(b, Opcode::Bitcast, ex, Type::F64)
        };
        let s1 = scale(1023 - 64);
        let s2 = scale(1023 - 117);
        let fh = self.m_bin(b, Opcode::Fmul, h, s1);
        let fl = self.m_bin(b, Opcode::Fmul, l, s2);
        // r = (fh + fl)·(P1 + P2), π/2 = P1 + P2: the product as a double-double.
        let p1 = std::f64::consts::FRAC_PI_2;
        let p2 = f64::from_bits(0x3c91_a626_3314_5c07);
        let y = self.m_mulc64(b, fh, p1);
        let ny = self.m_un(b, Opcode::Fneg, y);
        let p1v = self.m_f64(p1);
        let p2v = self.m_f64(p2);
        let err = self.m_fma(b, fh, p1v, ny);
        let flp = self.m_bin(b, Opcode::Fmul, fl, p1v);
        let t = self.m_fma(b, fh, p2v, flp);
        let t = self.m_bin(b, Opcode::Fadd, err, t);
        let s = self.m_bin(b, Opcode::Fadd, y, t);
        let sy = self.m_bin(b, Opcode::Fsub, s, y);
        let y1 = self.m_bin(b, Opcode::Fsub, t, sy);
        // Sign: the fraction's, flipped for negative x (with n negated, as msun does).
        let x_neg = self.m_icmp(b, IntCC::Slt, xi, z64);
        let flip = self.m_bin(b, Opcode::Xor, neg, x_neg);
        let ns = self.m_un(b, Opcode::Fneg, s);
        let ny1 = self.m_un(b, Opcode::Fneg, y1);
        let y0 = self.m_sel(b, flip, ns, s);
        let y1 = self.m_sel(b, flip, ny1, y1);
        let nn = self.m_bin(b, Opcode::Isub, z64, n);
        let n = self.m_sel(b, x_neg, nn, n);
        [y0, y1, n]
    }

    // ---- f32 functions evaluated in f64 ---------------------------------------------------
    //
    // Each of these computes the f32 function in f64 from `exp_f64`, `log_f64`, `sqrt`,
    // `fdiv` and the `atan_core` below, with relative error far below 2^-40 (cancellation
    // is avoided by a Taylor polynomial near zero), so one rounding to f32 gives ≤ 1 ulp.
    // The special values fall out of the f64 arithmetic (checked against the host in
    // tests/math.rs) or are selected explicitly.

    /// `g(fpext x)` rounded to f32.
    fn via_f64(&mut self, b: Block, x: Value, g: fn(&mut Self, Block, Value) -> Value) -> Value {
        let xd = self.m_cast(b, Opcode::Fpext, x, Type::F64);
        let y = g(self, b, xd);
        self.m_cast(b, Opcode::Fptrunc, y, Type::F32)
    }

    /// Σ c_k x^k (Horner), `cs` from the constant term up.
    fn poly_d(&mut self, b: Block, x: Value, cs: &[f64]) -> Value {
        let mut acc = self.m_f64(cs[cs.len() - 1]);
        for &c in cs[..cs.len() - 1].iter().rev() {
            let m = self.m_bin(b, Opcode::Fmul, acc, x);
            let cv = self.m_f64(c);
            acc = self.m_bin(b, Opcode::Fadd, m, cv);
        }
        acc
    }

    /// `select(|x| < lim, near, far)`.
    fn near_zero(&mut self, b: Block, x: Value, lim: f64, near: Value, far: Value) -> Value {
        let ax = self.m_un(b, Opcode::Fabs, x);
        let l = self.m_f64(lim);
        let small = self.m_fcmp(b, FloatCC::Olt, ax, l);
        self.m_sel(b, small, near, far)
    }

    /// Odd Taylor series `x·Σ c_k x^(2k)`.
    fn odd_series(&mut self, b: Block, x: Value, cs: &[f64]) -> Value {
        let z = self.m_bin(b, Opcode::Fmul, x, x);
        let p = self.poly_d(b, z, cs);
        self.m_bin(b, Opcode::Fmul, x, p)
    }

    /// sinh = (e^x - e^-x)/2; x + x³/6 + x⁵/120 + x⁷/5040 below 2^-5.
    fn sinh_d(&mut self, b: Block, x: Value) -> Value {
        let e = self.exp_f64(b, x);
        let nx = self.m_un(b, Opcode::Fneg, x);
        let en = self.exp_f64(b, nx);
        let d = self.m_bin(b, Opcode::Fsub, e, en);
        let far = self.m_mulc64(b, d, 0.5);
        let near = self.odd_series(b, x, &[1.0, 1.0 / 6.0, 1.0 / 120.0, 1.0 / 5040.0]);
        self.near_zero(b, x, 1.0 / 32.0, near, far)
    }

    /// cosh = (e^x + e^-x)/2.
    fn cosh_d(&mut self, b: Block, x: Value) -> Value {
        let e = self.exp_f64(b, x);
        let nx = self.m_un(b, Opcode::Fneg, x);
        let en = self.exp_f64(b, nx);
        let s = self.m_bin(b, Opcode::Fadd, e, en);
        self.m_mulc64(b, s, 0.5)
    }

    /// tanh = (e^2x - 1)/(e^2x + 1) on x clamped to [-20, 20] (tanh(20) rounds to 1 in
    /// f32); Taylor to x⁹ below 2^-5.
    fn tanh_d(&mut self, b: Block, x: Value) -> Value {
        let lo = self.m_f64(-20.0);
        let hi = self.m_f64(20.0);
        let xa = self.m_bin(b, Opcode::Fmax, x, lo);
        let xc = self.m_bin(b, Opcode::Fmin, xa, hi);
        let x2 = self.m_mulc64(b, xc, 2.0);
        let e = self.exp_f64(b, x2);
        let one = self.m_f64(1.0);
        let n = self.m_bin(b, Opcode::Fsub, e, one);
        let d = self.m_bin(b, Opcode::Fadd, e, one);
        let far = self.m_bin(b, Opcode::Fdiv, n, d);
        let near = self.odd_series(
            b,
            x,
            &[1.0, -1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0, 62.0 / 2835.0],
        );
        let y = self.near_zero(b, x, 1.0 / 32.0, near, far);
        self.nan_passes(b, x, y)
    }

    /// expm1 = e^x - 1; Taylor to x⁷ below 2^-5.
    fn expm1_d(&mut self, b: Block, x: Value) -> Value {
        let e = self.exp_f64(b, x);
        let one = self.m_f64(1.0);
        let far = self.m_bin(b, Opcode::Fsub, e, one);
        let cs = [
            1.0,
            0.5,
            1.0 / 6.0,
            1.0 / 24.0,
            1.0 / 120.0,
            1.0 / 720.0,
            1.0 / 5040.0,
        ];
        let p = self.poly_d(b, x, &cs);
        let near = self.m_bin(b, Opcode::Fmul, x, p);
        self.near_zero(b, x, 1.0 / 32.0, near, far)
    }

    /// log1p = log(1 + x): 1 + x is exact in f64 for an f32 x ≥ 2^-29 in magnitude;
    /// below that log1p(x) rounds to x.
    fn log1p_d(&mut self, b: Block, x: Value) -> Value {
        let one = self.m_f64(1.0);
        let s = self.m_bin(b, Opcode::Fadd, one, x);
        let far = self.log_f64(b, s);
        self.near_zero(b, x, f64::from_bits(0x3e20_0000_0000_0000), x, far) // 2^-29
    }

    /// cbrt = sign(x)·exp(log|x|/3).
    fn cbrt_d(&mut self, b: Block, x: Value) -> Value {
        let ax = self.m_un(b, Opcode::Fabs, x);
        let l = self.log_f64(b, ax);
        let t = self.m_mulc64(b, l, 1.0 / 3.0);
        let e = self.exp_f64(b, t);
        let y = self.copysign(b, e, x);
        self.nan_passes(b, x, y)
    }

    /// atan(t) for t ≥ 0 (inf included): atan(t) = π/2 - atan(1/t) above 1, then two
    /// halvings atan(u) = 2·atan(u / (1 + √(1 + u²))) bring u below tan(π/16) < 0.2, where
    /// the Taylor series to u^23 is below 2^-55 off.
    fn atan_core(&mut self, b: Block, t: Value) -> Value {
        let one = self.m_f64(1.0);
        let big = self.m_fcmp(b, FloatCC::Ogt, t, one);
        let inv = self.m_bin(b, Opcode::Fdiv, one, t);
        let mut u = self.m_sel(b, big, inv, t);
        for _ in 0..2 {
            let uu = self.m_bin(b, Opcode::Fmul, u, u);
            let s = self.m_bin(b, Opcode::Fadd, one, uu);
            let r = self.m_un(b, Opcode::Sqrt, s);
            let d = self.m_bin(b, Opcode::Fadd, one, r);
            u = self.m_bin(b, Opcode::Fdiv, u, d);
        }
        let cs: Vec<f64> = (0..12)
            .map(|k| {
                let v = 1.0 / f64::from(2 * k + 1);
                if k % 2 == 0 {
                    v
                } else {
                    -v
                }
            })
            .collect();
        let a = self.odd_series(b, u, &cs);
        let a = self.m_mulc64(b, a, 4.0);
        let hp = self.m_f64(std::f64::consts::FRAC_PI_2);
        let c = self.m_bin(b, Opcode::Fsub, hp, a);
        self.m_sel(b, big, c, a)
    }

    /// atan(x) = sign(x)·atan_core(|x|) (NaN passes through every step).
    fn atan_d(&mut self, b: Block, x: Value) -> Value {
        let ax = self.m_un(b, Opcode::Fabs, x);
        let a = self.atan_core(b, ax);
        let y = self.copysign(b, a, x);
        self.nan_passes(b, x, y)
    }

    /// asin(x) = atan(x/√(1 - x²)) (1 - x² is exact near |x| = 1; |x| > 1 gives NaN).
    fn asin_d(&mut self, b: Block, x: Value) -> Value {
        let one = self.m_f64(1.0);
        let xx = self.m_bin(b, Opcode::Fmul, x, x);
        let d = self.m_bin(b, Opcode::Fsub, one, xx);
        let r = self.m_un(b, Opcode::Sqrt, d);
        let q = self.m_bin(b, Opcode::Fdiv, x, r);
        let y = self.atan_d(b, q);
        // asin(±1) = ±π/2 through ±1/0 = ±inf; NaN for |x| > 1 through sqrt.
        let bad = self.m_fcmp(b, FloatCC::Uno, r, r);
        let nan = self.m_f64(f64::NAN);
        self.m_sel(b, bad, nan, y)
    }

    /// acos(x) = 2·atan(√((1 - x)/(1 + x))) (1 ± x exact for an f32 x).
    fn acos_d(&mut self, b: Block, x: Value) -> Value {
        let one = self.m_f64(1.0);
        let n = self.m_bin(b, Opcode::Fsub, one, x);
        let d = self.m_bin(b, Opcode::Fadd, one, x);
        let q = self.m_bin(b, Opcode::Fdiv, n, d);
        let r = self.m_un(b, Opcode::Sqrt, q);
        let a = self.atan_core(b, r);
        let y = self.m_mulc64(b, a, 2.0);
        let bad = self.m_fcmp(b, FloatCC::Uno, r, r);
        let nan = self.m_f64(f64::NAN);
        self.m_sel(b, bad, nan, y)
    }

    /// atan2(y, x): atan_core(|y|/|x|), π minus that for a negative x (sign bit, so -0
    /// too), y's sign; 0/0 counts as 0 and inf/inf as 1 (C99's cases for zeros and
    /// infinities); NaN if either is NaN.
    fn atan2_d(&mut self, b: Block, y: Value, x: Value) -> Value {
        let ay = self.m_un(b, Opcode::Fabs, y);
        let ax = self.m_un(b, Opcode::Fabs, x);
        let q = self.m_bin(b, Opcode::Fdiv, ay, ax);
        let zero = self.m_f64(0.0);
        let one = self.m_f64(1.0);
        let inf = self.m_f64(f64::INFINITY);
        let y0 = self.m_fcmp(b, FloatCC::Oeq, ay, zero);
        let q = self.m_sel(b, y0, zero, q);
        let yi = self.m_fcmp(b, FloatCC::Oeq, ay, inf);
        let xi = self.m_fcmp(b, FloatCC::Oeq, ax, inf);
        let both = self.m_bin(b, Opcode::And, yi, xi);
        let q = self.m_sel(b, both, one, q);
        let a = self.atan_core(b, q);
        let pi = self.m_f64(std::f64::consts::PI);
        let pa = self.m_bin(b, Opcode::Fsub, pi, a);
        let xb = self.m_cast(b, Opcode::Bitcast, x, Type::I64);
        let z = self.m_i64(0);
        let xneg = self.m_icmp(b, IntCC::Slt, xb, z);
        let a = self.m_sel(b, xneg, pa, a);
        let r = self.copysign(b, a, y);
        let nan = self.m_fcmp(b, FloatCC::Uno, x, y);
        let nv = self.m_f64(f64::NAN);
        self.m_sel(b, nan, nv, r)
    }

    /// hypot(x, y) = √(x² + y²) (the squares of f32s are exact in f64, nothing
    /// overflows); an infinite operand gives +inf even beside a NaN (C99).
    fn hypot_d(&mut self, b: Block, x: Value, y: Value) -> Value {
        let xx = self.m_bin(b, Opcode::Fmul, x, x);
        let yy = self.m_bin(b, Opcode::Fmul, y, y);
        let s = self.m_bin(b, Opcode::Fadd, xx, yy);
        let r = self.m_un(b, Opcode::Sqrt, s);
        let ax = self.m_un(b, Opcode::Fabs, x);
        let ay = self.m_un(b, Opcode::Fabs, y);
        let inf = self.m_f64(f64::INFINITY);
        let xi = self.m_fcmp(b, FloatCC::Oeq, ax, inf);
        let yi = self.m_fcmp(b, FloatCC::Oeq, ay, inf);
        let any = self.m_bin(b, Opcode::Or, xi, yi);
        self.m_sel(b, any, inf, r)
    }

    /// asinh = sign(x)·log(|x| + √(x² + 1)); odd Taylor series to x⁹ below 2^-5.
    fn asinh_d(&mut self, b: Block, x: Value) -> Value {
        let ax = self.m_un(b, Opcode::Fabs, x);
        let one = self.m_f64(1.0);
        let xx = self.m_bin(b, Opcode::Fmul, x, x);
        let s = self.m_bin(b, Opcode::Fadd, xx, one);
        let r = self.m_un(b, Opcode::Sqrt, s);
        let a = self.m_bin(b, Opcode::Fadd, ax, r);
        let l = self.log_f64(b, a);
        let far = self.copysign(b, l, x);
        let near = self.odd_series(
            b,
            x,
            &[1.0, -1.0 / 6.0, 3.0 / 40.0, -15.0 / 336.0, 105.0 / 3456.0],
        );
        let y = self.near_zero(b, x, 1.0 / 32.0, near, far);
        self.nan_passes(b, x, y)
    }

    /// acosh = log(x + √(x² - 1)) (x² - 1 exact in f64 for an f32 x; x < 1 gives NaN).
    fn acosh_d(&mut self, b: Block, x: Value) -> Value {
        let one = self.m_f64(1.0);
        let xx = self.m_bin(b, Opcode::Fmul, x, x);
        let d = self.m_bin(b, Opcode::Fsub, xx, one);
        let r = self.m_un(b, Opcode::Sqrt, d);
        let a = self.m_bin(b, Opcode::Fadd, x, r);
        let y = self.log_f64(b, a);
        let lt1 = self.m_fcmp(b, FloatCC::Olt, x, one);
        let nan = self.m_f64(f64::NAN);
        self.m_sel(b, lt1, nan, y)
    }

    /// atanh = log((1 + x)/(1 - x))/2 (1 ± x exact); odd Taylor series to x¹¹ below 2^-5.
    fn atanh_d(&mut self, b: Block, x: Value) -> Value {
        let one = self.m_f64(1.0);
        let n = self.m_bin(b, Opcode::Fadd, one, x);
        let d = self.m_bin(b, Opcode::Fsub, one, x);
        let q = self.m_bin(b, Opcode::Fdiv, n, d);
        let l = self.log_f64(b, q);
        let far = self.m_mulc64(b, l, 0.5);
        let cs: Vec<f64> = (0..6).map(|k| 1.0 / f64::from(2 * k + 1)).collect();
        let near = self.odd_series(b, x, &cs);
        self.near_zero(b, x, 1.0 / 32.0, near, far)
    }

    /// `ldexpf(x, n)`: `x·2^n` in f64 with n clamped to [-400, 400] (enough to reach
    /// zero or infinity from any f32), exact there, then rounded once: correctly rounded.
    fn ldexp_f32(&mut self, b: Block, x: Value, n: Value) -> Value {
        let lo = self.m_i32(-400);
        let hi = self.m_i32(400);
        let a = self.m_bin(b, Opcode::Smax, n, lo);
        let c = self.m_bin(b, Opcode::Smin, a, hi);
        let k = self.m_cast(b, Opcode::Sext, c, Type::I64);
        let p = self.pow2_f64(b, k);
        let xd = self.m_cast(b, Opcode::Fpext, x, Type::F64);
        let y = self.m_bin(b, Opcode::Fmul, xd, p);
        self.m_cast(b, Opcode::Fptrunc, y, Type::F32)
    }

    /// `frexpf(x, e)`: the mantissa in [0.5, 1) with `x`'s sign, and `*e` the exponent;
    /// ±0, ±inf and NaN give `x` itself (NaN quieted) and `*e = 0`, as C requires.
    /// Exact.
    fn frexp_f32(&mut self, b: Block, x: Value, ep: Value) -> Value {
        let xa = self.m_un(b, Opcode::Fabs, x);
        let min_normal = self.m_f32(f32::MIN_POSITIVE);
        let is_sub = self.m_fcmp(b, FloatCC::Olt, xa, min_normal);
        let xs = self.m_mulc(b, x, fb(0x4b80_0000)); // 2^24
        let xv = self.m_sel(b, is_sub, xs, x);
        let c24 = self.m_i32(24);
        let z0 = self.m_i32(0);
        let d = self.m_sel(b, is_sub, c24, z0);
        let bits = self.m_cast(b, Opcode::Bitcast, xv, Type::I32);
        let sh = self.m_i32(23);
        let eb = self.m_bin(b, Opcode::Lshr, bits, sh);
        let ff = self.m_i32(0xff);
        let e = self.m_bin(b, Opcode::And, eb, ff);
        let bias = self.m_i32(126);
        let e1 = self.m_bin(b, Opcode::Isub, e, bias);
        let exp = self.m_bin(b, Opcode::Isub, e1, d);
        let keep = self.m_i32(0x807f_ffff_u32 as i32);
        let half = self.m_i32(0x3f00_0000);
        let mb = self.m_bin(b, Opcode::And, bits, keep);
        let mb = self.m_bin(b, Opcode::Or, mb, half);
        let mant = self.m_cast(b, Opcode::Bitcast, mb, Type::F32);
        // Special: zero (e = 0 after scaling only for ±0), inf or NaN (e = 255).
        let zero = self.m_f32(0.0);
        let is_zero = self.m_fcmp(b, FloatCC::Oeq, x, zero);
        let is_inf_nan = self.m_icmp(b, IntCC::Eq, e, ff);
        let special = self.m_bin(b, Opcode::Or, is_zero, is_inf_nan);
        let xx = self.m_bin(b, Opcode::Fadd, x, x);
        let m = self.m_sel(b, special, xx, mant);
        let ex = self.m_sel(b, special, z0, exp);
        self.f.append_inst(
            b,
            InstructionData::Store {
                args: [ex, ep],
                flags: MemFlags::default(),
            },
            None,
        );
        m
    }
}

/// `powi(x, n)` (NAME and the float type T substituted): square and multiply over the
/// bits of |n| from the lowest, then the reciprocal for negative n; the same
/// multiplications in the same order as libdevice's `__nv_powif`/`__nv_powi` and
/// compiler-rt's `__powisf2` (the algorithm is the textbook one). `|INT_MIN|` wraps to
/// `INT_MIN`, whose bits read unsigned (`lshr`) are 2^31, as in those.
const POWI_GIR: &str = "
func @NAME(T, i32) -> T {
block0(v0: T, v1: i32):
    v2 = iconst.i32 0
    v3 = isub v2, v1
    v4 = smax v1, v3
    v5 = fconst.T 1.0
    v20 = iconst.i32 1
    jump block1(v0, v4, v5)
block1(v6: T, v7: i32, v8: T):
    v10 = and v7, v20
    v11 = icmp ne v10, v2
    v12 = fmul v8, v6
    v13 = select v11, v12, v8
    v14 = lshr v7, v20
    v15 = icmp eq v14, v2
    v16 = fmul v6, v6
    brif v15, block2, block1(v16, v14, v13)
block2:
    v17 = icmp slt v1, v2
    v18 = fdiv v5, v13
    v19 = select v17, v18, v13
    return v19
}
";

/// The base of a logarithm.
#[derive(Copy, Clone, PartialEq, Eq)]
enum LogBase {
    E,
    Two,
    Ten,
}
