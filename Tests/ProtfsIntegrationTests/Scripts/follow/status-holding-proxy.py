#!/usr/bin/env python3
# A daemon too busy to answer status (FollowTests, the slow-status scenario): listens on
# SOCKET in place of a protfs daemon whose socket was moved to REAL_SOCKET, holds every
# status request unanswered, and passes every other request to the real daemon and its reply
# back. Appends each request's name to LOG. Usage: status-holding-proxy.py SOCKET REAL_SOCKET
# LOG (until killed).
import json, os, socket, struct, sys, threading

path, real, log = sys.argv[1:4]
held = []


def read_exactly(connection, count):
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def pump(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for end in (source, sink):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(client):
    try:
        prefix = read_exactly(client, 8)
        header = read_exactly(client, struct.unpack(">I", prefix[4:])[0])
    except (EOFError, OSError):
        client.close()
        return
    request = json.loads(header).get("request", "?")
    with open(log, "a") as out:
        out.write(request + "\n")
    if request == "status":
        held.append(client)
        return
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.connect(real)
    upstream.sendall(prefix + header)
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    pump(upstream, client)


server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o666)
server.listen(16)
while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
