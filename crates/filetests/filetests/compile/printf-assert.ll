; test: compile
; target: sm_70
;; vprintf and __assertfail are the CUDA runtime's `.extern .func`s, declared as llc
;; declares them and called with llc's sequence: each argument in its own `.param`,
;; vprintf's i32 result read back from the return `.param`; assert's character size is
;; the constant 1. A plain `call` (not `call.uni`): the call may be divergent.
; check: .extern .func (.param .b32 func_retval0) vprintf
; nextln: (
; nextln: .param .b64 vprintf_param_0,
; nextln: .param .b64 vprintf_param_1
; nextln: )
; nextln: ;
; check: .extern .func __assertfail
; nextln: (
; nextln: .param .b64 __assertfail_param_0,
; nextln: .param .b64 __assertfail_param_1,
; nextln: .param .b32 __assertfail_param_2,
; nextln: .param .b64 __assertfail_param_3,
; nextln: .param .b64 __assertfail_param_4
; check: cvta.const.u64 %rd2, %rd1;
; check: cvta.local.u64 %rd11, %rd10;
; check: .param .b64 $$arg0;
; nextln: st.param.b64 [$$arg0], %rd2;
; nextln: .param .b64 $$arg1;
; nextln: st.param.b64 [$$arg1], %rd11;
; nextln: .param .b32 $$ret;
; nextln: call ($$ret), vprintf, ($$arg0, $$arg1);
; nextln: ld.param.b32 %r3, [$$ret];
; check: .param .b32 $$arg2;
; nextln: st.param.b32 [$$arg2], %r2;
; check: st.param.b64 [$$arg4], 1;
; nextln: call __assertfail, ($$arg0, $$arg1, $$arg2, $$arg3, $$arg4);
; source: crates/filetests/filetests/import/syscalls/printf-assert.ll
