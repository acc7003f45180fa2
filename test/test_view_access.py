"""Who may use the view's controls (`view.access`, `view.panel`, `nodes.view_node`).

Expected behaviour, from the task the gate answers: served on a loopback address
(127.0.0.1, ::1, localhost) every page's controls act, as before; served beyond it
without an access token the page is read-only (no buttons that act); with a token a
page's presses act only once it gave the token, compared in constant time; every refused
action has no effect and is logged, at most one line per period (the ones in between
counted), and the token is never in a log line.

Unit tests drive `Access` with a hand-made clock and `ControlPanel` on a real viser server
with the events a page's clicks make (its id); in a real headless Chromium (`browser.py`)
the view node served on 0.0.0.0 shows a read-only page without a token, and with one a
Disable press is refused until the page gave the token, then reaches the controller's
``~/enable`` service (the test's probe offers it).
"""

import asyncio
import signal
import socket
import time
from types import SimpleNamespace

import pytest

from flexible_manipulator.model_config import ConfigError
from flexible_manipulator.view.access import (Access, check_token, is_loopback, OPEN,
                                              READ_ONLY, TOKEN)

TOKEN_TEXT = 'correct-horse-battery-staple'


def test_loopback_hosts():
    """127.0.0.0/8, ::1 and localhost are loopback; the wildcards, names, '' are not."""
    for host in ('127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'):
        assert is_loopback(host), host
    for host in ('0.0.0.0', '::', '', '192.168.1.10', 'robot.local', 'localhost.evil'):
        assert not is_loopback(host), host


def test_the_gate_modes_and_the_token():
    """Loopback without token: open. Beyond it without token: read-only, every action
    refused (even with a 'token'). With a token (anywhere): a page acts once it gave the
    right one, a wrong one is refused; a page that closed gives it again."""
    lines = []
    assert Access('127.0.0.1', log=lines.append).mode == OPEN
    assert Access('::1').check('pause', 1)
    gate = Access('0.0.0.0', log=lines.append)
    assert gate.mode == READ_ONLY and not gate.controls
    assert not gate.unlock(1, '') and not gate.check('pause', 1)
    for host in ('0.0.0.0', '127.0.0.1'):
        gate = Access(host, TOKEN_TEXT, log=lines.append)
        assert gate.mode == TOKEN and gate.controls
        assert not gate.check('enable', 3)
        assert not gate.unlock(3, TOKEN_TEXT[:-1] + 'x')
        assert not gate.unlock(3, TOKEN_TEXT + ' ')
        assert not gate.check('enable', 3)
        assert gate.unlock(3, TOKEN_TEXT) and gate.check('enable', 3)
        assert not gate.check('enable', 4)          # another page: not unlocked
        gate.forget(3)
        assert not gate.check('enable', 3)
    assert all(TOKEN_TEXT not in line for line in lines)


def test_refusals_are_logged_at_most_once_a_period():
    """Three refusals within the period: one line, then the next after the period says
    two more were refused meanwhile; every line says it had no effect."""
    now, lines = [100.0], []
    gate = Access('0.0.0.0', log=lines.append, clock=lambda: now[0], period=10.0)
    for action in ('pause', 'reset', 'enable'):
        assert not gate.check(action, 5)
        now[0] += 1.0
    assert len(lines) == 1 and "'pause'" in lines[0] and 'no effect' in lines[0]
    now[0] += 10.0
    assert not gate.check('program', 6)
    assert len(lines) == 2 and "'program'" in lines[1] and '2 more refused' in lines[1]
    assert gate.refused == 4


def test_a_token_is_long_and_never_shown_when_refused():
    """'' is no token; a short one, or one with spaces at its ends, is refused with a
    message that does not show it."""
    assert check_token('', 'access_token') == ''
    assert check_token(TOKEN_TEXT, 'access_token') == TOKEN_TEXT
    for bad in ('short', ' ' + TOKEN_TEXT):
        with pytest.raises(ConfigError, match='access_token') as error:
            check_token(bad, 'access_token')
        assert bad.strip() not in str(error.value)


