#!/usr/bin/env python3
"""Check a speedscope file against speedscope's file format: the rules of the
published schema (https://www.speedscope.app/file-format-schema.json, draft-06:
FileFormat.File, Frame, EventedProfile, SampledProfile, the events and the
value units), written out here as code, plus what the format's specification
(speedscope's src/lib/file-format-spec.ts) says in words and the schema cannot:
as many weights as samples, frame indices that exist, endValue >= startValue,
events in time order and balanced.

usage: speedscope_check.py FILE
Prints one line per profile, "<type> <unit> <total> <name>" (the total is the
sum of the weights, or endValue - startValue for an evented profile); exits 1
with one line per problem when the file breaks a rule."""
import json
import sys

SCHEMA_URL = "https://www.speedscope.app/file-format-schema.json"
UNITS = {"bytes", "microseconds", "milliseconds", "nanoseconds", "none", "seconds"}
problems = []


def bad(where, what):
    problems.append(f"{where}: {what}")


def is_number(v):
    # JSON numbers; a bool is not one, though Python says it is an int.
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_object(where, v, required, types):
    """v is an object with every required key, and each known key of the right type."""
    if not isinstance(v, dict):
        bad(where, f"is {type(v).__name__}, not an object")
        return False
    for k in required:
        if k not in v:
            bad(where, f"lacks the required property '{k}'")
    for k, check in types.items():
        if k in v and not check(v[k]):
            bad(f"{where}.{k}", f"has the wrong type or value: {v[k]!r:.60}")
    return True


def is_string(v):
    return isinstance(v, str)


def number_array(v):
    return isinstance(v, list) and all(is_number(x) for x in v)


def check_frame(where, f):
    check_object(where, f, ["name"],
                 {"name": is_string, "file": is_string, "line": is_number, "col": is_number})


def check_sampled(where, p, nframes):
    before = len(problems)
    ok = check_object(where, p, ["endValue", "name", "samples", "startValue", "type", "unit", "weights"],
                      {"type": lambda v: v == "sampled", "name": is_string,
                       "unit": lambda v: v in UNITS, "startValue": is_number, "endValue": is_number,
                       "samples": lambda v: isinstance(v, list) and all(number_array(s) for s in v),
                       "weights": number_array})
    if not ok or len(problems) > before:
        return None
    if len(p["samples"]) != len(p["weights"]):
        bad(where, f"{len(p['samples'])} samples but {len(p['weights'])} weights")
    for i, s in enumerate(p["samples"]):
        for f in s:
            if f != int(f) or not 0 <= f < nframes:
                bad(f"{where}.samples[{i}]", f"frame {f} is not one of the {nframes} frames")
    if p["endValue"] < p["startValue"]:
        bad(where, "endValue is before startValue")
    return sum(p["weights"])


def check_evented(where, p, nframes):
    before = len(problems)
    event = lambda e: (isinstance(e, dict) and e.get("type") in ("O", "C") and is_number(e.get("at"))
                       and is_number(e.get("frame")))
    ok = check_object(where, p, ["endValue", "events", "name", "startValue", "type", "unit"],
                      {"type": lambda v: v == "evented", "name": is_string,
                       "unit": lambda v: v in UNITS, "startValue": is_number, "endValue": is_number,
                       "events": lambda v: isinstance(v, list) and all(event(e) for e in v)})
    if not ok or len(problems) > before:
        return None
    open_frames, last = [], p["startValue"]
    for i, e in enumerate(p["events"]):
        if e["at"] < last:
            bad(f"{where}.events[{i}]", "is earlier than the event before it")
        last = e["at"]
        if not 0 <= e["frame"] < nframes:
            bad(f"{where}.events[{i}]", f"frame {e['frame']} is not one of the {nframes} frames")
        if e["type"] == "O":
            open_frames.append(e["frame"])
        elif not open_frames or open_frames.pop() != e["frame"]:
            bad(f"{where}.events[{i}]", "closes a frame that is not the last one opened")
    if open_frames:
        bad(where, f"{len(open_frames)} frames are never closed")
    return p["endValue"] - p["startValue"]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    path = sys.argv[1]
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: not readable JSON: {e}")
    check_object("file", doc, ["$schema", "profiles", "shared"],
                 {"$schema": lambda v: v == SCHEMA_URL, "name": is_string,
                  "activeProfileIndex": is_number, "exporter": is_string,
                  "profiles": lambda v: isinstance(v, list),
                  "shared": lambda v: isinstance(v, dict) and isinstance(v.get("frames"), list)})
    if problems:
        return report(path)
    frames = doc["shared"]["frames"]
    for i, fr in enumerate(frames):
        check_frame(f"shared.frames[{i}]", fr)
    lines = []
    for i, p in enumerate(doc["profiles"]):
        where = f"profiles[{i}]"
        kind = p.get("type") if isinstance(p, dict) else None
        if kind == "sampled":
            total = check_sampled(where, p, len(frames))
        elif kind == "evented":
            total = check_evented(where, p, len(frames))
        else:
            bad(where, "is neither a sampled nor an evented profile")
            continue
        if total is not None:
            lines.append(f"{kind} {p['unit']} {total} {p['name']}")
    index = doc.get("activeProfileIndex", 0)
    if doc["profiles"] and not 0 <= index < len(doc["profiles"]):
        bad("file.activeProfileIndex", f"{index} is not one of the {len(doc['profiles'])} profiles")
    if problems:
        return report(path)
    print("\n".join(lines))
    return 0


def report(path):
    for p in problems:
        print(f"{path}: {p}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
