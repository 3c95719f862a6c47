"""Drive Debian's headless chromium over the Chrome DevTools Protocol (stdlib only).

The browser is started with --remote-debugging-pipe: it reads commands on its
fd 3 and writes replies and events on its fd 4, one JSON message each,
terminated by a NUL byte. Every wait has a time limit, and the browser (its
whole process group) is always killed at the end, on errors and on signals.

    with cdp.Browser(artifacts="artifacts") as b:
        page = b.open("file:///tmp/report.html")
        page.wait_for("window.memprofDebug")
        print(page.evaluate("memprofDebug.visibleFrames()"))
        page.click(100, 200)
        page.screenshot("flamegraph")
        page.check()          # no exception, console error, error log entry or dialog

A failure raises Failure with a one-line reason.
"""
import base64
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio", "--password-store=basic",
         "--remote-debugging-pipe"]
KEYS = {"Escape": 27, "Enter": 13, "Tab": 9, "ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39,
        "ArrowDown": 40, "Home": 36, "End": 35, "PageDown": 34, "PageUp": 33, " ": 32}


class Failure(Exception):
    pass


def navigated(e):
    """Whether a failed call failed because the page's document went (a navigation)."""
    m = str(e).lower()
    return ("navigated or closed" in m or "execution context was destroyed" in m or
            "cannot find context" in m)


