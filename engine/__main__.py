"""``python -m engine``: the ``benchtui`` command. Importing this module
(a tool that imports every module of the package does) starts nothing."""

if __name__ == "__main__":
    try:  # Ctrl-C while the command's modules load: the exit code of an interrupt, no traceback
        from benchtui.cli import main
    except KeyboardInterrupt:
        raise SystemExit(130) from None

    raise SystemExit(main())
