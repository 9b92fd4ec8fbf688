"""Grades: people's and judges' grades and notes, importing judge grades from Markdown, agreement
between graders, the leaderboard's aggregates, exports."""
