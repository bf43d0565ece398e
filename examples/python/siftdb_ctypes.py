# Copyright (c) siftdb authors.
# SPDX-License-Identifier: Apache-2.0
"""siftdb from Python 3 through ctypes and the C API (include/siftdb/c.h).
Usage: SIFTDB_LIBRARY=/path/to/libsiftdb.so python3 siftdb_ctypes.py"""
import ctypes, ctypes.util, os, sys, tempfile
from ctypes import byref, c_char_p, c_size_t, c_uint8, c_void_p, string_at

lib = ctypes.CDLL(os.environ.get("SIFTDB_LIBRARY") or ctypes.util.find_library("siftdb"))
for name, res, args in [
        ("open", c_void_p, [c_void_p, c_char_p, c_void_p]), ("close", None, [c_void_p, c_void_p]),
        ("options_create", c_void_p, []), ("options_destroy", None, [c_void_p]),
        ("options_set_create_if_missing", None, [c_void_p, c_uint8]),
        ("put", None, [c_void_p, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p]),
        ("get", c_void_p, [c_void_p, c_void_p, c_char_p, c_size_t, c_void_p, c_void_p]),
        ("create_iterator", c_void_p, [c_void_p, c_void_p]), ("iter_destroy", None, [c_void_p]),
        ("iter_seek_to_first", None, [c_void_p]), ("iter_valid", c_uint8, [c_void_p]),
        ("iter_next", None, [c_void_p]), ("iter_key", c_void_p, [c_void_p, c_void_p]),
        ("iter_value", c_void_p, [c_void_p, c_void_p]), ("free", None, [c_void_p])]:
    f = getattr(lib, "siftdb_" + name)
    f.restype, f.argtypes = res, args
err, n = c_void_p(), c_size_t()

def check(ok, what):
    if not ok:
        sys.exit("siftdb_ctypes: FAILED: " + what)

with tempfile.TemporaryDirectory() as tmp:
    opts = lib.siftdb_options_create()
    check(not lib.siftdb_open(opts, os.path.join(tmp, "db").encode(), byref(err)), "open of a missing db")
    message = string_at(err.value).decode()  # a malloc'ed string: ours to free
    lib.siftdb_free(err); err.value = None
    check("create_if_missing" in message, message)
    lib.siftdb_options_set_create_if_missing(opts, 1)
    db = lib.siftdb_open(opts, os.path.join(tmp, "db").encode(), byref(err))
    check(db and not err.value, "open")
    for k, v in [(b"b", b"2"), (b"a", b"1"), (b"c", b"3")]:
        lib.siftdb_put(db, None, k, len(k), v, len(v), byref(err))
    value = lib.siftdb_get(db, None, b"b", 1, byref(n), byref(err))
    check(string_at(value, n.value) == b"2", "get")
    lib.siftdb_free(value)
    it, seen = lib.siftdb_create_iterator(db, None), []
    lib.siftdb_iter_seek_to_first(it)
    while lib.siftdb_iter_valid(it):
        key = string_at(lib.siftdb_iter_key(it, byref(n)), n.value)
        seen.append((key, string_at(lib.siftdb_iter_value(it, byref(n)), n.value)))
        lib.siftdb_iter_next(it)
    lib.siftdb_iter_destroy(it)
    check(seen == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")], "iterate: %r" % seen)
    lib.siftdb_close(db, byref(err))
    lib.siftdb_options_destroy(opts)
    check(not err.value, "close")
print("siftdb_ctypes: ok; the error was: " + message)
