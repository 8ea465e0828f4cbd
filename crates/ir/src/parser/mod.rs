//! Parsing the .gir text format.
