# A job platform's profiling endpoints, served by the job itself: POST /start, POST
# /stop, GET /report (the capture), GET /flamegraph (HTML), GET /stats (text).
import http.server
import os
import sys
import threading
import time

import memprof

CAPTURE = os.path.abspath("job.bin")


class Profiler(http.server.BaseHTTPRequestHandler):
    def reply(self, code, body, kind="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.end_headers()
        self.wfile.write(body if isinstance(body, bytes) else body.encode())

    def do_POST(self):
        try:
            if self.path == "/start":
                memprof.start(CAPTURE, overwrite=True)
                self.reply(200, "recording\n")
            elif self.path == "/stop":
                memprof.stop()
                self.reply(200, "stopped\n")
            else:
                self.reply(404, "no such endpoint\n")
        except (RuntimeError, FileNotFoundError) as e:  # started already, or not recording
            self.reply(409, f"{e}\n")

    def do_GET(self):
        if memprof.is_recording():
            return self.reply(409, "recording: POST /stop first\n")
        if not os.path.exists(CAPTURE):
            return self.reply(404, "no capture yet: POST /start, then /stop\n")
        if self.path == "/report":
            with open(CAPTURE, "rb") as f:
                self.reply(200, f.read(), "application/octet-stream")
        elif self.path == "/flamegraph":
            with open(memprof.flamegraph(CAPTURE, "job.html", ["--leaks"])) as f:
                self.reply(200, f.read(), "text/html")
        elif self.path == "/stats":
            self.reply(200, memprof.stats(CAPTURE))
        else:
            self.reply(404, "no such endpoint\n")


def job():
    data = []
    while True:
        data.append(bytearray(10000))
        del data[:-100]
        time.sleep(0.01)


if __name__ == "__main__":
    threading.Thread(target=job, daemon=True).start()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Profiler)
    print("port", server.server_address[1], flush=True)
    server.serve_forever()
