# ruff: noqa  (a learner's file, graded as text; never imported by the tests)
# Prints what /proc shows of the sandbox: its own and pid 1's command line, environment, memory maps, mounts,
# open files and links, every process's command line, and the interpreter's idea of where it lives. The test
# looks for host paths (the repository, the virtual environment, the interpreter's home) and qkv's variables.
import os
import sys


def show(path):
    try:
        with open(path, "rb") as file:
            text = file.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError as error:
        text = f"unreadable ({error.errno})"
    if path.endswith("maps"):  # only the mapped files' names, once each
        text = " ".join(sorted({line.split()[-1] for line in text.splitlines() if "/" in line}))
    print(f"{path}: {text}")


def links(directory):
    try:
        names = os.listdir(directory)
    except OSError as error:
        return f"unreadable ({error.errno})"
    found = []
    for name in names:
        try:
            found.append(os.readlink(os.path.join(directory, name)))
        except OSError:
            pass
    return " ".join(found)


for pid in ("self", "1"):
    for name in ("cmdline", "environ", "maps", "mountinfo", "mounts", "status"):
        show(f"/proc/{pid}/{name}")
    for name in ("exe", "cwd", "root"):
        try:
            print(f"/proc/{pid}/{name}: {os.readlink(f'/proc/{pid}/{name}')}")
        except OSError as error:
            print(f"/proc/{pid}/{name}: unreadable ({error.errno})")
    print(f"/proc/{pid}/fd: {links(f'/proc/{pid}/fd')}")
for pid in filter(str.isdigit, os.listdir("/proc")):
    show(f"/proc/{pid}/cmdline")
print("sys.executable:", sys.executable, "sys.prefix:", sys.prefix, "sys.base_prefix:", sys.base_prefix)
print("sys.path:", sys.path)
print("environ:", dict(os.environ))
