#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which allocator holds a process's anonymous memory, from /proc/PID/smaps (packaging/soak.sh).

Prints one CSV fragment, `big_kib,glibc_arenas_kib,glibc_heap_kib,other_kib`: the anonymous resident memory
of mappings of 256 MiB or more (mimalloc's arenas: it reserves them 1 GiB at a time), of glibc's arenas for
threads other than the main one (mappings of at most 64 MiB that start on a 64 MiB boundary, which is how
glibc places them), of glibc's main heap (`[heap]`), and of everything else (stacks, library data, small
mappings, and the large blocks glibc maps on their own). A process that is gone prints nothing and exits with 1.
"""

import re
import sys

MIB = 1 << 20
HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$")


def split(lines):
    """The anonymous KiB per kind, from the lines of an smaps file."""
    kinds = {"big": 0, "glibc_arenas": 0, "glibc_heap": 0, "other": 0}
    kind = "other"
    for line in lines:
        m = HEADER.match(line)
        if m:
            start, end, name = int(m[1], 16), int(m[2], 16), m[3].strip()
            size = end - start
            if name == "[heap]":
                kind = "glibc_heap"
            elif name:
                kind = "other"
            elif size >= 256 * MIB:
                kind = "big"
            elif start % (64 * MIB) == 0 and size <= 64 * MIB:
                kind = "glibc_arenas"
            else:
                kind = "other"
        elif line.startswith("Anonymous:"):
            kinds[kind] += int(line.split()[1])
    return kinds


def main():
    try:
        with open(f"/proc/{sys.argv[1]}/smaps") as f:
            kinds = split(f)
    except OSError:
        sys.exit(1)
    print(",".join(str(kinds[k]) for k in ("big", "glibc_arenas", "glibc_heap", "other")))


if __name__ == "__main__":
    main()
