#!/usr/bin/python3
"""qmp.py - a small QMP client for the interop tests (stdlib only).

usage: qmp.py SOCKET hmp 'COMMAND LINE'      print a human-monitor command's output
       qmp.py SOCKET caps NAME=on|off ...    migrate-set-capabilities
       qmp.py SOCKET migrate URI [TIMEOUT]   migrate and wait until it is over; prints
                                             a JSON summary, exit 0 only if completed
       qmp.py SOCKET incoming [TIMEOUT]      wait until an incoming migration is over;
                                             prints a JSON summary, exit 0 only if completed
       qmp.py SOCKET active [TIMEOUT]        wait until a migration (either side) is active;
                                             prints its status, exit 0 only if active
       qmp.py SOCKET status                  print the run state
       qmp.py SOCKET EXECUTE [JSON-ARGS]     any command; prints its "return"

Every QMP error ends the script with status 2 and the error on stderr.
"""
import json
import socket
import sys
import time


class QMP:
    def __init__(self, path, wait=60.0):
        deadline = time.monotonic() + wait
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self.sock.connect(path)
                break
            except OSError:
                self.sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.file = self.sock.makefile("rw")
        self.greeting = json.loads(self.file.readline())
        self.events = []
        self.execute("qmp_capabilities")

    def execute(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.file.write(json.dumps(msg) + "\n")
        self.file.flush()
        while True:
            line = self.file.readline()
            if not line:
                raise EOFError("QMP connection closed")
            reply = json.loads(line)
            if "event" in reply:
                self.events.append(reply)
                continue
            if "error" in reply:
                sys.stderr.write("qmp: %s: %s\n" % (name, reply["error"].get("desc")))
                sys.exit(2)
            return reply.get("return")


def wait_until_over(q, t0, timeout, period):
    """Poll query-migrate until the migration ended or timeout seconds
    passed since t0; its last answer."""
    info = {}
    while time.monotonic() - t0 < timeout:
        info = q.execute("query-migrate")
        if info.get("status") in ("completed", "failed", "cancelled"):
            break
        time.sleep(period)
    return info


def migrate(q, uri, timeout):
    t0 = time.monotonic()
    q.execute("migrate", uri=uri)
    info = wait_until_over(q, t0, timeout, 0.02)
    out = {"status": info.get("status"), "wall_seconds": round(time.monotonic() - t0, 3)}
    for key in ("total-time", "downtime", "setup-time", "error-desc"):
        if key in info:
            out[key] = info[key]
    ram = info.get("ram", {})
    out["ram"] = {k: ram.get(k) for k in ("transferred", "total", "normal", "duplicate",
                                           "dirty-sync-count", "mbps")}
    print(json.dumps(out, sort_keys=True))
    return 0 if out["status"] == "completed" else 1


def incoming(q, timeout):
    """On a destination: poll query-migrate until the incoming migration
    ended (an incoming side reports no times, only its status)."""
    t0 = time.monotonic()
    info = wait_until_over(q, t0, timeout, 0.05)
    out = {"status": info.get("status"), "waited_seconds": round(time.monotonic() - t0, 3)}
    if "error-desc" in info:
        out["error-desc"] = info["error-desc"]
    print(json.dumps(out, sort_keys=True))
    return 0 if out["status"] == "completed" else 1


def active(q, timeout):
    """Poll query-migrate until the migration is under way (or over)."""
    t0 = time.monotonic()
    status = None
    while time.monotonic() - t0 < timeout:
        status = q.execute("query-migrate").get("status")
        if status in ("active", "completed", "failed", "cancelled"):
            break
        time.sleep(0.02)
    print(status)
    return 0 if status == "active" else 1


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    q = QMP(argv[1])
    cmd = argv[2]
    if cmd == "hmp":
        sys.stdout.write(q.execute("human-monitor-command", **{"command-line": argv[3]}))
        return 0
    if cmd == "caps":
        caps = [{"capability": c.split("=")[0], "state": c.split("=")[1] == "on"}
                for c in argv[3:]]
        q.execute("migrate-set-capabilities", capabilities=caps)
        return 0
    if cmd == "migrate":
        return migrate(q, argv[3], float(argv[4]) if len(argv) > 4 else 300.0)
    if cmd == "incoming":
        return incoming(q, float(argv[3]) if len(argv) > 3 else 120.0)
    if cmd == "active":
        return active(q, float(argv[3]) if len(argv) > 3 else 120.0)
    if cmd == "status":
        print(q.execute("query-status")["status"])
        return 0
    args = json.loads(argv[3]) if len(argv) > 3 else {}
    print(json.dumps(q.execute(cmd, **args)))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, EOFError) as e:
        sys.stderr.write("qmp: %s: %s\n" % (sys.argv[2] if len(sys.argv) > 2 else "?", e))
        sys.exit(2)
