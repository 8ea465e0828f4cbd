//! Building functions: an instruction builder and SSA construction for front ends.
