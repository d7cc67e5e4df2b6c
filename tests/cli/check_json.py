#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_json.py [--progress|--lines] MAN FILE... - check rdmig's --json
outputs against their schema, the man page rdmig-json(7) (MAN:
man/rdmig-json.7.scd).  With --progress, every line of each FILE that starts
with "{" is a --progress json object instead (the rest of stderr is
ignored); with --lines, each line of FILE is an object of its own (recv
--serve's JSON lines, whose section adds their "event").

Each FILE must hold exactly one JSON object on one line.  The page's "## "
sections each describe an object: "common" the head and outcome of every
one, "send files", "recv qemu", "probe"... a command's (chosen by its
"command" and "mode"), and "SECTION: member[]" or "SECTION: member" the
objects inside an array or object member.  A section lists members as
"*name* (type[, failure only | optional])" terms, and may take in another
section's with "Also the members of *name*.".

A "budget" object (a section "SECTION: budget") must also add up: its
phases, every member but "total" and "idle", sum to "total" (to the
rounding of their six decimals), and none is negative.

A success object must have every member of its sections that is neither
"failure only" nor "optional", with the documented type, and no member the
page does not document; a failure object must have the head, "phase" and
"error", and may carry any documented member.  Prints one line per file;
exits 1 if any does not match."""
import json
import re
import sys

TERM = re.compile(r"^\*([A-Za-z0-9_]+)\* \(([^)]*)\)\s*$")
ALSO = re.compile(r"^Also the members of \*([^*]+)\*\.")


def load_schema(path):
    sections, name = {}, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                name = line[3:].strip()
                sections[name] = {"members": {}, "also": []}
                continue
            if line.startswith("# "):
                name = None
                continue
            if name is None:
                continue
            m = TERM.match(line)
            if m:
                parts = [p.strip() for p in m.group(2).split(",")]
                sections[name]["members"][m.group(1)] = {
                    "type": parts[0],
                    "failure_only": "failure only" in parts[1:],
                    "optional": "optional" in parts[1:],
                }
            m = ALSO.match(line)
            if m:
                sections[name]["also"].append(m.group(1))
    return sections


def members_of(schema, name):
    sec = schema.get(name)
    if sec is None:
        return None
    out = dict(sec["members"])
    for other in sec["also"]:
        out.update(members_of(schema, other) or {})
    return out


def type_ok(value, spec):
    nullable = spec.endswith(" or null")
    base = spec[: -len(" or null")] if nullable else spec
    if value is None:
        return nullable
    return {
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
    }.get(base, False)


def check_budget(obj, where, errors):
    """A time budget's phases add up to its total; none is negative."""
    phases = {k: v for k, v in obj.items() if k not in ("total", "idle")}
    nums = [v for v in list(phases.values()) + [obj.get("total"), obj.get("idle", 0)]
            if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) != len(phases) + 2:
        return  # a missing or mistyped member is reported as such
    for key, value in list(phases.items()) + [("idle", obj.get("idle", 0))]:
        if value < -1e-5:
            errors.append("%s.%s: %r seconds, negative" % (where, key, value))
    total = sum(phases.values())
    if abs(total - obj["total"]) > 1e-6 * (len(phases) + 1):
        errors.append("%s: the phases add up to %.6f, not total %r" % (where, total, obj["total"]))


def check_object(schema, section, obj, where, strict, errors):
    """Check obj against section; strict: every required member present."""
    members = members_of(schema, section)
    if members is None:
        errors.append("%s: the page has no section '%s'" % (where, section))
        return
    for key, value in obj.items():
        spec = members.get(key)
        if spec is None:
            errors.append("%s: member '%s' is not in '%s'" % (where, key, section))
            continue
        if not type_ok(value, spec["type"]):
            errors.append("%s.%s: %r is not %s" % (where, key, value, spec["type"]))
            continue
        # nested objects and arrays of objects that have a section of their own
        if isinstance(value, dict) and (section + ": " + key) in schema:
            check_object(schema, section + ": " + key, value, where + "." + key, True,
                         errors)
            if key == "budget":
                check_budget(value, where + "." + key, errors)
        sub = "%s: %s[]" % (section, key)
        if isinstance(value, list) and sub in schema:
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    errors.append("%s.%s[%d]: not an object" % (where, key, i))
                else:
                    check_object(schema, sub, item, "%s.%s[%d]" % (where, key, i),
                                 True, errors)
    # what a nested object or an array's object holds is always complete
    if strict:
        for key, spec in members.items():
            if key not in obj and not spec["failure_only"] and not spec["optional"]:
                errors.append("%s: '%s' of '%s' is missing" % (where, key, section))


