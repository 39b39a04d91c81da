"""How much memory new allocations may take: the machine's free memory, within the process's cgroup limits.

A container sees the host's ``/proc/meminfo``: with a 2 GiB limit on a
64 GiB host, MemAvailable says tens of GiB that the kernel's OOM killer will
not allow.  The limits are those of the process's control groups, read from
``/sys/fs/cgroup``: cgroup v2's ``memory.max`` and v1's
``memory.limit_in_bytes``, less what the group uses, for the group and every
group above it (a parent's limit binds its children too).
"""

import os
import pathlib

UNKNOWN = 2 ** 62        # what available_memory() says when nothing tells: no limit known


def available_memory(root="/"):
    """Bytes of memory available to new allocations, the least of what the machine and its cgroups allow.

    Linux's MemAvailable, or else the physical memory; then, for each
    control group of this process that limits memory (v2 or v1), its limit
    less its usage.  A group's usage counts its page cache, which the kernel
    reclaims before it refuses memory: the inactive file pages of its
    ``memory.stat`` are taken off, as ``docker stats`` and the kubelet do.

    Parameters
    ----------
    root : str or path
        Where ``proc`` and ``sys`` are found: ``"/"``, or a copy of those
        files (for tests).

    Returns
    -------
    int
        Bytes, at least 0; :data:`UNKNOWN` (``2**62``) when nothing says.
    """
    root = pathlib.Path(root)
    machine = _meminfo_available(root / "proc/meminfo")
    if machine is None:
        machine = _physical_memory() if root == pathlib.Path("/") else UNKNOWN
    return max(0, min([machine, *_cgroup_room(root)]))


def _meminfo_available(path):
    try:
        with open(path) as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _physical_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return UNKNOWN


# the files of a memory cgroup: (limit, usage, the memory.stat key of its inactive page cache)
V2 = ("memory.max", "memory.current", "inactive_file")
V1 = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")


def _cgroup_room(root):
    """Limit less usage of each memory cgroup of this process, and of each group above it, that has a limit."""
    for mount, path, files in _cgroups(root):
        group = mount / path.lstrip("/")
        for folder in [group, *group.parents]:
            room = _room(folder, files)
            if room is not None:
                yield room
            if folder == mount:
                break


def _cgroups(root):
    """``(mount, path, files)`` of this process's memory cgroups, read from ``/proc/self/cgroup``.

    A v2 line is ``0::/path`` (its mount is ``/sys/fs/cgroup``, or
    ``/sys/fs/cgroup/unified`` beside v1); a v1 line ``N:memory:/path``, its
    controllers comma-separated.  A group that is not found is looked for
    above it, up to the mount's own group: inside a container, its own.
    """
    sys_cgroup = root / "sys/fs/cgroup"
    try:
        lines = (root / "proc/self/cgroup").read_text().splitlines()
    except OSError:
        lines = ["0::/", "1:memory:/"]
    found = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            found += [(sys_cgroup, path, V2), (sys_cgroup / "unified", path, V2)]
        elif "memory" in controllers.split(","):
            found.append((sys_cgroup / "memory", path, V1))
    return found


def _room(folder, files):
    """The group's limit less the memory it uses (its page cache not counted); None without a limit."""
    limit_file, usage_file, inactive = files
    try:
        limit = int((folder / limit_file).read_text())
        usage = int((folder / usage_file).read_text())
    except (OSError, ValueError):       # no such group or file, or "max": no limit here
        return None
    return limit - max(0, usage - _stat(folder / "memory.stat", inactive))


def _stat(path, key):
    """One value of a cgroup's ``memory.stat``, 0 if not there."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0
