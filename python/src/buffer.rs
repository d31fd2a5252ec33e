//! The buffer protocol of `weft.ZBytes`: `memoryview(z)` (and so `bytes(memoryview(z))`,
//! `hashlib.sha256(z)`, `struct.unpack_from(fmt, z)`, …) reads the bytes where they are,
//! read-only, without copying them.
//!
//! # Why raw FFI
//!
//! The extension is one abi3 wheel for CPython 3.9 and later. The limited API of 3.9 and
//! 3.10 does not declare the buffer slots nor `Py_buffer`, so PyO3 refuses
//! `__getbuffer__` there. CPython itself has always honoured them: `PyType_FromSpec`
//! and `PyType_FromSpecWithBases` (stable ABI since 3.3) copy every slot of the spec
//! into the new heap type, `Py_bf_getbuffer` (slot id 1) and `Py_bf_releasebuffer` (2)
//! included, and point `tp_as_buffer` at the heap type's own buffer methods; the slot
//! ids are frozen by the stable ABI. `Py_buffer` has had the same layout from 3.9 to
//! 3.13 (checked in each version's headers: `cpython/object.h` up to 3.10,
//! `pybuffer.h` from 3.11, where it joined the stable ABI and so cannot change).
//!
//! # Design
//!
//! PyO3 makes the class with the methods, `ZBytesBase` (subclassable, no buffer).
//! [`init`] makes `weft.ZBytes` with `PyType_FromSpecWithBases`: `ZBytesBase` as its
//! only base, no field of its own (basic size 0: it inherits the base's, so its
//! instances have exactly the base's layout) and one slot, [`get_buffer`]. Its instances
//! are made by PyO3's own initialiser for a given subtype ([`new_zbytes`]), as PyO3
//! does when Python calls a subclass of a `#[pyclass]`; `weft.ZBytes(...)` from Python
//! reaches the same initialiser through the inherited `__new__`. They are freed by the
//! base's deallocator, which frees them through their own type's `tp_free`.
//!
//! # Invariants
//!
//! - The exporter handed to [`get_buffer`] is a `weft.ZBytes`, so a `ZBytesBase`:
//!   checked anyway, an error rather than undefined behaviour if not.
//! - The exported bytes belong to the `ZBytes` object: an `Arc`'d payload that nothing
//!   changes nor moves while the object lives (`frozen`).
//! - `view.obj` holds a strong reference to the object, released by CPython's
//!   `PyBuffer_Release` (when the last `memoryview` of it is released or freed): the
//!   bytes outlive every view, and the object is freed after the last one. Nothing else
//!   is held for a view, so no release slot is needed.
//! - The buffer is read-only (`readonly = 1`); a writable request fails with
//!   `BufferError`, leaving `view.obj` null as the protocol asks.
//! - `shape` and `strides`, when asked for, point at `view.len` and `view.itemsize`,
//!   which live as long as the view they describe (CPython keeps the filled `Py_buffer`
//!   where it asked for it until it releases it).
//! - No Rust panic unwinds into CPython: [`get_buffer`] catches it and raises
//!   `BufferError`.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::impl_::pyclass_init::PyObjectInit;
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyTuple, PyType};

use crate::bytes::ZBytesBase;

/// CPython's `Py_buffer`, field for field (the same from 3.9 to 3.13, see the module's
/// documentation); declared here because PyO3 declares it only for the limited API of
/// 3.11 and later.
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

/// The slot id of `bf_getbuffer` (fixed by the stable ABI).
const SLOT_GETBUFFER: c_int = 1;
/// The slot id of `tp_doc`.
const SLOT_DOC: c_int = 56;

/// Request flags (`PyBUF_*`, fixed by the buffer protocol).
const BUF_WRITABLE: c_int = 0x0001;
const BUF_FORMAT: c_int = 0x0004;
const BUF_ND: c_int = 0x0008;
const BUF_STRIDES: c_int = 0x0010 | BUF_ND;

/// The class's qualified name. Static: CPython 3.9 to 3.11 keep a pointer to it as
/// `tp_name`.
const NAME: &std::ffi::CStr = c"weft.ZBytes";

/// The class's docstring (CPython copies it).
const DOC: &std::ffi::CStr =
    c"Raw bytes: a payload or an attachment. `memoryview(z)` reads them in \
place, read-only, without copying them; `bytes(z)` and `z.to_bytes()` copy them as \
`bytes`, `z.to_string()` and `str(z)` decode them as UTF-8.";