def check_file(schema, path, lines_mode=False):
    with open(path) as f:
        text = f.read()
    lines = text.splitlines()
    if lines_mode:
        errors = [] if lines else ["%s: no line" % path]
        for i, line in enumerate(lines):
            errors += check_text(schema, "%s:%d" % (path, i + 1), line)
        return errors
    if len(lines) != 1:
        return ["%s: %d lines on stdout, not one" % (path, len(lines))]
    return check_text(schema, path, text)


def check_text(schema, path, text):
    try:
        obj = json.loads(text)
    except ValueError as e:
        return ["%s: not JSON: %s" % (path, e)]
    if not isinstance(obj, dict):
        return ["%s: not an object" % path]
    errors = []
    command, mode = obj.get("command"), obj.get("mode")
    section = command + (" " + mode if mode else "") if isinstance(command, str) else None
    if mode == "serve":  # recv --serve: an object per event; a usage error's is the summary
        section += " " + str(obj.get("event", "summary"))
    if obj.get("schema") != 1:
        errors.append("%s: schema %r, not 1" % (path, obj.get("schema")))
    if section not in schema:
        return errors + ["%s: no section of the page for command %r, mode %r" %
                         (path, command, mode)]
    ok = obj.get("ok")
    common = members_of(schema, "common")
    head = {k: v for k, v in obj.items() if k in common}
    rest = {k: v for k, v in obj.items() if k not in common}
    check_object(schema, "common", head, path, False, errors)
    for key, spec in common.items():
        if key in obj or spec["optional"]:
            continue
        if not spec["failure_only"] or ok is False:
            errors.append("%s: '%s' is missing" % (path, key))
    if ok is True and ("error" in obj or "phase" in obj):
        errors.append("%s: a success with phase or error" % path)
    if mode is None and command in ("send", "recv"):
        errors.append("%s: %s without a mode" % (path, command))
    # the command's members: all of them after a success, any after a failure
    check_object(schema, section, rest, path, ok is True, errors)
    return errors


def check_progress(schema, path):
    """Every line of path is a progress object (section "progress")."""
    errors = []
    with open(path) as f:
        lines = [l for l in f.read().splitlines() if l.startswith("{")]
    if not lines:
        return ["%s: no progress line" % path]
    for i, line in enumerate(lines):
        try:
            obj = json.loads(line)
        except ValueError as e:
            errors.append("%s:%d: not JSON: %s" % (path, i + 1, e))
            continue
        if not isinstance(obj, dict):
            errors.append("%s:%d: not an object" % (path, i + 1))
            continue
        check_object(schema, "progress", obj, "%s:%d" % (path, i + 1), True, errors)
    return errors


def main(argv):
    progress = len(argv) > 1 and argv[1] == "--progress"
    lines_mode = len(argv) > 1 and argv[1] == "--lines"
    if progress or lines_mode:
        argv = argv[:1] + argv[2:]
    if len(argv) < 3:
        sys.stderr.write("usage: check_json.py [--progress|--lines] MAN FILE...\n")
        return 2
    schema = load_schema(argv[1])
    if "common" not in schema:
        sys.stderr.write("check_json.py: %s has no 'common' section\n" % argv[1])
        return 2
    bad = 0
    for path in argv[2:]:
        errors = (check_progress(schema, path) if progress else
                  check_file(schema, path, lines_mode))
        if errors:
            bad += 1
            for e in errors:
                print("FAILED: " + e)
        else:
            print("ok: %s matches rdmig-json(7)" % path)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