def free_port():
    """A TCP port free on the loopback interface now."""
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


def panel_on(access):
    """A `ControlPanel` on a real viser server; return (panel, server, requests)."""
    pytest.importorskip('viser', reason='viser (pip only) is not installed')
    import viser
    from flexible_manipulator.view.panel import ControlPanel
    server = viser.ViserServer(host='127.0.0.1', port=free_port(), verbose=False)
    requests = []
    return ControlPanel(server, lambda *r: requests.append(r), access), server, requests


def click(panel, action, page):
    """Run the click callback of ``action``'s button as page ``page``'s click does."""
    asyncio.run(panel.presser(action)(SimpleNamespace(client_id=page)))


def pick(panel, program, page):
    """Choose ``program`` in the dropdown as page ``page`` does (viser sets the value, then
    runs the update callback with the page's id)."""
    panel.program._impl.value = program
    asyncio.run(panel.choose(SimpleNamespace(client_id=page)))


def test_the_panel_has_no_buttons_read_only_and_gates_them_with_a_token():
    """Read-only: no buttons, a note, the node's calls on them do nothing. Token: a click
    of a page without it is refused (nothing requested, one log line), with it the action
    is requested; a refused page's choice of program is put back. Loopback: as before."""
    lines = []
    panel, server, requests = panel_on(Access('0.0.0.0', log=lines.append))
    try:
        assert not hasattr(panel, 'pause') and not hasattr(panel, 'program')
        assert 'Read-only page' in panel.read_only.content
        panel.set_available('plant', '')
        panel.set_programs(['joint_sine', 'hold'], 'hold')
        panel.set_reply('x', True, 'y')
    finally:
        server.stop()
    gate = Access('0.0.0.0', TOKEN_TEXT, log=lines.append)
    panel, server, requests = panel_on(gate)
    try:
        panel.set_programs(['joint_sine', 'hold'], 'joint_sine')
        click(panel, 'disable', 1)
        assert requests == [] and len(lines) == 1 and 'disable' in lines[0]
        pick(panel, 'hold', 1)                  # page 1 picks another program: put back
        assert panel.program.value == 'joint_sine'
        assert gate.unlock(2, TOKEN_TEXT)
        click(panel, 'disable', 2)
        pick(panel, 'hold', 2)
        click(panel, 'program', 2)
        assert requests == [('disable', None), ('program', 'hold')]
    finally:
        server.stop()
    panel, server, requests = panel_on(Access('localhost', log=lines.append))
    try:
        click(panel, 'pause', 9)
        assert requests == [('pause', None)]
    finally:
        server.stop()
    assert all(TOKEN_TEXT not in line for line in lines)


def type_into(page, label, text):
    """Type ``text`` into the page's text field labelled ``label`` (as keystrokes would)."""
    import json
    focused = page.evaluate(
        '(() => { const l = [...document.querySelectorAll("label")].find('
        f'x => x.innerText.trim() === {json.dumps(label)});'
        ' let input = l && document.getElementById(l.htmlFor), up = l;'
        ' while (up && !(input && input.tagName === "INPUT")) {'
        ' up = up.parentElement; input = up && up.querySelector("input"); }'
        ' if (!input) return false; input.focus(); input.select(); return true; })()')
    assert focused, f'no field {label!r}'
    page.call('Input.insertText', text=text)