/// `weft.ZBytes`, made once by [`init`].
static ZBYTES_TYPE: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// Makes the class `weft.ZBytes` (once) and returns it.
pub(crate) fn init(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ZBYTES_TYPE
        .get_or_try_init(py, || {
            let base = py.get_type::<ZBytesBase>();
            let bases = PyTuple::new(py, [base])?;
            let mut slots = [
                ffi::PyType_Slot {
                    slot: SLOT_GETBUFFER,
                    pfunc: get_buffer as *mut c_void,
                },
                ffi::PyType_Slot {
                    slot: SLOT_DOC,
                    pfunc: DOC.as_ptr() as *mut c_void,
                },
                ffi::PyType_Slot {
                    slot: 0,
                    pfunc: ptr::null_mut(),
                },
            ];
            let mut spec = ffi::PyType_Spec {
                name: NAME.as_ptr(),
                // Inherit the base's size: the same layout as a `ZBytesBase`.
                basicsize: 0,
                itemsize: 0,
                flags: ffi::Py_TPFLAGS_DEFAULT as c_uint,
                slots: slots.as_mut_ptr(),
            };
            // SAFETY: the spec and its slots are valid for the call (CPython copies what
            // it keeps, but for the name, which is static); the base is a type. A new
            // reference or null with an exception set.
            let ty = unsafe {
                Bound::from_owned_ptr_or_err(
                    py,
                    ffi::PyType_FromSpecWithBases(&mut spec, bases.as_ptr()),
                )?
            };
            Ok(ty.downcast_into::<PyType>()?.unbind())
        })
        .map(|t| t.bind(py))
}

/// A new `weft.ZBytes` holding `value`.
pub(crate) fn new_zbytes(py: Python<'_>, value: ZBytesBase) -> PyResult<Bound<'_, PyAny>> {
    let ty = init(py)?;
    // SAFETY: `ty` is a subtype of `ZBytesBase` adding no field (see `init`): what
    // `into_new_object` asks of the type it is given. It returns a new reference.
    unsafe {
        let obj = PyClassInitializer::from(value).into_new_object(py, ty.as_type_ptr())?;
        Ok(Bound::from_owned_ptr(py, obj))
    }
}

/// `bf_getbuffer` of `weft.ZBytes`: fills `view` with the object's bytes, read-only.
///
/// # Safety
/// Called by CPython, with the GIL, an `exporter` of type `weft.ZBytes` and a `view` to
/// fill (or null, which is refused).
unsafe extern "C" fn get_buffer(
    exporter: *mut ffi::PyObject,
    view: *mut RawBuffer,
    flags: c_int,
) -> c_int {
    // SAFETY: CPython calls the slot with the GIL held.
    let py = unsafe { Python::assume_gil_acquired() };
    let filled = catch_unwind(AssertUnwindSafe(|| unsafe {
        fill(py, exporter, view, flags)
    }));
    let err = match filled {
        Ok(Ok(())) => return 0,
        Ok(Err(e)) => e,
        Err(_) => PyBufferError::new_err("ZBytes: could not export its bytes"),
    };
    if !view.is_null() {
        // SAFETY: a view to fill, given by CPython.
        unsafe { (*view).obj = ptr::null_mut() };
    }
    err.restore(py);
    -1
}

/// Fills `view` as [`get_buffer`] promises.
///
/// # Safety
/// As [`get_buffer`].
unsafe fn fill(
    py: Python<'_>,
    exporter: *mut ffi::PyObject,
    view: *mut RawBuffer,
    flags: c_int,
) -> PyResult<()> {
    if view.is_null() {
        return Err(PyBufferError::new_err("ZBytes: no buffer to fill"));
    }
    if flags & BUF_WRITABLE != 0 {
        return Err(PyBufferError::new_err(
            "ZBytes is read-only: its bytes cannot be exported writable",
        ));
    }
    // SAFETY: CPython passes the object whose buffer is asked for, alive for the call.
    let obj = unsafe { Borrowed::from_ptr(py, exporter) };
    let z = obj.downcast::<ZBytesBase>()?;
    let bytes = z.get().0.as_slice();
    // SAFETY: `view` is CPython's, to fill, not shared while the slot runs.
    let view = unsafe { &mut *view };
    view.buf = bytes.as_ptr().cast_mut().cast();
    // The view keeps the object, so its bytes, alive until CPython releases the view.
    view.obj = obj.to_owned().into_ptr();
    // A slice has at most isize::MAX bytes.
    view.len = bytes.len() as ffi::Py_ssize_t;
    view.itemsize = 1;
    view.readonly = 1;
    view.ndim = 1;
    view.format = if flags & BUF_FORMAT != 0 {
        c"B".as_ptr().cast_mut()
    } else {
        ptr::null_mut()
    };
    view.shape = if flags & BUF_ND == BUF_ND {
        &mut view.len
    } else {
        ptr::null_mut()
    };
    view.strides = if flags & BUF_STRIDES == BUF_STRIDES {
        &mut view.itemsize
    } else {
        ptr::null_mut()
    };
    view.suboffsets = ptr::null_mut();
    view.internal = ptr::null_mut();
    Ok(())
}
