//! The output of a command as text: [`capture`] copies its pipes into log
//! files while indexing them, [`decode`] turns log bytes into UTF-16 the way
//! Node decodes them, [`window`] reads log files through it, [`paging`] cuts
//! pages out of a stream's log, and [`matching`]
//! watches output for patterns as it arrives and searches logs.

pub mod capture;
pub mod decode;
pub mod logfile;
pub mod matching;
pub mod paging;
pub mod window;
