"""A minimal coexist event client: subscribe, print each change's token, ack it (durable), stop after N.

Protocol 2 (the default): requests carry ids, replies must echo them, events come one transaction per
message ("framing": "transaction"). With --protocol 1 it speaks as a version-1 client: no ids, one event
per message.
"""
import json
import socket
import sys


def main(path, since, count, name=None, protocol=2):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    stream = sock.makefile("rwb")
    next_id = 0
    expected = {}

    def send(request, kind):
        nonlocal next_id
        if protocol >= 2:
            next_id += 1
            request["id"] = next_id
            expected[next_id] = kind
        stream.write((json.dumps(request) + "\n").encode())
        stream.flush()

    request = {"op": "subscribe", "since": since, "values": True}
    if protocol >= 2:
        request["framing"] = "transaction"
    if name:
        request["name"] = name
    send(request, "subscribed")
    seen = 0
    for line in stream:
        message = json.loads(line)
        kind = message["type"]
        if kind == "error":
            print("error", message["code"], file=sys.stderr)
            return 1
        if protocol >= 2 and "id" in message:
            if expected.pop(message["id"], None) != kind:
                print("unexpected reply", message, file=sys.stderr)
                return 1
        if kind == "subscribed" and protocol >= 2 and message.get("protocol") != 2:
            print("not protocol 2", message, file=sys.stderr)
            return 1
        if kind == "transaction":
            changes = message["changes"]
        elif kind == "event":
            changes = [message]
        else:
            continue
        for change in changes:
            print(change["token"], change["side"], change["entity"], change["change"], change["id"], flush=True)
        if name:
            send({"op": "ack", "token": changes[-1]["token"]}, "acked")
        seen += len(changes)
        if seen >= count:
            return 0
    return 1


if __name__ == "__main__":
    arguments = sys.argv[1:]
    version = 2
    if "--protocol" in arguments:
        at = arguments.index("--protocol")
        version = int(arguments[at + 1])
        del arguments[at : at + 2]
    sys.exit(
        main(arguments[0], int(arguments[1]), int(arguments[2]), arguments[3] if len(arguments) > 3 else None, version)
    )
