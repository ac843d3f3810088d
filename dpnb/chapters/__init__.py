"""One room per chapter: ``dpnb.chapters.<stem>`` holds what ``notebooks/<stem>.md`` needs beyond the mechanisms.

A room builds the chapter's worst-case pairs and audit cases and runs its reproduction; the
mechanisms it audits live in :mod:`dpnb.papers`. Rooms import the wings below them (ground,
numerics, privacy, papers, reporting); only the chapter's notebook and tests import a room.
"""
