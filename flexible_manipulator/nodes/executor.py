"""The nodes' executor: rclpy's single-threaded callbacks, without rebuilding per callback.

rclpy's ``SingleThreadedExecutor`` does, for every callback it runs: gather its nodes'
entities in Python, enter each handle's context, build a new rcl wait set, make a `Task`
around a coroutine around the callback, and trigger its own guard condition twice (so
the next wait returns at once with nothing to do, and builds everything again). On the
lock-step path that is the largest part of a node's CPU time per tick (bench/README.md,
``bench_closed_loop.py``). `TickExecutor` runs the same callbacks with the same
arguments, in the same order within one wait (per node: waitables, timers,
subscriptions, guard conditions, clients, services), and

* gathers the entities once, and again only when a node's entities change (rclpy's
  nodes wake their executor for every entity they create or destroy; a node added);
* keeps one rcl wait set for them, cleared and refilled for each wait from a flat list of
  their handles made when they were gathered;
* finds the ready callbacks from the ready handles (a table from each handle's address to
  its entity, made then too), not by testing every entity;
* waits once per `spin_once`, with its timeout (rclpy adds a timer entity for it);
* calls a ready subscription's or timer's callback directly in the spinning thread (a
  timer's with a `TimerInfo` where its callback's signature asks for one, as rclpy does,
  the signature read again only when the callback changes: rclpy reads it at every call);
  services, clients, guard conditions and waitables go through rclpy's own ``_take_*``
  steps, so their arguments (responses, futures) are rclpy's.

A callback that awaits (a coroutine that does not finish in one step, e.g. on a client's
future) becomes an rclpy `Task`; while a task is pending the executor hands each
`spin_once` to rclpy's, which resumes it, and returns to its own once none is left.
Callback groups are not held on its own path: in one thread a group only matters while a
callback awaits, and that callback is then rclpy's task (which does not hold the group
either: a mutually exclusive group's other callbacks may run while it awaits). Exceptions
of a callback leave `spin_once`, as with rclpy's executor.
"""

import inspect

from rclpy.executors import SingleThreadedExecutor
from rclpy.exceptions import InvalidHandle, TimerCancelledError
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.client import Client
from rclpy.guard_condition import GuardCondition
from rclpy.service import Service
from rclpy.subscription import Subscription
from rclpy.task import Task
from rclpy.timer import Timer, TimerInfo
from rclpy.utilities import timeout_sec_to_nsec

# The entity kinds of a node, in the order their ready callbacks run after a wait.
KINDS = ('timers', 'subscriptions', 'guards', 'clients', 'services')


