"""Command palette provider: jump to any model, challenge, answer file or transcript."""
from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class JumpProvider(Provider):
    async def startup(self) -> None:
        app = self.app
        self.targets: list[tuple[str, str, object]] = []  # (text, help, callback)
        try:
            store = app.store  # type: ignore[attr-defined]
            for name in store.model_names():
                self.targets.append((f"model {name}", "jump to the model's column", partial(app.jump_matrix, model=name)))
            for cid in store.challenge_ids():
                self.targets.append((f"challenge {cid}", "jump to the challenge's row", partial(app.jump_matrix, challenge=cid)))
            for r in store.query("select model, challenge from answers where present = 1 order by model, challenge"):
                cb = partial(app.open_answer, r["model"], r["challenge"])
                self.targets.append((f"answer {r['model']}/{r['challenge']}", "open the answer", cb))
            for r in store.query(
                "select a.model, a.challenge, f.relpath, f.kind from files f join answers a on a.id = f.answer_id "
                "where a.present = 1 order by a.model, a.challenge, f.relpath"
            ):
                label = f"{r['model']}/{r['challenge']}/{r['relpath']}"
                if r["kind"] == "transcript":
                    cb = partial(app.open_transcript, r["model"], r["challenge"], r["relpath"])
                    self.targets.append((f"transcript {label}", "open the transcript", cb))
                else:
                    cb = partial(app.open_answer, r["model"], r["challenge"], r["relpath"])
                    self.targets.append((f"file {label}", "open the answer at this file", cb))
        except Exception as exc:  # a broken store must not break the palette
            app.notify(f"palette: {exc}", severity="error")

    async def discover(self) -> Hits:
        for text, help_text, callback in self.targets[:40]:
            yield DiscoveryHit(text, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        terms = query.split()
        if len(terms) > 1:
            # "qwen36 kv" finds what "qwen36/kv" finds: every word, in any order.
            for hit in self.search_terms(terms):
                yield hit
            return
        matcher = self.matcher(query)
        for text, help_text, callback in self.targets:
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, matcher.highlight(text), callback, text=text, help=help_text)

    def search_terms(self, terms: list[str]) -> list[Hit]:
        """Targets holding every term as a substring (any order), else every term fuzzily;
        scored by the terms' fuzzy scores, each term highlighted."""
        from textual.content import Content

        matchers = [self.matcher(t) for t in terms]
        lowered = [t.lower() for t in terms]

        def hits(substrings: bool) -> list[Hit]:
            found = []
            for text, help_text, callback in self.targets:
                low = text.lower()
                if substrings and not all(t in low for t in lowered):
                    continue
                matches = [m.fuzzy_search.match(m.query, text) for m in matchers]
                if not all(score > 0 for score, _ in matches):
                    continue
                content = Content(text)
                for _, offsets in matches:
                    for offset in offsets:
                        content = content.stylize(matchers[0].match_style, offset, offset + 1)
                score = sum(score for score, _ in matches) / len(matches)
                found.append(Hit(score, content, callback, text=text, help=help_text))
            return found

        return hits(True) or hits(False)
