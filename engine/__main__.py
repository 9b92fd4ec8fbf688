"""``python -m engine``: the ``benchtui`` command. Importing this module
(a tool that imports every module of the package does) starts nothing."""

if __name__ == "__main__":
    from benchtui.cli import main

    raise SystemExit(main())
