#!/usr/bin/env python3
"""A raw client of the gpuscope queue socket, for the tests (no gpuscope code).

  qraw.py send SOCK LINE...   send each line (a newline added), print each response line;
                              then "closed" if the daemon closed the connection
  qraw.py big SOCK BYTES      one request line of BYTES bytes; print the response
  qraw.py flood SOCK N        N connections at once, each a ping: print
                              "answered=A refused=R closed=C hung=H"
  qraw.py idle SOCK SECONDS   connect, send nothing: print "closed after Ts" or "open"
  qraw.py half SOCK           half a request, then close
"""
import json
import socket
import sys
import time


def conn(path, timeout=10.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def readline(s, buf):
    """One line from s (buf: bytes already read); returns (line or None at EOF, rest)."""
    while b"\n" not in buf:
        try:
            c = s.recv(65536)
        except socket.timeout:
            return "<timeout>", b""
        except (ConnectionResetError, BrokenPipeError):
            return None, b""
        if not c:
            return (buf.decode(errors="replace") or None), b""
        buf += c
    line, _, rest = buf.partition(b"\n")
    return line.decode(errors="replace"), rest


def sendall(s, data):
    try:
        s.sendall(data)
        return True
    except (BrokenPipeError, ConnectionResetError):
        return False


def closed(s, buf):
    if buf:
        return False
    s.settimeout(2.0)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "send":
        s = conn(path)
        buf = b""
        for line in sys.argv[3:]:
            if not sendall(s, line.encode() + b"\n"):
                print("closed")
                return 0
            resp, buf = readline(s, buf)
            if resp is None:
                print("closed")
                return 0
            print(resp)
        if closed(s, buf):
            print("closed")
        return 0
    if mode == "big":
        size = int(sys.argv[3])
        s = conn(path)
        pad = size - len('{"op":"ls","x":""}\n')
        line = ('{"op":"ls","x":"' + "a" * max(pad, 0) + '"}\n').encode()
        sendall(s, line)
        resp, _ = readline(s, b"")
        print(resp if resp is not None else "closed")
        return 0
    if mode == "flood":
        nr = int(sys.argv[3])
        socks = []
        for _ in range(nr):
            try:
                socks.append(conn(path, 15.0))
            except OSError:
                socks.append(None)
        for s in socks:
            if s:
                sendall(s, b'{"op":"ping"}\n')
        answered = refused = shut = hung = 0
        for s in socks:
            if s is None:
                refused += 1
                continue
            resp, _ = readline(s, b"")
            if resp is None:
                shut += 1
            elif resp == "<timeout>":
                hung += 1
            else:
                try:
                    d = json.loads(resp)
                except ValueError:
                    d = {}
                if d.get("ok") is True:
                    answered += 1
                elif d.get("ok") is False and d.get("error"):
                    refused += 1
                else:
                    hung += 1
        for s in socks:
            if s:
                s.close()
        print("answered=%d refused=%d closed=%d hung=%d" % (answered, refused, shut, hung))
        return 0
    if mode == "idle":
        secs = float(sys.argv[3])
        s = conn(path)
        t0 = time.time()
        s.settimeout(secs)
        try:
            c = s.recv(65536)
            while c:
                c = s.recv(65536)
            print("closed after %.0fs" % (time.time() - t0))
        except socket.timeout:
            print("open")
        except (ConnectionResetError, BrokenPipeError):
            print("closed after %.0fs" % (time.time() - t0))
        return 0
    if mode == "half":
        s = conn(path)
        sendall(s, b'{"op":"ls","al')
        s.close()
        print("sent")
        return 0
    print("qraw.py: unknown mode %s" % mode, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
