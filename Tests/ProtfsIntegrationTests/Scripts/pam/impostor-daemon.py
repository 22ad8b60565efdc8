"""Poses as a protfs daemon: listens on SOCKET and appends whatever a client sends to
CAPTURE (for a test that no password reaches it).

Usage: impostor-daemon.py SOCKET CAPTURE (until killed).
"""
import os
import socket
import sys

path, capture = sys.argv[1], sys.argv[2]
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o666)
server.listen(16)
open(capture, "ab").close()
while True:
    client, _ = server.accept()
    client.settimeout(2)
    try:
        while True:
            data = client.recv(65536)
            if not data:
                break
            with open(capture, "ab") as out:
                out.write(data)
    except OSError:
        pass
    client.close()
