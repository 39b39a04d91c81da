"""The memory a run's output may take: the machine's, within its cgroups' limits (issue #13, item 11).

Each test builds the files Linux would show -- ``/proc/meminfo``,
``/proc/self/cgroup`` and ``/sys/fs/cgroup`` -- under a temporary root.
"""

import pytest

from odekit.memory import UNKNOWN, available_memory

GiB = 2 ** 30
HOST = 60 * GiB           # MemAvailable of the host: what the machine says
UNLIMITED_V1 = 9223372036854771712      # a v1 group without a limit says this


def tree(root, files):
    """Write ``{path: text}`` under ``root``; the root, for available_memory."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def meminfo(available=HOST):
    return {"proc/meminfo": f"MemTotal:       67108864 kB\nMemAvailable:   {available // 1024} kB\n"}


def v2(path, limit, usage, inactive=0):
    folder = f"sys/fs/cgroup{path}".rstrip("/")
    return {f"{folder}/memory.max": f"{limit}\n", f"{folder}/memory.current": f"{usage}\n",
            f"{folder}/memory.stat": f"anon {usage - inactive}\ninactive_file {inactive}\nactive_file 0\n"}


def v1(path, limit, usage, inactive=0):
    folder = f"sys/fs/cgroup/memory{path}".rstrip("/")
    return {f"{folder}/memory.limit_in_bytes": f"{limit}\n", f"{folder}/memory.usage_in_bytes": f"{usage}\n",
            f"{folder}/memory.stat": f"inactive_file 0\ntotal_inactive_file {inactive}\n"}


def test_without_cgroup_limits_it_is_the_machines_memavailable(tmp_path):
    assert available_memory(tree(tmp_path, meminfo())) == HOST
    assert available_memory(tree(tmp_path, {**v2("", "max", GiB), "proc/self/cgroup": "0::/\n"})) == HOST


def test_a_container_limit_binds_below_the_hosts_free_memory(tmp_path):
    # 2 GiB memory.max on a 60 GiB host, 0.5 GiB used of which 0.125 GiB is page cache the kernel reclaims
    root = tree(tmp_path, {**meminfo(), **v2("", 2 * GiB, GiB // 2, GiB // 8), "proc/self/cgroup": "0::/\n"})
    assert available_memory(root) == 2 * GiB - (GiB // 2 - GiB // 8)


def test_the_tightest_group_on_the_path_binds(tmp_path):
    # the process's own group allows 8 GiB, its parent slice 3 GiB for all its children
    files = {**meminfo(), **v2("/user.slice", 3 * GiB, GiB), **v2("/user.slice/app.scope", 8 * GiB, GiB // 4),
             **v2("", "max", 5 * GiB), "proc/self/cgroup": "0::/user.slice/app.scope\n"}
    assert available_memory(tree(tmp_path, files)) == 2 * GiB


def test_cgroup_v1_limits_and_a_group_path_not_mounted_in_the_container(tmp_path):
    # v1, as Docker without a cgroup namespace shows it: /proc names the host's path, the mount is the container's
    files = {**meminfo(), **v1("", 4 * GiB, 3 * GiB, GiB), "proc/self/cgroup":
             "9:name=systemd:/docker/abc\n4:memory,hugetlb:/docker/abc\n0::/docker/abc\n"}
    assert available_memory(tree(tmp_path, files)) == 2 * GiB
    unlimited = {**meminfo(), **v1("/docker/abc", UNLIMITED_V1, GiB), "proc/self/cgroup": "4:memory:/docker/abc\n"}
    assert available_memory(tree(tmp_path / "unlimited", unlimited)) == HOST


def test_a_group_over_its_limit_leaves_nothing(tmp_path):
    files = {**meminfo(), **v2("", GiB, GiB + 4096), "proc/self/cgroup": "0::/\n"}
    assert available_memory(tree(tmp_path, files)) == 0


@pytest.mark.parametrize("files", [{}, {"proc/meminfo": "MemTotal: 1 kB\n", "proc/self/cgroup": "garbage"},
                                   {"sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/memory.current": "x\n"}])
def test_files_missing_or_unreadable_tell_nothing(tmp_path, files):
    assert available_memory(tree(tmp_path, files)) == UNKNOWN


def test_this_machine_answers_a_positive_number_of_bytes():
    free = available_memory()
    assert isinstance(free, int) and 0 < free <= UNKNOWN
