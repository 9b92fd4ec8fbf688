"""Named, recorded schema migrations: one module ``mNNN_<what>.py`` each,
exposing ``apply(db: sqlite_utils.Database) -> None``. Never edit a migration
that has shipped; add a new one."""