class TickExecutor(SingleThreadedExecutor):
    """A single-threaded executor that keeps its wait set between callbacks."""

    def __init__(self, *, context=None):
        """Create the executor (rclpy's arguments)."""
        super().__init__(context=context)
        self._current = False        # whether the wait set holds the nodes' entities
        self._entities = None        # [(node, {kind: tuple of entities}, waitables)]
        self._wait_set = None        # the rcl wait set of ``_key``
        self._own_guards = ()        # the executor's guard conditions in the wait set
        self._timer_arguments = {}   # timer: (its callback, the TimerInfo argument's name)
        self._adds = ()              # (the wait set's add method, handle) of each entity
        self._guards = ()            # the nodes' guard conditions, with their call order
        self._waitables = ()         # (call order, waitable) of the nodes' waitables
        self._ready_tables = ()      # (rcl kind, {handle address: (call order, entity)})

    def wake(self):
        """Wake the wait; the entities are gathered again before the next one.

        rclpy's nodes call this for every entity they create or destroy.
        """
        self._current = False
        super().wake()

    def add_node(self, node):
        """Add ``node`` (rclpy's); its entities join the wait set at the next wait."""
        self._current = False
        return super().add_node(node)

    def remove_node(self, node):
        """Remove ``node`` (rclpy's); its entities leave the wait set at the next wait."""
        self._current = False
        super().remove_node(node)

    def _refresh(self):
        """Build the wait set for the nodes' current entities, unless it is up to date."""
        if self._current:
            return
        entities = []
        counts = [0, 0, 0, 0, 0, 0]     # subscriptions, guards, timers, clients, services, events
        for node in self.get_nodes():
            groups = {kind: tuple(entity for entity in getattr(node, kind)
                                  if entity.callback_group is not None) for kind in KINDS}
            waitables = tuple(w for w in node.waitables if w.callback_group is not None)
            entities.append((node, groups, waitables))
            counts[0] += len(groups['subscriptions'])
            counts[1] += len(groups['guards'])
            counts[2] += len(groups['timers'])
            counts[3] += len(groups['clients'])
            counts[4] += len(groups['services'])
            for waitable in waitables:
                number = waitable.get_num_entities()
                counts[0] += number.num_subscriptions
                counts[1] += number.num_guard_conditions
                counts[2] += number.num_timers
                counts[3] += number.num_clients
                counts[4] += number.num_services
                counts[5] += number.num_events
        timers = {tmr for _node, groups, _waitables in entities for tmr in groups['timers']}
        self._timer_arguments = {tmr: known for tmr, known in self._timer_arguments.items()
                                 if tmr in timers}          # destroyed timers leave
        own = tuple(gc for gc in (self._guard, self._sigint_gc) if gc is not None)
        counts[1] += len(own)
        wait_set = _rclpy.WaitSet(*counts, self._context.handle)
        self._wait_set = wait_set
        self._entities, self._own_guards = entities, own
        # Call order within one wait: per node, waitables, timers, subscriptions, guard
        # conditions, clients, services (as rclpy's executor).
        adds, guards, waitables = [], [], []
        tables = {'timer': {}, 'subscription': {}, 'client': {}, 'service': {}}
        rcl = {'timers': ('timer', wait_set.add_timer),        # kind: (rcl kind, its add)
               'subscriptions': ('subscription', wait_set.add_subscription),
               'clients': ('client', wait_set.add_client),
               'services': ('service', wait_set.add_service)}
        order = 0
        for _node, groups, node_waitables in entities:
            for waitable in node_waitables:
                waitables.append((order, waitable))
                order += 1
            for kind in KINDS:
                for entity in groups[kind]:
                    if kind == 'guards':
                        guards.append((order, entity))
                    else:
                        rcl_kind, add = rcl[kind]
                        adds.append((add, entity.handle))
                        tables[rcl_kind][entity.handle.pointer] = (order, entity)
                    order += 1
        self._adds, self._guards, self._waitables = tuple(adds), tuple(guards), tuple(waitables)
        self._ready_tables = tuple(tables.items())
        self._current = True

    def _fill(self):
        """Clear the wait set and add every entity again (rcl empties it in each wait)."""
        wait_set = self._wait_set
        wait_set.clear_entities()
        for add, handle in self._adds:
            add(handle)
        for _order, gc in self._guards:
            if gc._executor_triggered:           # triggered, not yet handled: again
                gc.trigger()
            wait_set.add_guard_condition(gc.handle)
        for _order, waitable in self._waitables:
            waitable.add_to_wait_set(wait_set)
        for gc in self._own_guards:
            wait_set.add_guard_condition(gc.handle)

    def spin_once(self, timeout_sec=None):
        """Wait up to ``timeout_sec`` (None: forever) and run the callbacks then ready."""
        if self._tasks:                     # an awaiting callback: rclpy's loop resumes it
            super().spin_once(timeout_sec)
            return
        self._cb_iter = None                # rclpy's loop, if it ran, starts afresh next time
        if self._is_shutdown or not self._context.ok():
            return
        try:
            self._refresh()
            self._fill()
        except InvalidHandle:               # an entity destroyed since: gather again
            self._current = False
            return
        wait_set = self._wait_set
        wait_set.wait(timeout_sec_to_nsec(timeout_sec))
        if self._is_shutdown or not self._context.ok():
            return
        ready = [(order, waitable) for order, waitable in self._waitables
                 if waitable.is_ready(wait_set)]
        for kind, table in self._ready_tables:
            for pointer in wait_set.get_ready_entities(kind):
                entry = table.get(pointer)
                if entry is not None and (kind != 'timer' or entry[1].handle.is_timer_ready()):
                    ready.append(entry)
        if self._guards:
            triggered = set(wait_set.get_ready_entities('guard_condition'))
            for entry in self._guards:
                gc = entry[1]
                if gc.handle.pointer in triggered:
                    gc._executor_triggered = True
                if gc._executor_triggered:
                    ready.append(entry)
        if len(ready) > 1:
            ready.sort(key=_call_order)
        for _order, entity in ready:
            if isinstance(entity, Subscription):
                self._run_subscription(entity)
            elif isinstance(entity, Timer):
                self._run_timer(entity)
            else:
                self._finish(self._take(entity)(entity))

    def _take(self, entity):
        """Return rclpy's ``_take_*`` step for a ready waitable, guard, client or service."""
        if isinstance(entity, GuardCondition):
            return self._take_guard_condition
        if isinstance(entity, Client):
            return self._take_client
        if isinstance(entity, Service):
            return self._take_service
        return self._take_waitable

    def _run_subscription(self, sub):
        """Take one message of ``sub`` and call its callback (with the info if it takes it)."""
        try:
            taken = sub.handle.take_message(sub.msg_type, sub.raw)
        except InvalidHandle:               # destroyed by an earlier callback of this wait
            return
        if taken is None:
            return
        if sub._callback_type is Subscription.CallbackType.MessageOnly:
            result = sub.callback(taken[0])
        else:
            result = sub.callback(*taken)
        if hasattr(result, 'send'):         # an async callback: run it as a coroutine
            self._resume(result)

    def _run_timer(self, tmr):
        """Call a ready timer's callback, with a `TimerInfo` if its signature asks for one.

        What rclpy's ``_take_timer`` does (its `TimerInfo` from the same call, the argument
        found the same way), without a coroutine around the call.
        """
        try:
            with tmr.handle:
                info = tmr.handle.call_timer_with_info()
        except (InvalidHandle, TimerCancelledError):    # destroyed, or cancelled meanwhile
            return
        callback = tmr.callback
        if not callback:
            return
        known = self._timer_arguments.get(tmr)
        if known is None or known[0] is not callback:
            known = self._timer_arguments[tmr] = (callback, _timer_info_argument(callback))
        if known[1] is None:
            result = callback()
        else:
            result = callback(**{known[1]: TimerInfo(
                expected_call_time=info['expected_call_time'],
                actual_call_time=info['actual_call_time'], clock_type=tmr.clock.clock_type)})
        if hasattr(result, 'send'):         # an async callback: run it as a coroutine
            self._resume(result)

    def _finish(self, execute):
        """Run a ``_take_*`` step's coroutine function (None: nothing was taken)."""
        if execute is not None:
            self._resume(execute())

    def _resume(self, coroutine):
        """Drive ``coroutine``; if it awaits, hand it to rclpy's task loop."""
        try:
            coroutine.send(None)
        except StopIteration:
            return
        task = Task(coroutine, executor=self)
        with self._tasks_lock:
            self._tasks.append((task, None, None))
        self._guard.trigger()


def _call_order(entry):
    return entry[0]


def _timer_info_argument(callback):
    """Name of ``callback``'s first parameter annotated `TimerInfo`, or None (as rclpy)."""
    for parameter in inspect.signature(callback).parameters.values():
        if parameter.annotation == TimerInfo:
            return parameter.name
    return None
