#!/usr/bin/env python3
"""Runs coexistd as systemd would (SYSTEMD_EXEC_PID its own pid, INVOCATION_ID set) against a journal socket
this script listens on, and prints every entry it sent as one JSON object per line.

Run inside a private mount namespace whose /run is a fresh tmpfs (unshare --mount, mount -t tmpfs), so the
socket at /run/systemd/journal/socket is this script's and the host's journal is untouched:

    journal_capture.py COEXISTD_PATH --database STORE --socket SOCK --allow-uids 4242 ...

It waits for the daemon's "coexistd ready" entry, connects once (refused unless its uid is allowed), then
stops the daemon with SIGTERM and prints what it logged. Entries are read in the native protocol: KEY=value lines, or KEY,
a 64-bit little-endian length and the value for values holding a newline.
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time


def parse(datagram):
    fields = {}
    data = datagram
    while data:
        newline = data.find(b"\n")
        equals = data.find(b"=")
        if equals != -1 and (newline == -1 or equals < newline):
            end = newline if newline != -1 else len(data)
            fields[data[:equals].decode()] = data[equals + 1 : end].decode()
            data = data[end + 1 :]
        else:
            name = data[:newline].decode()
            (length,) = struct.unpack("<Q", data[newline + 1 : newline + 9])
            fields[name] = data[newline + 9 : newline + 9 + length].decode()
            data = data[newline + 9 + length + 1 :]
    return fields


def main():
    os.makedirs("/run/systemd/journal", exist_ok=True)
    journal = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    journal.bind("/run/systemd/journal/socket")
    journal.settimeout(0.2)
    arguments = sys.argv[1:]
    path = arguments[arguments.index("--socket") + 1]
    environment = dict(os.environ, INVOCATION_ID="0123456789abcdef0123456789abcdef")
    environment.pop("JOURNAL_STREAM", None)
    # exec from a shell whose pid is the daemon's: SYSTEMD_EXEC_PID=$$ names the daemon itself. With
    # AS_DESCENDANT set, it names another process: the daemon is a service's descendant, not the service.
    own = "1" if os.environ.get("AS_DESCENDANT") else "$$"
    shell = ["/bin/sh", "-c", "SYSTEMD_EXEC_PID=" + own + ' exec "$@"', "sh"] + arguments
    # The daemon's stdout is not this script's: the test reads this script's to its end.
    daemon = subprocess.Popen(shell, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    entries = []
    deadline = time.monotonic() + 60
    ready = False
    if os.environ.get("AS_DESCENDANT"):
        # Nothing reaches the journal: give the daemon a second to start (and log), then stop it.
        time.sleep(1.0)
        deadline = 0
    while not ready and time.monotonic() < deadline and daemon.poll() is None:
        try:
            entry = parse(journal.recv(1 << 20))
        except socket.timeout:
            continue
        entries.append(entry)
        ready = entry.get("MESSAGE", "").startswith("coexistd ready")
    if ready:
        try:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.settimeout(10)
            client.connect(path)
            client.recv(4096)
            client.close()
        except OSError:
            pass
    # WAIT_FOR_EVENTS=conflict,parked-object: the daemon is stopped only once it logged each of these
    # COEXIST_EVENTs (its bridge works after "ready"), or after two minutes.
    wanted = set(filter(None, os.environ.get("WAIT_FOR_EVENTS", "").split(",")))
    deadline = time.monotonic() + 120
    while wanted and time.monotonic() < deadline and daemon.poll() is None:
        wanted -= {entry.get("COEXIST_EVENT") for entry in entries}
        try:
            entries.append(parse(journal.recv(1 << 20)))
        except socket.timeout:
            continue
    time.sleep(0.3)
    daemon.send_signal(signal.SIGTERM)
    stderr = daemon.communicate(timeout=30)[1]
    while True:
        try:
            entries.append(parse(journal.recv(1 << 20)))
        except socket.timeout:
            break
    for entry in entries:
        print(json.dumps(entry))
    print(json.dumps({"STDERR": stderr.decode(errors="replace"), "STATUS": str(daemon.returncode)}))


main()
