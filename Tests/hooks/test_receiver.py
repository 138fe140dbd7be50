#!/usr/bin/env python3
"""The README's example receiver (clients/hooks/receiver.py) against the real server:
each fire is verified and acted on once, a replayed request is not acted on again, a
forged one is refused; and every request the server signs passes the PyPI
`standardwebhooks` library's own check, the one receivers in Python run.

    python3 Tests/hooks/test_receiver.py .build/debug/arbiter
"""
import base64, http.server, json, os, queue, socket, subprocess, sys, tempfile, threading, time, urllib.error, urllib.request

from standardwebhooks.webhooks import Webhook

ARBITER = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/arbiter"
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
captured = queue.Queue()


class Capture(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        captured.put((dict(self.headers.items()), body))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lines(sock):
    buffer = b""
    while True:
        while b"\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        yield line.decode()


def expect(reader, prefix):
    for _, line in zip(range(100), reader):
        if line.startswith(prefix):
            return line
    raise AssertionError(f"no {prefix!r}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        secret_text = "whsec_" + base64.b64encode(os.urandom(32)).decode()
        secret = os.path.join(tmp, "hook.secret")
        with open(secret, "w") as f:
            f.write(secret_text + "\n")
        os.chmod(secret, 0o600)

        receiver = subprocess.Popen([sys.executable, os.path.join(ROOT, "clients/hooks/receiver.py"), secret, "0"],
                                    stdout=subprocess.PIPE, text=True)
        capture = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Capture)
        threading.Thread(target=capture.serve_forever, daemon=True).start()
        server = None
        try:
            printed = queue.Queue()
            threading.Thread(target=lambda: [printed.put(line) for line in receiver.stdout], daemon=True).start()
            heading = printed.get(timeout=10)
            assert heading.startswith("receiving on http://127.0.0.1:"), heading
            receiver_url = heading.split()[-1] + "alarm"
            hooks = [{"url": receiver_url, "buttons": ["sos"], "secret_file": "hook.secret"},
                     {"url": f"http://127.0.0.1:{capture.server_address[1]}/", "secret_file": "hook.secret"}]
            config = {"panels": [{"id": "ward", "buttons": [{"id": "sos"}], "hooks": hooks}]}
            with open(os.path.join(tmp, "config.json"), "w") as f:
                json.dump(config, f)
            port = free_port()
            server = subprocess.Popen([ARBITER, "--config", os.path.join(tmp, "config.json"), "--port", str(port),
                                       "--log-level", "warn"])
            for _ in range(100):
                try:
                    sock = socket.create_connection(("127.0.0.1", port))
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                raise AssertionError("the server did not start")
            reader = lines(sock)
            sock.sendall(b"HELLO alice\nJOIN ward\n")
            expect(reader, "OK JOIN ward")
            for _ in range(3):
                sock.sendall(b"DOWN ward sos\n")
                expect(reader, "FIRED ward sos")
                sock.sendall(b"UP ward sos\n")
                expect(reader, "OK UP")

            acted = [printed.get(timeout=10).split() for _ in range(3)]
            assert [a[:3] for a in acted] == [["fired", "ward", "sos"]] * 3, acted
            assert all(a[3] == "owner=alice" for a in acted), acted

            # Every request the server sent, as the library receivers use checks it.
            hook = Webhook(secret_text)
            requests = [captured.get(timeout=10) for _ in range(3)]
            for headers, body in requests:
                event = hook.verify(body, headers)
                assert event["type"] == "fired" and event["button"] == "sos" and "time" in event, event
            ids = {h["webhook-id"] for h, _ in requests}
            assert ids == {a[-1].removeprefix("id=") for a in acted}, (ids, acted)

            # A replay of a delivered request is answered and not acted on again; a forged
            # one is refused.
            headers, body = requests[0]
            replay = {k: headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
            replay["Content-Type"] = "application/json"
            with urllib.request.urlopen(urllib.request.Request(receiver_url, body, replay), timeout=5) as answer:
                assert answer.status == 204
            forged = dict(replay, **{"webhook-signature": "v1," + base64.b64encode(b"x" * 32).decode()})
            try:
                urllib.request.urlopen(urllib.request.Request(receiver_url, body, forged), timeout=5)
                raise AssertionError("a forged request was accepted")
            except urllib.error.HTTPError as e:
                assert e.code == 401, e.code
            sock.sendall(b"DOWN ward sos\n")
            expect(reader, "FIRED ward sos")
            fourth = printed.get(timeout=10).split()
            assert fourth[:3] == ["fired", "ward", "sos"] and fourth[-1] not in {a[-1] for a in acted}, fourth
            print("hooks: the example receiver verified and acted on each fire once; replay ignored, forgery refused; "
                  "standardwebhooks verified every request")
        finally:
            if server:
                server.terminate()
                server.wait(timeout=10)
            receiver.terminate()
            receiver.wait(timeout=10)
            capture.shutdown()


if __name__ == "__main__":
    main()
