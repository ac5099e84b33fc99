//! A command's input while it runs: the writes queued for it, and the watch
//! that reports it blocked waiting for input.

use crate::platform::{AsFd, OwnedFd};
use std::collections::VecDeque;
use std::time::Duration;

#[cfg(windows)]
use crate::platform::windows::pipe;
use tokio::io::AsyncWriteExt;
#[cfg(unix)]
use tokio::net::unix::pipe;
use tokio::time::Instant;

use super::input::{WriteFailure, WriteReply};
use super::record::Record;

/// Benchmark-only: set, no command arms the input watch (the same run
/// measures a start → settle with and without it).
pub const OFF_VAR: &str = "NEUROLINK_COMMANDS_BENCH_NO_INPUT_WATCH";

fn bench_off() -> bool {
    static OFF: std::sync::LazyLock<bool> =
        std::sync::LazyLock::new(|| std::env::var_os(OFF_VAR).is_some());
    *OFF
}

/// The watch for a command blocked on its input (SPEC §15): a timer armed
/// whenever the command goes quiet, which looks at its processes in /proc
/// once it has been quiet for `inputWaitMs`, and again every `inputWaitMs`
/// while it stays quiet. Commands without an input (or where the platform
/// cannot tell) never arm it.
pub(super) struct InputWatch<'a> {
    rec: &'a Record,
    /// Where its waiting event goes.
    registry: &'a super::registry::Registry,
    /// What the command reads, as the kernel names it (`None`: no watch).
    target: Option<crate::process::input_wait::Target>,
    wait: Duration,
    /// The disarmed timer's deadline.
    far: Instant,
}

impl<'a> InputWatch<'a> {
    /// Looks between two checks of a command that stays quiet, at least.
    const MIN_PERIOD: Duration = Duration::from_millis(100);

    pub(super) fn new(
        rec: &'a Record,
        registry: &'a super::registry::Registry,
        wait_ms: f64,
        writer: &Writer<'_>,
        far: Instant,
    ) -> Self {
        use crate::process::input_wait;
        let terminal = rec.input.as_ref().is_some_and(|i| i.terminal);
        let target = match &writer.tx {
            Some(tx) if input_wait::supported() && !bench_off() => {
                input_wait::target_of(tx.as_fd(), terminal)
            }
            _ => None,
        };
        InputWatch {
            rec,
            registry,
            target,
            wait: crate::policy::duration_ms(wait_ms),
            far,
        }
    }

    pub(super) fn first(&self, start: Instant) -> Instant {
        if self.target.is_some() {
            start + self.wait
        } else {
            self.far
        }
    }

    pub(super) fn armed(&self) -> bool {
        self.target.is_some()
    }

    /// The command printed, or got input: it is not waiting; look again
    /// once it has been quiet for `inputWaitMs`.
    pub(super) fn active(&self, timer: std::pin::Pin<&mut tokio::time::Sleep>) {
        if self.target.is_none() {
            return;
        }
        if let Some(i) = &self.rec.input {
            i.set_waiting(false);
        }
        timer.reset(Instant::now() + self.wait);
    }

    /// Quiet for `inputWaitMs`: is it blocked on its input?
    pub(super) fn check(
        &self,
        pid: i32,
        writer: &Writer<'_>,
        timer: std::pin::Pin<&mut tokio::time::Sleep>,
    ) {
        let (Some(t), Some(input), Some(tx)) = (&self.target, &self.rec.input, &writer.tx) else {
            // Its input is closed: it reads end of file from now on.
            if let Some(i) = &self.rec.input {
                i.set_waiting(false);
            }
            timer.reset(self.far);
            return;
        };
        if input.set_waiting(crate::process::input_wait::waiting(pid, t, tx.as_fd())) {
            self.registry.emit(
                self.registry.listener_of(self.rec.host),
                crate::runtime::Event::WaitingForInput(self.rec.task_id()),
            );
        }
        timer.reset(Instant::now() + self.wait.max(Self::MIN_PERIOD));
    }
}

/// One queued write.
struct Pending {
    data: Vec<u8>,
    done: usize,
    close: bool,
    reply: WriteReply,
}

/// The write end of a command's input and the writes queued for it.
pub(super) struct Writer<'a> {
    rec: &'a Record,
    tx: Option<pipe::Sender>,
    queue: VecDeque<Pending>,
}

impl<'a> Writer<'a> {
    pub(super) fn new(rec: &'a Record, fd: Option<OwnedFd>) -> Self {
        // A pipe is checked as one; a terminal's master side is a character
        // device, which tokio drives the same way.
        let tx = fd.and_then(|fd| {
            if rec.input.as_ref().is_some_and(|i| i.terminal) {
                pipe::Sender::from_owned_fd_unchecked(fd).ok()
            } else {
                pipe::Sender::from_owned_fd(fd).ok()
            }
        });
        Writer {
            rec,
            tx,
            queue: VecDeque::new(),
        }
    }

    pub(super) fn push(&mut self, data: Vec<u8>, close: bool, reply: WriteReply) {
        if self.tx.is_none() {
            let _ = reply.send(Err(WriteFailure::Closed));
            return;
        }
        self.queue.push_back(Pending {
            data,
            done: 0,
            close,
            reply,
        });
    }

    pub(super) fn busy(&self) -> bool {
        self.tx.is_some() && !self.queue.is_empty()
    }

    /// Write what the pipe takes of the oldest queued write.
    pub(super) async fn write_some(&mut self) -> std::io::Result<usize> {
        let (Some(tx), Some(p)) = (self.tx.as_mut(), self.queue.front()) else {
            return Ok(0);
        };
        if p.done == p.data.len() {
            return Ok(0);
        }
        tx.write(&p.data[p.done..]).await
    }

    pub(super) fn wrote(&mut self, r: std::io::Result<usize>) {
        match r {
            Ok(n) => {
                let Some(p) = self.queue.front_mut() else {
                    return;
                };
                p.done += n;
                if p.done < p.data.len() {
                    return;
                }
                let p = self.queue.pop_front().expect("front exists");
                if p.close {
                    // Dropping the write end is the end of file the command reads.
                    self.tx = None;
                    if let Some(i) = &self.rec.input {
                        i.close();
                    }
                }
                let _ = p.reply.send(Ok(p.data.len()));
                if self.tx.is_none() {
                    self.fail_all();
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // EPIPE (a pipe nobody reads) or EIO (a terminal nobody holds):
            // the command closed its input.
            Err(_) => {
                self.tx = None;
                if let Some(i) = &self.rec.input {
                    i.close();
                }
                self.fail_all();
            }
        }
    }

    pub(super) fn fail_all(&mut self) {
        for p in self.queue.drain(..) {
            let _ = p.reply.send(Err(WriteFailure::Closed));
        }
    }
}
