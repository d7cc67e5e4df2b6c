# SPDX-License-Identifier: BSD-2-Clause
"""qemu_budget.py - a QEMU -> QEMU migration's time budget, from the trace
of both QEMUs (bench/qemu-trace-events, -msg timestamp=on: one line per
event, "2026-12-03T17:41:30.480301Z event args") and the bench script's own
marks (bench/run-in-guest.sh: "times", seconds of the same wall clock).

The phases line up with rdmig send's and recv's budgets (rdmig-json(7)):

  source       start     exec -> QMP ready (the script's marks)
               connect   migrate -> the RDMA connection (rdma_cm, the
                         capability exchange)
               setup     -> the state active: RAM blocks exchanged (and
                         registered whole, with pin-all)
               register_wait  between each REGISTER request and its
                         result (qemu_rdma_write_one_sendreg ..
                         qemu_rdma_write_one_recvregres)
               writes    the rest of the iterations, to the completion
               commit    the completion: the state device, the last RAM,
                         the devices' state, to completed
               teardown  -> the source's last event (cleanup, close)
               exit      quit -> the process gone (the script's marks)
  destination  start, then idle (listening -> the connection request),
               connect (-> accepted), setup (-> the RAM_BLOCKS request),
               register (with pin-all: the RAM_BLOCKS request handled, i.e.
               all of RAM registered, to the next wait for a command;
               without: each REGISTER request handled, _register_loop ..
               _register_rkey, and the RAM_BLOCKS handling is setup's),
               transfer (-> the last REGISTER_FINISHED),
               commit (-> the incoming coroutine's end: device state),
               teardown (-> its last event), exit.

What is not QEMU's is left out: the script's QMP commands between QMP
ready and migrate (parameters, capabilities), and its polling between
completed and quit.  "e2e" is then what the bench's e2e_seconds is for the
rdmig runs (the sender's exec to both processes gone, the destination
started before): the source's start, the migration (migrate -> the last
event of either side) and the quit (-> both gone).
"""
import datetime
import os
import re

LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z (\S+)(.*)$")


def parse(path):
    """[(seconds since the epoch, event, args)] of one trace file."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                m = LINE.match(line.strip())
                if not m:
                    continue
                t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
                t = t.replace(tzinfo=datetime.timezone.utc).timestamp()
                out.append((t, m.group(2), m.group(3).strip()))
    except OSError:
        return []
    return out


def first(ev, name, args=None, after=0.0):
    for t, e, a in ev:
        if e == name and t >= after and (args is None or args in a):
            return t
    return None


def last(ev, name):
    ts = [t for t, e, _ in ev if e == name]
    return ts[-1] if ts else None


def pairs(ev, start, end):
    """Seconds between each start event and the end event after it."""
    total, t0 = 0.0, None
    for t, e, _ in ev:
        if e == start:
            t0 = t
        elif e == end and t0 is not None:
            total += t - t0
            t0 = None
    return total


def source_budget(ev, times):
    t0 = ev[0][0] if ev else None
    conn = first(ev, "rdma_connect_outgoing_after_rdma_connect")
    active = first(ev, "migrate_set_state", "new state active")
    device = first(ev, "migrate_set_state", "new state device") or \
        first(ev, "ram_save_complete")
    done = first(ev, "migrate_set_state", "new state completed")
    if None in (t0, conn, active, device, done):
        return None
    reg = pairs([x for x in ev if active <= x[0] <= device],
                "qemu_rdma_write_one_sendreg", "qemu_rdma_write_one_recvregres")
    b = {
        "start": times["src_ready"] - times["src_exec"],
        "connect": conn - t0,
        "setup": active - conn,
        "register_wait": reg,
        "writes": device - active - reg,
        "commit": done - device,
        "teardown": ev[-1][0] - done,
    }
    return with_exit_and_total(b, times, "src_exit")


def with_exit_and_total(b, times, exit_mark):
    """A side's budget b ends with its quit -> gone (when the script saw the
    process end) and the sum of its phases."""
    if times.get(exit_mark):
        b["exit"] = times[exit_mark] - times["quit"]
    b["total"] = sum(b.values())
    return b


def dest_budget(ev, times, pin_all):
    listening = first(ev, "rdma_connect_incoming_after_rdma_listen")
    request = first(ev, "qemu_rdma_accept_incoming_migration")
    accepted = first(ev, "qemu_rdma_accept_incoming_migration_accepted")
    blocks = first(ev, "rdma_registration_handle_ram_blocks")
    finished = last(ev, "rdma_registration_handle_finished")
    co_end = first(ev, "process_incoming_migration_co_end")
    if None in (request, accepted, blocks, finished, co_end):
        return None
    replied = first(ev, "rdma_registration_handle_wait", after=blocks) or blocks
    handled = pairs(ev, "rdma_registration_handle_register_loop",
                    "rdma_registration_handle_register_rkey")
    b = {
        "start": times["dst_ready"] - times["dst_exec"],
        "connect": accepted - request,
        "setup": blocks - accepted + (0 if pin_all else replied - blocks),
        "register": handled + (replied - blocks if pin_all else 0),
        "transfer": finished - replied - handled,
        "commit": co_end - finished,
        "teardown": ev[-1][0] - co_end,
    }
    with_exit_and_total(b, times, "dst_exit")
    # -incoming defer listens at migrate-incoming, after QMP ready
    b["idle"] = request - (listening if listening else times["dst_ready"])
    return b


def before_quit(ev, times):
    """The events before the quit command: what the migration did, not
    the process's exit (the exit phase)."""
    return [x for x in ev if x[0] <= times["quit"]]


def budget(row, outdir):
    """{"send": ..., "recv": ..., "e2e": s} of a bulk.json QEMU row, or None
    when it was not traced or its trace lacks an event."""
    times, traces = row.get("times"), row.get("traces")
    if not times or not traces or len(traces) != 2:
        return None
    need = ("src_exec", "src_ready", "dst_exec", "dst_ready", "quit")
    if any(times.get(k) is None for k in need):
        return None
    src = before_quit(parse(os.path.join(outdir, traces[0])), times)
    dst = before_quit(parse(os.path.join(outdir, traces[1])), times)
    if not src or not dst:
        return None
    s = source_budget(src, times)
    d = dest_budget(dst, times, row.get("registration") == "pin-all")
    if s is None or d is None:
        return None
    exits = [t for t in (times.get("src_exit"), times.get("dst_exit")) if t]
    e2e = (times["src_ready"] - times["src_exec"]) + \
        (max(src[-1][0], dst[-1][0]) - src[0][0]) + \
        ((max(exits) - times["quit"]) if exits else 0.0)
    return {"send": s, "recv": d, "e2e": e2e}
