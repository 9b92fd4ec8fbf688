"""The SQLite store: opening and migrating it, its migrations, the dashboard's read-only queries,
backups."""
