#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_fsync_order.py - read `strace -f` of an `rdmig recv` and check
that it made its outputs durable in order: each output's temporary file
fsync'ed before linkat gives it its name, then the output directory
fsync'ed after the last name, all before the process exits.

    check_fsync_order.py TRACE OUTDIR NAME...

Exit 0 when that holds for every NAME, else 1 with what is missing.
"""
import re
import sys

CALL = re.compile(r'^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)')
UNFINISHED = re.compile(r'^(\d+)\s+(\w+)\((.*) <unfinished \.\.\.>$')
RESUMED = re.compile(r'^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+=\s+(-?\d+)')


def calls(trace):
    """Whole calls (pid, name, args, ret), split ones joined, in the
    order they returned; exit_group as ret None."""
    pending = {}
    for line in open(trace, errors='replace'):
        line = line.rstrip('\n')
        m = CALL.match(line)
        if m:
            yield m.group(1), m.group(2), m.group(3), int(m.group(4))
            continue
        m = UNFINISHED.match(line)
        if m:
            pending[m.group(1)] = (m.group(2), m.group(3))
            continue
        m = RESUMED.match(line)
        if m and m.group(1) in pending:
            name, args = pending.pop(m.group(1))
            yield m.group(1), name, args + m.group(3), int(m.group(4))
            continue
        if 'exit_group(' in line:
            yield None, 'exit_group', '', None


def main():
    trace, outdir, names = sys.argv[1], sys.argv[2].rstrip('/'), sys.argv[3:]
    fd_path = {}          # (pid-agnostic) fd -> what openat opened
    synced_tmp = set()    # temporary names fsync'ed so far
    linked = {}           # final name -> step of its linkat
    dir_synced_after = -1
    problems = []
    exit_step = None
    for step, (_pid, call, args, ret) in enumerate(calls(trace)):
        if call == 'exit_group':
            if exit_step is None:
                exit_step = step
        elif call == 'openat' and ret >= 0:
            path = re.search(r'"([^"]*)"', args)
            fd_path[ret] = path.group(1) if path else '?'
        elif call in ('fsync', 'fdatasync') and ret == 0:
            fd = int(re.match(r'\s*(\d+)', args).group(1))
            path = fd_path.get(fd, '')
            synced_tmp.add(path.rsplit('/', 1)[-1])
            if path.rstrip('/') == outdir:
                dir_synced_after = step
        elif call == 'linkat' and ret == 0:
            quoted = re.findall(r'"([^"]*)"', args)
            if len(quoted) == 2:
                tmp, final = quoted
                if tmp not in synced_tmp:
                    problems.append('%s got its name before %s was fsync\'ed' % (final, tmp))
                linked[final] = step
    for name in names:
        if name not in linked:
            problems.append('%s never got its name by linkat' % name)
    if linked:
        last = max(linked.values())
        if dir_synced_after < last:
            problems.append('the directory was not fsync\'ed after the last name')
        if exit_step is not None and dir_synced_after > exit_step:
            problems.append('the directory was fsync\'ed only after exit')
    for p in problems:
        print('# ' + p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
