//! Project automation as a library, so that tests can call the same code as
//! `cargo xtask` (see `main.rs` for the command-line tasks).
#![warn(missing_docs)]

pub mod conformance;
pub mod corpus;
