"""The buffer protocol of ZBytes: `memoryview(z)` reads the bytes in place, read-only;
the bytes live as long as any view of them. Tested on bytes made in Python and on large
payloads received by a weft subscriber through weftd, from weft and from zenoh-python."""

import array
import ctypes
import gc
import hashlib
import queue
import struct
import weakref

import pytest

import weft
from conftest import TIMEOUT, until

# Request flags of the buffer protocol.
PyBUF_SIMPLE = 0
PyBUF_WRITABLE = 0x0001
PyBUF_FULL_RO = 0x0100 | 0x0010 | 0x0008 | 0x0004


class PyBuffer(ctypes.Structure):
    """CPython's Py_buffer."""

    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
        ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
        ("suboffsets", ctypes.c_void_p),
        ("internal", ctypes.c_void_p),
    ]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(PyBuffer), ctypes.c_int]
_get_buffer.restype = ctypes.c_int
_release = ctypes.pythonapi.PyBuffer_Release
_release.argtypes = [ctypes.POINTER(PyBuffer)]
_release.restype = None


def exported(obj, flags=PyBUF_SIMPLE):
    """What `obj` exports for a buffer request with `flags`: (address, length, read-only,
    format, shape, strides); the buffer is released before returning."""
    view = PyBuffer()
    if _get_buffer(obj, ctypes.byref(view), flags) != 0:
        raise AssertionError("unreachable: ctypes raises the exporter's error")
    try:
        return (
            view.buf,
            view.len,
            view.readonly,
            view.format,
            None if not view.shape else view.shape[0],
            None if not view.strides else view.strides[0],
        )
    finally:
        _release(ctypes.byref(view))


def test_a_memoryview_reads_the_bytes_read_only():
    data = bytes(range(256)) * 300
    z = weft.ZBytes(data)
    m = memoryview(z)
    assert m.readonly and m.format == "B" and m.itemsize == 1 and m.ndim == 1
    assert m.shape == (len(data),) and m.strides == (1,) and m.nbytes == len(data)
    assert m == data and m[1000:1004] == data[1000:1004]
    assert bytes(z) == data and bytearray(z) == data
    assert hashlib.sha256(z).digest() == hashlib.sha256(data).digest()
    assert struct.unpack_from("<HI", z, 10) == struct.unpack_from("<HI", data, 10)
    with pytest.raises(TypeError):
        m[0] = 1
    address, length, readonly, fmt, shape, strides = exported(z, PyBUF_FULL_RO)
    assert (length, readonly, fmt, shape, strides) == (len(data), 1, b"B", len(data), 1)
    address, length, readonly, fmt, shape, strides = exported(z)
    assert (length, readonly, fmt, shape, strides) == (len(data), 1, None, None, None)


def test_a_writable_request_is_refused():
    z = weft.ZBytes(b"abc")
    with pytest.raises(BufferError, match="read-only"):
        exported(z, PyBUF_WRITABLE)
    with pytest.raises(TypeError):
        ctypes.c_char.from_buffer(z)
    # An empty ZBytes exports an empty buffer.
    assert memoryview(weft.ZBytes()).tobytes() == b""


def test_views_share_the_bytes_and_keep_them_alive():
    z = weft.ZBytes(b"x" * 70_000)
    first = memoryview(z)
    address = exported(z)[0]
    # Every view, and every slice of one, reads the same bytes, not a copy of them.
    assert exported(first)[0] == address
    assert exported(memoryview(z))[0] == address
    assert exported(first[100:])[0] == address + 100
    alive = weakref.ref(z)
    second = first[10:20]
    del z, first
    gc.collect()
    assert alive() is not None and second.tobytes() == b"x" * 10
    second.release()
    gc.collect()
    assert alive() is None


def test_the_constructor_takes_any_buffer():
    assert weft.ZBytes(b"ab").to_bytes() == b"ab"
    assert weft.ZBytes(bytearray(b"ab")).to_bytes() == b"ab"
    assert weft.ZBytes(memoryview(b"abcd")[1:3]).to_bytes() == b"bc"
    assert weft.ZBytes(array.array("H", [1, 2])).to_bytes() == b"\x01\x00\x02\x00"
    assert weft.ZBytes("é").to_bytes() == "é".encode()
    assert weft.ZBytes(weft.ZBytes(b"z")).to_bytes() == b"z"
    assert weft.ZBytes().to_bytes() == b"" and weft.ZBytes(None).to_bytes() == b""
    with pytest.raises(TypeError):
        weft.ZBytes(3)  # type: ignore[arg-type]
    assert isinstance(weft.ZBytes(b""), weft.ZBytes)


def big_payload(seed):
    """About 70 KB of text, more than a batch: received in fragments."""
    return "".join(chr(ord("a") + (i * seed + i // 7) % 26) for i in range(70_000))


def check_received_in_place(sample, expected):
    """The payload of `sample` is `expected`, and two ZBytes of it (each access gives a
    new one) export the same bytes: read in place, never copied for a ZBytes or a view;
    they live as long as the last view."""
    first, second = sample.payload, sample.payload
    assert first is not second
    view = memoryview(first)
    assert view.readonly and view.nbytes == len(expected) and view == expected
    assert hashlib.sha256(second).digest() == hashlib.sha256(expected).digest()
    assert exported(first)[0] == exported(second)[0] == exported(view)[0]
    alive = weakref.ref(first)
    del first, second, sample
    gc.collect()
    assert alive() is not None and view.tobytes() == expected
    view.release()
    gc.collect()
    assert alive() is None


def first_with(got, key):
    """The first sample of `got` (a queue) on `key`."""
    while True:
        s = got.get(timeout=TIMEOUT)
        if str(s.key_expr) == key:
            return s


def test_a_large_payload_from_weft_is_read_in_place(client):
    a, b = client(), client()
    got = queue.Queue()
    a.declare_subscriber("buf/**", got.put)
    until(lambda t: _get(got, t), lambda: b.put("buf/probe", "p"))
    payload = big_payload(3).encode()
    # Any buffer is taken as a payload.
    b.put("buf/big", memoryview(payload))
    check_received_in_place(first_with(got, "buf/big"), payload)


def test_a_large_payload_from_zenoh_python_is_read_in_place(client, node):
    a = client()
    got = queue.Queue()
    a.declare_subscriber("buf/**", got.put)
    publisher = node(zenoh=True)
    until(
        lambda t: _get(got, t),
        lambda: publisher.send(op="put", key="buf/probe", payload="p"),
    )
    payload = big_payload(5)
    publisher.send(op="put", key="buf/big", payload=payload)
    check_received_in_place(first_with(got, "buf/big"), payload.encode())


def _get(q, timeout):
    try:
        return q.get(timeout=timeout)
    except queue.Empty:
        return None
