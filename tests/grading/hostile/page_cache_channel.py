# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# The page-cache channel between sandboxes: in the SEND run it writes the bits of TOKEN_PLACEHOLDER into
# the page cache of 32 NumPy files every sandbox shares (a 0 evicted with posix_fadvise(DONTNEED) or
# madvise(MADV_PAGEOUT), a 1 read in); in the RECEIVE run it reads them back with preadv2(RWF_NOWAIT),
# whose EAGAIN says "not cached", and with mincore. It prints "NAME: errno N" or "NAME: allowed" for each
# call (the first answer of each), and "received: BITS" with '?' for a bit it could not tell. Plain reads
# and the advice malloc and NumPy give must still work. It defines the functions (param_count wrong), so
# that the learner gets an ordinary verdict.
import ctypes
import mmap
import os

import numpy

MODE = "MODE_PLACEHOLDER"
TOKEN = int("TOKEN_PLACEHOLDER")
libc = ctypes.CDLL(None, use_errno=True)
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
libc.readahead.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_size_t]
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_long,
]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
answers = {}


def note(name, action):
    try:
        action()
        answers.setdefault(name, "allowed")
        return True
    except OSError as error:
        answers.setdefault(name, f"errno {error.errno}")
        return False


def check(result):
    if result == -1:
        raise OSError(ctypes.get_errno(), "refused")


def files():
    root = os.path.dirname(numpy.__file__)
    found = []
    for folder, _, names in sorted(os.walk(root)):
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith(".py") and os.path.getsize(path) >= 8192:
                found.append(path)
    return found[:32]


def send(path, bit):
    with open(path, "rb") as stream:
        fd = stream.fileno()
        if bit:
            stream.read()
            note("readahead", lambda: check(libc.readahead(fd, 0, 1 << 20)))
            return
        note("fadvise64", lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED))
        with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as view:
            note("madvise_pageout", lambda: view.madvise(21))
            note("madvise_cold", lambda: view.madvise(20))
            note("madvise_dontneed", lambda: view.madvise(4))


def resident(fd):
    """mincore's answer for the file's first page: True, False, or None where it is refused."""
    address = libc.mmap(None, 4096, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
    vector = ctypes.create_string_buffer(1)
    try:
        if note("mincore", lambda: check(libc.mincore(address, 4096, vector))):
            return bool(vector.raw[0] & 1)
        return None
    finally:
        libc.munmap(ctypes.c_void_p(address), 4096)


def receive(path):
    with open(path, "rb") as stream:
        fd = stream.fileno()
        buffer = bytearray(1)
        try:
            os.preadv(fd, [buffer], 0, os.RWF_NOWAIT)
            answers.setdefault("preadv2_nowait", "allowed")
            return "1"
        except BlockingIOError:
            answers.setdefault("preadv2_nowait", "allowed")  # EAGAIN: the page is not cached
            return "0"
        except OSError as error:
            answers.setdefault("preadv2_nowait", f"errno {error.errno}")
        found = resident(fd)
        note("preadv", lambda: os.preadv(fd, [buffer], 0))  # a plain read still works
        return "?" if found is None else "1" if found else "0"


if MODE == "send":
    for index, path in enumerate(files()):
        send(path, TOKEN >> index & 1)
else:
    bits = "".join(receive(path) for path in files())
    print(f"received: {bits}")
for name, answer in answers.items():
    print(f"{name}: {answer}")
print("still running")


def project_qkv(X, Wq, Wk, Wv):
    for W in (Wq, Wk, Wv):
        if W.shape[0] != X.shape[1]:
            raise ValueError(f"a weight matrix has {W.shape[0]} rows, but X has {X.shape[1]} columns")
    if Wq.shape[1] != Wk.shape[1]:
        raise ValueError("Wq and Wk need the same number of columns")
    return X @ Wq, X @ Wk, X @ Wv


def qkv_shapes(n, d_model, d_k, d_v):
    return {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v)}


def output_shape(n_q, n_k, d_v):
    return (n_q, d_v)


def param_count(d_model, d_k, d_v):
    return 0