def buttons(page):
    """The labels of the page's buttons."""
    return page.evaluate('[...document.querySelectorAll("button")].map(b => b.innerText'
                         '.trim())')


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.timeout(400)
def test_the_page_off_loopback_is_read_only_or_needs_the_token(domain_id, probe, start_node,
                                                               tmp_path):
    """The view node on 0.0.0.0 in Chromium (module doc), fed a controller's status and
    offered its ``enable`` service by the probe: without a token the page says read-only
    and has no control buttons; with the token (a parameters file) Disable is refused
    (the page says so, the service is not called, the node logs it), a wrong token is
    refused, the right one unlocks, and Disable then calls the service with false. The
    token is in neither log."""
    from browser import BROWSER, Page
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from std_srvs.srv import SetBool
    from flexible_manipulator.view import status
    assert BROWSER, 'no chromium: the test set-up installs Debian\'s chromium (setup_env.sh)'
    calls = []

    def enable(request, response):
        calls.append(request.data)
        response.success, response.message = True, 'ok'
        return response
    probe.node.create_service(SetBool, '/controller/enable', enable)
    diagnostics = probe.publisher(DiagnosticArray, '/diagnostics')
    values = {'active_program': 'joint_sine', 'enabled': 'True', 'fault': '',
              'degraded': '', 'state_stale': 'False', 'programs': 'joint_sine, hold'}
    controller = DiagnosticStatus(name='controller' + status.CONTROLLER_SUFFIX, values=[
        KeyValue(key=k, value=v) for k, v in values.items()])

    def feed(seconds=0.3):
        """Publish the controller's status and serve calls for ``seconds``."""
        diagnostics.publish(DiagnosticArray(status=[controller]))
        probe.spin_for(seconds)

    closed_port, token_port = free_port(), free_port()
    params = tmp_path / 'view.yaml'
    params.write_text(f'view:\n  ros__parameters:\n    access_token: "{TOKEN_TEXT}"\n')
    closed = start_node('flexible_manipulator.nodes.view_node', params_file=None,
                        parameters=[('host', '0.0.0.0'), ('port', closed_port)],
                        name='closed')
    gated = start_node('flexible_manipulator.nodes.view_node', params_file=str(params),
                       parameters=[('host', '0.0.0.0'), ('port', token_port)], name='gated')
    for node in (closed, gated):
        probe.spin_until(lambda: 'view of the graph at' in node.output(), 60, 'the view up')
    assert 'read-only page' in closed.output()
    assert 'only for a page that gave the access token' in gated.output()

    # The gated page loads while the closed one is checked.
    with Page(f'http://127.0.0.1:{token_port}') as gated_page:
        with Page(f'http://127.0.0.1:{closed_port}') as page:
            page.wait_for(lambda p: 'Controller: TRACKING' in p.text() or feed(), 120,
                          'the status panel')
            assert 'Read-only page' in page.text()
            labels = buttons(page)
            assert not {'Pause plant', 'Disable controller', 'Switch program',
                        'Unlock controls'} & set(labels), labels

        page = gated_page
        page.wait_for(lambda p: 'Controller: TRACKING' in p.text() or feed(), 120,
                      'the status panel')
        page.wait_for(lambda p: p.click('Disable controller') or feed(), 60,
                      'Disable enabled (the service seen)')
        page.wait_for(lambda p: 'disable: refused' in p.text() or feed(), 30, 'the refusal')
        refused = time.monotonic()
        probe.spin_until(lambda: 'refused' in gated.output(), 30, 'the refusal logged')
        type_into(page, 'Access token', 'not-the-token-at-all')
        page.wait_for(lambda p: p.click('Unlock controls') or feed(), 30, 'Unlock')
        page.wait_for(lambda p: 'wrong access token' in p.text() or feed(), 30,
                      'the wrong token refused')
        type_into(page, 'Access token', TOKEN_TEXT)
        page.wait_for(lambda p: p.click('Unlock controls') or feed(), 30, 'Unlock')
        page.wait_for(lambda p: 'controls unlocked' in p.text() or feed(), 30, 'unlocked')
        # No call from the refused press: the probe serves calls in the waits above and
        # here, over 2 s at least since the refusal showed.
        feed()
        while time.monotonic() < refused + 2.0:
            feed()
        assert calls == []
        page.wait_for(lambda p: p.click('Disable controller') or feed(), 30, 'Disable')
        deadline = time.monotonic() + 60
        while not calls:
            assert time.monotonic() < deadline, 'the service was not called'
            feed()
        assert calls == [False]
    for node in (closed, gated):
        assert node.alive()
        node.process.send_signal(signal.SIGINT)
        assert node.wait(30) == 0
        assert TOKEN_TEXT not in node.output()
