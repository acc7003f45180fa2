"""A real headless Chromium driven over the DevTools protocol (for test_view.py).

No browser-automation package: Chromium is started with ``--remote-debugging-port=0``,
prints the port it took, and each page is driven over its DevTools websocket with the
``websockets`` client (a dependency of viser): evaluate JavaScript in the page (read the
DOM's text, click a button), take a screenshot. Every wait is bounded and polls for a
condition (a loaded machine draws the page late).
"""

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

from websockets.sync.client import connect

BROWSER = shutil.which('chromium') or shutil.which('chromium-browser')


class Page:
    """One Chromium (headless, software WebGL) showing one page; use as a context manager."""

    def __init__(self, url, width=1280, height=960, patience=60.0):
        """Start Chromium on ``url`` and connect to the page (within ``patience`` s)."""
        self.profile = tempfile.mkdtemp(prefix='view_chromium_')
        # Without the ROS wheels' library path, which this Python process runs with.
        env = {k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'}
        self.process = subprocess.Popen(
            [BROWSER, '--headless', '--no-sandbox', '--use-angle=swiftshader',
             '--enable-unsafe-swiftshader', f'--window-size={width},{height}',
             '--remote-debugging-port=0', '--remote-allow-origins=*', '--no-first-run',
             f'--user-data-dir={self.profile}', url],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.ids = itertools.count(1)
        try:
            port = self._port(patience)
            deadline = time.monotonic() + patience
            while True:
                with urllib.request.urlopen(f'http://127.0.0.1:{port}/json/list',
                                            timeout=10) as reply:
                    pages = [t for t in json.load(reply) if t.get('type') == 'page']
                if pages or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert pages, 'Chromium opened no page'
            self.socket = connect(pages[0]['webSocketDebuggerUrl'], max_size=2 ** 26,
                                  open_timeout=patience)
        except BaseException:
            self.close()
            raise

    def _port(self, patience):
        """Return the DevTools port Chromium prints on its standard error."""
        deadline = time.monotonic() + patience
        for line in self.process.stderr:
            found = re.search(r'DevTools listening on ws://[^:]+:(\d+)/', line)
            if found:
                return int(found.group(1))
            assert time.monotonic() < deadline, 'Chromium printed no DevTools port'
        raise AssertionError('Chromium exited before it listened')

    def call(self, method, timeout=60.0, **params):
        """Send one DevTools command; return its result."""
        number = next(self.ids)
        self.socket.send(json.dumps({'id': number, 'method': method, 'params': params}))
        deadline = time.monotonic() + timeout
        while True:
            reply = json.loads(self.socket.recv(timeout=max(deadline - time.monotonic(),
                                                            0.01)))
            if reply.get('id') == number:
                assert 'error' not in reply, reply['error']
                return reply['result']

    def evaluate(self, expression):
        """Return the value of a JavaScript expression in the page."""
        result = self.call('Runtime.evaluate', expression=expression, returnByValue=True,
                           awaitPromise=True)
        assert 'exceptionDetails' not in result, result['exceptionDetails']
        return result['result'].get('value')

    def text(self):
        """Return the page's visible text (the DOM's innerText)."""
        return self.evaluate('document.body ? document.body.innerText : ""') or ''

    def wait_for(self, predicate, patience, what):
        """Poll ``predicate(self)`` every 0.3 s until true; fail after ``patience`` s."""
        deadline = time.monotonic() + patience
        while True:
            value = predicate(self)
            if value:
                return value
            assert time.monotonic() < deadline, (f'timed out after {patience} s: {what}; the '
                                                 f'page said: {self.text()[:1500]}')
            time.sleep(0.3)

    def click(self, label):
        """Click the enabled button whose text is ``label``; return whether there was one."""
        return self.evaluate(
            '(() => { const b = [...document.querySelectorAll("button")].find('
            f'x => x.innerText.trim() === {json.dumps(label)} && !x.disabled);'
            ' if (b) { b.click(); return true; } return false; })()')

    def press(self, label, done, patience, what, again=15.0):
        """Click the button ``label`` until ``done(self)`` holds, again every ``again`` s.

        Once, on a loaded machine, the panel did not read DISABLED within 60 s of a click
        (not reproduced; the cause not found); the actions pressed here are idempotent,
        and a user presses again as well.
        """
        deadline = time.monotonic() + patience
        while True:
            self.wait_for(lambda page: page.click(label), patience, f'{label!r} enabled')
            try:
                return self.wait_for(done, min(again, max(deadline - time.monotonic(), 0.1)),
                                     what)
            except AssertionError:
                if time.monotonic() > deadline:
                    raise

    def choose(self, label, option, patience=30.0):
        """Pick ``option`` in the dropdown labelled ``label`` (open it, click the option)."""
        opened = self.evaluate(
            '(() => { const l = [...document.querySelectorAll("label")].find('
            f'x => x.innerText.trim() === {json.dumps(label)});'
            ' const input = l && document.getElementById(l.htmlFor);'
            ' if (!input || input.disabled) return false; input.click(); return true; })()')
        assert opened, f'no enabled dropdown {label!r}'
        self.wait_for(lambda page: page.evaluate(
            '(() => { const o = [...document.querySelectorAll("[role=option]")].find('
            f'x => x.innerText.trim() === {json.dumps(option)});'
            ' if (o) { o.click(); return true; } return false; })()'), patience,
            f'option {option!r} of {label!r}')

    def inked(self, selector, rgb, tolerance=40):
        """Return, for each canvas matching ``selector``, its pixels within ``tolerance``
        of colour ``rgb`` (what a plot drew in a series' colour)."""
        return self.evaluate(
            f'[...document.querySelectorAll({json.dumps(selector)})].map(c => {{'
            ' const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;'
            ' let n = 0; for (let i = 0; i < d.length; i += 4) {'
            f' if (Math.abs(d[i] - {rgb[0]}) + Math.abs(d[i + 1] - {rgb[1]}) +'
            f' Math.abs(d[i + 2] - {rgb[2]}) < {tolerance} && d[i + 3] > 128) n++; }}'
            ' return n; })')

    def close_notifications(self):
        """Close the page's notifications (viser's note on software WebGL)."""
        self.evaluate('[...document.querySelectorAll(".mantine-Notification-closeButton")]'
                      '.forEach(b => b.click())')

    def screenshot(self, path):
        """Save a PNG screenshot at ``path``; return the RGB pixels (H x W x 3, 0-255)."""
        import matplotlib.image
        import numpy as np
        data = base64.b64decode(self.call('Page.captureScreenshot', format='png')['data'])
        with open(path, 'wb') as out:
            out.write(data)
        return (matplotlib.image.imread(path)[:, :, :3] * 255).round().astype(np.int64)

    def close(self):
        """Close the connection and end Chromium."""
        socket = getattr(self, 'socket', None)
        if socket is not None:
            socket.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        """Return the page."""
        return self

    def __exit__(self, *exc):
        """Close (`close`)."""
        self.close()
