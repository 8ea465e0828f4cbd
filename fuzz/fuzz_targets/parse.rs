//! Fuzz the `.gir` parser: no panics, and accepted input round-trips through the printer.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| gyre_fuzz::check_parse(data));
