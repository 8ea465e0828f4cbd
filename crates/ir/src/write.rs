//! Printing functions and modules in the .gir text format.
