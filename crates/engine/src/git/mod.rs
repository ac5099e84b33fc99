//! The read-only git toolset: validators and argv shapes.
