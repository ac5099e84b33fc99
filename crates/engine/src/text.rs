//! UTF-8 → UTF-16 decoding exactly as Node decodes, and windows over log files.
