#!/usr/bin/env python3
"""A stand-in for the cairn-exec module's relay and the node cairnds behind
it (DESIGN-MULTINODE.md), for testing a rank-0 cairnd without Flux.

    fakerelay.py SOCKET LOG [--state FILE] [--silent RANKS] [--run SECONDS]
                 [--ends-only]

Opens a node-relay stream to the cairnd at SOCKET. Each node-exec it gets is
answered, as a node would, with a `running` report, and after SECONDS (0.2
by default) with an `ended` one (status 0, or the signal's number if a
node-signal came first). Ranks in --silent (comma separated) never answer.
A node-exec for an execid already seen is answered from memory: nothing
"runs" twice. Every message from cairnd is appended to LOG as one JSON line
with a "t" key (seconds since start). SIGUSR1 makes the silent ranks answer
again (their hello, then what they would have said). --state FILE keeps
the nodes' memory across runs of this script, as a node's journal would:
one line {"execid", "id", "rank", "started": true} per command started.
Each report names its process's job ("id"), as a node's does.
With --ends-only a woken rank reports only what has ended, as a real
node's node-watch stream does (a process still running there is not
volunteered: rank 0 must remember to kill it).
"""
import json
import os
import select
import signal
import socket
import sys
import time

args = sys.argv[1:]
sock_path, log_path = args[0], args[1]
silent = set()
run_for = 0.2
if "--silent" in args:
    silent = {int(r) for r in args[args.index("--silent") + 1].split(",")}
if "--run" in args:
    run_for = float(args[args.index("--run") + 1])
state_path = args[args.index("--state") + 1] if "--state" in args else None
ends_only = "--ends-only" in args

t0 = time.time()
s = socket.socket(socket.AF_UNIX)
s.connect(sock_path)
f = s.makefile("rw")
log = open(log_path, "a")
procs = {}  # execid -> {"rank", "state", "t_end", "status"}
mt = [100]
wake = [False]
if state_path and os.path.exists(state_path):
    for line in open(state_path):
        e = json.loads(line)
        procs[e["execid"]] = {"rank": e["rank"], "id": e.get("id"),
                              "state": "running",
                              "t_end": time.time() + run_for, "status": 0}


def send(topic, payload):
    mt[0] += 1
    f.write(json.dumps({"topic": topic, "matchtag": mt[0], "payload": payload}) + "\n")
    f.flush()


def report(rank, execid):
    p = procs[execid]
    r = {"execid": execid, "state": p["state"], "host": "fake%d" % rank}
    if p.get("id") is not None:
        r["id"] = p["id"]
    if p["state"] == "running":
        r.update(pid=4000 + rank, starttime=1, bootid="fakeboot")
    else:
        r.update(status=p["status"], stdout="out of rank %d\n" % rank)
    send("node-report", {"rank": rank, "report": r})


def on_usr1(signum, frame):
    wake[0] = True


signal.signal(signal.SIGUSR1, on_usr1)
send("node-relay", {})
buf = ""
while True:
    now = time.time()
    for execid, p in procs.items():
        if p["state"] == "running" and now >= p["t_end"]:
            p["state"] = "ended"
            if p["rank"] not in silent:
                report(p["rank"], execid)
    if wake[0]:
        wake[0] = False
        for rank in sorted(silent):
            send("node-hello", {"rank": rank, "host": "fake%d" % rank})
        woken, silent = silent, set()
        for execid, p in procs.items():
            if p["rank"] in woken and not (ends_only and p["state"] == "running"):
                report(p["rank"], execid)
    try:
        ready, _, _ = select.select([s], [], [], 0.05)
    except InterruptedError:
        continue
    if not ready:
        continue
    data = s.recv(65536)
    if not data:
        break
    buf += data.decode()
    while "\n" in buf:
        line, buf = buf.split("\n", 1)
        msg = json.loads(line)
        p = msg.get("payload")
        if not p or "topic" not in p:
            continue  # an answer to our own request
        entry = dict(p, t=round(time.time() - t0, 3))
        log.write(json.dumps(entry) + "\n")
        log.flush()
        rank, topic, q = p["rank"], p["topic"], p["payload"]
        if topic == "node-exec":
            x = q["execid"]
            if x not in procs:
                procs[x] = {"rank": rank, "id": q.get("id"), "state": "running",
                            "t_end": time.time() + run_for, "status": 0}
                if state_path:
                    with open(state_path, "a") as sf:
                        sf.write(json.dumps({"execid": x, "id": q.get("id"),
                                             "rank": rank,
                                             "started": True}) + "\n")
            if rank not in silent:
                report(rank, x)
        elif topic == "node-signal" and q["execid"] in procs:
            pr = procs[q["execid"]]
            if pr["state"] == "running":
                pr["status"] = q["signum"]
                pr["t_end"] = 0
