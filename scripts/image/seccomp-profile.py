"""Writes podman's default seccomp profile with sethostname and setdomainname allowed (argument 1: the
installed profile, argument 2: the file to write).

bubblewrap gives each qkv sandbox a UTS namespace of its own and names it ``sandbox``; podman's default
profile allows those two calls only to a container holding CAP_SYS_ADMIN, which the qkv container should
not hold. Everything else in the default profile stays as it is.
"""

import json
import sys

NAMES = {"sethostname", "setdomainname"}
source, target = sys.argv[1], sys.argv[2]
with open(source) as file:
    profile = json.load(file)
rules = []
for rule in profile["syscalls"]:
    kept = [name for name in rule["names"] if name not in NAMES]
    if kept:
        rules.append({**rule, "names": kept})
rules.append({"names": sorted(NAMES), "action": "SCMP_ACT_ALLOW"})
profile["syscalls"] = rules
with open(target, "w") as file:
    json.dump(profile, file, indent=1)
