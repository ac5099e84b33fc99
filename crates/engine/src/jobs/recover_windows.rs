//! `recoverBackgroundCommands` on Windows: the manifests are written
//! (`manifest.json` in each task directory), but reading them back under
//! the ownership and identity checks SPEC §15 requires is not ported yet,
//! so a recovery is refused (`NLC_RECOVERY_REFUSED`) — never a silent 0.

use std::path::Path;

use super::state::State as Engine;
use crate::errors::{EngineError, EngineResult};

/// What `recoverBackgroundCommands` filters on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only commands of this session.
    pub session_id: Option<String>,
    /// Only commands started at or after this epoch ms.
    pub since_ms: Option<f64>,
}

/// Refused on Windows (see the module docs).
pub fn recover(_eng: &Engine, _host: u32, _filter: &Filter, _tmpdir: &Path) -> EngineResult<u32> {
    Err(EngineError::RecoveryRefused(
        "recovering the commands of earlier processes is not available on Windows yet: their logs stay in the log base under %TEMP%, but this runner does not read their manifests back there".into(),
    ))
}
