"""Domain ids claimed by local graphs (`ros_domain`).

Expected: while one process holds a claim on an id, another process asking from that id
gets a different one (a flock is per open file, so a second process is what a second graph
is); once the claim is closed, the id is free again; with every id held, the claim raises
naming the range.
"""

import subprocess
import sys

import pytest

from flexible_manipulator import ros_domain

CLAIM_FROM = ('import sys; from flexible_manipulator.ros_domain import claim_domain_id; '
              'print(claim_domain_id(int(sys.argv[1]) - 1)[0])')


def claimed_elsewhere(start_id):
    """The id another process gets when it claims from ``start_id`` on."""
    out = subprocess.run([sys.executable, '-c', CLAIM_FROM, str(start_id)], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    return int(out)


def test_a_held_id_goes_to_no_other_process_and_is_free_once_closed():
    domain_id, lock = ros_domain.claim_domain_id()
    assert domain_id in ros_domain.DOMAIN_IDS
    try:
        other = claimed_elsewhere(domain_id)
        assert other != domain_id and other in ros_domain.DOMAIN_IDS
    finally:
        lock.close()
    # Free again, unless another test session on this machine took it meanwhile.
    again = claimed_elsewhere(domain_id)
    assert again == domain_id or again != other


def test_every_id_held_is_an_error_naming_the_range(monkeypatch, tmp_path):
    monkeypatch.setattr(ros_domain, 'LOCKS', str(tmp_path))
    monkeypatch.setattr(ros_domain, 'DOMAIN_IDS', range(1, 3))
    held = [ros_domain.claim_domain_id(0)[1]]
    held.append(ros_domain.claim_domain_id(0)[1])
    try:
        # flock is per open file: a second claim in this process is refused too.
        with pytest.raises(RuntimeError, match=r'every ROS domain id 1\.\.2 is held'):
            ros_domain.claim_domain_id(0)
    finally:
        for lock in held:
            lock.close()
