"""The matrix's footer (tui/widgets/footer.py): its keys as one line, clickable."""
from __future__ import annotations

from benchtui.tui.app import BenchApp
from benchtui.tui.widgets.footer import KeysFooter
from settling import settle


def footer_text(app) -> str:
    return str(app.screen.query_one(KeysFooter).render())


async def test_the_footer_lists_the_matrix_keys_and_a_click_presses_one(demo_wb):
    app = BenchApp(demo_wb, scan_on_start=False)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(app, pilot)
        text = footer_text(app)
        assert text.startswith(" s Sort  f Filter  g Grade  c Compare  t Transcript  r Run  l Leaders  a Suites  ^r Rescan"
                               "  p Published  q Quit  ? Help ")
        assert text.rstrip().endswith("▏^p Jump") and len(text) == 140
        assert app.screen.sort_mode == "order"
        footer = app.screen.query_one(KeysFooter)
        await pilot.click(KeysFooter, offset=(text.index("Sort"), 0))
        await settle(app, pilot)
        assert app.screen.sort_mode == "passes"
        await pilot.click(KeysFooter, offset=(text.index("Filter"), 0))
        await settle(app, pilot)
        assert app.screen.filter_mode == "not passing"
        await pilot.click(KeysFooter, offset=(text.index("   ") + 1, 0))  # the gap: nothing
        await settle(app, pilot)
        assert (app.screen.sort_mode, app.screen.filter_mode) == ("passes", "not passing")
        assert footer.region.y == 29  # docked at the bottom
    assert app.errors == []


async def test_a_narrow_footer_is_compact_and_drops_the_palette_key_only_when_it_does_not_fit(demo_wb):
    app = BenchApp(demo_wb, scan_on_start=False)
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        text = footer_text(app)
        assert text.startswith("s Sort f Filter g Grade c Compare t Transcript r Run l Leaders a Suites ^r Rescan "
                               "q Quit ? Help")
        assert "^p Jump" not in text and len(text) == 100  # no room for it with every key
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        text = footer_text(app)
        assert text.startswith("s Sort f Filter g Grade c Compare t Transcript r Run l Leaders q Quit ? Help")
        assert "^p Jump" not in text and len(text) == 80
        await pilot.resize_terminal(66, 24)
        await settle(app, pilot)
        text = footer_text(app)
        assert "^p" not in text and text.startswith("s Sort f Filter") and "? Help" in text
    assert app.errors == []


async def test_a_remapped_key_shows_as_remapped(demo_wb, tmp_path, monkeypatch):
    config = tmp_path / "keys.toml"
    config.write_text('[keys]\n"matrix.sort" = "o"\n', encoding="utf-8")
    monkeypatch.setenv("BENCHTUI_CONFIG", str(config))
    app = BenchApp(demo_wb, scan_on_start=False, config_path=config)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(app, pilot)
        text = footer_text(app)
        assert " o Sort " in text and " s Sort" not in text  # where Textual's active bindings put it
    assert app.errors == []


async def test_the_title_line_reads_as_textuals_header_and_its_icon_opens_the_palette(demo_wb, monkeypatch):
    from benchtui.tui.widgets.title_bar import TitleBar

    opened = []

    async def palette(self) -> None:
        opened.append(1)

    monkeypatch.setattr(BenchApp, "action_command_palette", palette)
    app = BenchApp(demo_wb, scan_on_start=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        bar = app.screen.query_one(TitleBar)
        line = str(bar.render())
        assert line == " ⭘" + " " * 33 + "benchtui" + " " * 37 and bar.region.y == 0
        app.sub_title = "scale"
        await pilot.pause()
        assert "benchtui — scale" in str(bar.render())
        await pilot.click(TitleBar, offset=(40, 0))  # the title: nothing
        assert opened == []
        await pilot.click(TitleBar, offset=(1, 0))
        await pilot.pause()
        assert opened == [1]
    assert app.errors == []


async def test_the_matrix_footer_lists_transcript_suites_and_rescan_and_keeps_help_when_narrow(demo_wb):
    app = BenchApp(demo_wb, scan_on_start=False)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        text = footer_text(app)
        for key in (" t Transcript ", " a Suites ", " ^r Rescan "):
            assert key in text, text
        assert text.rstrip().endswith("▏^p Jump") and len(text) == 140
        await pilot.resize_terminal(80, 24)
        await settle(app, pilot)
        text = footer_text(app)
        # no room for every key: the screen's last ones go, `q Quit` and `? Help` stay whole
        assert len(text) == 80 and "q Quit ? Help" in text and "t Transcript" in text, text
        assert text.rstrip().endswith("? Help"), text
    assert app.errors == []


async def test_the_grades_footer_says_what_plus_and_minus_do(demo_wb):
    """Each key is followed by what it does: "+ +  - -" said nothing."""
    for width in (80, 140):
        app = BenchApp(demo_wb, scan_on_start=False)
        async with app.run_test(size=(width, 30)) as pilot:
            await settle(app, pilot)
            app.open_grades("demo-hasty", "backwards")
            await settle(app, pilot)
            text = " ".join(footer_text(app).split())
            assert "+ Raise - Lower" in text and "+ +" not in text, text
            assert "q Quit ? Help" in text
        assert app.errors == []


def test_the_readme_key_table_lists_every_matrix_key():
    import re
    from pathlib import Path

    from benchtui.tui.screens.matrix import MatrixScreen

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    [row] = [line for line in readme.splitlines() if line.startswith("| matrix |")]
    listed = set(re.findall(r"`([^`]+)`", row))
    for binding in MatrixScreen.BINDINGS:
        assert binding.key.split(",")[0] in listed, f"{binding.key} ({binding.description}) is not in README's key table"