def find_chromium():
    for c in (os.environ.get("CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if c and os.access(c, os.X_OK):
            return c
    return None


class Browser:
    def __init__(self, artifacts=".", width=1280, height=900, timeout=20.0, limit=300.0, chromium=None):
        self.artifacts = artifacts
        self.timeout = timeout
        self.width, self.height = width, height
        os.makedirs(artifacts, exist_ok=True)
        exe = chromium or find_chromium()
        if not exe:
            raise Failure("chromium not found")
        self.profile = tempfile.mkdtemp(prefix="memprof-chromium-")
        self.lock = threading.Condition()
        self.replies = {}
        self.events = []
        self.listeners = []
        self.next_id = 0
        self.dead = None
        self.proc = None
        # Our ends and the child's ends, kept above fd 4 so the dup2s below cannot clobber them.
        cmd_r, cmd_w = os.pipe()
        ev_r, ev_w = os.pipe()
        cmd_r, ev_w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (cmd_r, ev_w))

        def child_fds():
            os.dup2(cmd_r, 3)
            os.dup2(ev_w, 4)

        self.log = open(os.path.join(artifacts, "chromium.log"), "ab")
        argv = [exe] + FLAGS + ["--user-data-dir=" + self.profile,
                                "--window-size=%d,%d" % (width, height), "about:blank"]
        self._old_handlers = {}
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            self._old_handlers[s] = signal.signal(s, self._on_signal)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                         close_fds=False, preexec_fn=child_fds, start_new_session=True)
        finally:
            for fd in (cmd_r, ev_w):
                os.close(fd)
        self.wfd, self.rfd = cmd_w, ev_r
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.watchdog = threading.Timer(limit, self._expire, args=(limit,))
        self.watchdog.daemon = True
        self.watchdog.start()
        try:
            self.version = self.send("Browser.getVersion")["product"]
        except Exception:
            self.close()
            raise

    # ---- transport ----
    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self.rfd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                with self.lock:
                    self.dead = self.dead or "the browser closed its pipe"
                    self.lock.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw.decode("utf-8"))
                with self.lock:
                    if "id" in msg:
                        self.replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                        for fn in list(self.listeners):
                            fn(msg)
                    self.lock.notify_all()

    def _write(self, msg):
        data = json.dumps(msg).encode("utf-8") + b"\0"
        while data:
            n = os.write(self.wfd, data)
            data = data[n:]

    def post(self, method, params=None, session=None):
        """Send a command without waiting for its reply; returns its id."""
        with self.lock:
            if self.dead:
                raise Failure("%s: %s" % (method, self.dead))
            self.next_id += 1
            mid = self.next_id
            msg = {"id": mid, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            self._write(msg)
        return mid

    def _wait(self, ready, timeout, what):
        """Waits, holding the lock, until ready() returns something other than None."""
        limit = timeout or self.timeout
        deadline = time.monotonic() + limit
        with self.lock:
            while True:
                v = ready()
                if v is not None:
                    return v
                left = deadline - time.monotonic()
                if self.dead:
                    raise Failure("waiting for %s: %s" % (what, self.dead))
                if left <= 0:
                    raise Failure("no %s within %.0f s" % (what, limit))
                self.lock.wait(left)

    def send(self, method, params=None, session=None, timeout=None):
        mid = self.post(method, params, session)
        msg = self._wait(lambda: self.replies.pop(mid, None), timeout, "reply to " + method)
        if "error" in msg:
            raise Failure("%s: %s" % (method, msg["error"].get("message", msg["error"])))
        return msg.get("result", {})

    def wait_event(self, pred, start=0, timeout=None, what="event"):
        """The first event from index start on that satisfies pred."""
        return self._wait(lambda: next((e for e in self.events[start:] if pred(e)), None), timeout, what)

    def mark(self):
        with self.lock:
            return len(self.events)

    # ---- pages ----
    def open(self, url, dark=False):
        """A new tab showing url, with every error reporter on; waits for its load event."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, target, session)
        page.setup(dark)
        page.navigate(url)
        return page

    def allow_downloads(self, directory):
        os.makedirs(directory, exist_ok=True)
        self.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": os.path.abspath(directory),
                                                  "eventsEnabled": True})

    # ---- the end, whatever happens ----
    def _expire(self, limit):
        with self.lock:
            self.dead = "time limit of %.0f s reached" % limit
            self.lock.notify_all()
        self._kill()

    def _on_signal(self, signum, frame):
        self.close()
        raise SystemExit(128 + signum)

    def _kill(self):
        p = self.proc
        if p is None:
            return
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        # Helpers that left the group still name our private profile directory.
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if ("--user-data-dir=" + self.profile).encode() in f.read():
                        os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass

    def close(self):
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None and not self.dead:
                self.send("Browser.close", timeout=5)
                self.proc.wait(timeout=5)
        except (Failure, OSError, subprocess.TimeoutExpired):
            pass
        self._kill()
        self.proc = None
        self.watchdog.cancel()
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)
        for s, h in self._old_handlers.items():
            signal.signal(s, h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Page:
    def __init__(self, browser, target, session):
        self.b = browser
        self.target = target
        self.session = session
        self.errors = []
        self.dialogs = []
        self.requests = []
        self.contexts = {}
        self.sessions = {session}
        self.media = {"features": []}
        self.auto_attach = {}
        browser.listeners.append(self._event)

    def _event(self, msg):
        """Runs on the reader thread with the lock held: record, never wait."""
        sid = msg.get("sessionId")
        if sid not in self.sessions:
            return
        m, p = msg["method"], msg.get("params", {})
        if m == "Target.attachedToTarget":
            # An out-of-process iframe (a sandboxed one, say), paused before its first
            # script: watch it like the page, give it the page's emulation, then let it run.
            # Commands to one session are carried out in order, so it never runs unwatched.
            child = p["sessionId"]
            self.sessions.add(child)
            frame = p.get("targetInfo", {}).get("type") == "iframe"
            for domain in ("Runtime", "Log", "Page", "Network", "Inspector") if frame else ("Runtime", "Log"):
                self.b.post(domain + ".enable", None, child)
            if frame:
                self.b.post("Emulation.setEmulatedMedia", self.media, child)
                self.b.post("Target.setAutoAttach", self.auto_attach, child)
            self.b.post("Runtime.runIfWaitingForDebugger", None, child)
        elif m == "Runtime.executionContextDestroyed":
            self._forget(lambda v: v == (sid, p.get("executionContextId")))
        elif m == "Runtime.executionContextsCleared":
            self._forget(lambda v: v[0] == sid)
        if m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            text = d.get("exception", {}).get("description") or d.get("text", "exception")
            self.errors.append("exception: %s (%s:%s)" % (text.splitlines()[0], d.get("url", ""), d.get("lineNumber", "")))
        elif m == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            self.errors.append("console.%s: %s" % (p["type"], args))
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            e = p["entry"]
            self.errors.append("log (%s): %s %s" % (e.get("source"), e.get("text"), e.get("url", "")))
        elif m == "Page.javascriptDialogOpening":
            self.dialogs.append("%s: %s" % (p.get("type"), p.get("message")))
            self.b.post("Page.handleJavaScriptDialog", {"accept": False}, self.session)
        elif m == "Network.requestWillBeSent":
            self.requests.append(p["request"]["url"])
        elif m == "Inspector.targetCrashed":
            self.errors.append("the page crashed")
        elif m == "Runtime.executionContextCreated":
            aux = p["context"].get("auxData", {})
            if aux.get("isDefault"):
                self.contexts[aux.get("frameId")] = (sid, p["context"]["id"])

    def _forget(self, gone):
        """Drops the contexts of documents that are gone (the caller holds the lock)."""
        for frame in [f for f, v in self.contexts.items() if gone(v)]:
            del self.contexts[frame]

    def send(self, method, params=None, timeout=None):
        return self.b.send(method, params, self.session, timeout)

    def setup(self, dark):
        for domain in ("Runtime", "Log", "Page", "Network", "Inspector"):
            self.send(domain + ".enable")
        self.media = {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]}
        self.auto_attach = {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}
        self.send("Target.setAutoAttach", self.auto_attach)
        self.send("Emulation.setDeviceMetricsOverride", {"width": self.b.width, "height": self.b.height,
                                                         "deviceScaleFactor": 1, "mobile": False})
        self.send("Emulation.setEmulatedMedia", self.media)

    def _loaded(self, start, timeout, what):
        self.b.wait_event(lambda e: e.get("sessionId") == self.session and e["method"] == "Page.loadEventFired",
                          start, timeout, "load event for " + what)

    def navigate(self, url, timeout=None):
        start = self.b.mark()
        res = self.send("Page.navigate", {"url": url})
        if res.get("errorText"):
            raise Failure("navigate %s: %s" % (url, res["errorText"]))
        self._loaded(start, timeout, url)
        self.frame_id = res["frameId"]

    def reload(self, timeout=None):
        start = self.b.mark()
        self.send("Page.reload", {"ignoreCache": True})
        self._loaded(start, timeout, "the reload")

    def frame(self, url):
        """The id of the child frame showing url, in this process or out of it."""
        def walk(node):
            for c in node.get("childFrames", []):
                if c["frame"]["url"] == url:
                    return c["frame"]["id"]
                found = walk(c)
                if found:
                    return found
            return None
        # An out-of-process frame's target may name its document a moment after the load event.
        deadline = time.monotonic() + self.b.timeout
        while True:
            found = walk(self.send("Page.getFrameTree")["frameTree"])
            if not found:
                for t in self.b.send("Target.getTargets")["targetInfos"]:
                    if t["type"] == "iframe" and t["url"] == url:
                        found = t["targetId"]
            if found:
                return found
            if time.monotonic() > deadline:
                raise Failure("no frame shows %s" % url)
            time.sleep(0.05)

    def evaluate(self, expr, timeout=None, frame=None, navigates=False):
        """The value of a JavaScript expression (promises are awaited) in the page or
        in a child frame (an id from frame()); page exceptions fail. navigates: the
        expression may make the page load another document (a reload from an event
        handler): the document can go before the reply comes, which is then no
        failure (None)."""
        params = {"expression": expr, "returnByValue": True, "awaitPromise": True, "userGesture": True}
        try:
            if frame is None:
                res = self.b.send("Runtime.evaluate", params, self.session, timeout)
            else:
                res = self._evaluate_in(frame, params, timeout)
        except Failure as e:
            if navigates and navigated(e):
                return None
            raise
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise Failure("evaluate %r: %s" % (expr[:80], d.get("exception", {}).get("description", d.get("text"))))
        return res["result"].get("value")

    def _evaluate_in(self, frame, params, timeout):
        """Runtime.evaluate in the frame's current document; when that document goes away
        between the lookup and the call, again in the one that replaces it."""
        deadline = time.monotonic() + (timeout or self.b.timeout)
        while True:
            with self.b.lock:
                if not self.b.lock.wait_for(lambda: frame in self.contexts, max(0.0, deadline - time.monotonic())):
                    raise Failure("no script context for frame %s" % frame)
                session, params["contextId"] = self.contexts[frame]
            try:
                return self.b.send("Runtime.evaluate", params, session, timeout)
            except Failure as e:
                if "context" not in str(e).lower() or time.monotonic() > deadline:
                    raise
                with self.b.lock:
                    self._forget(lambda v: v == (session, params["contextId"]))

    def wait_for(self, expr, timeout=None, what=None, frame=None):
        """Polls until the expression is truthy; returns its value."""
        deadline = time.monotonic() + (timeout or self.b.timeout)
        while True:
            try:
                v = self.evaluate(expr, frame=frame)
            except Failure as e:
                # (A document on its way out, as after a reload: the next one is waited for.)
                if not navigated(e) or time.monotonic() > deadline:
                    raise
                v = None
            if v:
                return v
            if time.monotonic() > deadline:
                raise Failure("timed out waiting for %s" % (what or expr))
            time.sleep(0.05)

    def mouse(self, kind, x, y, buttons=0):
        p = {"type": kind, "x": x, "y": y, "button": "left" if kind != "mouseMoved" else "none",
             "buttons": buttons, "clickCount": 1 if kind != "mouseMoved" else 0}
        self.send("Input.dispatchMouseEvent", p)

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, 1)
        self.mouse("mouseReleased", x, y)

    def drag(self, x0, y0, x1, y1, steps=8):
        self.mouse("mouseMoved", x0, y0)
        self.mouse("mousePressed", x0, y0, 1)
        for i in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps, 1)
        self.mouse("mouseReleased", x1, y1)

    def key(self, key):
        code = KEYS.get(key, 0)
        base = {"key": key, "code": "Space" if key == " " else key, "windowsVirtualKeyCode": code,
                "nativeVirtualKeyCode": code}
        self.send("Input.dispatchKeyEvent", dict(base, type="rawKeyDown"))
        if key in ("Enter", " "):
            self.send("Input.dispatchKeyEvent", dict(base, type="char", text="\r" if key == "Enter" else " "))
        self.send("Input.dispatchKeyEvent", dict(base, type="keyUp"))

    def type_text(self, text):
        self.send("Input.insertText", {"text": text})

    def screenshot(self, name, full=True):
        """Saves artifacts/<name>.png (the whole page, up to 6000 px tall); returns the path."""
        params = {"format": "png"}
        if full:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "scale": 1,
                          "width": max(1, min(size["width"], 4000)), "height": max(1, min(size["height"], 6000))})
        data = self.send("Page.captureScreenshot", params, timeout=60)["data"]
        path = os.path.join(self.b.artifacts, name + ".png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def check(self, allowed_requests=()):
        """Fails on any page error, dialog, or request other than the page itself and allowed ones."""
        if self.dialogs:
            raise Failure("a dialog opened: %s" % self.dialogs[0])
        if self.errors:
            raise Failure("page error: %s" % "; ".join(self.errors[:5]))
        extra = [u for u in self.requests if u not in allowed_requests and not u.startswith(("data:", "blob:"))]
        if extra:
            raise Failure("unexpected requests: %s" % ", ".join(extra[:5]))


def run(main):
    """Runs main() for a test script: exit 0, or 1 with the reason on stderr."""
    try:
        main()
    except Failure as e:
        sys.stderr.write("FAIL: %s\n" % e)
        sys.exit(1)
    sys.exit(0)
