"""Who may use the page's controls (ROS-free): the view's access gate.

The page's buttons pause, reset and enable the graph's nodes and switch the controller's
program. Served on a loopback address (127.0.0.1, ::1, ``localhost``) only this machine
reaches it, and every page may use them, as before. Served beyond it (``0.0.0.0``, a
network address, a host name), anyone who reaches the port would: there the page is
read-only (state, plots and scene, no buttons that act) unless an access token is
configured, and with one a page's controls act only once it has given the token (its
"Access" field; compared in constant time, `hmac.compare_digest`). A token configured on
a loopback page is required there too.

`Access` decides per page (viser's client id: the server's, not one the page can claim),
and logs each refused action, at most one line per `REFUSAL_LOG_PERIOD` (the refusals in
between counted in the next line), never the token.
"""

import hmac
import ipaddress
import threading
import time

from ..config_checks import ConfigError

OPEN, TOKEN, READ_ONLY = 'open', 'token', 'read-only'
REFUSAL_LOG_PERIOD = 10.0       # wall seconds between two log lines of refusals
MIN_TOKEN_LENGTH = 12           # characters of an access token at least


def is_loopback(host):
    """Tell whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``.

    Any other name, an empty host and the wildcard addresses are not: they may be reached
    from the network.
    """
    host = str(host).strip().strip('[]').lower()
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_token(value, name):
    """Return the access token ``value`` (a setting's check); '' is none.

    `ConfigError` if it is shorter than `MIN_TOKEN_LENGTH` or has spaces at its ends (the
    message never shows the value).
    """
    if value and (len(value) < MIN_TOKEN_LENGTH or value != value.strip()):
        raise ConfigError(f'{name}: an access token has {MIN_TOKEN_LENGTH} characters at '
                          'least, without spaces at its ends (its value is not shown)')
    return value


class Access:
    """The access gate of one page server (module doc); thread-safe.

    ``log(text)`` takes the refusal lines; ``clock()`` is wall time [s] (tests pass theirs).
    """

    def __init__(self, host, token='', log=print, clock=time.monotonic,
                 period=REFUSAL_LOG_PERIOD):
        """Gate a page served on ``host``, with the access ``token`` ('' for none)."""
        self._token = (token or '').encode()
        self.mode = TOKEN if token else (OPEN if is_loopback(host) else READ_ONLY)
        self.host = host
        self._log, self._clock, self._period = log, clock, period
        self._lock = threading.Lock()
        self._allowed = set()           # ids of the pages that gave the token
        self._last_log = None           # clock time of the last refusal line
        self.refused = 0                # refusals so far
        self._unlogged = 0              # refusals since the last line

    @property
    def controls(self):
        """Tell whether the page has controls at all (not read-only)."""
        return self.mode != READ_ONLY

    def describe(self):
        """Return a line on the mode (for the node's log; never the token)."""
        return {OPEN: f'controls open to every page (served on loopback {self.host})',
                TOKEN: f'controls act only for a page that gave the access token '
                       f'(served on {self.host})',
                READ_ONLY: f'read-only page: served on {self.host}, beyond loopback, without '
                           'an access token (parameter access_token)'}[self.mode]

    def allows(self, client):
        """Tell whether the page ``client`` (its id) may use the controls."""
        if self.mode == OPEN:
            return True
        with self._lock:
            return self.mode == TOKEN and client in self._allowed

    def unlock(self, client, presented):
        """Let page ``client`` use the controls if ``presented`` is the token; return whether.

        A wrong token is a refusal (logged, rate-limited).
        """
        if self.mode != TOKEN:
            return self.mode == OPEN
        if hmac.compare_digest(str(presented or '').encode(), self._token):
            with self._lock:
                self._allowed.add(client)
            return True
        self.refuse('unlock', client, 'wrong access token')
        return False

    def forget(self, client):
        """Forget page ``client`` (it closed): a new connection gives the token again."""
        with self._lock:
            self._allowed.discard(client)

    def check(self, action, client):
        """Return whether page ``client`` may do ``action``; a refusal is logged."""
        if self.allows(client):
            return True
        self.refuse(action, client, 'read-only page' if self.mode == READ_ONLY else
                    'no access token given on this page')
        return False

    def refuse(self, action, client, why):
        """Count a refused ``action`` of page ``client``; log it unless a line is recent."""
        with self._lock:
            self.refused += 1
            self._unlogged += 1
            now = self._clock()
            if self._last_log is not None and now - self._last_log < self._period:
                return
            self._last_log = now
            more, self._unlogged = self._unlogged - 1, 0
        extra = f' ({more} more refused since the last report)' if more else ''
        self._log(f'refused {action!r} from page {client}: {why}; it had no effect{extra}')
