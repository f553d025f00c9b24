"""A minimal coexist event client: subscribe, print each event's token, ack it (durable), stop after N."""
import json
import socket
import sys


def main(path, since, count, name=None):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    stream = sock.makefile("rwb")
    request = {"op": "subscribe", "since": since, "values": True}
    if name:
        request["name"] = name
    stream.write((json.dumps(request) + "\n").encode())
    stream.flush()
    seen = 0
    for line in stream:
        message = json.loads(line)
        if message["type"] == "event":
            print(message["token"], message["side"], message["entity"], message["change"], message["id"], flush=True)
            if name:
                stream.write((json.dumps({"op": "ack", "token": message["token"]}) + "\n").encode())
                stream.flush()
            seen += 1
            if seen >= count:
                return 0
        elif message["type"] == "error":
            print("error", message["code"], file=sys.stderr)
            return 1
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None))
