"""Runs record the cluster node they ran on (``benchtui run --cluster``):
the Ray node id, set when a node takes the task and again when it ends;
empty for a run on the driver's own machine."""
import sqlite_utils


def apply(db: sqlite_utils.Database) -> None:
    if "node" not in db["runs"].columns_dict:
        db["runs"].add_column("node", str)
