"""Command palette provider: jump to any model, challenge, answer file or transcript.

The targets live in a prebuilt index (tui/palette_index.py): a keystroke
searches it in a few milliseconds at 10,000 answers and hands at most
``palette_index.LIMIT`` targets to Textual's matcher for scoring and
highlighting, where every target used to be scored on every keystroke.
"""
from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.palette_index import PaletteIndex, Target, palette_index


class JumpProvider(Provider):
    async def startup(self) -> None:
        app = self.app
        self.index = PaletteIndex([])
        try:
            self.index = palette_index(app)
        except Exception as exc:  # a broken store must not break the palette
            app.notify(f"palette: {exc}", severity="error")

    def callback(self, target: Target):
        app = self.app
        if target.action == "matrix":
            return partial(app.jump_matrix, model=target.model, challenge=target.challenge)
        if target.action == "transcript":
            return partial(app.open_transcript, target.model, target.challenge, target.relpath)
        if target.relpath is not None:
            return partial(app.open_answer, target.model, target.challenge, target.relpath)
        return partial(app.open_answer, target.model, target.challenge)

    async def discover(self) -> Hits:
        for target in self.index.first(40):
            yield DiscoveryHit(target.text, self.callback(target), help=target.help)

    async def search(self, query: str) -> Hits:
        terms = query.split()
        if not terms:
            return
        # "qwen36 kv" finds what "qwen36/kv" finds: every word, in any order.
        for hit in self.search_terms(terms):
            yield hit

    def search_terms(self, terms: list[str]) -> list[Hit]:
        """The index's targets for these words (every word as a substring, any
        order, else every word fuzzily), scored by the words' fuzzy scores, each
        word highlighted."""
        from textual.content import Content

        matchers = [self.matcher(t) for t in terms]
        found = []
        for target in self.index.search(" ".join(terms)):
            text = target.text
            matches = [m.fuzzy_search.match(m.query, text) for m in matchers]
            if not all(score > 0 for score, _ in matches):
                continue
            content = Content(text)
            for _, offsets in matches:
                for offset in offsets:
                    content = content.stylize(matchers[0].match_style, offset, offset + 1)
            score = sum(score for score, _ in matches) / len(matches)
            found.append(Hit(score, content, self.callback(target), text=text, help=target.help))
        return found
