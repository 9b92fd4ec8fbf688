"""``deck_annotations.measured_on``: the GPU an annotation says its run was
measured on, where that is another model than the one the deck's peaks are of
(an H100 SXM against an H100 PCIe peak); NULL where it is the same or not said.
Such a run's published figures are marked and left out of rankings."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    table = db.table("deck_annotations")
    if "measured_on" not in table.columns_dict:
        table.add_column("measured_on", str)
