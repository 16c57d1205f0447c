#!/usr/bin/env python3
"""Sanity checks for the oakhampton fixture: eval/fernhill/check.py's, run on this folder.

It checks each page's front matter, HTML metas and PDF sidecars, turns the Markdown, HTML,
plain-text and PDF pages into Markdown pages in a temporary folder and runs
eval/helpcentre/check.py on that copy. Nothing in this folder is changed.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    runpy.run_path(os.path.join(HERE, "..", "fernhill", "check.py"))["main"](HERE)
