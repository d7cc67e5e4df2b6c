#!/usr/bin/python3
"""report.py OUT - read what bench/run-in-guest.sh wrote into OUT, print the
results in perftest-like columns with the ratios the goals are about, and
write OUT/bench.json (everything, plus the ratios and goal verdicts) and the
data files bench/plot.sh draws (OUT/plot/*.dat).  Python 3 standard library
only.

Footprint models (send queue bytes for max_send_wr 512, max_send_sge 2, as
rdmig creates its QP), from the providers' sources in rdma-core:
  mlx5 (legacy RC QP):  WQE = align64(max(192 + 16 sge, 192 + align16(4 + inline)))
                        queue = roundup_pow2(max_send_wr * WQE)
  mlx4 (RC):            mlx4_calc_sq_wqe_size(): WQE = pow2 >= 64 of
                        16 (ctrl) + max(48, 16 (raddr) + 16 * max(sge,
                        align16(inline + 4 * segs) / 16)), segs = inline
                        segments that do not cross 64 B; queue = WQE *
                        roundup_pow2(max_send_wr + 2048 / WQE + 1)
  irdma (gen 2, E810):  irdma_get_wqe_shift(sge + 1, inline): 64 B WQE up to
                        39 B inline, 128 B up to 101 B, nothing above;
                        queue = 32 B * roundup_pow2((max_send_wr << shift) + 258)
"""
import glob
import json
import os
import statistics
import sys

SIZES = (0, 16, 32, 40, 64, 80, 128, 256, 512)
WR, SGE = 512, 2
QEMU_CONTROL_PINNED = 3 * 512 * 1024  # three 512 KiB registered control buffers
FIXED_CLASSES = ("16B_header_only", "32B", "40B")  # what inline covers


def pow2(x):
    p = 1
    while p < x:
        p <<= 1
    return p


def align(x, a):
    return (x + a - 1) // a * a


def mlx5_sq_bytes(inline):
    wqe = align(max(192 + 16 * SGE, 192 + align(4 + inline, 16)), 64)
    return pow2(WR * wqe)


