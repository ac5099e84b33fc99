//! A tool call refused before git ran.

use std::fmt;

/// Why a tool call was refused before git ran; `Display` gives the message,
/// which names the shape that is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRefusal(pub String);

impl fmt::Display for GitRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GitRefusal {}
