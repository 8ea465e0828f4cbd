//! `Memory::written`: a buffer a launch stored to counts as written even when the values
//! stored are those it held; one only read does not.

use gyre_interp::{run_kernel, Arg, Launch, Memory};

#[test]
fn stores_mark_buffers_written() {
    let m = gyre_ir::parse_module(
        "kernel @k(ptr.global, ptr.global, ptr.global) {
block0(v0: ptr.global, v1: ptr.global, v2: ptr.global):
    v3 = load.i32 v0
    store v3, v1
    v4 = atomic_cas v2, v3, v3
    return
}
",
    )
    .unwrap();
    let mut mem = Memory::new();
    mem.alloc_from("src", &[5i32]);
    mem.alloc_from("dst", &[5i32]);
    // The compare fails (7 != 5), so the atomic writes nothing.
    mem.alloc_from("cas", &[7i32]);
    let args = ["src", "dst", "cas"].map(Arg::buffer).to_vec();
    run_kernel(&m, "k", &Launch::linear(1, 1, args), &mut mem).unwrap();
    assert_eq!(mem.written("src"), Some(false));
    assert_eq!(mem.written("dst"), Some(true), "stored its own value back");
    assert_eq!(mem.read::<i32>("dst").unwrap(), vec![5]);
    assert_eq!(
        mem.written("cas"),
        Some(false),
        "a failed compare-and-swap writes nothing"
    );
    assert_eq!(mem.written("none"), None);
}
