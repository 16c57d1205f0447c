#!/usr/bin/env python3
"""Sanity checks for the marlowe fixture: runs eval/helpcentre/check.py on this folder.

The checks are eval/fernhill/check.py's, run on this folder: eval/helpcentre/check.py only
reads kb/<tenant>/*.md pages with YAML front matter, but this fixture mixes four page formats:

- .md: Markdown with YAML front matter (copied as is);
- .html: help-centre HTML exports (front matter from <title> and the <meta> tags, body = the
  page's visible text with the tags stripped);
- .txt: plain-text policy documents with the same YAML front matter as the Markdown pages
  (copied as is, front matter kept);
- .pdf: PDF documents (body = the text pypdf extracts from each page, front matter from the
  sidecar <file>.pdf.meta.yaml).

eval/fernhill/check.py copies the fixture into a temporary folder, turns every page into a .md page
there and runs the generic checks on that copy. Before that it checks that every .md/.txt
front matter is valid YAML with the required keys, that every HTML page has tenant and groups
metas and every PDF a sidecar. Nothing in this folder is changed.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))

if __name__ == "__main__":
    runpy.run_path(os.path.join(HERE, "..", "fernhill", "check.py"))["main"](HERE)
