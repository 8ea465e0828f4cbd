//! Filetests (work in progress).
