"""torch.futures: a value that will be ready later, and callbacks chained on it (what a DDP comm hook returns).

A Future is completed once, by set_result/set_exception or, for one made by Work.get_future(), when its
collective completes. tinyddp has no background thread to complete a collective's Future: it completes when
someone asks (wait(), or done() finding the Work finished), and callbacks run then, on the asking thread. For a
comm hook that is when the reducer waits for the bucket, at the end of the backward, where 1.13 runs them too
at the latest; a callback therefore must not wait for something that happens after that wait.
"""
import threading
from typing import Generic, TypeVar

__all__ = ["Future"]

T = TypeVar("T")


class Future(Generic[T]):
    """Future[torch.Tensor] is the annotation DDP's comm hook check compares a hook's return annotation with."""

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._completed = False
        self._value = None
        self._error = None
        self._callbacks = []   # fn(self), run once, in registration order, when the Future completes
        self._pending = None   # (work, result): the collective whose completion completes this Future
        self._parent = None    # the Future this one was chained on by then(): completing it completes this one

    @classmethod
    def _of_work(cls, work, result):
        """The Future of a collective: completes with `result` (the list of tensors) when `work` completes."""
        fut = cls()
        fut._pending = (work, result)
        return fut

    def done(self):
        """True once completed; a Future chained on a collective polls its Work (and completes if it finished)."""
        self._drive(block=False)
        return self._completed

    def wait(self):
        """Blocks until completed and returns the value, or raises the exception the Future was completed with."""
        self._drive(block=True)
        with self._cond:
            self._cond.wait_for(lambda: self._completed)
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed Future (raises its exception, if it has one)."""
        if not self.done():
            raise RuntimeError("value() accessor should only be used when future is completed")
        if self._error is not None:
            raise self._error
        return self._value

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"set_exception expects an exception, got {type(result).__name__}")
        self._complete(None, result)

    def then(self, callback):
        """A Future completed with callback(self) once this one completes (or with what the callback raised).
        A chained Future waits by waiting for this one."""
        child = Future()
        child._parent = self

        def run(parent):
            try:
                child.set_result(callback(parent))
            except Exception as e:   # noqa: BLE001  (the callback's exception is the child's value, as in PyTorch)
                child.set_exception(e)

        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback):
        """Runs callback(self) when this Future completes (now, if it already has)."""
        with self._cond:
            if not self._completed:
                self._callbacks.append(callback)
                return
        callback(self)

    # ---- internals ----

    def _drive(self, block):
        """Completes the collective this Future (or the Future it was chained on, and so on) waits for: when
        `block`, by waiting for its Work; otherwise only if the Work already finished."""
        root = self
        while not root._completed and root._pending is None and root._parent is not None:
            root = root._parent
        if root._completed or root._pending is None:
            return
        if block or root._pending[0].is_completed():
            root._complete_pending()

    def _complete_pending(self):
        work, result = self._pending
        self._pending = None
        try:
            work.wait()
        except Exception as e:   # noqa: BLE001  (a failed collective fails its Future)
            self._complete(None, e)
            return
        self._complete(result, None)

    def _complete(self, value, error):
        with self._cond:
            if self._completed:
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future can "
                                   "only be marked completed once.")
            self._value, self._error, self._completed = value, error, True
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for callback in callbacks:
            callback(self)
