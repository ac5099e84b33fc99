//! Reading a command's output: pages, waits for a pattern and searches.

use std::sync::Arc;

use boundary::boundary;
use engine::commands;
use engine::errors::EngineResult;
use engine::record::Record;
use napi::bindgen_prelude::{PromiseRaw, Unknown};
use napi::Env;
use napi_derive::napi;

use super::inputs;
use super::outputs::*;
use crate::{blocking, js_err, promise, rejection, task, Code};

/// A page read on libuv's thread pool: one hop there and one back to the JS
/// thread (paging forward through a log is a loop of these).
pub struct ReadPage {
    rec: Arc<Record>,
    stream: engine::capture::Stream,
    window: engine::paging::Window,
}

impl napi::Task for ReadPage {
    type Output = EngineResult<NativePage>;
    type JsValue = NativePage;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let (rec, s) = (&self.rec, self.stream);
        Ok(commands::read_record_output(rec, s, self.window)
            .map(|p| NativePage::new(&rec.task_id(), s.name(), p)))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<NativePage> {
        output.map_err(|e| rejection(&env, js_err(e)))
    }
}

/// One page of a stream (`page` is `{ stream, offset?, limit? }`).
#[boundary]
#[napi(ts_return_type = "Promise<NativePage>")]
pub fn read_command_output(
    host_id: u32,
    task_id: Unknown,
    page: Unknown,
) -> napi::Result<napi::bindgen_prelude::AsyncTask<ReadPage>, Code> {
    let rec = task(host_id, &task_id)?;
    let (stream, window) = inputs::page_request(&page).map_err(js_err)?;
    Ok(napi::bindgen_prelude::AsyncTask::new(ReadPage {
        rec,
        stream,
        window,
    }))
}

/// Wait for a pattern in a command's output (`opts` is `{ pattern, regex?,
/// stream?, from?, timeoutMs? }`); matching runs in the engine as output
/// arrives.
#[boundary]
#[napi(ts_return_type = "Promise<NativeWaitResult>")]
pub fn await_output<'e>(
    env: &'e Env,
    host_id: u32,
    task_id: Unknown,
    opts: Unknown,
) -> napi::Result<PromiseRaw<'e, NativeWaitResult>, Code> {
    let rec = task(host_id, &task_id)?;
    let req = inputs::wait_request(&opts).map_err(js_err)?;
    promise(env, async move {
        engine::jobs::waits::await_output(rec, req)
            .await
            .map(Into::into)
    })
}

/// Search a stream's log for lines holding a pattern (`opts` is `{ pattern,
/// regex?, stream?, from?, maxMatches? }`), streaming the file.
#[boundary]
#[napi(ts_return_type = "Promise<NativeSearchResult>")]
pub fn search_output<'e>(
    env: &'e Env,
    host_id: u32,
    task_id: Unknown,
    opts: Unknown,
) -> napi::Result<PromiseRaw<'e, NativeSearchResult>, Code> {
    let rec = task(host_id, &task_id)?;
    let (pat, s, from, max) = inputs::search_request(&opts).map_err(js_err)?;
    promise(
        env,
        blocking(move || engine::jobs::waits::search(&rec, s, &pat, from, max).map(Into::into)),
    )
}
