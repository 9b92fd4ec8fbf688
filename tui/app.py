"""The benchtui Textual app: screens over a read-mostly store.

The app opens its own Store for the main thread (quick queries); workers
open their own connection (SQLite handles are per thread). Errors from any
action become notifications (see ``_dispatch_action``) so no traceback
ever reaches the screen.
"""
from __future__ import annotations

import time
import traceback
from functools import partial
from pathlib import Path
from typing import Any

from benchtui.tui.config import load_key_config
from textual import events
from textual.app import App
from textual.binding import Binding

# A notice's width (app.tcss's Toast rule): Textual's 60 cells, at most this share of a narrow
# screen (Textual's 50% wrapped a notice to a word or two a line at 80 columns).
TOAST_WIDTH, TOAST_MAX_PERCENT = 60, 70


class BenchApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "benchtui"
    # ctrl+p opens benchtui's own palette (tui/widgets/jump_palette.py, which lists
    # the system commands too): the binding keeps Textual's action name, so Textual
    # adds no ctrl+p of its own and its footer still shows the key.
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        # Ctrl-C quits as q does (asking first while runs are going), not Textual's
        # "press ctrl+q to quit" notice; a focused text field still copies with it
        Binding("ctrl+c", "quit", "Quit", id="app.interrupt", show=False),
        Binding("question_mark", "help", "Help", id="app.help"),
        # priority: modal screens (help) cut the app's other bindings off
        Binding("ctrl+p", "command_palette", "Jump", id="app.palette", show=False, priority=True),
    ]

    def __init__(self, workbench: Any, *, config_path: Path | None = None, store_path: Path | None = None,
                 scan_on_start: bool = False) -> None:
        super().__init__()
        self.workbench = workbench
        self._scan_requested = scan_on_start
        self.store_path = Path(store_path or workbench.store_path)
        self._store = None
        self.key_config = load_key_config(config_path)
        self.errors: list[str] = []  # every error shown as a notification; tests read it
        self.store_damaged = ""  # the damage message once the store is found damaged (engine.store.database)
        self._after_first_frame: list | None = []  # None once the first screen is out whole
        self.prefetched_matrix = None  # an engine.store.queries.MatrixPrefetch (run_app), taken by the matrix
        self._answer_screen = None  # the kept AnswerScreen (open_answer)
        self._read_ahead_token: object | None = None  # open_read_ahead's latest
        self._gc_timer = None  # collect_when_idle's
        self._last_input = 0.0  # time.monotonic() of the last key or mouse event

    # -- lifecycle --------------------------------------------------------------
    def after_first_frame(self, callback) -> None:
        """Call ``callback`` once the first screen is on the terminal whole (at
        once if it has been): the first frame written. ``call_after_refresh``
        is too early at start-up: Textual renders the first screen inside its
        start-up batch, where nothing reaches the terminal, and runs those
        callbacks before the frame that does. The rescan waits for this: its
        imports would otherwise hold the GIL while that frame is drawn."""
        if self._after_first_frame is None:
            self.call_later(callback)
        else:
            self._after_first_frame.append(callback)

    def _display(self, screen, renderable) -> None:  # Textual's one place that writes frames
        super()._display(screen, renderable)
        if self._after_first_frame is None or renderable is None or self._batch_count:
            return
        # The first frame written is whole: every screen's KeysFooter has its keys in
        # it (Textual's Footer added them a refresh late).
        self._let_the_frame_out()
        callbacks, self._after_first_frame = self._after_first_frame, None
        for callback in callbacks:
            self.call_later(callback)

    def _let_the_frame_out(self, limit_s: float = 0.02) -> None:
        """Textual hands each frame to a writer thread, which needs the GIL for
        every step of writing it; with this thread going straight on to more
        work (the next refresh, the rescan), the writer waited a switch
        interval (5 ms) at each step, and the first frame reached the terminal
        ~20 ms after it was made. So step aside until the writer's queue is
        empty (a private detail of Textual's drivers; where it is missing, two
        short naps), at most ``limit_s``, once, at start-up."""
        queue = getattr(getattr(self._driver, "_writer_thread", None), "_queue", None)
        deadline = time.monotonic() + limit_s
        time.sleep(0.0005)
        while queue is not None and queue.qsize() and time.monotonic() < deadline:
            time.sleep(0.0005)
        time.sleep(0.0005)  # its last write and flush

    def _prune(self, *nodes, parent=None):
        """Textual's, except for a popped screen: once it is removed, Textual asks its
        parent (the app) for a layout, which the app hands to the screen now shown,
        and that screen was drawn whole as it resumed: a second frame the same as the
        first (the matrix at 140x45: ~25 ms, after every `esc` back). A screen is no
        part of another screen's layout; what changes under the mouse is still looked at."""
        from textual.screen import Screen

        if parent is not self or not nodes or not all(isinstance(node, Screen) for node in nodes):
            return super()._prune(*nodes, parent=parent)
        removal = super()._prune(*nodes, parent=None)
        if self._screen_stack and self.screen._running:
            self._update_mouse_over(self.screen)
        return removal

    def get_driver_class(self):
        """Textual's, except that on Linux and macOS the escape key is not held
        back ~100 ms (tui/input_driver.py)."""
        driver = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if driver is LinuxDriver:
            from benchtui.tui.input_driver import PromptEscapeDriver

            return PromptEscapeDriver
        return driver

    def get_default_screen(self):
        from benchtui.tui.screens.matrix import MatrixScreen

        return MatrixScreen()

    def on_mount(self) -> None:
        if self.key_config.keymap:
            self.set_keymap(self.key_config.keymap)
        for problem in self.key_config.problems:
            self.notify(problem, severity="warning", timeout=8)

    def consume_scan_request(self) -> bool:
        """True once if the app was started with ``scan_on_start`` (the matrix
        shows the stored index first, then rescans in its worker)."""
        requested, self._scan_requested = self._scan_requested, False
        return requested

    @property
    def store(self):
        """The main thread's connection (quick reads), opened on first use."""
        self._refuse_damaged()
        if self._store is None:
            from benchtui.store.database import Store

            self._store = Store(self.store_path)
        return self._store

    def _refuse_damaged(self) -> None:
        if self.store_damaged:
            from benchtui.store.database import StoreDamaged

            raise StoreDamaged(self.store_damaged)

    def mark_store_damaged(self, message: str) -> None:
        """From here on every read and write of the store is refused with ``message``."""
        if not self.store_damaged:
            self.store_damaged = message
            self.report_error("", message)

    def on_unmount(self) -> None:
        if self._store is not None:
            self._store.close()
        self._restore_gc()

    def open_store(self):
        """A fresh connection for a worker thread."""
        from benchtui.store.database import Store

        self._refuse_damaged()
        return Store(self.store_path)

    def report_error(self, what: str, error: BaseException | str) -> None:
        from benchtui.store.database import StoreDamaged, damage_message, is_damage

        if isinstance(error, StoreDamaged):  # found by a Store, already in words: touch it no more
            self.store_damaged = self.store_damaged or str(error)
        elif isinstance(error, BaseException) and is_damage(error):  # the store broke under us: say what to do
            error = damage_message(self.store_path, str(error))
            self.store_damaged = self.store_damaged or error  # and touch it no more
        message = f"{what}: {error}" if what else str(error)
        self.errors.append(message)
        self.log.error(message)
        self.notify(message[:300], severity="error", timeout=8)

    def notify(self, message: str, **kwargs) -> None:
        super().notify(message, **kwargs)
        self.fit_notifications()

    def fit_notifications(self) -> None:
        """Drop the oldest notices while the stack would not fit the screen: Textual's
        rack scrolls them off its top, and a notice cut there reads as a stray word."""
        from rich.text import Text

        notices = list(self._notifications)
        room = self.size.height - 2  # the rack's own bottom margin and the footer
        width = max(min(TOAST_WIDTH, self.size.width * TOAST_MAX_PERCENT // 100) - 3, 10)  # border and padding
        used, keep = 0, 0
        for notice in reversed(notices):
            lines = len(Text(notice.message).wrap(self.console, width)) + (1 if notice.title else 0)
            used += lines + 3  # padding above and below, the margin above
            if used > room and keep:
                break
            keep += 1
        if keep < len(notices):
            for notice in notices[:len(notices) - keep]:
                self._unnotify(notice, refresh=False)
            self._refresh_notifications()

    async def _dispatch_action(self, namespace: Any, action_name: str, params: Any) -> bool:
        # A bug behind a key becomes a notification and the screen stays alive
        # (an exception escaping a handler would stop that screen's message loop).
        try:
            return await super()._dispatch_action(namespace, action_name, params)
        except Exception as error:
            self.log.error("".join(traceback.format_exception(error)))
            self.report_error(f"{action_name} failed: {type(error).__name__}", error)
            return True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "command_palette" and type(self.screen).__name__ == "ConfirmScreen":  # noqa: SIM103 - the branches read as the rule they state
            return False  # a question waits for its answer: no jumping away from it
        return True

    async def action_command_palette(self) -> None:
        """ctrl+p: the jump palette, over whatever screen is up (mounted there the first time)."""
        from textual.command import CommandPalette

        screen = self.screen
        if isinstance(screen, CommandPalette):  # Textual's theme picker (the Theme command)
            return
        palette = await self.mount_palette(screen)
        if not palette.is_open:
            palette.open()

    async def mount_palette(self, screen):
        """``screen``'s jump palette (hidden until it opens), mounted if it has none."""
        from benchtui.tui.widgets.jump_palette import JumpPalette

        palette = getattr(screen, "_jump_palette", None)
        if palette is None or not palette.is_attached:
            palette = screen._jump_palette = JumpPalette()
            await screen.mount(palette)
        return palette

    # -- navigation (used by screens and the jump palette) ----------------------
    def jump_matrix(self, model: str | None = None, challenge: str | None = None) -> None:
        from benchtui.tui.screens.matrix import MatrixScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, MatrixScreen):
            self.pop_screen()
        if isinstance(self.screen, MatrixScreen):
            self.screen.focus_cell(model=model, challenge=challenge)

    def open_answer(self, model: str, challenge: str, relpath: str | None = None) -> None:
        """The answer screen is built once and kept: building it is most of
        what opening an answer cost. A kept screen not on the stack is filled first and
        shows itself once its data is in (AnswerScreen.open); otherwise a new one."""
        from benchtui.tui.screens.answer import AnswerScreen

        kept = self._answer_screen
        if kept is not None and kept.is_mounted and kept not in self.screen_stack:
            kept.open(model, challenge, relpath)
            return
        screen = AnswerScreen(model, challenge, relpath)
        if kept is None:
            self.keep_answer_screen(screen)
        self.push_screen(screen)

    def keep_answer_screen(self, screen=None) -> None:
        """Keep ``screen`` (by default a new, empty one, composed now off screen) for
        open_answer to reuse."""
        from benchtui.tui.screens.answer import AnswerScreen

        if self._answer_screen is not None:
            return
        self._answer_screen = screen or AnswerScreen()
        self.install_screen(self._answer_screen, "answer")  # not removed when popped
        if screen is None:
            self._get_screen(self._answer_screen)  # Textual's: registers it, so it composes and mounts

    # -- the cyclic garbage collector ----------------------------------------------
    # Textual makes cyclic garbage as it draws (every Strip that caches itself), so
    # Python's collector runs often, at whatever allocation tips it over: the middle
    # of a key. A full collection over the dashboard's heap took 60-160 ms at 50 x
    # 200 (half the opens of an answer paid one). Once start-up is over the collector
    # is driven from here instead: what start-up built is frozen out of its sight;
    # the young objects (where that garbage is) are collected in the pauses between
    # keys, when no key or click came for GC_IDLE_S (a few ms), or at once past
    # GC_MAX_PENDING new objects (holding a key down must not grow the heap without
    # bound); a full collection (tens of ms) waits for a longer pause, GC_FULL_IDLE_S.
    GC_IDLE_S = 0.25
    GC_FULL_IDLE_S = 2.0
    GC_CHECK_S = 0.1
    GC_MIN_PENDING = 2_000  # fewer new objects than this: nothing worth a collection
    GC_MAX_PENDING = 100_000

    def collect_when_idle(self) -> None:
        """Take the collector over (once, after the start-up rescan: warm_up)."""
        import gc

        if self._gc_timer is not None:
            return
        gc.collect()
        gc.freeze()  # the session's long-lived objects (the matrix, Textual, the kept screens)
        gc.disable()
        self._gc_timer = self.set_interval(self.GC_CHECK_S, self._collect_if_idle)

    def _collect_if_idle(self) -> int | None:
        """The generation collected now, if any."""
        import gc

        young, _, older = gc.get_count()  # new tracked objects (net); young collections since a full one
        idle = time.monotonic() - self._last_input
        if idle >= self.GC_FULL_IDLE_S and older >= 10:
            gc.collect(2)
            return 2
        if young >= self.GC_MAX_PENDING or (idle >= self.GC_IDLE_S and young >= self.GC_MIN_PENDING):
            gc.collect(1)
            return 1
        return None

    async def on_event(self, event) -> None:  # every event the app gets: nothing imported here
        if isinstance(event, events.InputEvent):
            self._last_input = time.monotonic()
        await super().on_event(event)

    def _restore_gc(self) -> None:
        """The collector back as it was (the app is done; `benchtui` enables it too)."""
        import gc

        if self._gc_timer is not None:
            gc.unfreeze()
            gc.enable()

    def warm_up(self) -> None:
        """In a worker thread, once the start-up rescan is over: import what the screens
        the matrix opens with one key need, compile Python's highlight query, and build
        the answer screen and the leaderboard, so that the first of each opens as fast as
        the later ones."""
        try:
            import benchtui.tui.screens.answer  # noqa: F401  (rich.syntax, TabbedContent, TextArea, engine.grading.grades…)
            import benchtui.tui.screens.compare  # noqa: F401
            import benchtui.tui.screens.grades  # noqa: F401
            import benchtui.tui.screens.transcript  # noqa: F401
            from benchtui.tui.widgets.code_view import highlight_query

            highlight_query("python")
            self.call_from_thread(self.keep_answer_screen)
            from benchtui.tui.screens.leaderboard import keep_board

            keep_board(self)  # the leaderboard of the store as scanned: `l` then shows it at once
            self.call_from_thread(self.collect_when_idle)
        except Exception as exc:  # only a head start: opening works without it
            self.log.warning(f"warm-up: {exc!r}")

    # How long a key that opens a screen waits for the screen's data before showing it
    # anyway (it fills in when the data comes): a frame drawn once, whole, if the read
    # is quick, and no key that seems to do nothing if it is not.
    READ_AHEAD_WAIT_S = 0.25

    def open_read_ahead(self, screen) -> None:
        """Push ``screen`` (a ReadAheadScreen) once its data is read, in a worker; the
        latest screen asked for wins (a second key before the first shows drops it)."""
        token = self._read_ahead_token = object()
        state = {"shown": False}
        screen.waiting_for_read_ahead = True

        def show(messages, from_reader: bool) -> None:
            if state["shown"]:
                if from_reader:  # the app stopped waiting for them
                    screen.deliver_read_ahead(messages)
                return
            if self._read_ahead_token is not token:
                return  # another screen was asked for since, before this one showed
            state["shown"] = True
            if from_reader:  # read in time (None: failed; the screen reads for itself)
                screen.read_ahead_messages, screen.waiting_for_read_ahead = messages, False
            self.push_screen(screen)

        def read() -> None:
            try:
                messages = screen.read_ahead(self)
            except Exception:
                messages = None  # the screen reads for itself, and reports what went wrong
            try:  # noqa: SIM105 - a best-effort step: try/except keeps the skipped failure visible where it is
                self.call_from_thread(show, messages, True)
            except RuntimeError:
                pass  # the app is closing

        self.run_worker(read, thread=True, group="read-ahead", exit_on_error=False)
        self.set_timer(self.READ_AHEAD_WAIT_S, partial(show, None, False))

    def open_transcript(self, model: str, challenge: str, relpath: str) -> None:
        from benchtui.tui.screens.transcript import TranscriptScreen

        self.open_read_ahead(TranscriptScreen(model, challenge, relpath))

    def open_compare(self, model: str, challenge: str, other: str | None = None) -> None:
        from benchtui.tui.screens.compare import CompareScreen

        self.open_read_ahead(CompareScreen(model, challenge, other))

    def open_grades(self, model: str, challenge: str) -> None:
        from benchtui.tui.screens.grades import GradesScreen

        self.open_read_ahead(GradesScreen(model, challenge))

    def open_runs(self, pairs: list[tuple[str, str]] | None = None, scope: str = "") -> None:
        from benchtui.tui.screens.runs import RunsScreen

        self.push_screen(RunsScreen(pairs or [], scope))

    def open_leaderboard(self) -> None:
        from benchtui.tui.screens.leaderboard import LeaderboardScreen

        self.push_screen(LeaderboardScreen())

    async def action_quit(self) -> None:
        """Quit; while runs are going, ask first (quitting cancels them)."""
        from benchtui.tui.screens.runs import RunsScreen

        running = [s for s in self.screen_stack if isinstance(s, RunsScreen) and s.running]
        if not running:
            self.exit()
            return
        from benchtui.tui.screens.confirm import ConfirmScreen

        if isinstance(self.screen, ConfirmScreen):
            return
        left = sum(1 for s in running for row in s.batch_rows.values() if row[3] in ("queued", "started"))

        def answered(yes: bool | None) -> None:
            if yes:
                for screen in running:
                    if screen.cancel_event is not None:
                        screen.cancel_event.set()
                self.exit()

        self.push_screen(ConfirmScreen("Runs are in progress. Quit and cancel them?",
                                       f"{left} answer(s) not finished; the ones running now are stopped "
                                       "and recorded as interrupted."), answered)

    def open_published(self, model: str | None = None, challenge: str | None = None) -> None:
        """An imported deck's published results beside benchtui's verdicts (one answer's, or every one)."""
        from benchtui.tui.screens.published import PublishedScreen

        self.push_screen(PublishedScreen(model, challenge))

    def open_audit(self) -> None:
        from benchtui.tui.screens.audit import AuditScreen

        self.push_screen(AuditScreen())

    def action_help(self) -> None:
        from benchtui.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))


def run_app(workbench: Any, prefetch: Any = None) -> int:
    """``prefetch``: an engine.store.queries.MatrixPrefetch holding the first frame's cells."""
    app = BenchApp(workbench, scan_on_start=True)
    app.prefetched_matrix = prefetch
    # `benchtui` turns the collector off for start-up (engine/cli.py); back on after the
    # first frame, until the app takes it over after the start-up rescan (collect_when_idle)
    import gc

    app.after_first_frame(gc.enable)
    result = app.run()
    return int(result or app.return_code or 0)