def mlx4_sq_bytes(inline):
    if inline > 1024:
        return None
    segs = (inline + 32 + 64 - 4 - 1) // (64 - 4)  # num_inline_segs() for RC
    max_sge = max(align(inline + segs * 4, 16) // 16, SGE)
    size = max(max_sge * 16 + 16, 48)  # + raddr; atomic + raddr + data at least
    size = max(size, 32) + 16  # bind segment at least; + ctrl
    wqe = max(64, pow2(size))
    return wqe * pow2(WR + 2048 // wqe + 1)


def irdma_sq_bytes(inline):
    sge = SGE + 1  # gen 2 counts one more fragment
    if inline > 101:
        return None  # max_hw_inline: creation fails
    if sge > 1 or inline > 8:
        shift = 1 if sge < 4 and inline <= 39 else 2 if sge < 8 else 3
    else:
        shift = 0
    return align(32 * pow2((WR << shift) + 258), 4096)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("report: %s: %s\n" % (path, e))
        return None


def ratio(a, b):
    return round(a / b, 4) if a and b else None


def verdict(value, limit, at_most=True):
    if value is None:
        return "no data"
    ok = value <= limit if at_most else value >= limit
    return "met" if ok else "missed"


# ------------------------------------------------------------------ parts --

def footprint_part(out, res):
    probe = (load(os.path.join(out, "probe.json")) or {}).get("devices", [])
    rows = []
    for n in SIZES:
        row = {"requested": n, "mlx5_model": mlx5_sq_bytes(n), "mlx4_model": mlx4_sq_bytes(n),
               "irdma_model": irdma_sq_bytes(n)}
        for dev in probe:
            r = next((r for r in dev["rows"] if r["requested"] == n), None)
            name = dev["device"].rstrip("0123456789")
            row[name + "_queue_bytes"] = r["queue_bytes"] if r and r["ok"] else None
            row[name + "_granted"] = r["written_back"] if r and r["ok"] else None
        rows.append(row)
    conns = {}
    for path in sorted(glob.glob(os.path.join(out, "footprint_*.json"))):
        d = load(path)
        if d:
            conns[d["device"]] = d["connections"]
    res["footprint"] = {"max_send_wr": WR, "max_send_sge": SGE, "rows": rows,
                        "ladder": [{"device": d["device"], **d["ladder"]} for d in probe],
                        "pinned_per_connection": conns,
                        "qemu_control_pinned_bytes": QEMU_CONTROL_PINNED}
    print("\n## Footprint: send queue bytes per requested inline size "
          "(rxe/siw measured: send + receive queue mappings; others: model)")
    hdr = ("inline", "rxe granted", "rxe bytes", "siw granted", "siw bytes", "mlx5 model",
           "mlx4 model", "irdma model")
    print(" ".join("%12s" % h for h in hdr))
    for r in rows:
        vals = (r["requested"], r.get("rxe_granted"), r.get("rxe_queue_bytes"),
                r.get("siw_granted"), r.get("siw_queue_bytes"), r["mlx5_model"],
                r["mlx4_model"], r["irdma_model"])
        print(" ".join("%12s" % ("-" if v is None else v) for v in vals))
    print("\n## Pinned memory per connection (VmPin; QEMU: %d bytes of control buffers)"
          % QEMU_CONTROL_PINNED)
    for dev, cs in conns.items():
        for c in cs:
            print("%-6s inline %-4s granted %3d: pinned %8d bytes (%.2fx QEMU), queues mapped %d"
                  % (dev, c["inline"], c["granted"], c["pinned_bytes"],
                     c["pinned_bytes"] / QEMU_CONTROL_PINNED, c["queue_mapped_bytes"]))


def latency_part(out, res):
    res["latency"] = {}
    print("\n## Control-plane latency (us; auto = inline, off = copy; interleaved A B A B)")
    print("(p50 a/o: ratio of the medians; rounds: median [quartiles] of the ratios of the\n"
          " medians of each round, a round being one block of operations per mode)")
    print("%-6s %-24s %7s %6s %9s %9s %9s %9s %8s %8s  %s" % (
        "device", "class", "#bytes", "inline", "t_typical", "t_avg", "99%", "99.9%",
        "p50 a/o", "avg a/o", "rounds"))
    for path in sorted(glob.glob(os.path.join(out, "latency_*.json"))):
        d = load(path)
        if not d:
            continue
        dev = d["device"]
        res["latency"][dev] = {k: v for k, v in d.items() if k != "classes"}
        res["latency"][dev]["classes"] = []
        for c in d["classes"]:
            slim = {k: v for k, v in c.items() if k not in ("auto", "off")}
            for m in ("auto", "off"):
                slim[m] = {k: v for k, v in c[m].items() if k != "sorted_every_10th"}
            rr = sorted(c.get("round_ratios_p50") or [])
            if rr:
                slim["round_ratio_p50_median"] = rr[len(rr) // 2]
                slim["round_ratio_p50_q1"] = rr[len(rr) // 4]
                slim["round_ratio_p50_q3"] = rr[len(rr) * 3 // 4]
            res["latency"][dev]["classes"].append(slim)
            for m in ("auto", "off"):
                s = c[m]
                tail = ("%8.3f %8.3f" % (c["ratio_p50"], c["ratio_mean"])) if m == "off" else ""
                if m == "off" and rr:
                    tail += "  %.3f [%.3f..%.3f]" % (rr[len(rr) // 2], rr[len(rr) // 4],
                                                     rr[len(rr) * 3 // 4])
                print("%-6s %-24s %7d %6s %9.1f %9.1f %9.1f %9.1f %s" % (
                    dev, c["class"], c["bytes"], m, s["p50"], s["mean"], s["p99"], s["p999"],
                    tail))
        write_cdf(out, dev, d)


def write_cdf(out, dev, d):
    os.makedirs(os.path.join(out, "plot"), exist_ok=True)
    for c in d["classes"]:
        for m in ("auto", "off"):
            v = c[m]["sorted_every_10th"]
            with open(os.path.join(out, "plot", "cdf_%s_%s_%s.dat" % (dev, c["class"], m)),
                      "w") as f:
                for i, x in enumerate(v):
                    f.write("%s %.5f\n" % (x, (i + 1) / len(v)))


def cost_part(out, res):
    d = load(os.path.join(out, "cost.json"))
    if not d:
        return
    by = {}
    for r in d["cost"]:
        by[(r["device"], r["bytes"], r["inline"])] = r
    rows = []
    print("\n## Sender instructions per control message (callgrind, user space)\n"
          "whole: median per message of everything the sender runs (take the READY credit,\n"
          "post, reap completions; a round trip also waits for its reply); min: the fewest\n"
          "(for a round trip: the reply was there at the first look); post: post_control")
    print("%-6s %7s %10s %10s %7s %10s %10s %7s %10s %10s %7s" % (
        "device", "#bytes", "whole auto", "whole 0", "ratio", "min auto", "min 0", "ratio",
        "post auto", "post 0", "ratio"))
    for (dev, b, m), r in sorted(by.items()):
        if m != "auto" or (dev, b, "0") not in by:
            continue
        z = by[(dev, b, "0")]
        row = {"device": dev, "bytes": b, "round_trip": b == 0,
               "whole_auto": r["instructions_per_message"],
               "whole_copy": z["instructions_per_message"],
               "min_auto": r.get("min"), "min_copy": z.get("min"),
               "mean_auto": r.get("mean"), "mean_copy": z.get("mean"),
               "post_auto": r["post_instructions_per_message"],
               "post_copy": z["post_instructions_per_message"],
               "ok": r["rc"] == 0 and z["rc"] == 0}
        row["ratio_whole"] = ratio(row["whole_auto"], row["whole_copy"])
        row["ratio_min"] = ratio(row["min_auto"], row["min_copy"])
        row["ratio_mean"] = ratio(row["mean_auto"], row["mean_copy"])
        row["ratio_post"] = ratio(row["post_auto"], row["post_copy"])
        rows.append(row)
        print("%-6s %7s %10.1f %10.1f %7s %10s %10s %7s %10.1f %10.1f %7s%s" % (
            dev, "RTT 40" if b == 0 else b, row["whole_auto"], row["whole_copy"],
            row["ratio_whole"], row["min_auto"], row["min_copy"], row["ratio_min"],
            row["post_auto"], row["post_copy"], row["ratio_post"],
            "" if row["ok"] else "  (a run FAILED)"))
    res["cost"] = {"count": d.get("count"), "rows": rows}
    os.makedirs(os.path.join(out, "plot"), exist_ok=True)
    with open(os.path.join(out, "plot", "cost.dat"), "w") as f:
        for r in rows:
            f.write('"%s %s" %s %s\n' % (r["device"], "RTT" if r["round_trip"] else r["bytes"],
                                         r["whole_auto"], r["whole_copy"]))


def ceilings(out):
    """ib_write_bw per device: before and after the device's runs, and the
    mean of both (what the runs are held against)."""
    ceil = {}
    for path in sorted(glob.glob(os.path.join(out, "ib_write_bw_*.json"))):
        d = load(path)
        if not d:
            continue
        vals = [v for v in (d.get("before_MBps"), d.get("after_MBps")) if v]
        d["mean_MBps"] = round(sum(vals) / len(vals), 2) if vals else None
        ceil[d["device"]] = d
    return ceil


def run_time(r):
    """The time a bulk run is judged by: end to end for rdmig's runs (as
    the tool-speed goals count them), QEMU's own time for QEMU's."""
    if r["seconds"] is None:
        return None  # failed
    return r.get("e2e_seconds") or r["seconds"]


def median_of_rounds(rows):
    """RDMIG_BENCH_ROUNDS runs each bulk kind more than once: one row per
    (kind, device, image, registration), the median run's whole row (the
    lower of the middle two when the count is even, so that every figure
    in it comes from one run), with the count, the failures and the range
    of the times beside it."""
    groups = {}
    for r in rows:
        groups.setdefault((r["kind"], r["device"], r["image"], r["registration"], r["mib"]),
                          []).append(r)
    merged = []
    for runs in groups.values():
        ok = sorted((r for r in runs if run_time(r) is not None), key=run_time)
        row = dict(ok[(len(ok) - 1) // 2] if ok else runs[0])
        row["rounds"] = len(runs)
        row["rounds_failed"] = len(runs) - len(ok)
        row["times"] = [run_time(r) for r in runs]
        row["range"] = [run_time(ok[0]), run_time(ok[-1])] if ok else None
        # the fair yardstick's time: the sender's own wall, its median
        sends = [r["send_wall_seconds"] for r in ok if r.get("send_wall_seconds")]
        row["send_wall_seconds"] = median_or_none(sends) if sends else None
        row["send_wall_range"] = [min(sends), max(sends)] if sends else None
        rss = [r["recv_max_rss_kib"] for r in ok if r.get("recv_max_rss_kib")]
        row["recv_max_rss_kib"] = max(rss) if rss else None
        # the engine's transfer rate is judged by its own median (the
        # median end-to-end run need not hold the median transfer)
        xfer = [r["transfer_MBps"] for r in ok if r.get("transfer_MBps")]
        if xfer:
            row["transfer_MBps_runs"] = xfer
            row["transfer_MBps"] = median_or_none(xfer)
            row["ratio_ib_write_bw_transfer"] = ratio(row["transfer_MBps"],
                                                      row["ib_write_bw_MBps"])
        merged.append(row)
    return merged


def runs_cell(r):
    """'3: 6.1-7.4' (three runs, times from 6.1 to 7.4 s), 'x1' per failure."""
    if r["rounds"] == 1:
        return "-" if r["range"] else "x1"
    cell = "%d: %.1f-%.1f" % (r["rounds"], *r["range"]) if r["range"] else "%d:" % r["rounds"]
    return cell + (" x%d" % r["rounds_failed"] if r["rounds_failed"] else "")


def bulk_part(out, res):
    d = load(os.path.join(out, "bulk.json"))
    if not d:
        return
    ceil = ceilings(out)
    rows = []
    for r in d["bulk"]:
        x = r.get("result") or {}
        row = {k: r[k] for k in ("kind", "device", "image", "registration", "rc", "peer_rc",
                                 "guest_load")}
        row["mib"] = r.get("mib", d["bulk_mib"])
        row["ib_write_bw_MBps"] = (ceil.get(r["device"]) or {}).get("mean_MBps") \
            or r["ib_write_bw_MBps"]
        if r["kind"].startswith("qemu"):
            # QEMU's total-time; some runs report 0 for it (and for the
            # downtime) although they took seconds: then the time from the
            # migrate command to "completed" seen by polling every 20 ms
            # (elsewhere within 20 ms of total-time)
            total = x.get("total-time") or 0
            row["timed_by"] = "total-time" if total > 0 else "wall"
            row["seconds"] = (total / 1000 if total > 0 else x.get("wall_seconds")) \
                if x.get("status") == "completed" else None
            row["qemu"] = {k: x.get(k) for k in ("status", "total-time", "setup-time",
                                                  "downtime", "wall_seconds", "ram")}
        else:
            ok = r["rc"] == 0 and r["peer_rc"] == 0
            row["seconds"] = x.get("seconds") if ok else None
            row["e2e_seconds"] = r.get("e2e_seconds") if ok else None
            row["send_wall_seconds"] = (r.get("walls") or {}).get("send_seconds") if ok else None
            row["recv_max_rss_kib"] = r.get("recv_max_rss_kib")
            row["hash_exposed_seconds"] = [x.get("hash_exposed_seconds"),
                                           (r.get("peer") or {}).get("hash_exposed_seconds")]
            row["setup_seconds"] = x.get("setup_seconds")
            row["hash_seconds"] = x.get("hash_seconds")
            row["register_rtt_p50_us"] = x.get("register_rtt_p50_us")
            row["register_requests"] = x.get("register_requests")
            row["register_ahead"] = x.get("register_ahead")
            # where registration time went: the source waiting for results,
            # the source registering its memory, the destination its
            row["register_wait_seconds"] = x.get("register_wait_seconds")
            row["register_seconds"] = [x.get("register_seconds"),
                                       (r.get("peer") or {}).get("register_seconds")]
            row["bytes_written"] = x.get("bytes_written")
            row["bytes_compressed"] = x.get("bytes_compressed")
            row["verified"] = (r.get("peer") or {}).get("verified")
        row["bytes"] = row["mib"] << 20
        row["MBps"] = round(row["bytes"] / row["seconds"] / 1e6, 2) if row["seconds"] else None
        row["ratio_ib_write_bw"] = ratio(row["MBps"], row["ib_write_bw_MBps"])
        # ib_write_bw's figure is its steady state (-D: the middle of the
        # run, its connect, registration, ramp-up and drain left out); the
        # engine's like of it is its transfer: the end of its setup to
        # the last write's completion, REGISTER round trips included
        xfer = x.get("transfer_seconds") if row["seconds"] else None
        if row["seconds"] and xfer is None and x.get("setup_seconds") is not None \
                and x.get("command") == "bulk-send":
            # runs before transfer_seconds: its clock less its setup (the
            # same phase, with the wait for the last digests: none without
            # --hash)
            xfer = row["seconds"] - x["setup_seconds"]
        row["transfer_MBps"] = round(row["bytes"] / xfer / 1e6, 2) if xfer else None
        row["ratio_ib_write_bw_transfer"] = ratio(row["transfer_MBps"], row["ib_write_bw_MBps"])
        rows.append(row)
    all_sizes = median_of_rounds(rows)
    res["bulk_sizes"] = all_sizes
    # the tables below are of the first size; the fair table has them all
    rows = [r for r in all_sizes if r["mib"] == d["bulk_mib"]]
    def times(kind):
        return {(r["device"], r["image"], r["registration"]): r["seconds"]
                for r in rows if r["kind"] == kind}
    qemu, qemu10 = times("qemu"), times("qemu10")
    for r in rows:
        key = (r["device"], r["image"], r["registration"])
        r["ratio_qemu_time"] = ratio(r["seconds"], qemu.get(key))
        r["ratio_qemu10_time"] = ratio(r["seconds"], qemu10.get(key))
    res["bulk"] = {"bulk_mib": d["bulk_mib"], "ib_write_bw": ceil, "rows": rows}
    print("\n## Bulk: one %d MiB RAM block (seconds from connect to the end of the "
          "iteration; QEMU: query-migrate total-time)" % d["bulk_mib"])
    print("kinds: engine = rdmig-bench bulk (library only, set up as rdmig send sets it:\n"
          "lookahead, pin-local; engine_32M: at 32 MiB chunks), hashthread = the same with XXH64\n"
          "of the block on a second thread, tool = rdmig send -> recv (XXH64 span digests\n"
          "checked as the data lands; toolxxh3: XXH3-128; toolsha: SHA-256; tooloff: --verify\n"
          "off); e2e s: from\n"
          "the sender's start until both ends exited (the receiver verified, images written),\n"
          "qemu = QEMU 7.2 -> QEMU 7.2, qemu10 = Debian's 10.0.2 -> 10.0.2, qemu10i = 10.0.2\n"
          "with the inline series (qemu/) -> itself; /QEMU t: time over QEMU 7.2's, /Q10 t: over\n"
          "10.0.2's; reg/ahead: REGISTER round trips / of them sent ahead\n"
          "(w: QEMU reported total-time 0; timed from the migrate command to \"completed\")")
    if any(r["rounds"] > 1 for r in rows):
        print("runs: each kind's median run of N (its range of times: e2e s for rdmig, "
              "QEMU's time for QEMU; xF: F runs failed)")
    print("%-10s %-6s %-8s %-7s %9s %7s %15s %9s %9s %9s %9s %9s %9s %11s" % (
        "kind", "device", "image", "reg", "seconds", "e2e s", "runs", "setup s", "MB/s",
        "/ib_wr_bw", "/QEMU t", "/Q10 t", "hash s", "reg/ahead"))
    for r in rows:
        print("%-10s %-6s %-8s %-7s %9s %7s %15s %9s %9s %9s %9s %9s %9s %11s" % (
            r["kind"], r["device"], r["image"], r["registration"],
            "FAILED" if r["seconds"] is None else
            "%.2f%s" % (r["seconds"], "w" if r.get("timed_by") == "wall" else ""),
            "%.2f" % r["e2e_seconds"] if r.get("e2e_seconds") else "-",
            runs_cell(r),
            "%.2f" % r["setup_seconds"] if r.get("setup_seconds") is not None else "-",
            r["MBps"], r["ratio_ib_write_bw"], r["ratio_qemu_time"], r["ratio_qemu10_time"],
            "%.2f" % r["hash_seconds"] if r.get("hash_seconds") else "-",
            "%s/%s" % (r["register_requests"], r["register_ahead"])
            if r.get("register_requests") else "-"))
    for dev, c in sorted(ceil.items()):
        print("ib_write_bw %s: %s MB/s before, %s after, mean %s" % (
            dev, c.get("before_MBps"), c.get("after_MBps"), c["mean_MBps"]))
    os.makedirs(os.path.join(out, "plot"), exist_ok=True)
    with open(os.path.join(out, "plot", "bulk.dat"), "w") as f:
        for img in ("random", "halfzero"):
            for dev in sorted({r["device"] for r in rows}):
                for reg in ("dynamic", "pin-all"):
                    get = {r["kind"]: r for r in rows if (r["device"], r["image"],
                                                          r["registration"]) == (dev, img, reg)}
                    if not get:
                        continue
                    vals = [(get.get(k) or {}).get("MBps") or 0
                            for k in ("engine", "hashthread", "tool", "qemu", "qemu10")]
                    bw = next(iter(get.values()))["ib_write_bw_MBps"] or 0
                    f.write('"%s %s %s" %s %s %s %s %s %s\n' % (dev, img, reg, *vals, bw))


def qemu11_part(res):
    """The fair yardstick: rdmig send (from its start to its exit, recv
    already listening, so its durable commit included) against QEMU 11.1
    -> QEMU 11.1's total-time (migrate to completed: both QEMUs already
    running, as in a real migration) at the same chunk size
    (x-rdma-chunk-size on both sides) and RAM size; goal: <= 0.8 in
    every cell.  Beside it: time per GiB at each size over the smallest
    (goal: the largest within 1.1x) and recv's peak resident set."""
    rows = res.get("bulk_sizes", [])
    get = {(r["kind"], r["device"], r["image"], r["registration"], r["mib"]): r for r in rows}
    table = []
    # (KIND_notrace: untraced twins, for the tracing's cost: budget_part)
    for q in sorted([r for r in rows if r["kind"].startswith("qemu11")
                     and not r["kind"].endswith("_notrace")],
                    key=lambda r: (r["device"], r["image"], r["registration"], r["kind"],
                                   r["mib"])):
        suffix = q["kind"][len("qemu11"):]
        chunk = int(suffix[1:-1]) if suffix else 1
        key = (q["device"], q["image"], q["registration"], q["mib"])
        eng, tool = get.get(("engine" + suffix,) + key), get.get(("tool" + suffix,) + key)
        et = run_time(eng) if eng else None
        tt = tool.get("send_wall_seconds") if tool else None
        table.append({"device": q["device"], "image": q["image"],
                      "registration": q["registration"], "chunk_MiB": chunk, "mib": q["mib"],
                      "qemu11_seconds": q["seconds"], "qemu11_runs": runs_cell(q),
                      "engine_e2e_seconds": et, "tool_send_seconds": tt,
                      "tool_send_range": tool.get("send_wall_range") if tool else None,
                      "tool_e2e_seconds": run_time(tool) if tool else None,
                      "recv_max_rss_kib": tool.get("recv_max_rss_kib") if tool else None,
                      "engine_over_qemu11": ratio(et, q["seconds"]),
                      "tool_over_qemu11": ratio(tt, q["seconds"]),
                      "goal": 0.8})
    if not table:
        return
    res["qemu11"] = table
    print("\n## The fair yardstick: rdmig send against QEMU 11.1's total-time")
    print("QEMU: total-time of QEMU 11.1 -> QEMU 11.1 (x-rdma-chunk-size on both sides; its\n"
          "process start is not in it); tool: rdmig send from its start to its exit (recv\n"
          "listening; recv's durable commit inside); medians of rounds; goal: tool / QEMU <= 0.8")
    print("%-6s %-7s %6s %6s %9s %15s %9s %13s %9s %10s %5s" % (
        "device", "reg", "chunk", "MiB", "QEMU s", "QEMU runs", "tool s", "tool range",
        "tool/QEMU", "recv RSS", "goal"))
    for t in table:
        rng = t["tool_send_range"]
        print("%-6s %-7s %5dM %6d %9s %15s %9s %13s %9s %10s %5s" % (
            t["device"], t["registration"], t["chunk_MiB"], t["mib"],
            "%.2f" % t["qemu11_seconds"] if t["qemu11_seconds"] else "FAILED",
            t["qemu11_runs"],
            "%.2f" % t["tool_send_seconds"] if t["tool_send_seconds"] else "-",
            "%.2f-%.2f" % tuple(rng) if rng else "-",
            t["tool_over_qemu11"],
            "%d MiB" % (t["recv_max_rss_kib"] >> 10) if t["recv_max_rss_kib"] else "-",
            "met" if t["tool_over_qemu11"] is not None and t["tool_over_qemu11"] <= t["goal"]
            else "-"))
    scale_lines(table)


def scale_lines(table):
    """Time per GiB at each size over the smallest size's, per cell."""
    cells = {}
    for t in table:
        cells.setdefault((t["device"], t["registration"], t["chunk_MiB"]), []).append(t)
    lines = []
    for (dev, reg, chunk), ts in sorted(cells.items()):
        ts = sorted(ts, key=lambda t: t["mib"])
        if len(ts) < 2:
            continue
        def per_gib(t, k):
            return t[k] / (t["mib"] / 1024) if t.get(k) else None
        for k, who in (("tool_send_seconds", "tool"), ("qemu11_seconds", "QEMU")):
            base = per_gib(ts[0], k)
            parts = ["%d MiB %.2f s/GiB" % (t["mib"], per_gib(t, k)) for t in ts if per_gib(t, k)]
            last = per_gib(ts[-1], k)
            lines.append("%s %s %dM %s: %s; %d MiB over %d MiB: %s%s" % (
                dev, reg, chunk, who, ", ".join(parts), ts[-1]["mib"], ts[0]["mib"],
                ratio(last, base), " (goal <= 1.1)" if who == "tool" else ""))
    if lines:
        print("time per GiB against the size:")
        for line in lines:
            print("  " + line)


CHUNK_KINDS = {"tool": 1, "tool_4M": 4, "tool_32M": 32, "tool_256M": 256, "tool_1G": 1024}


def chunks_part(out, res):
    """rdmig send -> recv at each --chunk-size (kinds tool,
    tool_4M, ...): seconds, REGISTER round trips, and the goals at 32 MiB."""
    rows = [r for r in res.get("bulk", {}).get("rows", []) if r["kind"] in CHUNK_KINDS]
    if not any(r["kind"] != "tool" for r in rows):
        return
    table = []
    for r in rows:
        table.append({"chunk_MiB": CHUNK_KINDS[r["kind"]], "device": r["device"],
                      "image": r["image"], "registration": r["registration"],
                      "seconds": r["seconds"], "e2e_seconds": r.get("e2e_seconds"),
                      "register_requests": r.get("register_requests"),
                      "register_wait_seconds": r.get("register_wait_seconds"),
                      "register_seconds": r.get("register_seconds") or [None, None]})
    table.sort(key=lambda t: (t["device"], t["image"], t["registration"], t["chunk_MiB"]))
    print("\n## Registration chunk size: rdmig send -> recv (--chunk-size)")
    print("(wait s: the source waiting for REGISTER_RESULTs; src/dst reg s: each side\n"
          " registering its own memory)")
    fmt = "%-6s %-8s %-7s %9s %9s %9s %12s %8s %10s %10s"
    print(fmt % ("device", "image", "reg", "chunk MiB", "seconds", "e2e s", "reg trips",
                 "wait s", "src reg s", "dst reg s"))
    num = lambda v: "%.2f" % v if v is not None else "-"
    for t in table:
        print(fmt % (
            t["device"], t["image"], t["registration"], t["chunk_MiB"],
            "%.2f" % t["seconds"] if t["seconds"] else "FAILED",
            "%.2f" % t["e2e_seconds"] if t["e2e_seconds"] else "-",
            t["register_requests"] if t["register_requests"] is not None else "-",
            num(t["register_wait_seconds"]), num(t["register_seconds"][0]),
            num(t["register_seconds"][1])))
    def get(dev, img, reg, mib, field):
        return next((t[field] for t in table if (t["device"], t["image"], t["registration"],
                                                  t["chunk_MiB"]) == (dev, img, reg, mib)), None)
    goals = {}
    for dev, img in sorted({(t["device"], t["image"]) for t in table}):
        trips1 = get(dev, img, "dynamic", 1, "register_requests")
        trips32 = get(dev, img, "dynamic", 32, "register_requests")
        # both the transfer (connect .. end of iteration) and end to end:
        # pin-all registers everything before its transfer starts, which
        # only the end-to-end time counts whole
        goals["%s %s" % (dev, img)] = {
            "round_trips_1M_over_32M": round(trips1 / trips32, 1) if trips1 and trips32 else None,
            "dynamic_over_pin_all_32M": ratio(get(dev, img, "dynamic", 32, "seconds"),
                                              get(dev, img, "pin-all", 32, "seconds")),
            "dynamic_over_pin_all_32M_e2e": ratio(get(dev, img, "dynamic", 32, "e2e_seconds"),
                                                  get(dev, img, "pin-all", 32, "e2e_seconds"))}
    res["chunks"] = {"rows": table, "goals": goals}
    for k, v in goals.items():
        print("%s: round trips 1M / 32M = %s (goal >= 16), dynamic / pin-all at 32M = %s "
              "end to end, %s transfer (goal <= 1.1)" % (
                  k, v["round_trips_1M_over_32M"], v["dynamic_over_pin_all_32M_e2e"],
                  v["dynamic_over_pin_all_32M"]))
    os.makedirs(os.path.join(out, "plot"), exist_ok=True)
    with open(os.path.join(out, "plot", "chunks.dat"), "w") as f:
        for dev in sorted({t["device"] for t in table}):
            for reg in ("dynamic", "pin-all"):
                pts = [t for t in table if t["device"] == dev and t["registration"] == reg
                       and t["image"] == "random" and t["seconds"]]
                if not pts:
                    continue
                f.write('"%s %s"\n' % (dev, reg))
                for t in pts:
                    f.write("%s %s\n" % (t["chunk_MiB"], t["seconds"]))
                f.write("\n\n")


# ----------------------------------------------------------------- budget --

# The budget's columns, in the order the phases run: the rdmig runs'
# "budget" objects (rdmig-json(7)) and QEMU's (bench/qemu_budget.py) both
# map onto them.  "exit": what a process spends outside its budget (rdmig:
# its wall time minus total and idle, i.e. exec, the loader and exit;
# QEMU: quit -> the process gone).
BUDGET_COLS = ("start", "connect", "setup", "reg", "xfer", "hash_w", "commit", "tdown",
               "other", "exit")
BUDGET_MAP = {"register_wait": "reg", "register": "reg", "writes": "xfer",
              "transfer": "xfer", "hash_wait": "hash_w", "commit": "commit",
              "compare": "commit", "teardown": "tdown"}


def budget_cols(b, wall=None):
    """A budget object as the columns; exit from the process's wall time
    when given (rdmig), else the budget's own (QEMU)."""
    cols = dict.fromkeys(BUDGET_COLS, 0.0)
    for k, v in b.items():
        if k in ("total", "idle") or v is None:
            continue
        c = BUDGET_MAP.get(k, k)
        if c in cols:
            cols[c] += v
    if wall is not None:
        cols["exit"] = wall - b["total"] - (b.get("idle") or 0)
    cols["total"] = sum(cols[c] for c in BUDGET_COLS)
    cols["idle"] = b.get("idle")
    return cols


def chunk_of(kind):
    """engine -> (engine, 1), tool_32M -> (tool, 32), qemu11_32M -> (qemu11, 32)."""
    base, _, suffix = kind.partition("_")
    return base, int(suffix[:-1]) if suffix.endswith("M") and suffix[:-1].isdigit() else 1


def budget_rows(out, bulk):
    """One entry per run and side: its columns, and the run's e2e."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import qemu_budget
    entries = []
    for r in bulk:
        kind = r["kind"]
        base, chunk = chunk_of(kind)
        if r["rc"] != 0 or r["peer_rc"] != 0 or kind.endswith("_notrace"):
            continue
        key = {"kind": base, "device": r["device"], "image": r["image"],
               "registration": r["registration"], "chunk_MiB": chunk, "round": r["round"]}
        if kind.startswith("qemu"):
            q = qemu_budget.budget(r, out)
            if not q:
                continue
            sides = {"send": budget_cols(q["send"]), "recv": budget_cols(q["recv"])}
            e2e = q["e2e"]
        else:
            sb = (r.get("result") or {}).get("budget")
            rb = (r.get("peer") or {}).get("budget")
            walls = r.get("walls") or {}
            if not sb or not rb:
                continue
            sides = {"send": budget_cols(sb, walls.get("send_seconds")),
                     "recv": budget_cols(rb, walls.get("recv_seconds"))}
            e2e = r.get("e2e_seconds")
        # the tool's receiver copies each checked span into its image file on
        # the checking threads, during xfer and hash_w: how long, summed
        copy = (r.get("peer") or {}).get("copy_busy_seconds")
        for side, cols in sides.items():
            entries.append(dict(key, side=side, cols=cols, e2e=e2e,
                                copy=copy if side == "recv" else None))
    return entries


def median_or_none(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def trace_cost(out, bulk):
    """QEMU traced against untraced (kind KIND_notrace), same boot:
    QEMU's total-time and the script's migrate -> migrate done."""
    cost = []
    for r in bulk:
        if not r["kind"].endswith("_notrace") or r["rc"] != 0:
            continue
        twin = next((t for t in bulk if t["kind"] == r["kind"][:-len("_notrace")] and
                     all(t[k] == r[k] for k in ("device", "image", "registration", "round"))
                     and t["rc"] == 0), None)
        if not twin:
            continue
        def qt(x):
            t = (x.get("result") or {}).get("total-time")
            return t / 1000 if t else None
        def wall(x):
            t = x.get("times") or {}
            return t["migrate_done"] - t["migrate"] if t.get("migrate_done") else None
        cost.append({"kind": twin["kind"], "device": r["device"], "image": r["image"],
                     "registration": r["registration"], "traced_s": qt(twin),
                     "untraced_s": qt(r), "traced_wall_s": wall(twin),
                     "untraced_wall_s": wall(r), "ratio": ratio(qt(twin), qt(r))})
    return cost


def budget_part(out, res):
    """Where each migration's time goes, phase by phase, on both
    sides: the engine (rdmig-bench bulk), the tool (rdmig send -> recv)
    and QEMU 11.1 (from its trace); medians over the rounds."""
    d = load(os.path.join(out, "bulk.json"))
    if not d:
        return
    # (of the first size, when the bulk part ran at several)
    entries = budget_rows(out, [r for r in d["bulk"]
                                if r.get("mib", d["bulk_mib"]) == d["bulk_mib"]])
    if not entries:
        return
    groups = {}
    for e in entries:
        k = (e["device"], e["image"], e["registration"], e["chunk_MiB"], e["kind"], e["side"])
        groups.setdefault(k, []).append(e)
    order = {"engine": 0, "enginespin": 1, "tool": 2, "qemu11": 3}
    table = []
    for k in sorted(groups, key=lambda k: (k[0], k[1], k[2], k[3], order.get(k[4], 9), k[5])):
        runs = groups[k]
        row = dict(zip(("device", "image", "registration", "chunk_MiB", "kind", "side"), k))
        row["rounds"] = len(runs)
        row["phases"] = {c: median_or_none([e["cols"][c] for e in runs])
                         for c in BUDGET_COLS + ("total", "idle")}
        row["e2e_seconds"] = median_or_none([e["e2e"] for e in runs])
        row["copy_busy_seconds"] = median_or_none([e["copy"] for e in runs])
        table.append(row)
    e2e = {(t["device"], t["image"], t["registration"], t["chunk_MiB"], t["kind"]):
           t["e2e_seconds"] for t in table if t["side"] == "send"}
    ratios = []
    for (dev, img, reg, chunk, kind), v in sorted(e2e.items()):
        if kind != "tool":
            continue
        q = e2e.get((dev, img, reg, chunk, "qemu11"))
        ratios.append({"device": dev, "image": img, "registration": reg, "chunk_MiB": chunk,
                       "tool_e2e": v, "qemu11_e2e": q, "tool_over_qemu11": ratio(v, q),
                       "engine_e2e": e2e.get((dev, img, reg, chunk, "engine"))})
    bw = []
    for r in res.get("bulk", {}).get("rows", []):
        base, chunk = chunk_of(r["kind"])
        if base in ("engine", "enginespin"):
            bw.append({"kind": base, "device": r["device"], "image": r["image"],
                       "registration": r["registration"], "chunk_MiB": chunk,
                       "MBps": r["MBps"], "ib_write_bw_MBps": r["ib_write_bw_MBps"],
                       "engine_over_ib_write_bw": r["ratio_ib_write_bw"],
                       "transfer_MBps": r.get("transfer_MBps"),
                       "engine_transfer_over_ib_write_bw": r.get("ratio_ib_write_bw_transfer")})
    cost = trace_cost(out, [r for r in d["bulk"] if r.get("mib", d["bulk_mib"]) == d["bulk_mib"]])
    res["budget"] = {"rows": table, "tool_over_qemu11": ratios, "engine_over_ib_write_bw": bw,
                     "qemu_trace_cost": cost}
    print("\n## Budget: where each migration's time goes, both sides (medians of rounds)")
    print("engine = rdmig-bench bulk, tool = rdmig send -> recv, qemu11 = QEMU 11.1 -> 11.1\n"
          "(its trace).  Seconds.  start: exec or main() -> connecting (rdmig: main() on;\n"
          "QEMU: exec -> QMP ready); reg: the sender waiting for REGISTER_RESULTs, the\n"
          "receiver registering its memory; xfer: the rest of the transfer (writes);\n"
          "hash_w: waiting for the last digests; commit: trailer / the receiver's images named\n"
          "(engine's receiver: the bench's memcmp check; QEMU: the completion); tdown: teardown\n"
          "to the summary (deregistration, disconnect); exit: rdmig: the process's wall time\n"
          "minus its budget (exec, loader, exit), QEMU: quit -> gone; total: their sum;\n"
          "idle: the receiver waiting for its source, not in total; e2e: the sender's exec\n"
          "-> both gone (QEMU: start + migrate -> last event of either side + quit; the\n"
          "script's own QMP commands left out)")
    fmt = "%-7s %-6s %-7s %5s %-4s" + " %6s" * len(BUDGET_COLS) + " %7s %6s %7s"
    print(fmt % (("kind", "device", "reg", "chunk", "side") + BUDGET_COLS +
                 ("total", "idle", "e2e")))
    num = lambda v, p=2: "-" if v is None else "%.*f" % (p, v)
    for t in table:
        ph = t["phases"]
        print(fmt % ((t["kind"], t["device"], t["registration"], "%dM" % t["chunk_MiB"],
                      t["side"]) + tuple(num(ph[c]) for c in BUDGET_COLS) +
                     (num(ph["total"]), num(ph["idle"]),
                      num(t["e2e_seconds"]) if t["side"] == "send" else "")))
    for t in table:
        if t["copy_busy_seconds"] is not None:
            print("tool recv, %s %s %dM: copying the spans into the image files took %.2f s "
                  "on the checking threads (inside xfer and hash_w)" % (
                      t["device"], t["registration"], t["chunk_MiB"], t["copy_busy_seconds"]))
    print("(QEMU's reg on the source is its wait from each REGISTER request to the result:\n"
          " the request queues behind the previous chunk's RDMA writes on the same QP, so\n"
          " with large chunks it holds most of the writes' time)")
    for r in ratios:
        print("tool e2e / qemu11 e2e, %s %s %s %dM: %s / %s = %s" % (
            r["device"], r["image"], r["registration"], r["chunk_MiB"], num(r["tool_e2e"]),
            num(r["qemu11_e2e"]), r["tool_over_qemu11"]))
    if bw:
        print("engine against ib_write_bw's steady state (its -D average, connect and\n"
              "registration left out): transfer = the engine's end of setup -> last write\n"
              "complete (REGISTER round trips in it); connect..end = the engine's own clock,\n"
              "connect and setup (pin-local registration) in it")
    for b in bw:
        print("%s MB/s / ib_write_bw, %s %s %s %dM: transfer %s / %s = %s; "
              "connect..end %s / %s = %s" % (
                  b["kind"], b["device"], b["image"], b["registration"], b["chunk_MiB"],
                  b["transfer_MBps"], b["ib_write_bw_MBps"], b["engine_transfer_over_ib_write_bw"],
                  b["MBps"], b["ib_write_bw_MBps"], b["engine_over_ib_write_bw"]))
    for c in cost:
        print("QEMU tracing cost, %s %s %s %s: total-time %s s traced, %s s untraced (x%s); "
              "migrate command %s s / %s s" % (
                  c["kind"], c["device"], c["image"], c["registration"], num(c["traced_s"]),
                  num(c["untraced_s"]), c["ratio"], num(c["traced_wall_s"]),
                  num(c["untraced_wall_s"])))
    os.makedirs(os.path.join(out, "plot"), exist_ok=True)
    for dev in sorted({t["device"] for t in table}):
        for side in ("send", "recv"):
            with open(os.path.join(out, "plot", "budget_%s_%s.dat" % (side, dev)), "w") as f:
                f.write("config " + " ".join(BUDGET_COLS) + "\n")
                for t in table:
                    if t["device"] != dev or t["side"] != side or t["image"] != "random":
                        continue
                    f.write('"%s %dM %s" %s\n' % (
                        t["kind"], t["chunk_MiB"], t["registration"],
                        " ".join("%.4f" % max(t["phases"][c] or 0, 0) for c in BUDGET_COLS)))


def qemu_ab_part(out, res):
    """The inline series A/B: stock 10.2.2, patched, patched with inline off;
    time, downtime, and the REGISTER round trip from the source's trace
    timestamps (medians over the rounds of each run's p50 and p99)."""
    d = load(os.path.join(out, "qemu_ab.json"))
    if not d:
        return
    groups = {}
    for r in d["runs"]:
        x = r.get("result") or {}
        key = (r["vm"], r["device"], r["registration"], r["qemu"])
        g = groups.setdefault(key, {"time": [], "downtime": [], "failed": 0, "runs": [],
                                    "p50": [], "p99": []})
        g["runs"].append(r)
        if r.get("register_rtt_p50_us") is not None:
            g["p50"].append(r["register_rtt_p50_us"])
            g["p99"].append(r["register_rtt_p99_us"])
        if r["rc"] != 0 or x.get("status") != "completed":
            g["failed"] += 1
            continue
        g["time"].append(x.get("total-time") or x.get("wall_seconds", 0) * 1000)
        g["downtime"].append(x.get("downtime"))
    rows = []
    print("\n## The inline series: QEMU 10.2.2 -> itself, stock / inline / inline off "
          "(x-rdma-max-inline=0), %d rounds interleaved; medians" % d["rounds"])
    print("stopped: a %d MiB VM, time = total-time; live: the dirtier guest (64 MiB), "
          "downtime.  sends: control messages inline/copied per side (trace, round 1);\n"
          "QP: asked/written back/granted/tries; REGISTER round trip (source trace "
          "timestamps) p50 and p99 in us, /copy: over inline off's" % d["ab_mib"])
    print("%-7s %-4s %-7s %-6s %9s %8s %9s %8s %13s %13s %11s %8s %6s %8s %6s" % (
        "vm", "dev", "reg", "qemu", "time ms", "/stock", "downtime", "/stock", "src in/copy",
        "dst in/copy", "QP src", "rtt p50", "/copy", "rtt p99", "/copy"))
    for key in sorted(groups, key=lambda k: (k[0], k[1], k[2], ["stock", "inline", "off"].index(k[3]))):
        vm, dev, reg, q = key
        g = groups[key]
        t = statistics.median(g["time"]) if g["time"] else None
        dt = statistics.median([v for v in g["downtime"] if v is not None]) \
            if any(v is not None for v in g["downtime"]) else None
        stock = groups.get((vm, dev, reg, "stock"), {})
        st = statistics.median(stock["time"]) if stock.get("time") else None
        sd = [v for v in stock.get("downtime", []) if v is not None]
        sd = statistics.median(sd) if sd else None
        r1 = g["runs"][0]
        off = groups.get((vm, dev, reg, "off"), {})
        p50 = statistics.median(g["p50"]) if g["p50"] else None
        p99 = statistics.median(g["p99"]) if g["p99"] else None
        o50 = statistics.median(off["p50"]) if off.get("p50") else None
        o99 = statistics.median(off["p99"]) if off.get("p99") else None
        row = {"register_rtt_p50_us": p50, "register_rtt_p99_us": p99,
               "ratio_rtt_p50_vs_off": ratio(p50, o50), "ratio_rtt_p99_vs_off": ratio(p99, o99),
               "vm": vm, "device": dev, "registration": reg, "qemu": q, "time_ms": t,
               "downtime_ms": dt, "ratio_time": ratio(t, st), "ratio_downtime": ratio(dt, sd),
               "failed": g["failed"], "src_inline": r1["src_inline"], "src_copied": r1["src_copied"],
               "dst_inline": r1["dst_inline"], "dst_copied": r1["dst_copied"],
               "src_qp": r1["src_qp"], "dst_qp": r1["dst_qp"]}
        rows.append(row)
        print("%-7s %-4s %-7s %-6s %9s %8s %9s %8s %13s %13s %11s %8s %6s %8s %6s%s" % (
            vm, dev, reg, q, t, row["ratio_time"], dt, row["ratio_downtime"],
            "%d/%d" % (r1["src_inline"], r1["src_copied"]) if q != "stock" else "-",
            "%d/%d" % (r1["dst_inline"], r1["dst_copied"]) if q != "stock" else "-",
            r1["src_qp"] or "-", p50 if p50 is not None else "-", row["ratio_rtt_p50_vs_off"],
            p99 if p99 is not None else "-", row["ratio_rtt_p99_vs_off"],
            "  (%d failed)" % g["failed"] if g["failed"] else ""))
    res["qemu_ab"] = {"ab_mib": d["ab_mib"], "rounds": d["rounds"], "rows": rows}


def write_footprint_dat(out, res):
    os.makedirs(os.path.join(out, "plot"), exist_ok=True)
    with open(os.path.join(out, "plot", "footprint.dat"), "w") as f:
        for r in res["footprint"]["rows"]:
            vals = [r.get("rxe_queue_bytes"), r.get("siw_queue_bytes"), r["mlx5_model"],
                    r["mlx4_model"], r["irdma_model"]]
            f.write("%d %s\n" % (r["requested"], " ".join("NaN" if v is None else str(v)
                                                           for v in vals)))


# ------------------------------------------------------------------ goals --

def verify_goal(bulk):
    """The tool end to end against the engine end to end and
    against QEMU 7.2, on the same image, device and registration."""
    def by(kind, field):
        return {(r["device"], r["image"], r["registration"]): r.get(field)
                for r in bulk if r["kind"] == kind}
    qemu = by("qemu", "seconds")
    per = {}
    for r in bulk:
        if r["kind"] not in CHUNK_KINDS:
            continue
        # the engine at the same chunk size: tool -> engine, tool_32M -> engine_32M
        eng = by("engine" + r["kind"][len("tool"):], "e2e_seconds")
        key = (r["device"], r["image"], r["registration"])
        name = "%s %s %s" % key + ("" if r["kind"] == "tool" else " " + r["kind"][len("tool_"):])
        per[name] = {"tool_e2e": r.get("e2e_seconds"),
                     "engine_e2e": eng.get(key), "qemu72": qemu.get(key),
                     "over_engine": ratio(r.get("e2e_seconds"), eng.get(key)),
                     "over_qemu72": ratio(r.get("e2e_seconds"), qemu.get(key))}
    eng_r = [v["over_engine"] for v in per.values()]
    q_r = [v["over_qemu72"] for v in per.values()]
    worst = max(eng_r) if eng_r and all(eng_r) else None
    worst_q = max(q_r) if q_r and all(q_r) else None
    return {"goal": "rdmig send -> recv end to end <= 1.1x the engine's end to end, and "
                    "<= 0.8x QEMU 7.2's time", "per_run": per, "worst": worst,
            "worst_over_qemu72": worst_q,
            "verdict": "%s/%s" % (verdict(worst, 1.1), verdict(worst_q, 0.8))}


def goals(res):
    g = {}
    cost = [r for r in res.get("cost", {}).get("rows", [])
            if r["round_trip"] or r["bytes"] in (16, 32, 40)]
    # a round trip's median counts its wait for the reply (timing, not
    # work): its minimum, the reply there at the first look, is the work
    def work(r):
        return r["ratio_min"] if r["round_trip"] else r["ratio_whole"]
    worst = max((work(r) for r in cost if work(r)), default=None)
    g["cpu_cost"] = {"goal": "sender instructions per fixed-size message, inline / copy <= 0.7 "
                             "(round trip: its minimum)",
                     "per_class": {"%s %s" % (r["device"], "RTT" if r["round_trip"] else r["bytes"]):
                                   {"whole": r["ratio_whole"], "min": r["ratio_min"],
                                    "post": r["ratio_post"]}
                                   for r in cost},
                     "worst": worst, "verdict": verdict(worst, 0.7)}
    lat = {}
    for dev, d in res.get("latency", {}).items():
        for c in d["classes"]:
            if c["class"] == "register_round_trip":
                lat[dev] = {"p50": c["ratio_p50"], "mean": c["ratio_mean"], "p99": c["ratio_p99"],
                            "rounds_median": c.get("round_ratio_p50_median"),
                            "rounds_q1": c.get("round_ratio_p50_q1"),
                            "rounds_q3": c.get("round_ratio_p50_q3")}
    worst = max((v["p50"] for v in lat.values()), default=None)
    g["latency"] = {"goal": "REGISTER round trip, inline / copy <= 1.0 on rxe and siw (p50)",
                    "per_device": lat, "worst": worst, "verdict": verdict(worst, 1.0)}
    bulk = res.get("bulk", {}).get("rows", [])
    bw = {"%s %s %s %s" % (r["kind"], r["device"], r["image"], r["registration"]):
          r["ratio_ib_write_bw"] for r in bulk if not r["kind"].startswith("qemu")}
    eng = [r["ratio_ib_write_bw"] for r in bulk
           if r["kind"] == "engine" and r["image"] == "random"]
    worst = min((v for v in eng if v), default=None) if eng and all(eng) else None
    g["bulk"] = {"goal": "random block, rdmig MB/s / ib_write_bw >= 0.9 (engine; tool listed)",
                 "per_run": bw, "worst_engine_random": worst,
                 "verdict": verdict(worst, 0.9, at_most=False)}
    # the engine alone (each chunk size) at least 0.95x
    # ib_write_bw in every mode, steady state against steady state
    eng = {"%s %s %s %s" % (r["kind"], r["device"], r["image"], r["registration"]):
           r.get("ratio_ib_write_bw_transfer") for r in bulk
           if chunk_of(r["kind"])[0] == "engine" and r["image"] == "random"}
    worst = min(eng.values()) if eng and all(eng.values()) else None
    g["engine_bw"] = {"goal": "engine transfer MB/s / ib_write_bw >= 0.95 in every mode "
                              "(random block, each chunk size)",
                      "per_run": eng, "worst": worst,
                      "verdict": verdict(worst, 0.95, at_most=False)}
    qt = {"%s %s %s %s" % (r["kind"], r["device"], r["image"], r["registration"]):
          r["ratio_qemu_time"] for r in bulk if not r["kind"].startswith("qemu")}
    eng = [r["ratio_qemu_time"] for r in bulk if r["kind"] == "engine"]
    worst = max(eng) if eng and all(eng) else None
    g["qemu_time"] = {"goal": "rdmig time / QEMU time <= 0.8, same RAM (engine; tool listed)",
                      "per_run": qt, "worst_engine": worst, "verdict": verdict(worst, 0.8)}
    g["verify"] = verify_goal(bulk)
    res["goals"] = g
    print("\n## Goals")
    for k, v in g.items():
        w = next((v[x] for x in ("worst", "worst_engine_random", "worst_engine") if x in v), None)
        print("%-10s %-7s worst %s  (%s)" % (k, v["verdict"], w, v["goal"]))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    res = {"guest": load(os.path.join(out, "guest.json")),
           "host": load(os.path.join(out, "host.json"))}
    footprint_part(out, res)
    write_footprint_dat(out, res)
    latency_part(out, res)
    cost_part(out, res)
    bulk_part(out, res)
    chunks_part(out, res)
    qemu11_part(res)
    budget_part(out, res)
    qemu_ab_part(out, res)
    goals(res)
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    print("\nwrote %s" % os.path.join(out, "bench.json"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
