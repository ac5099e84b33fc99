//! The JS objects made on every start and settle — a status, a handle and
//! a banked stream's artifact reference — built by one call of a JS function the adapter registers at load, with
//! the values in a fixed order. napi-rs builds an object with
//! `napi_define_properties`, which internalizes every key and defines every
//! property through V8's slow path (about 1 µs a property); a JS function
//! that assigns them builds the same object with V8's cached shapes. Until a
//! function is registered on a thread (or if its environment is not this
//! call's), the object is built here, property by property, with the same
//! keys in the same order: the result is the same either way.

use std::cell::RefCell;
use std::ffi::CStr;
use std::ptr;

use napi::sys;

/// The objects a registered function builds.
#[derive(Clone, Copy)]
pub enum Shape {
    /// A `NativeStatus`.
    Status = 0,
    /// A `NativeHandle`.
    Handle = 1,
    /// A `NativeArtifactRef`.
    ArtifactRef = 2,
}

/// The functions one environment registered, held by references.
struct Registered {
    env: sys::napi_env,
    makers: [sys::napi_ref; 3],
}

thread_local! {
    /// The registered functions of this thread's environment (a Node
    /// thread runs one).
    static MAKERS: RefCell<Option<Registered>> = const { RefCell::new(None) };
}

fn check(status: sys::napi_status, what: &str) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(
            napi::Status::from(status),
            what.to_string(),
        ))
    }
}

/// Register `makers` (JS functions, in the order of [`Shape`]) as this
/// environment's makers of those shapes; `null` for the first one instead
/// unregisters them (the objects are then built here).
///
/// # Safety
/// `env` is the live environment of the current call, on its own thread,
/// and every value belongs to it.
pub unsafe fn register(env: sys::napi_env, given: [sys::napi_value; 3]) -> napi::Result<()> {
    let mut kind = 0;
    // SAFETY: `env` and the value are live values of this call (the
    // caller's contract); `kind` is a valid out-place.
    let status = unsafe { sys::napi_typeof(env, given[0], &mut kind) };
    check(status, "typeof")?;
    if kind == sys::ValueType::napi_null {
        MAKERS.with(|m| *m.borrow_mut() = None);
        return Ok(());
    }
    let mut makers = [ptr::null_mut(); 3];
    for (slot, f) in makers.iter_mut().zip(given) {
        // SAFETY: as above.
        check(unsafe { sys::napi_typeof(env, f, &mut kind) }, "typeof")?;
        if kind != sys::ValueType::napi_function {
            return Err(napi::Error::new(
                napi::Status::InvalidArg,
                "setObjectMakers expects three functions (or null to unregister them)",
            ));
        }
        // SAFETY: as above; the reference keeps `f` alive for the life of
        // the environment (Node frees it when the environment ends).
        let status = unsafe { sys::napi_create_reference(env, f, 1, slot) };
        check(status, "cannot hold the object maker")?;
    }
    MAKERS.with(|m| *m.borrow_mut() = Some(Registered { env, makers }));
    Ok(())
}

/// The object of `shape` with `values` under `keys`, in that order; a `None`
/// leaves its key absent.
///
/// # Safety
/// `env` is the live environment of the current call, on its own thread,
/// and every value belongs to it.
pub unsafe fn make<const N: usize>(
    env: sys::napi_env,
    shape: Shape,
    keys: &[&CStr; N],
    values: [Option<sys::napi_value>; N],
) -> napi::Result<sys::napi_value> {
    let maker = MAKERS.with(|m| {
        m.borrow()
            .as_ref()
            .filter(|r| r.env == env)
            .map(|r| r.makers[shape as usize])
    });
    let mut out = ptr::null_mut();
    if let Some(maker) = maker {
        let mut f = ptr::null_mut();
        let mut undefined = ptr::null_mut();
        // SAFETY: the reference was made in this environment (checked
        // above) and is never deleted while it lives; out-places are valid.
        unsafe {
            check(
                sys::napi_get_reference_value(env, maker, &mut f),
                "the object maker",
            )?;
            check(sys::napi_get_undefined(env, &mut undefined), "undefined")?;
        }
        // On the stack: this runs for every status a start or settle makes.
        let args: [sys::napi_value; N] = values.map(|v| v.unwrap_or(undefined));
        // SAFETY: `f` is a function of this environment; `args` holds
        // `args.len()` values of it for the duration of the call.
        let status = unsafe {
            sys::napi_call_function(env, undefined, f, args.len(), args.as_ptr(), &mut out)
        };
        if status == sys::Status::napi_ok && !out.is_null() {
            return Ok(out);
        }
        // A maker that threw (it does not: it only assigns) leaves the
        // exception pending; clear it and build the object here instead.
        let mut pending = ptr::null_mut();
        // SAFETY: valid environment and out-place.
        unsafe { sys::napi_get_and_clear_last_exception(env, &mut pending) };
    }
    // SAFETY: valid environment and out-place.
    let status = unsafe { sys::napi_create_object(env, &mut out) };
    check(status, "cannot create an object")?;
    for (key, value) in keys.iter().zip(values) {
        if let Some(v) = value {
            // SAFETY: `out` and `v` are values of this environment; `key` is
            // a NUL-terminated string that outlives the call.
            let status = unsafe { sys::napi_set_named_property(env, out, key.as_ptr(), v) };
            check(status, "cannot set a property")?;
        }
    }
    Ok(out)
}
