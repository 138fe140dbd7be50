#!/usr/bin/env python3
"""An example webhook receiver for ButtonArbiter, on the Python standard library alone.

    python3 clients/hooks/receiver.py hook.secret [port]     (port 8080 by default)

It checks each request the way every Standard Webhooks library does (the PyPI package
`standardwebhooks` gives the same answer: `Webhook(secret_text).verify(body, headers)`),
acts once per `webhook-id` however often the server retries it, and answers 204. Acting
here is printing one line; put the page, the light or the message there instead.
A request with a wrong signature or a stale timestamp gets 401, which the server logs
and does not retry: a secret that differs between the two ends shows at once.
"""
import base64, collections, hashlib, hmac, http.server, json, sys, threading, time

TOLERANCE_S = 5 * 60  # the Standard Webhooks default: older timestamps are replays
MAX_BODY = 64 * 1024


def load_key(path):
    text = open(path).read().strip()
    if not text.startswith("whsec_"):
        sys.exit(f"{path}: expected whsec_<base64>")
    return base64.b64decode(text[len("whsec_"):])


def verified(key, headers, body):
    msg_id, stamp, signatures = (headers.get(h, "") for h in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not msg_id or not stamp.isdigit() or abs(time.time() - int(stamp)) > TOLERANCE_S:
        return False
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()).decode()
    # The header may carry several space-separated signatures (a key being rotated).
    return any(s.startswith("v1,") and hmac.compare_digest(s[3:], expected) for s in signatures.split())


class Seen:
    """The ids already acted on, the newest 100,000: a retry or a resend after a
    restart of the server carries the same id."""

    def __init__(self, size=100_000):
        self.ids, self.size, self.lock = collections.OrderedDict(), size, threading.Lock()

    def first(self, msg_id):
        with self.lock:
            if msg_id in self.ids:
                return False
            self.ids[msg_id] = True
            if len(self.ids) > self.size:
                self.ids.popitem(last=False)
            return True


printing = threading.Lock()


def say(line):
    # One write per line under a lock: deliveries arrive on several threads at once.
    with printing:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A server that stops mid-delivery resets its connection; it sends the event again.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def handler(key, seen):
    class Receiver(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keeps the server's connection between deliveries

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            if length > MAX_BODY:
                return self.answer(413)
            body = self.rfile.read(length)
            if not verified(key, self.headers, body):
                return self.answer(401)
            if seen.first(self.headers["webhook-id"]):
                event = json.loads(body)
                say(f"{event['type']} {event['panel']} {event.get('button', '')} owner={event.get('owner', '')} "
                    f"seq={event['seq']} time={event['time']} id={self.headers['webhook-id']}")
            self.answer(204)

        def answer(self, status):
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    return Receiver


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    key = load_key(sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) == 3 else 8080
    server = Server(("127.0.0.1", port), handler(key, Seen()))
    say(f"receiving on http://127.0.0.1:{server.server_address[1]}/")
    server.serve_forever()


if __name__ == "__main__":
    main()
