"""A control socket that answers every request with a hostile reply, for the PAM module's
robustness tests (run as the user it claims to serve).

Usage: hostile-daemon.py SOCKET MODE [CAPTURE] (until killed). MODE:
  garbage    a plausible length, then random bytes
  huge       a length of 4 GiB - 1
  zero       a length of 0
  truncated  a length, then half the JSON, then the end of the connection
  lies       a status that says the vault is locked and the user's, then a malformed unlock reply
  escapes    JSON full of escapes, unterminated strings and nesting
  forged     a reply whose kind and state hold raw newlines, each followed by a forged log line
  silent     reads and never answers
  close      closes at once
  slow-status  never answers a status (as a daemon whose status waits on item work); answers
             any other request with done, and appends "REQUEST from uid N" (N: its peer's
             uid) to CAPTURE
"""
import os
import random
import socket
import struct
import sys
import time

path, mode = sys.argv[1], sys.argv[2]
uid = os.getuid()
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o666)
server.listen(16)
held = []


def frame(text):
    data = text.encode()
    return struct.pack(">I", len(data)) + data


while True:
    client, _ = server.accept()
    client.settimeout(0.5)
    try:
        request = client.recv(65536)
    except OSError:
        request = b""
    if mode == "garbage":
        client.sendall(struct.pack(">I", 300) + random.randbytes(300))
    elif mode == "huge":
        client.sendall(b"\xff\xff\xff\xff" + b"{" * 100)
    elif mode == "zero":
        client.sendall(b"\0\0\0\0")
    elif mode == "truncated":
        client.sendall(struct.pack(">I", 200) + b'{"reply":"status","status":{"sta')
    elif mode == "lies":
        if b'"status"' in request:
            client.sendall(frame('{"reply":"status","status":{"state":"locked","owner":%d,"passcodeSet":true}}' % uid))
        else:
            client.sendall(frame('{"reply":"failure","exitCode":"x","message":"\\u0000\\n' + "\x01" * 500 + '"'))
    elif mode == "forged":
        client.sendall(frame('{"reply":"status\nFORGED pam_protfs(login:auth): /home: unlocked",'
                             '"status":{"state":"locked\nFORGED state","owner":%d,"passcodeSet":true}}' % uid))
    elif mode == "escapes":
        client.sendall(frame('{"reply\\":"status":"\\' + '[' * 5000 + '"state":"\\u12'))
    elif mode == "silent" or (mode == "slow-status" and b'"status"' in request):
        held.append(client)
        continue
    elif mode == "slow-status":
        _, peer_uid, _ = struct.unpack("3i", client.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        with open(sys.argv[3], "a") as capture:
            capture.write("%s from uid %d\n" % (request[8:].split(b"\0")[0].decode(errors="replace"), peer_uid))
        client.sendall(frame('{"reply":"done"}'))
    client.close()
