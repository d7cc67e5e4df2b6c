#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""fake_qmp.py SOCKET MODE - a QMP server that stands in for a source QEMU
for `rdmig recv --qemu --source-qmp` on a host without QEMU: it greets,
takes qmp_capabilities and answers one human-monitor-command, then exits.
MODE: good (an `info ramblock` table of three blocks, after an event),
error (QMP error), garbage (a table rdmig must refuse)."""
import json
import os
import socket
import sys

TABLE = (
    "              Block Name    PSize              Offset               Used              Total\r\n"
    "                  pc.ram    4 KiB  0x0000000000000000 0x0000000004000000 0x0000000004000000\r\n"
    "                vga.vram    4 KiB  0x0000000004080000 0x0000000001000000 0x0000000001000000\r\n"
    "    /rom@etc/acpi/tables    4 KiB  0x0000000005100000 0x0000000000020000 0x0000000000200000\r\n"
)


def main(path, mode):
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(30)
    conn, _ = srv.accept()
    f = conn.makefile("rwb")

    def send(obj):
        f.write(json.dumps(obj).encode() + b"\r\n")
        f.flush()

    send({"QMP": {"version": {"qemu": {"major": 10, "minor": 2, "micro": 2}}, "capabilities": []}})
    for line in f:
        req = json.loads(line)
        cmd = req.get("execute")
        if cmd == "qmp_capabilities":
            send({"return": {}})
        elif mode == "error":
            send({"error": {"class": "GenericError", "desc": "no monitor here"}})
            return
        else:
            send({"event": "RESUME", "timestamp": {"seconds": 0, "microseconds": 0}})
            text = TABLE if mode == "good" else "pc.ram 4 KiB banana\r\n"
            send({"return": text})
            return


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
