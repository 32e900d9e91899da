# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Calls what the red-team found allowed, and what no lesson needs, straight through libc's syscall():
# io_uring (which makes sockets without socket()), keyrings, secret memory, ptrace of the sandbox's pid 1,
# bpf, userfaultfd, perf events. Each call's arguments are chosen so that, were the call let through, the
# kernel would answer something other than EPERM (EFAULT, EINVAL, a key id, a descriptor: seen with an
# allow-everything filter). It prints "NAME: errno N" or
# "NAME: allowed N" for each, then a vsock socket and bind, and defines the functions (param_count wrong),
# so that the learner gets an ordinary verdict.
import ctypes
import platform
import socket

NUMBERS = {
    "x86_64": {
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "keyctl": 250,
        "add_key": 248,
        "memfd_secret": 447,
        "memfd_create": 319,
        "ptrace": 101,
        "bpf": 321,
        "userfaultfd": 323,
        "perf_event_open": 298,
        "process_vm_readv": 310,
        "kexec_load": 246,
        "mount": 165,
        "unshare": 272,
        "pidfd_getfd": 438,
    },
    "aarch64": {
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "keyctl": 219,
        "add_key": 217,
        "memfd_secret": 447,
        "memfd_create": 279,
        "ptrace": 117,
        "bpf": 280,
        "userfaultfd": 282,
        "perf_event_open": 241,
        "process_vm_readv": 270,
        "kexec_load": 104,
        "mount": 40,
        "unshare": 97,
        "pidfd_getfd": 438,
    },
}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def call(name, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(NUMBERS[name]), *(ctypes.c_long(arg) for arg in args))
    if result == -1:
        print(f"{name}: errno {ctypes.get_errno()}")
    else:
        print(f"{name}: allowed {result}")


call("io_uring_setup", 1, 0)  # a NULL params pointer: EFAULT if the call were let through
call("io_uring_enter", 0, 1, 0, 0, 0, 0)
call("io_uring_register", 0, 0, 0, 0)
call("keyctl", 0, -3, 0)  # KEYCTL_GET_KEYRING_ID of the session keyring: its id
call("add_key", 0, 0, 0, 0, -3)
call("memfd_secret", 0)
call("memfd_create", 0, 0)
call("ptrace", 16, 1, 0, 0)  # PTRACE_ATTACH to the sandbox's pid 1
call("bpf", 9999, 0, 0)  # no such command: EINVAL
call("userfaultfd", 1)  # UFFD_USER_MODE_ONLY, which an unprivileged process may ask for
call("perf_event_open", 0, 0, -1, -1, 0)  # a NULL attribute pointer: EFAULT
call("process_vm_readv", 1, 0, 0, 0, 0, 0)
call("kexec_load", 0, 0, 0, 0)
call("mount", 0, 0, 0, 0, 0)
call("unshare", 0)
call("pidfd_getfd", -1, 0, 0)
try:
    vsock = socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK
    vsock.bind((0xFFFFFFFF, 47123))  # VMADDR_CID_ANY: a port in the host's space
    print("vsock: bound")
except OSError as error:
    print(f"vsock: errno {error.errno}")
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
