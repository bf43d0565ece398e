#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""redis-py (Debian's python3-redis) against `sift_bf --serve`.

Usage: serve_redis_py.py PORT TESTDATA_DIR

Replays every case of TESTDATA_DIR/replies.json (RedisBloom 2.8.20's
recorded replies) through redis-py's execute_command, then drives the
module API r.bf() (create, add, madd, exists, mexists, insert, info, card,
scandump/loadchunk) the way an application would. Exits 1 listing each
mismatch. Run by serve_clients_test.cc with the port of an in-process
server.
"""
import json
import os
import sys

import redis


def meta_key(name):
    return "bf:{%s}:meta" % name


def expected(reply):
    t = reply["type"]
    if t == "nil":
        return None
    if t == "integer":
        return reply["value"]
    if t == "array":
        return [expected(e) for e in reply["value"]]
    text = bytes.fromhex(reply["hex"]) if "hex" in reply else \
        reply["value"].encode("latin-1")
    if t == "error":
        return ("error", text.decode("latin-1"))
    return text


def same(got, want):
    if isinstance(want, tuple):  # an error: redis-py drops known prefixes
        if not isinstance(got, redis.ResponseError):
            return False
        text = want[1]
        return str(got) in (text, text.split(" ", 1)[-1])
    if isinstance(got, Exception):
        return False
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            same(g, w) for g, w in zip(got, want))
    if want == b"OK" and got is True:  # redis-py's callback for SET etc.
        return True
    return got == want


def run(r, args):
    try:
        return r.execute_command(*[a.encode("latin-1") for a in args])
    except redis.ResponseError as e:
        return e


def replay_recorded(r, testdata):
    failures = []
    with open(os.path.join(testdata, "replies.json")) as f:
        cases = json.load(f)["cases"]
    for case in cases:
        r.flushall()
        for step in case["setup"]:
            args = list(step["args"])
            if len(args) == 3 and args[0] == "SET":
                args[1] = meta_key(args[1])
            got = run(r, args)
            if not same(got, expected(step["reply"])):
                failures.append("%s setup %s: %r" % (case["name"], args, got))
        got = run(r, case["args"])
        if not same(got, expected(case["reply"])):
            failures.append("%s: %s gave %r, RedisBloom %r" %
                            (case["name"], case["command"], got,
                             expected(case["reply"])))
    return failures, len(cases)


def module_api(r):
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append("%s: got %r, want %r" % (what, got, want))

    r.flushall()
    bf = r.bf()
    check("create", bf.create("py", 0.001, 1000), True)
    check("add", bf.add("py", "a"), 1)
    check("add again", bf.add("py", "a"), 0)
    check("madd", bf.madd("py", "a", "b", "c"), [0, 1, 1])
    check("exists", bf.exists("py", "b"), 1)
    check("exists absent", bf.exists("py", "zz"), 0)
    check("mexists", bf.mexists("py", "a", "zz", "c"), [1, 0, 1])
    check("card", r.execute_command("BF.CARD", "py"), 3)  # no bf.card()
    info = bf.info("py")
    check("info capacity", info.capacity, 1000)
    check("info items", info.insertedNum, 3)
    check("info filters", info.filterNum, 1)
    check("insert", bf.insert("py2", ["x", "y"], capacity=50, error=0.01),
          [1, 1])
    # SCANDUMP into LOADCHUNK: a copy answering alike.
    it = 0
    chunks = []
    while True:
        it, data = bf.scandump("py", it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        # redis-py 4.3 has no callback for BF.LOADCHUNK: the raw b"OK".
        check("loadchunk", bf.loadchunk("pycopy", it, data), b"OK")
    check("copy mexists", bf.mexists("pycopy", "a", "b", "c", "zz"),
          [1, 1, 1, 0])
    # Plain commands pass through unchanged, as do pipelines.
    check("set", r.set("k", "v"), True)
    check("get", r.get("k"), b"v")
    p = r.pipeline(transaction=True)
    p.incr("n")
    p.incr("n")
    check("multi/exec", p.execute(), [1, 2])
    return failures


def main():
    port, testdata = int(sys.argv[1]), sys.argv[2]
    r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=20)
    failures, n = replay_recorded(r, testdata)
    failures += module_api(r)
    for f in failures:
        print("MISMATCH", f)
    print("redis-py: %d recorded cases, module API: %d mismatches" %
          (n, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
