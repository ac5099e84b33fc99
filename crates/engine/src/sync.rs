//! Locks that a panic cannot poison for everyone after it.
//!
//! A panic while a lock is held marks the std lock poisoned, and every later
//! `lock().unwrap()` panics too: one failed supervision would leave its
//! command unable to settle and every later status call panicking. The data
//! these locks guard stays consistent between statements (each update is a
//! plain assignment or push), so the guard is taken back from the poison.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// `lock` that recovers the guard of a poisoned mutex.
pub trait Unpoisoned<T: ?Sized> {
    /// The guard, whether or not an earlier holder panicked.
    fn locked(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> Unpoisoned<T> for Mutex<T> {
    fn locked(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `read` and `write` of a [`RwLock`] that recover from poison.
pub trait UnpoisonedRw<T: ?Sized> {
    /// A shared guard.
    fn read_now(&self) -> RwLockReadGuard<'_, T>;
    /// The exclusive guard.
    fn write_now(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> UnpoisonedRw<T> for RwLock<T> {
    fn read_now(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }
    fn write_now(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_poisoned_by_a_panic_still_locks() {
        let m = std::sync::Arc::new(Mutex::new(1));
        let m2 = m.clone();
        let _ = std::thread::spawn(move || {
            let _g = m2.lock().unwrap();
            panic!("held");
        })
        .join();
        // The control: std's own lock reports the poison.
        assert!(m.lock().is_err());
        *m.locked() += 1;
        assert_eq!(*m.locked(), 2);
        let rw = std::sync::Arc::new(RwLock::new(5));
        let rw2 = rw.clone();
        let _ = std::thread::spawn(move || {
            let _g = rw2.write().unwrap();
            panic!("held");
        })
        .join();
        assert!(rw.read().is_err());
        *rw.write_now() += 1;
        assert_eq!(*rw.read_now(), 6);
    }
}
